//! PersistentVolumeClaims (`KK/pkg/registry/core/persistentvolumeclaim/strategy.go`): namespaced, names
//! are DNS subdomains, a new claim is `Pending`, the status belongs to `/status`, a claim needs an access
//! mode and a storage request, and after creation only `spec.resources.requests` (expansion) and
//! `spec.volumeAttributesClassName` may change, plus the binding of `spec.volumeName` from "".

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `persistentvolumeclaims`.
pub(crate) fn resource() -> Resource {
    Resource::core("PersistentVolumeClaim", "persistentvolumeclaims")
}

/// The PersistentVolumeClaim strategy.
pub(crate) struct PersistentVolumeClaims;

/// The access modes a claim may ask for.
const ACCESS_MODES: &[&str] = &["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];

fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let modes = obj.pointer("/spec/accessModes").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes", "at least 1 access mode is required"));
    }
    for mode in modes {
        let mode = mode.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.accessModes", mode, ACCESS_MODES));
        }
    }
    if obj.pointer("/spec/resources/requests/storage").is_none() {
        errs.push(FieldError::required("spec.resources[storage]", ""));
    }
    errs
}

/// `ValidatePersistentVolumeClaimUpdate`'s rule: the spec with its changeable parts taken from the old
/// claim must be the old spec.
fn validate_spec_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut spec = new.get("spec").cloned().unwrap_or(json!({}));
    let old_spec = old.get("spec").cloned().unwrap_or(json!({}));
    for field in ["resources", "volumeAttributesClassName"] {
        match old_spec.get(field) {
            Some(v) => spec[field] = v.clone(),
            None => {
                spec.as_object_mut().map(|s| s.remove(field));
            }
        }
    }
    // Binding sets the volume name once.
    if old_spec.get("volumeName").and_then(Value::as_str).unwrap_or("").is_empty() {
        match old_spec.get("volumeName") {
            Some(v) => spec["volumeName"] = v.clone(),
            None => {
                spec.as_object_mut().map(|s| s.remove("volumeName"));
            }
        }
    }
    if spec == old_spec {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
    )]
}

impl Strategy for PersistentVolumeClaims {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending"});
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.entry("volumeMode").or_insert_with(|| Value::from("Filesystem"));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec_update(new, old));
        errs
    }
}

/// The persistentvolumeclaims store answers a delete with the deleted object (`ReturnDeletedObject`).
impl crate::registry::strategy::DeleteStrategy for PersistentVolumeClaims {
    fn return_deleted_object(&self) -> bool {
        true
    }
}
