//! Object metadata over JSON: small accessors for `metadata.*`, and apimachinery's generic metadata checks
//! (`ValidateObjectMetaAccessor` and its update form) that every strategy runs with its own name check.

use serde_json::{Map, Value};

use crate::registry::field_error::FieldError;
use crate::registry::names::{self, NameCheck};

/// `metadata.<field>` as a string, "" if absent.
pub(crate) fn get_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("")
}

/// `metadata.<field>`, if present.
pub fn get<'a>(obj: &'a Value, field: &str) -> Option<&'a Value> {
    obj.get("metadata").and_then(|m| m.get(field))
}

/// `metadata` as a map, creating it (and making `obj` an object) if needed.
pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let root = obj.as_object_mut().expect("made an object above");
    let meta = root.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut().expect("made an object above")
}

/// Sets `metadata.<field>`, or removes it when `value` is `None`.
pub fn set(obj: &mut Value, field: &str, value: Option<Value>) {
    let meta = meta_mut(obj);
    match value {
        Some(v) => {
            meta.insert(field.to_string(), v);
        }
        None => {
            meta.remove(field);
        }
    }
}

/// Copies `metadata.<field>` from `from` into `to` (removing it from `to` if `from` lacks it).
pub(crate) fn copy(to: &mut Value, from: &Value, field: &str) {
    set(to, field, get(from, field).cloned());
}

/// The string pairs of `metadata.labels`.
pub(crate) fn labels(obj: &Value) -> impl Iterator<Item = (&str, &str)> {
    get(obj, "labels")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v))))
}

/// `ValidateObjectMetaAccessor`: name (or generateName) by `name_check`, namespace presence by scope, and
/// a non-negative generation.
pub fn validate_object_meta(obj: &Value, namespace_scoped: bool, name_check: NameCheck) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let generate_name = get_str(obj, "generateName");
    if !generate_name.is_empty() {
        for msg in name_check(generate_name, true) {
            errs.push(FieldError::invalid("metadata.generateName", generate_name, &msg));
        }
    }
    let name = get_str(obj, "name");
    if name.is_empty() {
        errs.push(FieldError::required("metadata.name", "name or generateName is required"));
    } else {
        for msg in name_check(name, false) {
            errs.push(FieldError::invalid("metadata.name", name, &msg));
        }
    }
    let namespace = get_str(obj, "namespace");
    if namespace_scoped {
        if namespace.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in names::name_is_dns_label(namespace, false) {
                errs.push(FieldError::invalid("metadata.namespace", namespace, &msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden("metadata.namespace", "not allowed on this type"));
    }
    let generation = get(obj, "generation").and_then(Value::as_i64).unwrap_or(0);
    if generation < 0 {
        errs.push(FieldError::invalid_int("metadata.generation", generation, "must be greater than or equal to 0"));
    }
    errs.extend(validate_labels(obj));
    errs.extend(validate_annotations(obj));
    errs
}

/// `ValidateLabels`: keys are qualified names, values label values; both reported at `metadata.labels`.
fn validate_labels(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in labels(obj) {
        for msg in names::qualified_name(key) {
            errs.push(FieldError::invalid("metadata.labels", key, &msg));
        }
        for msg in names::label_value(value) {
            errs.push(FieldError::invalid("metadata.labels", value, &msg));
        }
    }
    errs
}

/// `TotalAnnotationSizeLimitB`: keys and values together, 256 KiB.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// `ValidateAnnotations`: keys are qualified names (checked in lower case), and all of them together
/// stay within 256 KiB.
fn validate_annotations(obj: &Value) -> Vec<FieldError> {
    let Some(map) = get(obj, "annotations").and_then(Value::as_object) else { return Vec::new() };
    let mut errs = Vec::new();
    let mut total = 0;
    for (key, value) in map {
        for msg in names::qualified_name(&key.to_lowercase()) {
            errs.push(FieldError::invalid("metadata.annotations", key, &msg));
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    if total > ANNOTATIONS_MAX_BYTES {
        errs.push(FieldError {
            kind: crate::registry::field_error::FieldErrorType::TooLong,
            field: "metadata.annotations".into(),
            value: crate::registry::field_error::BadValue::Omitted,
            detail: format!("must have at most {ANNOTATIONS_MAX_BYTES} bytes"),
        });
    }
    errs
}

/// The strings of `metadata.finalizers`.
pub(crate) fn finalizers(obj: &Value) -> Vec<&str> {
    get(obj, "finalizers")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |f| f.iter().filter_map(Value::as_str).collect())
}

/// `ValidateObjectMetaAccessorUpdate`: the new metadata must be valid, and name, namespace, uid and
/// creationTimestamp may not change.
pub fn validate_object_meta_update(
    new: &Value,
    old: &Value,
    namespace_scoped: bool,
    name_check: NameCheck,
) -> Vec<FieldError> {
    let mut errs = validate_object_meta(new, namespace_scoped, name_check);
    for field in ["name", "namespace", "uid", "creationTimestamp"] {
        let (now, was) = (get_str(new, field), get_str(old, field));
        if now != was {
            errs.push(FieldError::invalid(&format!("metadata.{field}"), now, "field is immutable"));
        }
    }
    // `ValidateNoNewFinalizers`: once deletion has begun, only the finalizers already there may finish it.
    if !get_str(old, "deletionTimestamp").is_empty() {
        let before = finalizers(old);
        let mut extra: Vec<&str> = finalizers(new).into_iter().filter(|f| !before.contains(f)).collect();
        extra.sort_unstable();
        extra.dedup();
        if !extra.is_empty() {
            let shown: Vec<String> = extra.iter().map(|f| crate::go_text::quote(f)).collect();
            errs.push(FieldError::forbidden(
                "metadata.finalizers",
                &format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    shown.join(", ")
                ),
            ));
        }
    }
    errs
}
