//! ReplicaSets (`KK/pkg/registry/apps/replicaset/strategy.go`, `ValidateReplicaSet`): `apps/v1`,
//! namespaced, names are DNS subdomains; one replica by default; the status belongs to `/status`; the
//! generation follows the spec; the selector must match the template and never changes; `/scale` sets
//! `spec.replicas`. No controller runs: a ReplicaSet creates no pods.

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation, workloads};
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `replicasets`.
pub(crate) fn resource() -> Resource {
    Resource::apps("ReplicaSet", "replicasets")
}

/// The ReplicaSet strategy.
pub(crate) struct ReplicaSets;

fn set_defaults(obj: &mut Value) {
    workloads::default_spec_field(obj, "replicas", json!(1));
    workloads::default_template(obj);
}

fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    errs.extend(workloads::validate_non_negative(obj, "/spec/replicas", "spec.replicas"));
    errs.extend(workloads::validate_selector_and_template(obj, &["Always"]));
    errs
}

impl Strategy for ReplicaSets {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        matches!(sub, Subresource::Status | Subresource::Scale)
    }

    fn to_scale(&self, obj: &Value) -> Option<Value> {
        Some(workloads::to_scale(obj))
    }

    fn apply_scale(&self, obj: &Value, scale: &Value) -> Option<Value> {
        Some(workloads::apply_scale(obj, scale))
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        obj["status"] = json!({"replicas": 0});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, sub: Subresource, new: &mut Value, old: &Value) {
        workloads::prepare_subresource_update(sub, new, old, true, |n, o| self.prepare_for_update(n, o));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        errs.extend(workloads::validate_selector_unchanged(new, old));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for ReplicaSets {}
