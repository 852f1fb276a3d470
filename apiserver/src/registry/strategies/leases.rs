//! Leases (`KK/pkg/registry/coordination/lease/strategy.go`): `coordination.k8s.io/v1`, namespaced,
//! names are DNS subdomains, and a lease's duration is positive and its transition count never negative
//! (`ValidateLease`). Leader election and node heartbeats write them.

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::Strategy;

/// The descriptor of `leases`.
pub(crate) fn resource() -> Resource {
    Resource {
        group: "coordination.k8s.io".into(),
        version: "v1".into(),
        kind: "Lease".into(),
        plural: "leases".into(),
        etcd_prefix: "leases".into(),
    }
}

/// The Lease strategy.
pub(crate) struct Leases;

fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(d) = obj.pointer("/spec/leaseDurationSeconds").and_then(Value::as_i64) {
        if d <= 0 {
            errs.push(FieldError::invalid_int("spec.leaseDurationSeconds", d, "must be greater than 0"));
        }
    }
    if let Some(t) = obj.pointer("/spec/leaseTransitions").and_then(Value::as_i64) {
        if t < 0 {
            errs.push(FieldError::invalid_int("spec.leaseTransitions", t, "must be greater than or equal to 0"));
        }
    }
    errs
}

impl Strategy for Leases {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for Leases {}
