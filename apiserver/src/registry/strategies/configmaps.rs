//! ConfigMaps (`KK/pkg/registry/core/configmap/strategy.go`): namespaced, names are DNS subdomains, keys
//! of `data` and `binaryData` are config keys, `immutable: true` freezes them, no generation, no status.

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::Strategy;

/// The descriptor of `configmaps`.
pub fn resource() -> Resource {
    Resource::core("ConfigMap", "configmaps")
}

/// The ConfigMap strategy.
pub struct ConfigMaps;

/// The sections whose keys are config keys and which `immutable` freezes.
const SECTIONS: &[&str] = &["data", "binaryData"];

impl Strategy for ConfigMaps {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(common::validate_config_keys(obj, SECTIONS));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(common::validate_config_keys(new, SECTIONS));
        errs.extend(common::validate_immutable(new, old, SECTIONS));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for ConfigMaps {}
