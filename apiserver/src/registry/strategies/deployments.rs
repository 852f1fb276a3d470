//! Deployments (`KK/pkg/registry/apps/deployment/strategy.go`, `KK/pkg/apis/apps/v1/defaults.go`,
//! `ValidateDeployment`): `apps/v1`, namespaced, names are DNS subdomains; v1's defaults (one replica, a
//! 25 %/25 % rolling update, ten old ReplicaSets kept, a 600 s progress deadline, the pod template's
//! defaults); the status belongs to `/status` (whose strategy keeps the spec and the labels); the
//! generation follows the spec and the annotations; the selector must match the template and never
//! changes; `/scale` sets `spec.replicas`. What a Deployment makes is the deployment controller's
//! (`kubesim-controllers`), a client like any other.

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{common, start_generation, workloads};
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `deployments`.
pub(crate) fn resource() -> Resource {
    Resource::apps("Deployment", "deployments")
}

/// The Deployment strategy.
pub(crate) struct Deployments;

fn set_defaults(obj: &mut Value) {
    workloads::default_spec_field(obj, "replicas", json!(1));
    workloads::default_at(obj, &["spec", "strategy"], "type", json!("RollingUpdate"));
    if obj.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("RollingUpdate") {
        workloads::default_at(obj, &["spec", "strategy", "rollingUpdate"], "maxUnavailable", json!("25%"));
        workloads::default_at(obj, &["spec", "strategy", "rollingUpdate"], "maxSurge", json!("25%"));
    }
    workloads::default_spec_field(obj, "revisionHistoryLimit", json!(10));
    workloads::default_spec_field(obj, "progressDeadlineSeconds", json!(600));
    workloads::default_template(obj);
}

fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    errs.extend(workloads::validate_non_negative(obj, "/spec/replicas", "spec.replicas"));
    errs.extend(workloads::validate_selector_and_template(obj, &["Always"]));
    let kind = obj.pointer("/spec/strategy/type").and_then(Value::as_str).unwrap_or("");
    if !["Recreate", "RollingUpdate"].contains(&kind) {
        errs.push(FieldError::not_supported("spec.strategy.type", kind, &["Recreate", "RollingUpdate"]));
    }
    errs
}

impl Strategy for Deployments {
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
        obj["status"] = json!({});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        if new.get("spec") != old.get("spec") || meta::get(new, "annotations") != meta::get(old, "annotations") {
            let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
            meta::set(new, "generation", Some(Value::from(generation + 1)));
        }
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

impl crate::registry::strategy::DeleteStrategy for Deployments {}
