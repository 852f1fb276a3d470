//! DaemonSets (`KK/pkg/registry/apps/daemonset/strategy.go`, `ValidateDaemonSet`): `apps/v1`,
//! namespaced, names are DNS subdomains; v1's defaults (a rolling update of one pod at a time, ten
//! revisions kept); the status belongs to `/status`; the generation follows the spec; the selector must
//! match the template and never changes. No `/scale`: a DaemonSet runs one pod per node.

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation, workloads};
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `daemonsets`.
pub(crate) fn resource() -> Resource {
    Resource::apps("DaemonSet", "daemonsets")
}

/// The DaemonSet strategy.
pub(crate) struct DaemonSets;

fn set_defaults(obj: &mut Value) {
    workloads::default_at(obj, &["spec", "updateStrategy"], "type", json!("RollingUpdate"));
    if obj.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("RollingUpdate") {
        workloads::default_at(obj, &["spec", "updateStrategy", "rollingUpdate"], "maxUnavailable", json!(1));
        workloads::default_at(obj, &["spec", "updateStrategy", "rollingUpdate"], "maxSurge", json!(0));
    }
    workloads::default_spec_field(obj, "revisionHistoryLimit", json!(10));
    workloads::default_template(obj);
}

impl Strategy for DaemonSets {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        obj["status"] = json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        new["spec"] = old.get("spec").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(workloads::validate_selector_and_template(obj, &["Always"]));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(workloads::validate_selector_and_template(new, &["Always"]));
        errs.extend(workloads::validate_selector_unchanged(new, old));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for DaemonSets {}
