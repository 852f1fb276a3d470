//! StatefulSets (`KK/pkg/registry/apps/statefulset/strategy.go`, `ValidateStatefulSet`): `apps/v1`,
//! namespaced, names are DNS subdomains; v1's defaults (one replica, `OrderedReady`, rolling updates
//! from partition 0, ten revisions kept, PVCs retained); the status belongs to `/status`; the generation
//! follows the spec; an update may change only the replicas, the template, the update strategy, the PVC
//! retention policy, the ordinals and `minReadySeconds`; `/scale` sets `spec.replicas`.

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation, workloads};
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `statefulsets`.
pub(crate) fn resource() -> Resource {
    Resource::apps("StatefulSet", "statefulsets")
}

/// The StatefulSet strategy.
pub(crate) struct StatefulSets;

/// The spec fields an update may change (`ValidateStatefulSetUpdate`).
const MUTABLE: &[&str] =
    &["replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds"];

fn set_defaults(obj: &mut Value) {
    workloads::default_spec_field(obj, "replicas", json!(1));
    workloads::default_at(obj, &["spec"], "podManagementPolicy", json!("OrderedReady"));
    workloads::default_at(obj, &["spec", "updateStrategy"], "type", json!("RollingUpdate"));
    if obj.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("RollingUpdate") {
        workloads::default_at(obj, &["spec", "updateStrategy", "rollingUpdate"], "partition", json!(0));
    }
    workloads::default_spec_field(obj, "revisionHistoryLimit", json!(10));
    for field in ["whenDeleted", "whenScaled"] {
        workloads::default_at(obj, &["spec", "persistentVolumeClaimRetentionPolicy"], field, json!("Retain"));
    }
    workloads::default_template(obj);
}

fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    errs.extend(workloads::validate_non_negative(obj, "/spec/replicas", "spec.replicas"));
    errs.extend(workloads::validate_selector_and_template(obj, &["Always"]));
    let policy = obj.pointer("/spec/podManagementPolicy").and_then(Value::as_str).unwrap_or("");
    if !["OrderedReady", "Parallel"].contains(&policy) {
        errs.push(FieldError::not_supported("spec.podManagementPolicy", policy, &["OrderedReady", "Parallel"]));
    }
    errs
}

fn validate_spec_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let strip = |obj: &Value| {
        let mut spec = obj.get("spec").cloned().unwrap_or(json!({}));
        if let Some(map) = spec.as_object_mut() {
            for field in MUTABLE {
                map.remove(*field);
            }
        }
        spec
    };
    if strip(new) == strip(old) {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    )]
}

impl Strategy for StatefulSets {
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
        obj["status"] = json!({"replicas": 0, "availableReplicas": 0});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, sub: Subresource, new: &mut Value, old: &Value) {
        workloads::prepare_subresource_update(sub, new, old, false, |n, o| self.prepare_for_update(n, o));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        errs.extend(validate_spec_update(new, old));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for StatefulSets {}
