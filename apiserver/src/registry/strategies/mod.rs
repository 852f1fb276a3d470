//! The strategies of the built-in resources, one file each, what several share ([`common`]), and the
//! shared `generation` rule; among them the CRD kind's ([`customresourcedefinitions`]) and that of the
//! custom resources a CRD defines ([`customresources`]).

pub(crate) mod common;
pub mod configmaps;
pub(crate) mod customresourcedefinitions;
pub(crate) mod customresources;
pub(crate) mod daemonsets;
pub(crate) mod deployments;
pub(crate) mod endpoints;
pub(crate) mod events;
pub(crate) mod events_v1;
pub(crate) mod jobs;
pub(crate) mod leases;
pub mod namespaces;
pub(crate) mod nodes;
pub(crate) mod persistentvolumeclaims;
pub(crate) mod pod_binding;
pub(crate) mod pod_defaults;
pub mod pods;
pub(crate) mod quotas;
pub(crate) mod replicasets;
pub(crate) mod secrets;
pub(crate) mod serviceaccounts;
pub(crate) mod services;
pub(crate) mod statefulsets;
pub(crate) mod workloads;

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
