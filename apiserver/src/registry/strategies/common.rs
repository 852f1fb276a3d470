//! What several strategies share: field selectors read from JSON pointers, the status rules of resources
//! with a `/status` subresource, the config-key rule of configmaps and secrets, and their `immutable`
//! flag.

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;

/// The field selector keys a kind supports beyond `metadata.name` and `metadata.namespace`: the key, the
/// JSON pointer of its value, and the value when the field is absent (Go's zero value as text: `""`, or
/// `"false"` for a boolean).
pub(crate) type SelectableFields = &'static [(&'static str, &'static str, &'static str)];

/// The value of selector `key` of `obj`, if `fields` has it.
pub(crate) fn selectable(fields: SelectableFields, obj: &Value, key: &str) -> Option<String> {
    let (_, pointer, zero) = fields.iter().find(|(k, _, _)| *k == key)?;
    Some(match obj.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => zero.to_string(),
    })
}

/// Whether `fields` has selector `key`.
pub(crate) fn supports(fields: SelectableFields, key: &str) -> bool {
    fields.iter().any(|(k, _, _)| *k == key)
}

/// The main endpoint's rule for kinds with `/status`: the status is the stored one.
pub(crate) fn keep_status(new: &mut Value, old: &Value) {
    match old.get("status") {
        Some(status) => new["status"] = status.clone(),
        None => {
            new.as_object_mut().map(|o| o.remove("status"));
        }
    }
}

/// The status strategy's rule: everything but the status is the stored object's (metadata included,
/// except what any update may change: labels, annotations, finalizers, ownerReferences, and the
/// resourceVersion that preconditions the write).
pub(crate) fn keep_all_but_status(new: &mut Value, old: &Value) {
    let status = new.get("status").cloned();
    let metadata = new.get("metadata").cloned();
    *new = old.clone();
    match status {
        Some(status) => new["status"] = status,
        None => {
            new.as_object_mut().map(|o| o.remove("status"));
        }
    }
    if let Some(Value::Object(m)) = metadata {
        for field in ["labels", "annotations", "finalizers", "ownerReferences", "resourceVersion"] {
            meta::set(new, field, m.get(field).cloned());
        }
    }
}

/// `IsConfigMapKey`'s message for a key with other characters.
const CONFIG_KEY_MESSAGE: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// `IsConfigMapKey`: a key becomes a file name when mounted, so it is limited to a safe alphabet.
pub(crate) fn config_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > names::DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(format!("must be no more than {} characters", names::DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if key.is_empty() || !key.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')) {
        errs.push(CONFIG_KEY_MESSAGE.to_string());
    }
    match key {
        "." => errs.push("must not be '.'".into()),
        ".." => errs.push("must not be '..'".into()),
        _ if key.starts_with("..") => errs.push("must not start with '..'".into()),
        _ => {}
    }
    errs
}

/// The keys of `sections` (`data`, `binaryData`) as config keys.
pub(crate) fn validate_config_keys(obj: &Value, sections: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for section in sections {
        let Some(map) = obj.get(*section).and_then(Value::as_object) else { continue };
        for key in map.keys() {
            for msg in config_key(key) {
                errs.push(FieldError::invalid(&format!("{section}[{key}]"), key, &msg));
            }
        }
    }
    errs
}

/// The rule of `immutable: true` (configmaps and secrets): once set, neither it nor `sections` change.
pub(crate) fn validate_immutable(new: &Value, old: &Value, sections: &[&str]) -> Vec<FieldError> {
    const DETAIL: &str = "field is immutable when `immutable` is set";
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let mut errs = Vec::new();
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errs.push(FieldError::forbidden("immutable", DETAIL));
    }
    for section in sections {
        let empty = json!({});
        let (a, b) = (new.get(*section).unwrap_or(&empty), old.get(*section).unwrap_or(&empty));
        if a != b {
            errs.push(FieldError::forbidden(section, DETAIL));
        }
    }
    errs
}

/// `ValidateImmutableField`: `field` of `new` must equal `old`'s.
pub(crate) fn immutable(new: Option<&Value>, old: Option<&Value>, field: &str) -> Option<FieldError> {
    if new == old {
        return None;
    }
    let shown = match new {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Some(FieldError::invalid(field, &shown, "field is immutable"))
}
