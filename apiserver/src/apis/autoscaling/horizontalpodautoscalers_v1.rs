//! HorizontalPodAutoscalers, `autoscaling/v1` (`KK/pkg/apis/autoscaling/v1/conversion.go` and
//! `defaults.go`, `KK/pkg/apis/autoscaling/annotations.go`): the objects `autoscaling/v2` stores, seen
//! through the older shape. v1 has one metric, `targetCPUUtilizationPercentage`, and its status one value,
//! `currentCPUUtilizationPercentage`; what it cannot express travels in annotations, as upstream's
//! conversion writes them:
//!
//! - `autoscaling.alpha.kubernetes.io/metrics`: every metric but a CPU utilization target, as v1's
//!   `MetricSpec` list (the `v2beta1` shape: `metricName`, `targetAverageValue`, ...);
//! - `autoscaling.alpha.kubernetes.io/current-metrics`: every current metric, as v1's `MetricStatus` list;
//! - `autoscaling.alpha.kubernetes.io/behavior`: the behavior, as Go writes the internal type, which has
//!   no JSON names (`{"ScaleUp":{"StabilizationWindowSeconds":0,...}}`), read back case-insensitively;
//! - `autoscaling.alpha.kubernetes.io/conditions`: the status conditions.
//!
//! Each is written in Go's struct order. From v1 the annotated metrics come first and the CPU target
//! last, and with no metric at all the CPU target is 80%, as v1's controller once assumed; annotations
//! that do not parse are ignored; the round-trip annotations never reach storage. A request defaults
//! `minReplicas` to 1 (v1's only default) and is validated as the v2 object it converts to, with v2's
//! paths (`spec.metrics[0].resource.target.averageUtilization` for the CPU target); the stored object gets
//! v2's defaults, as kube-apiserver's storage decoding applies them.
//!
//! Known differences: quantities keep the text they were written with (Go re-renders them canonically);
//! the table of a v1 request prints the object converted back from v1, so a CPU target listed before
//! other metrics in v2 prints last; a main-endpoint update through v1 keeps the status as v1 carries it,
//! in which v1's non-pointer quantities (`currentAverageValue`) come back as `"0"` where v2 had none.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::horizontalpodautoscalers::{
    self as v2, cpu_utilization_metric, present, set_annotation, BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION, DEFAULT_CPU_UTILIZATION, METRICS_ANNOTATION,
};
use crate::apis::{status, Printer, ResourceInfo};
use crate::go_json;
use crate::registry::field_error::FieldError;
use crate::registry::strategies::common;
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};
use crate::storage::conversion::Conversion;

/// The catalog's entry: the v2 objects' storage, through [`conversion`].
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["hpa"],
        categories: &["all"],
        subresources: vec![status("HorizontalPodAutoscaler")],
        conversion: Some(conversion()),
        ..ResourceInfo::new(
            v2::resource("v1"),
            "horizontalpodautoscaler",
            Arc::new(HorizontalPodAutoscalersV1),
            Printer { columns: v2::columns(), cells: |obj, now, _| v2::cells(&to_v2(obj.clone()), now) },
        )
    }
}

/// How v1 objects are stored (as defaulted v2 objects) and served.
pub(crate) fn conversion() -> Conversion {
    Conversion::new(to_storage, to_v1)
}

/// A v1 object as the v2 object kube-apiserver stores: converted, then defaulted.
fn to_storage(obj: Value) -> Value {
    let mut stored = to_v2(obj);
    v2::set_defaults(&mut stored);
    v2::fill_status(&mut stored);
    stored
}

// ---- writing Go's JSON of v1's annotation types ----

/// A JSON object in a fixed key order, as Go writes a struct: `None` fields are omitted.
fn go_object(fields: &[(&str, Option<String>)]) -> String {
    let mut out = Vec::new();
    out.push(b'{');
    let mut first = true;
    for (key, value) in fields {
        let Some(value) = value else { continue };
        if !first {
            out.push(b',');
        }
        first = false;
        go_json::append_str(&mut out, key);
        out.push(b':');
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'}');
    String::from_utf8(out).expect("JSON is UTF-8")
}

fn go_string(text: &str) -> String {
    let mut out = Vec::new();
    go_json::append_str(&mut out, text);
    String::from_utf8(out).expect("JSON is UTF-8")
}

fn go_list(items: Vec<String>) -> String {
    format!("[{}]", items.join(","))
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A string field, always written.
fn string_field(obj: &Value, pointer: &str) -> Option<String> {
    Some(go_string(text(obj, pointer)))
}

/// A pointer to an integer: written when set.
fn int_field(obj: &Value, pointer: &str) -> Option<String> {
    present(obj.pointer(pointer)).and_then(Value::as_i64).map(|n| n.to_string())
}

/// A quantity's text (a JSON number is a quantity too).
fn quantity_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A pointer to a quantity: written when set.
fn quantity_field(obj: &Value, pointer: &str) -> Option<String> {
    present(obj.pointer(pointer)).and_then(quantity_text).map(|q| go_string(&q))
}

/// A quantity that is not a pointer: `"0"` when unset.
fn quantity_value(obj: &Value, pointer: &str) -> Option<String> {
    quantity_field(obj, pointer).or_else(|| Some(go_string("0")))
}

/// A `*metav1.LabelSelector`: `matchLabels` (sorted), then `matchExpressions` (`key`, `operator`,
/// `values`).
fn selector_field(obj: &Value, pointer: &str) -> Option<String> {
    let selector = present(obj.pointer(pointer))?;
    let labels = present(selector.get("matchLabels")).filter(|l| l.as_object().is_some_and(|m| !m.is_empty()));
    let labels = labels.map(|l| {
        let mut out = Vec::new();
        go_json::append(&mut out, l);
        String::from_utf8(out).expect("JSON is UTF-8")
    });
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).filter(|e| !e.is_empty()).map(|e| {
        go_list(
            e.iter()
                .map(|x| {
                    let values = x
                        .get("values")
                        .and_then(Value::as_array)
                        .filter(|v| !v.is_empty())
                        .map(|v| go_list(v.iter().map(|s| go_string(s.as_str().unwrap_or(""))).collect()));
                    go_object(&[
                        ("key", string_field(x, "/key")),
                        ("operator", string_field(x, "/operator")),
                        ("values", values),
                    ])
                })
                .collect(),
        )
    });
    Some(go_object(&[("matchLabels", labels), ("matchExpressions", expressions)]))
}

/// A `CrossVersionObjectReference`: `kind`, `name`, `apiVersion` when set.
fn reference_field(obj: &Value, pointer: &str) -> Option<String> {
    let empty = json!({});
    let r = present(obj.pointer(pointer)).unwrap_or(&empty);
    let api_version = Some(text(r, "/apiVersion")).filter(|v| !v.is_empty()).map(go_string);
    Some(go_object(&[
        ("kind", string_field(r, "/kind")),
        ("name", string_field(r, "/name")),
        ("apiVersion", api_version),
    ]))
}

/// A v2 metric as v1's `MetricSpec`.
fn metric_spec_v1(m: &Value) -> String {
    let source = |field: &str| present(m.get(field)).cloned();
    let object = source("object").map(|s| {
        go_object(&[
            ("target", reference_field(&s, "/describedObject")),
            ("metricName", string_field(&s, "/metric/name")),
            ("targetValue", quantity_value(&s, "/target/value")),
            ("selector", selector_field(&s, "/metric/selector")),
            ("averageValue", quantity_field(&s, "/target/averageValue")),
        ])
    });
    let pods = source("pods").map(|s| {
        go_object(&[
            ("metricName", string_field(&s, "/metric/name")),
            ("targetAverageValue", quantity_value(&s, "/target/averageValue")),
            ("selector", selector_field(&s, "/metric/selector")),
        ])
    });
    let resource = source("resource").map(|s| {
        go_object(&[
            ("name", string_field(&s, "/name")),
            ("targetAverageUtilization", int_field(&s, "/target/averageUtilization")),
            ("targetAverageValue", quantity_field(&s, "/target/averageValue")),
        ])
    });
    let container_resource = source("containerResource").map(|s| {
        go_object(&[
            ("name", string_field(&s, "/name")),
            ("targetAverageUtilization", int_field(&s, "/target/averageUtilization")),
            ("targetAverageValue", quantity_field(&s, "/target/averageValue")),
            ("container", string_field(&s, "/container")),
        ])
    });
    let external = source("external").map(|s| {
        go_object(&[
            ("metricName", string_field(&s, "/metric/name")),
            ("metricSelector", selector_field(&s, "/metric/selector")),
            ("targetValue", quantity_field(&s, "/target/value")),
            ("targetAverageValue", quantity_field(&s, "/target/averageValue")),
        ])
    });
    go_object(&[
        ("type", string_field(m, "/type")),
        ("object", object),
        ("pods", pods),
        ("resource", resource),
        ("containerResource", container_resource),
        ("external", external),
    ])
}

/// A v2 current metric as v1's `MetricStatus`.
fn metric_status_v1(m: &Value) -> String {
    let source = |field: &str| present(m.get(field)).cloned();
    let object = source("object").map(|s| {
        go_object(&[
            ("target", reference_field(&s, "/describedObject")),
            ("metricName", string_field(&s, "/metric/name")),
            ("currentValue", quantity_value(&s, "/current/value")),
            ("selector", selector_field(&s, "/metric/selector")),
            ("averageValue", quantity_field(&s, "/current/averageValue")),
        ])
    });
    let pods = source("pods").map(|s| {
        go_object(&[
            ("metricName", string_field(&s, "/metric/name")),
            ("currentAverageValue", quantity_value(&s, "/current/averageValue")),
            ("selector", selector_field(&s, "/metric/selector")),
        ])
    });
    let resource = source("resource").map(|s| {
        go_object(&[
            ("name", string_field(&s, "/name")),
            ("currentAverageUtilization", int_field(&s, "/current/averageUtilization")),
            ("currentAverageValue", quantity_value(&s, "/current/averageValue")),
        ])
    });
    let container_resource = source("containerResource").map(|s| {
        go_object(&[
            ("name", string_field(&s, "/name")),
            ("currentAverageUtilization", int_field(&s, "/current/averageUtilization")),
            ("currentAverageValue", quantity_value(&s, "/current/averageValue")),
            ("container", string_field(&s, "/container")),
        ])
    });
    let external = source("external").map(|s| {
        go_object(&[
            ("metricName", string_field(&s, "/metric/name")),
            ("metricSelector", selector_field(&s, "/metric/selector")),
            ("currentValue", quantity_value(&s, "/current/value")),
            ("currentAverageValue", quantity_field(&s, "/current/averageValue")),
        ])
    });
    go_object(&[
        ("type", string_field(m, "/type")),
        ("object", object),
        ("pods", pods),
        ("resource", resource),
        ("containerResource", container_resource),
        ("external", external),
    ])
}

/// A condition as v1's `HorizontalPodAutoscalerCondition` (its time is never omitted: null when unset).
fn condition_v1(c: &Value) -> String {
    let non_empty = |p: &str| Some(text(c, p)).filter(|t| !t.is_empty()).map(go_string);
    let time = present(c.get("lastTransitionTime")).and_then(Value::as_str).map_or("null".into(), go_string);
    go_object(&[
        ("type", string_field(c, "/type")),
        ("status", string_field(c, "/status")),
        ("lastTransitionTime", Some(time)),
        ("reason", non_empty("/reason")),
        ("message", non_empty("/message")),
    ])
}

/// The behavior as Go writes the internal type: Go's field names, nil pointers as null.
fn behavior_internal(b: &Value) -> String {
    let rules = |side: &str| {
        let Some(r) = present(b.get(side)) else { return Some("null".to_string()) };
        let policies = r.get("policies").and_then(Value::as_array).map_or("null".to_string(), |ps| {
            go_list(
                ps.iter()
                    .map(|p| {
                        go_object(&[
                            ("Type", string_field(p, "/type")),
                            ("Value", Some(p.get("value").and_then(Value::as_i64).unwrap_or(0).to_string())),
                            (
                                "PeriodSeconds",
                                Some(p.get("periodSeconds").and_then(Value::as_i64).unwrap_or(0).to_string()),
                            ),
                        ])
                    })
                    .collect(),
            )
        });
        Some(go_object(&[
            ("StabilizationWindowSeconds", int_field(r, "/stabilizationWindowSeconds").or(Some("null".into()))),
            (
                "SelectPolicy",
                present(r.get("selectPolicy"))
                    .and_then(Value::as_str)
                    .map_or(Some("null".into()), |s| Some(go_string(s))),
            ),
            ("Policies", Some(policies)),
        ]))
    };
    go_object(&[("ScaleUp", rules("scaleUp")), ("ScaleDown", rules("scaleDown"))])
}

// ---- v2 to v1 ----

/// Whether a v2 metric is v1's own: a CPU utilization target.
fn is_cpu_utilization(m: &Value) -> bool {
    m.get("type").and_then(Value::as_str) == Some("Resource")
        && present(m.get("resource")).is_some_and(|r| {
            r.get("name").and_then(Value::as_str) == Some("cpu")
                && present(r.pointer("/target/averageUtilization")).is_some()
        })
}

fn list<'a>(obj: &'a Value, pointer: &str) -> &'a [Value] {
    obj.pointer(pointer).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// A stored (v2) object as v1 serves it (`Convert_autoscaling_HorizontalPodAutoscaler_To_v1_...`).
pub(crate) fn to_v1(obj: Value) -> Value {
    let mut metadata = json!({"metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))});
    v2::drop_round_trip_annotations(&mut metadata);
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    let status = obj.get("status").filter(|s| s.is_object()).unwrap_or(&empty);

    let mut v1_spec = Map::new();
    v1_spec.insert(
        "scaleTargetRef".into(),
        spec.get("scaleTargetRef").cloned().unwrap_or_else(|| json!({"kind": "", "name": ""})),
    );
    if let Some(min) = present(spec.get("minReplicas")) {
        v1_spec.insert("minReplicas".into(), min.clone());
    }
    v1_spec.insert("maxReplicas".into(), json!(spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0)));
    let metrics = list(spec, "/metrics");
    let first_cpu = metrics.iter().find(|m| {
        m.get("type").and_then(Value::as_str) == Some("Resource")
            && present(m.get("resource")).is_some_and(|r| r.get("name").and_then(Value::as_str) == Some("cpu"))
    });
    if let Some(target) = first_cpu.and_then(|m| present(m.pointer("/resource/target/averageUtilization"))) {
        v1_spec.insert("targetCPUUtilizationPercentage".into(), target.clone());
    }

    let mut v1_status = Map::new();
    for field in ["observedGeneration", "lastScaleTime"] {
        if let Some(v) = present(status.get(field)) {
            v1_status.insert(field.into(), v.clone());
        }
    }
    for field in ["currentReplicas", "desiredReplicas"] {
        v1_status.insert(field.into(), json!(status.get(field).and_then(Value::as_i64).unwrap_or(0)));
    }
    let current = list(status, "/currentMetrics");
    let cpu_now = current.iter().rev().find_map(|m| {
        (m.get("type").and_then(Value::as_str) == Some("Resource")
            && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu"))
        .then(|| present(m.pointer("/resource/current/averageUtilization")))
        .flatten()
    });
    if let Some(cpu_now) = cpu_now {
        v1_status.insert("currentCPUUtilizationPercentage".into(), cpu_now.clone());
    }

    let others: Vec<String> = metrics.iter().filter(|m| !is_cpu_utilization(m)).map(metric_spec_v1).collect();
    if !others.is_empty() {
        set_annotation(&mut metadata, METRICS_ANNOTATION, Some(go_list(others)));
    }
    if !current.is_empty() {
        set_annotation(
            &mut metadata,
            CURRENT_METRICS_ANNOTATION,
            Some(go_list(current.iter().map(metric_status_v1).collect())),
        );
    }
    if let Some(behavior) = present(spec.get("behavior")) {
        set_annotation(&mut metadata, BEHAVIOR_ANNOTATION, Some(behavior_internal(behavior)));
    }
    let conditions = list(status, "/conditions");
    if !conditions.is_empty() {
        set_annotation(
            &mut metadata,
            CONDITIONS_ANNOTATION,
            Some(go_list(conditions.iter().map(condition_v1).collect())),
        );
    }
    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": metadata["metadata"],
        "spec": v1_spec,
        "status": v1_status,
    })
}

// ---- v1 to v2 ----

/// The value at `key` of a parsed annotation object, matched as Go's decoder matches field names.
fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key)
        .or_else(|| obj.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v))
        .filter(|v| !v.is_null())
}

/// A quantity that v1 holds as a value: `"0"` when unset.
fn quantity_or_zero(obj: &Value, key: &str) -> Value {
    present(obj.get(key)).cloned().unwrap_or_else(|| json!("0"))
}

/// A `MetricIdentifier` from v1's name and selector fields.
fn identifier(s: &Value, name: &str, selector: &str) -> Value {
    let mut id = json!({"name": s.get(name).and_then(Value::as_str).unwrap_or("")});
    if let Some(sel) = present(s.get(selector)) {
        id["selector"] = sel.clone();
    }
    id
}

/// An object without its null members.
fn compact(mut obj: Value) -> Value {
    if let Value::Object(m) = &mut obj {
        m.retain(|_, v| !v.is_null());
    }
    obj
}

/// One of v1's `MetricSpec`s as a v2 metric.
fn metric_spec_v2(m: &Value) -> Value {
    let mut out = json!({"type": m.get("type").cloned().unwrap_or(json!(""))});
    if let Some(s) = present(m.get("object")) {
        let kind = if present(s.get("averageValue")).is_some() { "AverageValue" } else { "Value" };
        out["object"] = json!({
            "describedObject": s.get("target").cloned().unwrap_or_else(|| json!({"kind": "", "name": ""})),
            "metric": identifier(s, "metricName", "selector"),
            "target": compact(json!({"type": kind, "value": quantity_or_zero(s, "targetValue"), "averageValue": s.get("averageValue")})),
        });
    }
    if let Some(s) = present(m.get("pods")) {
        out["pods"] = json!({
            "metric": identifier(s, "metricName", "selector"),
            "target": {"type": "AverageValue", "averageValue": quantity_or_zero(s, "targetAverageValue")},
        });
    }
    for field in ["resource", "containerResource"] {
        if let Some(s) = present(m.get(field)) {
            let utilization = present(s.get("targetAverageUtilization"));
            let kind = if utilization.is_some() { "Utilization" } else { "AverageValue" };
            let mut source = json!({
                "name": s.get("name").cloned().unwrap_or(json!("")),
                "target": compact(json!({"type": kind, "averageValue": s.get("targetAverageValue"), "averageUtilization": utilization})),
            });
            if field == "containerResource" {
                source["container"] = s.get("container").cloned().unwrap_or(json!(""));
            }
            out[field] = source;
        }
    }
    if let Some(s) = present(m.get("external")) {
        let kind = if present(s.get("targetValue")).is_some() { "Value" } else { "AverageValue" };
        out["external"] = json!({
            "metric": identifier(s, "metricName", "metricSelector"),
            "target": compact(json!({"type": kind, "value": s.get("targetValue"), "averageValue": s.get("targetAverageValue")})),
        });
    }
    out
}

/// One of v1's `MetricStatus`es as a v2 current metric.
fn metric_status_v2(m: &Value) -> Value {
    let mut out = json!({"type": m.get("type").cloned().unwrap_or(json!(""))});
    if let Some(s) = present(m.get("object")) {
        out["object"] = json!({
            "metric": identifier(s, "metricName", "selector"),
            "current": compact(json!({"value": quantity_or_zero(s, "currentValue"), "averageValue": s.get("averageValue")})),
            "describedObject": s.get("target").cloned().unwrap_or_else(|| json!({"kind": "", "name": ""})),
        });
    }
    if let Some(s) = present(m.get("pods")) {
        out["pods"] = json!({
            "metric": identifier(s, "metricName", "selector"),
            "current": {"averageValue": quantity_or_zero(s, "currentAverageValue")},
        });
    }
    for field in ["resource", "containerResource"] {
        if let Some(s) = present(m.get(field)) {
            let mut source = json!({
                "name": s.get("name").cloned().unwrap_or(json!("")),
                "current": compact(json!({"averageValue": quantity_or_zero(s, "currentAverageValue"), "averageUtilization": s.get("currentAverageUtilization")})),
            });
            if field == "containerResource" {
                source["container"] = s.get("container").cloned().unwrap_or(json!(""));
            }
            out[field] = source;
        }
    }
    if let Some(s) = present(m.get("external")) {
        out["external"] = json!({
            "metric": identifier(s, "metricName", "metricSelector"),
            "current": compact(json!({"value": quantity_or_zero(s, "currentValue"), "averageValue": s.get("currentAverageValue")})),
        });
    }
    out
}

/// The behavior annotation read back: `None` when it does not parse as the internal type or sets
/// neither side (upstream keeps only well-formed, non-empty behaviors).
fn behavior_v2(text: &str) -> Option<Value> {
    let parsed: Value = serde_json::from_str(text).ok()?;
    let b = parsed.as_object()?;
    let rules = |side: &str| -> Result<Option<Value>, ()> {
        let Some(r) = field(b, side) else { return Ok(None) };
        let r = r.as_object().ok_or(())?;
        let mut out = Map::new();
        if let Some(w) = field(r, "StabilizationWindowSeconds") {
            out.insert("stabilizationWindowSeconds".into(), json!(w.as_i64().ok_or(())?));
        }
        if let Some(p) = field(r, "SelectPolicy") {
            out.insert("selectPolicy".into(), json!(p.as_str().ok_or(())?));
        }
        if let Some(ps) = field(r, "Policies") {
            let mut policies = Vec::new();
            for p in ps.as_array().ok_or(())? {
                let p = p.as_object().ok_or(())?;
                let number = |k: &str| field(p, k).map_or(Ok(0), |v| v.as_i64().ok_or(()));
                let kind = field(p, "Type").map_or(Ok(""), |v| v.as_str().ok_or(()))?;
                policies
                    .push(json!({"type": kind, "value": number("Value")?, "periodSeconds": number("PeriodSeconds")?}));
            }
            out.insert("policies".into(), Value::Array(policies));
        }
        Ok(Some(Value::Object(out)))
    };
    let (up, down) = (rules("ScaleUp").ok()?, rules("ScaleDown").ok()?);
    if up.is_none() && down.is_none() {
        return None;
    }
    let mut behavior = Map::new();
    if let Some(up) = up {
        behavior.insert("scaleUp".into(), up);
    }
    if let Some(down) = down {
        behavior.insert("scaleDown".into(), down);
    }
    Some(Value::Object(behavior))
}

/// An annotation's JSON list of objects, if it is one.
fn annotated_list(obj: &Value, key: &str) -> Option<Vec<Value>> {
    let text = obj.pointer("/metadata/annotations").and_then(|a| a.get(key)).and_then(Value::as_str)?;
    let items: Vec<Value> = serde_json::from_str(text).ok()?;
    items.iter().all(Value::is_object).then_some(items)
}

/// A v1 object as the v2 object it stands for, without v2's defaults
/// (`Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`).
pub(crate) fn to_v2(obj: Value) -> Value {
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    let status = obj.get("status").filter(|s| s.is_object()).unwrap_or(&empty);
    let mut v2_spec = Map::new();
    v2_spec.insert(
        "scaleTargetRef".into(),
        spec.get("scaleTargetRef").cloned().unwrap_or_else(|| json!({"kind": "", "name": ""})),
    );
    if let Some(min) = present(spec.get("minReplicas")) {
        v2_spec.insert("minReplicas".into(), min.clone());
    }
    v2_spec.insert("maxReplicas".into(), json!(spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0)));
    let mut metrics: Vec<Value> = present(spec.get("targetCPUUtilizationPercentage"))
        .and_then(Value::as_i64)
        .map(cpu_utilization_metric)
        .into_iter()
        .collect();
    if let Some(others) = annotated_list(&obj, METRICS_ANNOTATION) {
        let mut all: Vec<Value> = others.iter().map(metric_spec_v2).collect();
        all.append(&mut metrics);
        metrics = all;
    }
    let behavior = obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(BEHAVIOR_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(behavior_v2);
    if let Some(behavior) = behavior {
        v2_spec.insert("behavior".into(), behavior);
    }
    if metrics.is_empty() {
        metrics.push(cpu_utilization_metric(DEFAULT_CPU_UTILIZATION));
    }
    v2_spec.insert("metrics".into(), Value::Array(metrics));

    let mut v2_status = Map::new();
    for field in ["observedGeneration", "lastScaleTime"] {
        if let Some(v) = present(status.get(field)) {
            v2_status.insert(field.into(), v.clone());
        }
    }
    let current_replicas = status.get("currentReplicas").and_then(Value::as_i64).unwrap_or(0);
    if current_replicas != 0 {
        v2_status.insert("currentReplicas".into(), json!(current_replicas));
    }
    v2_status
        .insert("desiredReplicas".into(), json!(status.get("desiredReplicas").and_then(Value::as_i64).unwrap_or(0)));
    let mut current: Vec<Value> = present(status.get("currentCPUUtilizationPercentage"))
        .map(|cpu| json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": cpu}}}))
        .into_iter()
        .collect();
    if let Some(annotated) = annotated_list(&obj, CURRENT_METRICS_ANNOTATION) {
        current = annotated.iter().map(metric_status_v2).collect();
    }
    v2_status.insert("currentMetrics".into(), if current.is_empty() { Value::Null } else { Value::Array(current) });
    if let Some(conditions) = annotated_list(&obj, CONDITIONS_ANNOTATION) {
        let conditions: Vec<Value> = conditions
            .into_iter()
            .map(|c| {
                let keep = ["type", "status", "lastTransitionTime", "reason", "message"];
                compact(Value::Object(
                    c.as_object()
                        .into_iter()
                        .flatten()
                        .filter(|(k, _)| keep.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ))
            })
            .collect();
        if !conditions.is_empty() {
            v2_status.insert("conditions".into(), Value::Array(conditions));
        }
    }
    let mut out = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "spec": v2_spec,
        "status": v2_status,
    });
    v2::drop_round_trip_annotations(&mut out);
    out
}

// ---- the strategy ----

/// The annotations that carry the status, which only `/status` writes.
const STATUS_ANNOTATIONS: [&str; 2] = [CURRENT_METRICS_ANNOTATION, CONDITIONS_ANNOTATION];
/// The annotations that carry the spec, which `/status` keeps.
const SPEC_ANNOTATIONS: [&str; 2] = [METRICS_ANNOTATION, BEHAVIOR_ANNOTATION];

/// `obj`'s annotations `keys` as `from` has them.
fn copy_annotations(obj: &mut Value, from: &Value, keys: &[&str]) {
    for key in keys {
        let value = from.pointer("/metadata/annotations").and_then(|a| a.get(*key)).and_then(Value::as_str);
        set_annotation(obj, key, value.map(str::to_string));
    }
}

/// v1's status as Go writes it: both replica counts always.
fn fill_v1_status(obj: &mut Value) {
    if !obj.get("status").is_some_and(Value::is_object) {
        obj["status"] = json!({});
    }
    for field in ["currentReplicas", "desiredReplicas"] {
        if obj["status"].get(field).is_none() {
            obj["status"][field] = json!(0);
        }
    }
}

/// The HorizontalPodAutoscaler strategy of `autoscaling/v1`: v1's defaults and status rules on the v1
/// shape, v2's validation on the object it converts to.
struct HorizontalPodAutoscalersV1;

impl Strategy for HorizontalPodAutoscalersV1 {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    /// `SetDefaults_HorizontalPodAutoscaler` (v1): `minReplicas` 1.
    fn decode(&self, obj: &mut Value) {
        if !obj.get("spec").is_some_and(Value::is_object) {
            obj["spec"] = json!({});
        }
        if present(obj["spec"].get("minReplicas")).is_none() {
            obj["spec"]["minReplicas"] = json!(1);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
        fill_v1_status(obj);
        copy_annotations(obj, &Value::Null, &STATUS_ANNOTATIONS);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
        fill_v1_status(new);
        copy_annotations(new, old, &STATUS_ANNOTATIONS);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
        fill_v1_status(new);
        copy_annotations(new, old, &SPEC_ANNOTATIONS);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        v2::validate_hpa(&to_v2(obj.clone()), None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        v2::validate_hpa(&to_v2(new.clone()), Some(&to_v2(old.clone())))
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        v2::validate_status_update(&to_v2(new.clone()), &to_v2(old.clone()))
    }
}

impl DeleteStrategy for HorizontalPodAutoscalersV1 {}

#[cfg(test)]
mod tests;
