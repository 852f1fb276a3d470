//! HorizontalPodAutoscalers, `autoscaling/v2` (`KK/pkg/registry/autoscaling/horizontalpodautoscaler`,
//! `KK/pkg/apis/autoscaling/validation/validation.go`, `KK/pkg/apis/autoscaling/v2/defaults.go`,
//! `KK/pkg/apis/autoscaling/annotations.go`): namespaced, short name `hpa`, category `all`, a `/status`
//! subresource; stored in this version under `/registry/horizontalpodautoscalers/`, which
//! `autoscaling/v1` shares through its conversion ([`super::horizontalpodautoscalers_v1`]).
//!
//! Requests are defaulted as they decode: `minReplicas` 1, a CPU utilization target of 80% when no metric
//! is given, and each side of a `behavior` completed from the defaults (scale up: no stabilization, the
//! larger of 4 pods or 100% per 15 s; scale down: the larger of 100% per 15 s, the stabilization window
//! left to the controller). The annotations through which v1 carries what it cannot express are dropped:
//! this version has fields for all of it. The main endpoint resets the status (an empty one on create,
//! the stored one on update); `/status` keeps everything else.
//!
//! Validation is upstream's for the internal type, which both versions share: names are DNS subdomains;
//! `minReplicas` at least 1 (0 stays allowed on an object that already has it, with an Object or External
//! metric), `maxReplicas` at least 1 and not below `minReplicas`; the target reference has a kind and a name
//! that are path segments; each metric has a known type, exactly the source its type names and a valid
//! target; scaling rules have known policies, a stabilization window of at most an hour and periods of at
//! most 30 minutes. Left out: the sign checks of quantity targets (`must be positive`), whose bad value
//! upstream prints as Go's `%#v` of a `resource.Quantity`, and the resource-name checks of
//! `containerResource` metrics.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::apis::printers::{age, age_column, doc_column, name, name_column, Column};
use crate::apis::{status, Printer, ResourceInfo};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["hpa"],
        categories: &["all"],
        subresources: vec![status("HorizontalPodAutoscaler")],
        ..ResourceInfo::new(resource("v2"), "horizontalpodautoscaler", Arc::new(HorizontalPodAutoscalers), printer())
    }
}

/// The descriptor of `horizontalpodautoscalers` in `version`; every version shares the etcd prefix.
pub(crate) fn resource(version: &str) -> Resource {
    Resource {
        group: "autoscaling".into(),
        version: version.into(),
        kind: "HorizontalPodAutoscaler".into(),
        plural: "horizontalpodautoscalers".into(),
        etcd_prefix: "horizontalpodautoscalers".into(),
    }
}

/// `MetricSpecsAnnotation`: v1's metrics other than a CPU utilization target.
pub(crate) const METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `MetricStatusesAnnotation`: v1's current metrics.
pub(crate) const CURRENT_METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `HorizontalPodAutoscalerConditionsAnnotation`: v1's status conditions.
pub(crate) const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `BehaviorSpecsAnnotation`: v1's scaling behavior.
pub(crate) const BEHAVIOR_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// Every annotation a conversion writes (`DropRoundTripHorizontalPodAutoscalerAnnotations`).
pub(crate) const ROUND_TRIP_ANNOTATIONS: [&str; 4] =
    [METRICS_ANNOTATION, BEHAVIOR_ANNOTATION, CURRENT_METRICS_ANNOTATION, CONDITIONS_ANNOTATION];
/// `DefaultCPUUtilization`: the target when no metric is given.
pub(crate) const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// `MaxStabilizationWindowSeconds`.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;
/// `MaxPeriodSeconds`.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// The metric source types, sorted as the messages list them.
const METRIC_SOURCE_TYPES: &[&str] = &["ContainerResource", "External", "Object", "Pods", "Resource"];
/// The select policies, sorted.
const SELECT_POLICIES: &[&str] = &["Disabled", "Max", "Min"];
/// The scaling policy types, sorted.
const POLICY_TYPES: &[&str] = &["Percent", "Pods"];
/// The metric target types.
const TARGET_TYPES: &[&str] = &["Utilization", "Value", "AverageValue"];

/// `value` unless it is absent or null (a nil pointer).
pub(crate) fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

fn text<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

fn int(obj: &Value, key: &str) -> Option<i64> {
    obj.get(key).and_then(Value::as_i64)
}

/// Drops the annotations only v1 writes; an emptied map goes, as Go omits it. Whether any was there.
pub(crate) fn drop_round_trip_annotations(obj: &mut Value) -> bool {
    let Some(Value::Object(annotations)) = obj.pointer_mut("/metadata/annotations") else { return false };
    let before = annotations.len();
    annotations.retain(|k, _| !ROUND_TRIP_ANNOTATIONS.contains(&k.as_str()));
    let dropped = annotations.len() != before;
    if dropped && annotations.is_empty() {
        meta::set(obj, "annotations", None);
    }
    dropped
}

/// The default CPU metric: an average utilization of `percent`.
pub(crate) fn cpu_utilization_metric(percent: i64) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}}})
}

/// `SetDefaults_HorizontalPodAutoscaler` (v2): `minReplicas` 1, the CPU metric when there are none, and the
/// behavior completed.
pub(crate) fn set_defaults(obj: &mut Value) {
    if !obj.get("spec").is_some_and(Value::is_object) {
        obj["spec"] = json!({});
    }
    let spec = &mut obj["spec"];
    if present(spec.get("minReplicas")).is_none() {
        spec["minReplicas"] = json!(1);
    }
    if spec.get("metrics").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        spec["metrics"] = json!([cpu_utilization_metric(DEFAULT_CPU_UTILIZATION)]);
    }
    if present(spec.get("behavior")).is_some_and(Value::is_object) {
        let behavior = &mut spec["behavior"];
        let up = scaling_rules(present(behavior.get("scaleUp")), scale_up_defaults());
        let down = scaling_rules(present(behavior.get("scaleDown")), scale_down_defaults());
        behavior["scaleUp"] = up;
        behavior["scaleDown"] = down;
    }
}

/// The scale-up rules upstream applies when a behavior leaves them out.
fn scale_up_defaults() -> Value {
    json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ]})
}

/// The scale-down rules: no stabilization window (the controller's flag decides it).
fn scale_down_defaults() -> Value {
    json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
}

/// `copyHPAScalingRules`: the given rule's set fields over the defaults.
fn scaling_rules(given: Option<&Value>, mut defaults: Value) -> Value {
    if let Some(given) = given.and_then(Value::as_object) {
        for key in ["selectPolicy", "stabilizationWindowSeconds", "policies"] {
            if let Some(v) = present(given.get(key)) {
                defaults[key] = v.clone();
            }
        }
    }
    defaults
}

/// The status as Go writes it: `desiredReplicas` and `currentMetrics` are never omitted (a missing or
/// empty metric list reads back null from storage); `currentReplicas` is omitted at 0.
pub(crate) fn fill_status(obj: &mut Value) {
    if !obj.get("status").is_some_and(Value::is_object) {
        obj["status"] = json!({});
    }
    let status = obj["status"].as_object_mut().expect("status is an object");
    status.entry("desiredReplicas").or_insert(json!(0));
    if status.get("currentMetrics").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        status.insert("currentMetrics".into(), Value::Null);
    }
    if status.get("currentReplicas").and_then(Value::as_i64) == Some(0) {
        status.remove("currentReplicas");
    }
}

/// `ValidateHorizontalPodAutoscaler` (`old`: `None`) or its update form: the metadata, then the spec.
/// `minReplicas` may be 0 on an update of an object that already has 0 (the `HPAScaleToZero` gate is off).
pub(crate) fn validate_hpa(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = match old {
        None => meta::validate_object_meta(obj, true, names::name_is_dns_subdomain),
        Some(old) => meta::validate_object_meta_update(obj, old, true, names::name_is_dns_subdomain),
    };
    let old_min = old.and_then(|o| o.pointer("/spec/minReplicas")).and_then(Value::as_i64);
    let lower = if old_min == Some(0) { 0 } else { 1 };
    let empty = json!({});
    errs.extend(validate_spec(obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty), lower));
    errs
}

/// `validateHorizontalPodAutoscalerSpec`.
fn validate_spec(spec: &Value, min_lower_bound: i64) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = present(spec.get("minReplicas")).and_then(Value::as_i64);
    let max = int(spec, "maxReplicas").unwrap_or(0);
    if let Some(min) = min.filter(|m| *m < min_lower_bound) {
        errs.push(FieldError::invalid_int(
            "spec.minReplicas",
            min,
            &format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid_int("spec.maxReplicas", max, "must be greater than 0"));
    }
    if min.is_some_and(|m| max < m) {
        errs.push(FieldError::invalid_int("spec.maxReplicas", max, "must be greater than or equal to `minReplicas`"));
    }
    errs.extend(validate_reference(spec.get("scaleTargetRef"), "spec.scaleTargetRef"));
    errs.extend(validate_metrics(spec.get("metrics"), "spec.metrics", min));
    if let Some(behavior) = present(spec.get("behavior")) {
        for side in ["scaleUp", "scaleDown"] {
            if let Some(rules) = present(behavior.get(side)) {
                errs.extend(validate_scaling_rules(rules, &format!("spec.behavior.{side}")));
            }
        }
    }
    errs
}

/// `ValidateCrossVersionObjectReference`: a kind and a name, each a path segment.
fn validate_reference(reference: Option<&Value>, path: &str) -> Vec<FieldError> {
    let empty = json!({});
    let reference = present(reference).unwrap_or(&empty);
    let mut errs = Vec::new();
    for field in ["kind", "name"] {
        let value = text(reference, field);
        if value.is_empty() {
            errs.push(FieldError::required(&format!("{path}.{field}"), ""));
        }
        for msg in names::path_segment_name(value, false) {
            errs.push(FieldError::invalid(&format!("{path}.{field}"), value, &msg));
        }
    }
    errs
}

/// `validateMetrics`: each metric, then the scale-to-zero rule.
fn validate_metrics(metrics: Option<&Value>, path: &str, min_replicas: Option<i64>) -> Vec<FieldError> {
    let metrics = metrics.and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut errs = Vec::new();
    for (i, metric) in metrics.iter().enumerate() {
        errs.extend(validate_metric_spec(metric, &format!("{path}[{i}]")));
    }
    let scales_to_zero = metrics.iter().any(|m| matches!(text(m, "type"), "Object" | "External"));
    if min_replicas == Some(0) && !scales_to_zero {
        errs.push(FieldError::forbidden(
            path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errs
}

/// The sources of a metric: the field, and its check.
const SOURCES: &[(&str, fn(&Value, &str) -> Vec<FieldError>)] = &[
    ("object", validate_object_source),
    ("external", validate_external_source),
    ("pods", validate_pods_source),
    ("resource", validate_resource_source),
    ("containerResource", validate_container_resource_source),
];

/// `validateMetricSpec`: a known type, the source it names (only the first source given is checked),
/// and no other source.
fn validate_metric_spec(metric: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = text(metric, "type");
    if kind.is_empty() {
        errs.push(FieldError::required(&format!("{path}.type"), "must specify a metric source type"));
    }
    if !METRIC_SOURCE_TYPES.contains(&kind) {
        errs.push(FieldError::not_supported(&format!("{path}.type"), kind, METRIC_SOURCE_TYPES));
    }
    let mut given = Vec::new();
    for (field, check) in SOURCES {
        if let Some(source) = present(metric.get(*field)) {
            given.push(*field);
            if given.len() == 1 {
                errs.extend(check(source, &format!("{path}.{field}")));
            }
        }
    }
    let expected = match kind {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => {
            errs.push(FieldError::not_supported(&format!("{path}.type"), kind, METRIC_SOURCE_TYPES));
            ""
        }
    };
    if !expected.is_empty() && present(metric.get(expected)).is_none() {
        errs.push(FieldError::required(
            &format!("{path}.{expected}"),
            "must populate information for the given metric source",
        ));
    }
    if given.len() != 1 {
        for field in given.into_iter().filter(|f| *f != expected) {
            errs.push(FieldError::forbidden(&format!("{path}.{field}"), "must populate the given metric source only"));
        }
    }
    errs
}

fn target(source: &Value) -> Value {
    present(source.get("target")).cloned().unwrap_or_else(|| json!({}))
}

/// `validateObjectSource`.
fn validate_object_source(source: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = validate_reference(source.get("describedObject"), &format!("{path}.describedObject"));
    errs.extend(validate_metric_identifier(source.get("metric"), &format!("{path}.metric")));
    let target = target(source);
    errs.extend(validate_metric_target(&target, &format!("{path}.target")));
    if present(target.get("value")).is_none() && present(target.get("averageValue")).is_none() {
        errs.push(FieldError::required(
            &format!("{path}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errs
}

/// `validateExternalSource`.
fn validate_external_source(source: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(source.get("metric"), &format!("{path}.metric"));
    let target = target(source);
    errs.extend(validate_metric_target(&target, &format!("{path}.target")));
    let value = present(target.get("value")).is_some();
    let average = present(target.get("averageValue")).is_some();
    if !value && !average {
        errs.push(FieldError::required(
            &format!("{path}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        errs.push(FieldError::forbidden(
            &format!("{path}.target.value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    errs
}

/// `validatePodsSource`.
fn validate_pods_source(source: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(source.get("metric"), &format!("{path}.metric"));
    let target = target(source);
    errs.extend(validate_metric_target(&target, &format!("{path}.target")));
    if present(target.get("averageValue")).is_none() {
        errs.push(FieldError::required(
            &format!("{path}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errs
}

/// The utilization-or-value rule of resource targets.
fn validate_utilization_or_value(target: &Value, path: &str) -> Vec<FieldError> {
    let utilization = present(target.get("averageUtilization")).is_some();
    let average = present(target.get("averageValue")).is_some();
    let mut errs = Vec::new();
    if !utilization && !average {
        errs.push(FieldError::required(
            &format!("{path}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        errs.push(FieldError::forbidden(
            &format!("{path}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errs
}

/// `validateResourceSource`.
fn validate_resource_source(source: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if text(source, "name").is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), "must specify a resource name"));
    }
    let target = target(source);
    errs.extend(validate_metric_target(&target, &format!("{path}.target")));
    errs.extend(validate_utilization_or_value(&target, path));
    errs
}

/// `validateContainerResourceSource` (the resource name's own checks aside).
fn validate_container_resource_source(source: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if text(source, "name").is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), "must specify a resource name"));
    }
    let container = text(source, "container");
    if container.is_empty() {
        errs.push(FieldError::required(&format!("{path}.container"), "must specify a container"));
    } else {
        for msg in names::dns1123_label(container) {
            errs.push(FieldError::invalid(&format!("{path}.container"), container, &msg));
        }
    }
    let target = target(source);
    errs.extend(validate_metric_target(&target, &format!("{path}.target")));
    errs.extend(validate_utilization_or_value(&target, path));
    errs
}

/// `validateMetricTarget` (the quantities' signs aside).
fn validate_metric_target(target: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = text(target, "type");
    if kind.is_empty() {
        errs.push(FieldError::required(&format!("{path}.type"), "must specify a metric target type"));
    }
    if !TARGET_TYPES.contains(&kind) {
        errs.push(FieldError::invalid(
            &format!("{path}.type"),
            kind,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    if let Some(utilization) = present(target.get("averageUtilization")).and_then(Value::as_i64) {
        if utilization < 1 {
            errs.push(FieldError::invalid_int(
                &format!("{path}.averageUtilization"),
                utilization,
                "must be greater than 0",
            ));
        }
    }
    errs
}

/// `validateMetricIdentifier`: a name that is a path segment.
fn validate_metric_identifier(identifier: Option<&Value>, path: &str) -> Vec<FieldError> {
    let empty = json!({});
    let name = text(present(identifier).unwrap_or(&empty), "name");
    if name.is_empty() {
        return vec![FieldError::required(&format!("{path}.name"), "must specify a metric name")];
    }
    names::path_segment_name(name, false)
        .into_iter()
        .map(|msg| FieldError::invalid(&format!("{path}.name"), name, &msg))
        .collect()
}

/// `validateScalingRules`.
fn validate_scaling_rules(rules: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(window) = present(rules.get("stabilizationWindowSeconds")).and_then(Value::as_i64) {
        let field = format!("{path}.stabilizationWindowSeconds");
        if window < 0 {
            errs.push(FieldError::invalid_int(&field, window, "must be greater than or equal to zero"));
        }
        if window > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid_int(
                &field,
                window,
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(policy) = present(rules.get("selectPolicy")).and_then(Value::as_str) {
        if !SELECT_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported(&format!("{path}.selectPolicy"), policy, SELECT_POLICIES));
        }
    }
    let policies = rules.get("policies").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if policies.is_empty() {
        errs.push(FieldError::required(&format!("{path}.policies"), "must specify at least one Policy"));
    }
    for (i, policy) in policies.iter().enumerate() {
        errs.extend(validate_scaling_policy(policy, &format!("{path}.policies[{i}]")));
    }
    errs
}

/// `validateScalingPolicy`.
fn validate_scaling_policy(policy: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = text(policy, "type");
    if !POLICY_TYPES.contains(&kind) {
        errs.push(FieldError::not_supported(&format!("{path}.type"), kind, POLICY_TYPES));
    }
    let value = int(policy, "value").unwrap_or(0);
    if value <= 0 {
        errs.push(FieldError::invalid_int(&format!("{path}.value"), value, "must be greater than zero"));
    }
    let period = int(policy, "periodSeconds").unwrap_or(0);
    if period <= 0 {
        errs.push(FieldError::invalid_int(&format!("{path}.periodSeconds"), period, "must be greater than zero"));
    }
    if period > MAX_PERIOD_SECONDS {
        errs.push(FieldError::invalid_int(
            &format!("{path}.periodSeconds"),
            period,
            &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
        ));
    }
    errs
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`: the metadata update and non-negative replica counts.
pub(crate) fn validate_status_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
    for field in ["currentReplicas", "desiredReplicas"] {
        let value = new.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0);
        if value < 0 {
            errs.push(FieldError::invalid_int(&format!("status.{field}"), value, "must be greater than or equal to 0"));
        }
    }
    errs
}

/// What decoding a v2 request does: the round-trip annotations go and the v2 defaults apply.
pub(crate) fn decode_v2(obj: &mut Value) {
    drop_round_trip_annotations(obj);
    set_defaults(obj);
}

/// The HorizontalPodAutoscaler strategy of `autoscaling/v2`.
struct HorizontalPodAutoscalers;

impl Strategy for HorizontalPodAutoscalers {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn decode(&self, obj: &mut Value) {
        decode_v2(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
        fill_status(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
        fill_status(new);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
        fill_status(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_hpa(obj, None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_hpa(new, Some(old))
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_status_update(new, old)
    }
}

impl DeleteStrategy for HorizontalPodAutoscalers {}

const SPEC: &str = "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec";
const STATUS: &str = "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus";

/// The columns of `printHorizontalPodAutoscaler`, which both versions print (every one a string, though
/// two cells are numbers).
pub(crate) fn columns() -> Vec<Column> {
    vec![
        name_column(),
        doc_column("Reference", "string", SPEC, "scaleTargetRef", 0),
        doc_column("Targets", "string", SPEC, "metrics", 0),
        doc_column("MinPods", "string", SPEC, "minReplicas", 0),
        doc_column("MaxPods", "string", SPEC, "maxReplicas", 0),
        doc_column("Replicas", "string", STATUS, "currentReplicas", 0),
        age_column(),
    ]
}

fn printer() -> Printer {
    Printer { columns: columns(), cells: |obj, now, _| cells(obj, now) }
}

/// The cells of a v2 object: reference `Kind/name`, the targets, `<unset>` for no `minReplicas`.
pub(crate) fn cells(obj: &Value, now: i64) -> Vec<Value> {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let reference = spec.get("scaleTargetRef").unwrap_or(&empty);
    let min = match present(spec.get("minReplicas")).and_then(Value::as_i64) {
        Some(min) => min.to_string(),
        None => "<unset>".into(),
    };
    let statuses = obj.pointer("/status/currentMetrics").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let specs = spec.get("metrics").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    vec![
        name(obj),
        Value::from(format!("{}/{}", text(reference, "kind"), text(reference, "name"))),
        Value::from(format_metrics(specs, statuses)),
        Value::from(min),
        Value::from(int(spec, "maxReplicas").unwrap_or(0)),
        Value::from(obj.pointer("/status/currentReplicas").and_then(Value::as_i64).unwrap_or(0)),
        age(obj, now),
    ]
}

/// A quantity as `Quantity.String()` prints it (`<nil>` for a nil pointer); the stored text as is.
fn quantity(value: Option<&Value>) -> String {
    match present(value) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "<nil>".into(),
    }
}

/// The `i`th status's source `field`, if there is one.
fn status_source<'a>(statuses: &'a [Value], i: usize, field: &str) -> Option<&'a Value> {
    statuses.get(i).and_then(|s| present(s.get(field)))
}

/// `formatHPAMetrics`: each metric's `current/target` (at most two, then `+ N more...`).
fn format_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".into();
    }
    let unknown = || "<unknown>".to_string();
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let current_of = |field: &str, key: &str| {
            status_source(statuses, i, field).map(|s| quantity(s.pointer(&format!("/current/{key}"))))
        };
        let entry = match text(spec, "type") {
            kind @ ("External" | "Object") => {
                let field = if kind == "External" { "external" } else { "object" };
                let target = spec.pointer(&format!("/{field}/target")).cloned().unwrap_or(Value::Null);
                if present(target.get("averageValue")).is_some() {
                    let current = status_source(statuses, i, field)
                        .and_then(|s| present(s.pointer("/current/averageValue")))
                        .map_or_else(unknown, |q| quantity(Some(q)));
                    format!("{current}/{} (avg)", quantity(target.get("averageValue")))
                } else {
                    let current = current_of(field, "value").unwrap_or_else(unknown);
                    format!("{current}/{}", quantity(target.get("value")))
                }
            }
            "Pods" => {
                let current = current_of("pods", "averageValue").unwrap_or_else(unknown);
                format!("{current}/{}", quantity(spec.pointer("/pods/target/averageValue")))
            }
            kind @ ("Resource" | "ContainerResource") => {
                let field = if kind == "Resource" { "resource" } else { "containerResource" };
                let source = spec.get(field).cloned().unwrap_or(Value::Null);
                let resource = source.get("name").and_then(Value::as_str).unwrap_or("");
                if present(source.pointer("/target/averageValue")).is_some() {
                    let current = current_of(field, "averageValue").unwrap_or_else(unknown);
                    format!("{resource}: {current}/{}", quantity(source.pointer("/target/averageValue")))
                } else {
                    let current = status_source(statuses, i, field)
                        .and_then(|s| present(s.pointer("/current/averageUtilization")))
                        .and_then(Value::as_i64)
                        .map_or_else(unknown, |u| format!("{u}%"));
                    let target = present(source.pointer("/target/averageUtilization"))
                        .and_then(Value::as_i64)
                        .map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
                    format!("{resource}: {current}/{target}")
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > 2 {
        list.truncate(2);
        return format!("{} + {} more...", list.join(", "), count - 2);
    }
    list.join(", ")
}

/// A metadata map with `key` set to `value` (or removed for `None`), for the conversions.
pub(crate) fn set_annotation(obj: &mut Value, key: &str, value: Option<String>) {
    let mut annotations = match meta::get(obj, "annotations") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    match value {
        Some(v) => {
            annotations.insert(key.into(), Value::from(v));
        }
        None => {
            if annotations.remove(key).is_none() {
                return;
            }
        }
    }
    let annotations = (!annotations.is_empty()).then_some(Value::Object(annotations));
    meta::set(obj, "annotations", annotations);
}

#[cfg(test)]
mod tests;
