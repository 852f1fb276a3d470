//! The strategies of the built-in resources, one file each, what several share ([`common`]), and the
//! shared `generation` rule; among them the CRD kind's ([`customresourcedefinitions`]) and that of the
//! custom resources a CRD defines ([`customresources`]).

pub mod common;
pub mod configmaps;
pub mod customresourcedefinitions;
pub mod customresources;
pub mod daemonsets;
pub mod deployments;
pub mod endpoints;
pub mod events;
pub mod events_v1;
pub mod jobs;
pub mod leases;
pub mod namespaces;
pub mod nodes;
pub mod persistentvolumeclaims;
pub mod pod_binding;
pub mod pod_defaults;
pub mod pods;
pub mod quotas;
pub mod replicasets;
pub mod secrets;
pub mod serviceaccounts;
pub mod services;
pub mod statefulsets;
pub mod workloads;

use serde_json::Value;

use crate::registry::meta;

/// Sets `metadata.generation` to 1 on create, for types that track it.
pub(crate) fn start_generation(obj: &mut Value) {
    meta::set(obj, "generation", Some(Value::from(1)));
}

/// Bumps `metadata.generation` when `spec` changed: the main endpoint's rule.
pub(crate) fn bump_generation_on_spec_change(new: &mut Value, old: &Value) {
    if new.get("spec") != old.get("spec") {
        let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
        meta::set(new, "generation", Some(Value::from(generation + 1)));
    }
}
