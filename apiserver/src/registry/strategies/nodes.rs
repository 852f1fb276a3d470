//! Nodes (`KK/pkg/registry/core/node/strategy.go`): cluster-scoped, names are DNS subdomains; a kubelet
//! registers its node with its status, so a create keeps the status, while the main endpoint keeps the
//! stored one and `/status` changes only it; `spec.podCIDR`, once set, never changes.

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common::{self, SelectableFields};
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `nodes`.
pub(crate) fn resource() -> Resource {
    Resource { etcd_prefix: "minions".into(), ..Resource::core("Node", "nodes") }
}

/// The Node strategy.
pub(crate) struct Nodes;

const FIELDS: SelectableFields = &[("spec.unschedulable", "/spec/unschedulable", "false")];

fn validate_pod_cidr(new: &Value, old: &Value) -> Vec<FieldError> {
    let old_cidr = old.pointer("/spec/podCIDR").and_then(Value::as_str).unwrap_or("");
    if old_cidr.is_empty() {
        return Vec::new();
    }
    let new_cidr = new.pointer("/spec/podCIDR");
    if new_cidr.and_then(Value::as_str) == Some(old_cidr) {
        return Vec::new();
    }
    vec![FieldError::forbidden("spec.podCIDR", "node updates may not change podCIDR except from \"\" to valid")]
}

impl Strategy for Nodes {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        meta::validate_object_meta(obj, false, names::name_is_dns_subdomain)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_pod_cidr(new, old));
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

impl crate::registry::strategy::DeleteStrategy for Nodes {}
