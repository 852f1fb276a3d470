//! Secrets (`KK/pkg/registry/core/secret/strategy.go`): namespaced, names are DNS subdomains, `type`
//! defaults to `Opaque` and never changes, `stringData` is folded into `data` (the v1 conversion's rule:
//! it wins over `data` and is never stored), keys are config keys, the whole secret holds at most 1 MiB,
//! the well-known types require their keys, and `immutable: true` freezes the data.

use base64::Engine;
use serde_json::{json, Value};

use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common::{self, SelectableFields};
use crate::registry::strategy::Strategy;

/// The descriptor of `secrets`.
pub(crate) fn resource() -> Resource {
    Resource::core("Secret", "secrets")
}

/// The Secret strategy.
pub(crate) struct Secrets;

/// `MaxSecretSize`: all keys and values together.
pub(crate) const MAX_SECRET_BYTES: usize = 1024 * 1024;

const SECTIONS: &[&str] = &["data"];
const FIELDS: SelectableFields = &[("type", "/type", "")];

/// The keys each well-known type requires (`ValidateSecret`).
const REQUIRED_KEYS: &[(&str, &[&str])] = &[
    ("kubernetes.io/tls", &["tls.crt", "tls.key"]),
    ("kubernetes.io/dockerconfigjson", &[".dockerconfigjson"]),
    ("kubernetes.io/dockercfg", &[".dockercfg"]),
    ("kubernetes.io/ssh-auth", &["ssh-privatekey"]),
];

/// Folds `stringData` into `data`, as the v1 conversion does: its values win, base64-encoded.
fn fold_string_data(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    let Some(Value::Object(strings)) = map.remove("stringData") else { return };
    let data = map.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    let data = data.as_object_mut().expect("just made an object");
    for (key, value) in strings {
        let text = value.as_str().unwrap_or("");
        data.insert(key, Value::from(base64::engine::general_purpose::STANDARD.encode(text)));
    }
}

fn default_type(obj: &mut Value) {
    if obj.get("type").and_then(Value::as_str).unwrap_or("").is_empty() {
        obj["type"] = Value::from("Opaque");
    }
}

fn validate_data(obj: &Value) -> Vec<FieldError> {
    let mut errs = common::validate_config_keys(obj, SECTIONS);
    let data = obj.get("data").and_then(Value::as_object);
    let decoded_len = |v: &Value| {
        v.as_str().and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok()).map_or(0, |d| d.len())
    };
    let total: usize = data.map_or(0, |d| d.iter().map(|(k, v)| k.len() + decoded_len(v)).sum());
    if total > MAX_SECRET_BYTES {
        errs.push(FieldError {
            kind: FieldErrorType::TooLong,
            field: "data".into(),
            value: BadValue::Omitted,
            detail: format!("must have at most {MAX_SECRET_BYTES} bytes"),
        });
    }
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
    if let Some((_, keys)) = REQUIRED_KEYS.iter().find(|(t, _)| *t == kind) {
        for key in *keys {
            if data.and_then(|d| d.get(*key)).is_none() {
                errs.push(FieldError::required(&format!("data[{key}]"), ""));
            }
        }
    }
    if kind == "kubernetes.io/service-account-token"
        && meta::get(obj, "annotations").and_then(|a| a.get("kubernetes.io/service-account.name")).is_none()
    {
        errs.push(FieldError::required("metadata.annotations[kubernetes.io/service-account.name]", ""));
    }
    errs
}

impl Strategy for Secrets {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        fold_string_data(obj);
        default_type(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        fold_string_data(new);
        default_type(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_data(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_data(new));
        errs.extend(common::immutable(new.get("type"), old.get("type"), "type"));
        errs.extend(common::validate_immutable(new, old, SECTIONS));
        errs
    }

    fn selectable_field(&self, obj: &Value, key: &str) -> Option<String> {
        common::selectable(FIELDS, obj, key)
    }

    fn supports_field(&self, key: &str) -> bool {
        common::supports(FIELDS, key)
    }

    fn unsupported_field_message(&self, key: &str) -> String {
        format!("field label not supported: {key}")
    }
}

impl crate::registry::strategy::DeleteStrategy for Secrets {}
