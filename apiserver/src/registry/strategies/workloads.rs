//! What the workload strategies share (deployments, replicasets, statefulsets, daemonsets, jobs): the
//! label selector (`metav1.LabelSelector`: matching, its text, Go's `%#v` of it for error messages), the
//! validation of a selector against its pod template (`ValidatePodTemplateSpecForReplicaSet` and
//! friends), and the `/scale` subresource's `autoscaling/v1` `Scale` view of an object.

use serde_json::{json, Map, Value};

use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::strategies::pod_defaults;
use crate::registry::strategy::Subresource;

/// Whether `labels` satisfy the `metav1.LabelSelector` `selector` (matchLabels and matchExpressions).
pub(crate) fn selector_matches(selector: &Value, labels: &Map<String, Value>) -> bool {
    let label = |key: &str| labels.get(key).and_then(Value::as_str);
    let match_labels = selector.get("matchLabels").and_then(Value::as_object);
    let labels_ok = match_labels.is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    labels_ok
        && expressions.iter().all(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map_or(vec![], |v| v.iter().filter_map(Value::as_str).collect());
            match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" => label(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            }
        })
}

/// Whether the selector selects nothing in particular (no labels, no expressions): kube refuses it.
pub(crate) fn selector_is_empty(selector: &Value) -> bool {
    let labels = selector.get("matchLabels").and_then(Value::as_object).is_none_or(Map::is_empty);
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).is_none_or(Vec::is_empty);
    labels && expressions
}

/// `metav1.LabelSelectorAsSelector(...).String()`: `app=web,tier in (a,b)`, requirements sorted by key.
pub(crate) fn selector_string(selector: &Value) -> String {
    let mut parts: Vec<(String, String)> = Vec::new();
    if let Some(m) = selector.get("matchLabels").and_then(Value::as_object) {
        parts.extend(m.iter().map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or("")))));
    }
    for e in selector.get("matchExpressions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("").to_string();
        let mut values: Vec<&str> =
            e.get("values").and_then(Value::as_array).map_or(vec![], |v| v.iter().filter_map(Value::as_str).collect());
        values.sort_unstable();
        let text = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        parts.push((key, text));
    }
    parts.sort();
    parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
}

/// `metav1.FormatLabelSelector`: the selector's text, `<none>` when it has none.
pub(crate) fn format_label_selector(selector: Option<&Value>) -> String {
    match selector {
        Some(s) if !s.is_null() => match selector_string(s) {
            text if text.is_empty() => "<none>".into(),
            text => text,
        },
        _ => "<none>".into(),
    }
}

/// Go's `%#v` of a `map[string]string` (keys sorted, as fmt sorts them), `map[string]string(nil)` for none.
pub(crate) fn go_string_map(map: Option<&Value>) -> String {
    match map.and_then(Value::as_object) {
        None => "map[string]string(nil)".into(),
        Some(m) => {
            let pairs: Vec<String> =
                m.iter().map(|(k, v)| format!("{}:{}", quote(k), quote(v.as_str().unwrap_or("")))).collect();
            format!("map[string]string{{{}}}", pairs.join(", "))
        }
    }
}

/// Go's `%#v` of a `v1.LabelSelector` as validation prints it (`field is immutable`).
pub(crate) fn go_label_selector(selector: Option<&Value>) -> String {
    let Some(selector) = selector.filter(|s| !s.is_null()) else { return "(*v1.LabelSelector)(nil)".into() };
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    let values = match e.get("values").and_then(Value::as_array) {
                        None => "[]string(nil)".to_string(),
                        Some(v) => format!(
                            "[]string{{{}}}",
                            v.iter().map(|x| quote(x.as_str().unwrap_or(""))).collect::<Vec<_>>().join(", ")
                        ),
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        quote(e.get("key").and_then(Value::as_str).unwrap_or("")),
                        quote(e.get("operator").and_then(Value::as_str).unwrap_or(""))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        go_string_map(selector.get("matchLabels"))
    )
}

/// `spec.selector` required, not empty, and matching `spec.template.metadata.labels`; the template's pod
/// spec valid, with a restart policy among `restart_policies` (the first is what the message lists).
pub(crate) fn validate_selector_and_template(obj: &Value, restart_policies: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let selector = obj.pointer("/spec/selector").filter(|s| !s.is_null());
    let labels = obj.pointer("/spec/template/metadata/labels").and_then(Value::as_object);
    match selector {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(s) if selector_is_empty(s) => errs.push(FieldError {
            kind: FieldErrorType::Invalid,
            field: "spec.selector".into(),
            value: BadValue::GoSyntax(go_label_selector(Some(s))),
            detail: "empty selector is invalid for deployment".into(),
        }),
        Some(s) => {
            let empty = Map::new();
            if !selector_matches(s, labels.unwrap_or(&empty)) {
                errs.push(FieldError {
                    kind: FieldErrorType::Invalid,
                    field: "spec.template.metadata.labels".into(),
                    value: BadValue::GoSyntax(go_string_map(obj.pointer("/spec/template/metadata/labels"))),
                    detail: "`selector` does not match template `labels`".into(),
                });
            }
        }
    }
    errs.extend(validate_template_spec(obj, restart_policies));
    errs
}

/// The template's pod spec: containers with names and images, and an allowed restart policy.
pub(crate) fn validate_template_spec(obj: &Value, restart_policies: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let containers =
        obj.pointer("/spec/template/spec/containers").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if containers.is_empty() {
        errs.push(FieldError::required("spec.template.spec.containers", ""));
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        let path = format!("spec.template.spec.containers[{i}]");
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{path}.name"), ""));
        } else {
            for msg in names::dns1123_label(name) {
                errs.push(FieldError::invalid(&format!("{path}.name"), name, &msg));
            }
            if seen.contains(&name) {
                errs.push(FieldError {
                    kind: FieldErrorType::Duplicate,
                    field: format!("{path}.name"),
                    value: BadValue::Str(name.into()),
                    detail: String::new(),
                });
            }
            seen.push(name);
        }
        if c.get("image").and_then(Value::as_str).unwrap_or("").trim().is_empty() {
            errs.push(FieldError::required(&format!("{path}.image"), ""));
        }
    }
    let policy = obj.pointer("/spec/template/spec/restartPolicy").and_then(Value::as_str).unwrap_or("");
    if !restart_policies.contains(&policy) {
        errs.push(FieldError::not_supported("spec.template.spec.restartPolicy", policy, restart_policies));
    }
    errs
}

/// `spec.replicas` (or another count) at least 0.
pub(crate) fn validate_non_negative(obj: &Value, pointer: &str, field: &str) -> Option<FieldError> {
    let value = obj.pointer(pointer).and_then(Value::as_i64)?;
    (value < 0).then(|| FieldError::invalid_int(field, value, "must be greater than or equal to 0"))
}

/// `spec.selector` may not change once set (apps/v1).
pub(crate) fn validate_selector_unchanged(new: &Value, old: &Value) -> Option<FieldError> {
    let (a, b) = (new.pointer("/spec/selector"), old.pointer("/spec/selector"));
    (a != b).then(|| FieldError {
        kind: FieldErrorType::Invalid,
        field: "spec.selector".into(),
        value: BadValue::GoSyntax(go_label_selector(a)),
        detail: "field is immutable".into(),
    })
}

/// Applies the pod defaults to the object's template, and gives the template's metadata the
/// `creationTimestamp: null` Go writes for an embedded `ObjectMeta` (its `metav1.Time` is a struct, which
/// `omitempty` does not leave out), as every kube-apiserver answer shows it.
pub(crate) fn default_template(obj: &mut Value) {
    if let Some(spec) = obj.pointer_mut("/spec/template/spec") {
        pod_defaults::default_pod_spec(spec);
    }
    if let Some(template) = obj.pointer_mut("/spec/template").and_then(Value::as_object_mut) {
        let metadata = template.entry("metadata").or_insert_with(|| json!({}));
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.entry("creationTimestamp").or_insert(Value::Null);
        }
    }
}

/// Sets `field` of `spec` when absent.
pub(crate) fn default_spec_field(obj: &mut Value, field: &str, value: Value) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        if spec.get(field).is_none_or(Value::is_null) {
            spec.insert(field.into(), value);
        }
    }
}

/// The scale subresource's reset: everything is the stored object's but `spec.replicas` (and the
/// resourceVersion that preconditions the write).
pub(crate) fn keep_all_but_replicas(new: &mut Value, old: &Value) {
    let replicas = new.pointer("/spec/replicas").cloned();
    let rv = meta::get(new, "resourceVersion").cloned();
    *new = old.clone();
    if !new.get("spec").is_some_and(Value::is_object) {
        new["spec"] = json!({});
    }
    match replicas {
        Some(r) => new["spec"]["replicas"] = r,
        None => {
            new["spec"].as_object_mut().map(|s| s.remove("replicas"));
        }
    }
    meta::set(new, "resourceVersion", rv);
}

/// Sets `field` under the object at `path` (created if absent) when it is absent, null or an empty
/// string: how Go's defaulters fill a zero field of a struct the client sent partly
/// (`spec.strategy: {}` gets its type).
pub(crate) fn default_at(obj: &mut Value, path: &[&str], field: &str, value: Value) {
    let mut at = obj;
    for key in path {
        if !at.is_object() {
            return;
        }
        let next = at.as_object_mut().expect("checked").entry(*key).or_insert_with(|| json!({}));
        if next.is_null() {
            *next = json!({});
        }
        at = next;
    }
    let Some(map) = at.as_object_mut() else { return };
    let unset = match map.get(field) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    };
    if unset {
        map.insert(field.into(), value);
    }
}

/// A replicated workload's subresource resets: `/scale` is an update of `spec.replicas` alone, through the
/// main endpoint's rules (`main_update`: defaults, status kept, generation bumped); `/status` keeps the stored
/// spec, and the stored labels where the kind's status strategy keeps them too (deployments, replicasets).
pub(crate) fn prepare_subresource_update(
    sub: Subresource,
    new: &mut Value,
    old: &Value,
    status_keeps_labels: bool,
    main_update: impl FnOnce(&mut Value, &Value),
) {
    if sub == Subresource::Scale {
        keep_all_but_replicas(new, old);
        main_update(new, old);
        return;
    }
    new["spec"] = old.get("spec").cloned().unwrap_or(json!({}));
    if status_keeps_labels {
        meta::copy(new, old, "labels");
    }
}

/// The `autoscaling/v1` `Scale` of an object with `spec.replicas`, `status.replicas` and a label selector.
pub(crate) fn to_scale(obj: &Value) -> Value {
    let mut metadata = Map::new();
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(v) = meta::get(obj, field) {
            metadata.insert(field.into(), v.clone());
        }
    }
    let mut spec = Map::new();
    if let Some(r) = obj.pointer("/spec/replicas").and_then(Value::as_i64).filter(|r| *r != 0) {
        spec.insert("replicas".into(), Value::from(r));
    }
    let mut status = Map::new();
    status.insert("replicas".into(), Value::from(obj.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0)));
    let selector = obj.pointer("/spec/selector").map(selector_string).unwrap_or_default();
    if !selector.is_empty() {
        status.insert("selector".into(), Value::from(selector));
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata, "spec": spec, "status": status})
}

/// The object with the replicas a `Scale` asks for; the Scale's resourceVersion, if any, becomes the
/// object's, so that a stale Scale conflicts as a stale object would.
pub(crate) fn apply_scale(obj: &Value, scale: &Value) -> Value {
    let mut new = obj.clone();
    let replicas = scale.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
    new["spec"]["replicas"] = Value::from(replicas);
    match meta::get_str(scale, "resourceVersion") {
        "" => meta::set(&mut new, "resourceVersion", None),
        rv => meta::set(&mut new, "resourceVersion", Some(Value::from(rv))),
    }
    new
}

/// `ValidateScale`: the replicas asked for are not negative.
pub(crate) fn validate_scale(scale: &Value) -> Vec<FieldError> {
    validate_non_negative(scale, "/spec/replicas", "spec.replicas").into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_and_print_as_kube_does() {
        let selector = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]});
        let labels = json!({"app": "web", "tier": "a"});
        assert!(selector_matches(&selector, labels.as_object().unwrap()));
        assert!(!selector_matches(&selector, json!({"app": "web"}).as_object().unwrap()));
        assert_eq!(selector_string(&selector), "app=web,tier in (a,b)");
        assert_eq!(format_label_selector(None), "<none>");
        assert_eq!(
            go_label_selector(Some(&json!({"matchLabels": {"app": "web"}}))),
            "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
    }

    #[test]
    fn a_template_must_match_its_selector() {
        let obj = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "i"}]}}}});
        let errs: Vec<String> =
            validate_selector_and_template(&obj, &["Always"]).iter().map(ToString::to_string).collect();
        assert_eq!(errs, ["spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"db\"}: `selector` does not match template `labels`"]);
    }

    #[test]
    fn scale_is_a_view_of_replicas() {
        let obj = json!({"metadata": {"name": "d", "namespace": "n", "resourceVersion": "7", "labels": {"x": "y"}}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}, "status": {"replicas": 2}});
        let scale = to_scale(&obj);
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(scale["status"], json!({"replicas": 2, "selector": "app=web"}));
        assert_eq!(scale["metadata"], json!({"name": "d", "namespace": "n", "resourceVersion": "7"}));
        let scaled = apply_scale(&obj, &json!({"spec": {"replicas": 5}, "metadata": {"resourceVersion": "7"}}));
        assert_eq!(scaled["spec"]["replicas"], 5);
        assert_eq!(scaled["metadata"]["labels"], json!({"x": "y"}));
    }
}
