//! ConfigMaps (`KK/pkg/registry/core/configmap/strategy.go`): namespaced, names are DNS subdomains, keys
//! of `data` and `binaryData` are config keys, no generation, no status.

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::Strategy;

/// The descriptor of `configmaps`.
pub fn resource() -> Resource {
    Resource::core("ConfigMap", "configmaps")
}

/// The ConfigMap strategy.
pub struct ConfigMaps;

/// `IsConfigMapKey`'s message for a key with other characters.
const CONFIG_KEY_MESSAGE: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// `IsConfigMapKey`: the key becomes a file name when mounted, so it is limited to a safe alphabet.
fn config_key(key: &str) -> Vec<String> {
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

fn validate_data(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for section in ["data", "binaryData"] {
        let Some(map) = obj.get(section).and_then(Value::as_object) else { continue };
        for key in map.keys() {
            for msg in config_key(key) {
                errs.push(FieldError::invalid(&format!("{section}[{key}]"), key, &msg));
            }
        }
    }
    errs
}

impl Strategy for ConfigMaps {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_data(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_data(new));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for ConfigMaps {}
