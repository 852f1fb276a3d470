//! The sans-IO core of the ResourceQuota plugin: what a pod must state under a quota, and `CheckRequest`
//! (`KK/staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`): the new usage of
//! each quota, or upstream's refusal. What an object uses and which quotas it falls under are
//! [`crate::quota`]'s, which the quota controller counts with too.
//!
//! Go iterates maps in random order where a message lists several resources; here they are in name order,
//! which is also what upstream's sorted lists (`prettyPrint`) print.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::support::{items, text};
pub(crate) use crate::quota::{
    add, compute_usage, list_at, mask, pod_total, resources, subtract_non_negative, to_json, Evaluator, Usage,
};
use crate::registry::admission::Operation;

/// The resources whose every container must state a request or limit when a quota limits them
/// (`validationSet`).
const VALIDATION_SET: &[&str] = &["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/// The admission plugin's part of the pod evaluator: which requests it judges, and what a pod must state.
impl Evaluator {
    /// `Handles`: whether the operation can change what the resource uses. Pods are counted on create
    /// only (resizing in place is off in 1.32); services and claims also on update (a type change, an
    /// expansion); anything else on create.
    pub(crate) fn handles(&self, op: Operation, subresource: &str) -> bool {
        match self {
            Evaluator::Pods => subresource.is_empty() && op == Operation::Create,
            Evaluator::Services | Evaluator::Claims => matches!(op, Operation::Create | Operation::Update),
            Evaluator::Count { .. } => op == Operation::Create,
        }
    }

    /// `Constraints`: the pod evaluator's demand that every container state what a quota limits.
    pub(crate) fn constraints(&self, required: &[String], obj: &Value) -> Result<(), String> {
        if *self != Evaluator::Pods {
            return Ok(());
        }
        let required: BTreeSet<&str> =
            required.iter().map(String::as_str).filter(|r| VALIDATION_SET.contains(r)).collect();
        let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for list in ["/spec/containers", "/spec/initContainers"] {
            for container in items(obj, list) {
                let usage = compute_usage(&resources(container, "requests"), &resources(container, "limits"));
                for resource in required.iter().filter(|r| !usage.contains_key(**r)) {
                    missing.entry(resource.to_string()).or_default().insert(text(container, "/name").to_string());
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let parts: Vec<String> = missing
            .iter()
            .map(|(resource, names)| format!("{resource} for: {}", names.iter().cloned().collect::<Vec<_>>().join(",")))
            .collect();
        Err(format!("must specify {}", parts.join("; ")))
    }
}

/// `prettyPrint`: `name=quantity` pairs in name order.
fn pretty(usage: &Usage) -> String {
    usage.iter().map(|(k, v)| format!("{k}={}", v.to_text())).collect::<Vec<_>>().join(",")
}

/// The request `CheckRequest` judges.
pub(crate) struct Check<'a> {
    pub(crate) evaluator: &'a Evaluator,
    pub(crate) operation: Operation,
    pub(crate) subresource: &'a str,
    pub(crate) obj: &'a Value,
    /// The object before an update (`Null` on create).
    pub(crate) old: &'a Value,
}

/// `CheckRequest` over the namespace's quotas: the new `status.used` of each quota the request changes
/// (by index), or why the request is refused (the Forbidden's reason).
pub(crate) fn check_request(quotas: &[Value], check: &Check<'_>) -> Result<BTreeMap<usize, Usage>, String> {
    let ev = check.evaluator;
    let mut interesting = Vec::new();
    for (i, quota) in quotas.iter().enumerate() {
        let hard_names: Vec<String> = list_at(quota, "/status/hard").into_keys().collect();
        let restricted = ev.matching(&hard_names);
        if restricted.is_empty() || !ev.in_scopes(quota, check.obj) {
            continue;
        }
        let name = text(quota, "/metadata/name");
        ev.constraints(&restricted, check.obj).map_err(|e| format!("failed quota: {name}: {e}"))?;
        let used = list_at(quota, "/status/used");
        if !restricted.iter().all(|r| used.contains_key(r)) {
            let mut names = restricted.clone();
            names.sort();
            return Err(format!("status unknown for quota: {name}, resources: {}", names.join(",")));
        }
        interesting.push(i);
    }
    if interesting.is_empty() {
        return Ok(BTreeMap::new());
    }
    let input = ev.usage(check.obj, None);
    let negative: Vec<String> = input.iter().filter(|(_, q)| q.is_negative()).map(|(k, _)| k.clone()).collect();
    if !negative.is_empty() {
        return Err(format!("quota usage is negative for resource(s): {}", negative.join(",")));
    }
    let mut deltas: BTreeMap<usize, Usage> = interesting.iter().map(|i| (*i, input.clone())).collect();
    let has_rv = !text(check.old, "/metadata/resourceVersion").is_empty();
    if check.operation == Operation::Update && has_rv {
        let delta = subtract_non_negative(&input, &ev.usage(check.old, None));
        for i in &interesting {
            let hard_names: Vec<String> = list_at(&quotas[*i], "/status/hard").into_keys().collect();
            if !ev.matching(&hard_names).is_empty() && ev.in_scopes(&quotas[*i], check.old) {
                deltas.insert(*i, delta.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    for (i, delta) in deltas {
        let delta: Usage = delta.into_iter().filter(|(_, q)| !q.is_zero()).collect();
        if delta.is_empty() {
            continue;
        }
        let quota = &quotas[i];
        let hard = list_at(quota, "/status/hard");
        let used = list_at(quota, "/status/used");
        let hard_names: Vec<String> = hard.keys().cloned().collect();
        let requested = mask(&delta, &hard_names);
        let new_used = add(&used, &requested);
        if check.subresource != "status" {
            let exceeded: Vec<String> = requested
                .keys()
                .filter(|k| matches!((new_used.get(*k), hard.get(*k)), (Some(u), Some(h)) if u > h))
                .cloned()
                .collect();
            if !exceeded.is_empty() {
                return Err(format!(
                    "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                    text(quota, "/metadata/name"),
                    pretty(&mask(&requested, &exceeded)),
                    pretty(&mask(&used, &exceeded)),
                    pretty(&mask(&hard, &exceeded)),
                ));
            }
        }
        if new_used != used || requested.keys().any(|k| !used.contains_key(k)) {
            out.insert(i, new_used);
        }
    }
    Ok(out)
}
