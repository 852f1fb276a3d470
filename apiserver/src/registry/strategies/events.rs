//! Events (`KK/pkg/registry/core/event/strategy.go`): core/v1, namespaced, names are DNS subdomains, an
//! event about a namespaced object lives in that object's namespace, and they expire: the store writes
//! them under an etcd lease of `--event-ttl` (the server's `ServerOptions::event_ttl_s`), as upstream's
//! `TTLFunc` does, so that no event outlives its TTL by more than the lease reuse window.
//!
//! Field selectors are upstream's (`AddFieldLabelConversionsForEvent`); `source` is the reporting
//! component, or the reporting controller when the event names none.

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common::{self, SelectableFields};
use crate::registry::strategy::Strategy;

/// The descriptor of core `events`.
pub(crate) fn resource() -> Resource {
    Resource::core("Event", "events")
}

/// The core/v1 Event strategy.
pub(crate) struct Events;

const FIELDS: SelectableFields = &[
    ("involvedObject.kind", "/involvedObject/kind", ""),
    ("involvedObject.namespace", "/involvedObject/namespace", ""),
    ("involvedObject.name", "/involvedObject/name", ""),
    ("involvedObject.uid", "/involvedObject/uid", ""),
    ("involvedObject.apiVersion", "/involvedObject/apiVersion", ""),
    ("involvedObject.resourceVersion", "/involvedObject/resourceVersion", ""),
    ("involvedObject.fieldPath", "/involvedObject/fieldPath", ""),
    ("reason", "/reason", ""),
    ("reportingComponent", "/reportingComponent", ""),
    ("type", "/type", ""),
];

/// `ValidateEventCreate`'s namespace rule for the legacy API: the event's namespace is its object's.
fn validate_involved_object(obj: &Value) -> Vec<FieldError> {
    let namespace = meta::get_str(obj, "namespace");
    let involved = obj.pointer("/involvedObject/namespace").and_then(Value::as_str).unwrap_or("");
    if !involved.is_empty() && involved != namespace {
        return vec![FieldError::invalid("involvedObject.namespace", involved, "does not match event.namespace")];
    }
    Vec::new()
}

impl Strategy for Events {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn expires(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_involved_object(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_involved_object(new));
        errs
    }

    fn selectable_field(&self, obj: &Value, key: &str) -> Option<String> {
        if key == "source" {
            let component = obj.pointer("/source/component").and_then(Value::as_str).unwrap_or("");
            let controller = obj.get("reportingComponent").and_then(Value::as_str).unwrap_or("");
            return Some(if component.is_empty() { controller } else { component }.to_string());
        }
        common::selectable(FIELDS, obj, key)
    }

    fn supports_field(&self, key: &str) -> bool {
        key == "source" || common::supports(FIELDS, key)
    }

    fn unsupported_field_message(&self, key: &str) -> String {
        format!("field label not supported: {key}")
    }
}

impl crate::registry::strategy::DeleteStrategy for Events {}
