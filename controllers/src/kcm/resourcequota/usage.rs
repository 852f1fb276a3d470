//! The quota controller's part of counting (`pkg/controller/resourcequota/resource_quota_controller.go`):
//! which evaluators a quota needs, `syncResourceQuota`'s new status, and which updates replenish a quota.
//! What each object uses is the apiserver's [`apiserver::quota`], the port its ResourceQuota admission plugin
//! counts with, so that both writers of a quota's status count alike.

use serde_json::{json, Value};

pub use apiserver::quota::{add, calculate, list_at, pod_is_charged, to_json, Evaluator, Usage};

/// The evaluators a quota needs: those tracking one of its `spec.hard` resources.
pub fn evaluators_for(quota: &Value) -> Vec<Evaluator> {
    let mut out: Vec<Evaluator> = list_at(quota, "/spec/hard").keys().filter_map(|n| Evaluator::for_name(n)).collect();
    out.sort();
    out.dedup();
    out
}

/// `syncResourceQuota`'s write: `status.hard` from `spec.hard`, `status.used` the old usage overwritten by
/// `counted` and kept to the hard resources; `None` when neither the limits nor the usage changed.
pub fn new_status(quota: &Value, counted: &Usage) -> Option<Value> {
    let hard = list_at(quota, "/spec/hard");
    let limits_dirty = hard != list_at(quota, "/status/hard")
        || quota.pointer("/status/hard").is_none_or(Value::is_null)
        || quota.pointer("/status/used").is_none_or(Value::is_null);
    let old_used = list_at(quota, "/status/used");
    let mut used = old_used.clone();
    for (k, v) in counted {
        used.insert(k.clone(), *v);
    }
    used.retain(|k, _| hard.contains_key(k));
    if !limits_dirty && used == old_used {
        return None;
    }
    let mut out = quota.clone();
    out["status"] = json!({"hard": to_json(&hard), "used": to_json(&used)});
    Some(out)
}

/// Whether a change of one object from `old` to `new` can change a quota's count (the quota monitor's
/// replenishment on update: a pod turning terminal, a service changing type or ports, a claim resized).
pub fn update_replenishes(evaluator: &Evaluator, old: &Value, new: &Value, now_us: i64) -> bool {
    let now_us = Some(now_us);
    match evaluator {
        Evaluator::Count { .. } => false,
        _ => evaluator.usage(old, now_us) != evaluator.usage(new, now_us),
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
