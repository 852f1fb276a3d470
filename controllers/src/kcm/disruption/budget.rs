//! The disruption controller's arithmetic, sans-IO (`pkg/controller/disruption/disruption.go` 1.32, with
//! `intstr.GetScaledValueFromIntOrPercent`, `pkg/apis/policy/v1/helper` `UpdateDisruptionAllowedCondition`
//! and `ConditionsAreUpToDate`, and apimachinery's `meta.SetStatusCondition`): how many pods a budget
//! expects and wants healthy, how many are healthy, which recorded disruptions still stand, and the status
//! (with its `DisruptionAllowed` condition) to write, or nothing when the stored one is current.
//!
//! Times are unix microseconds in, RFC 3339 seconds (`metav1.Time`) out.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::super::replicaset::pods::{controller_ref, is_deleting, is_ready};
use crate::runtime::time::parse_time_us;

/// `DeletionTimeout`: how long a pod an eviction recorded may take to go before the budget counts it again.
pub const DELETION_TIMEOUT_US: i64 = 2 * 60 * 1_000_000;
/// `stalePodDisruptionTimeout`: how long a `DisruptionTarget` condition may stand on a pod nobody deletes.
pub const STALE_POD_DISRUPTION_TIMEOUT_US: i64 = 2 * 60 * 1_000_000;

/// The condition type and its reasons (`policy/v1` constants).
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
pub const SUFFICIENT_PODS: &str = "SufficientPods";
pub const INSUFFICIENT_PODS: &str = "InsufficientPods";
pub const SYNC_FAILED: &str = "SyncFailed";

/// `intstr.GetScaledValueFromIntOrPercent`: an integer as is, a percentage of `total`, rounded up or down.
pub fn scaled_value(value: &Value, total: i64, round_up: bool) -> Result<i64, String> {
    let (number, percent) = match value {
        Value::Number(n) => (n.as_i64().unwrap_or(0), false),
        Value::String(s) => {
            let Some(digits) = s.strip_suffix('%') else {
                return Err("invalid value for IntOrString: invalid type: string is not a percentage".into());
            };
            let n = digits.parse::<i64>().map_err(|_| {
                format!("invalid value for IntOrString: invalid value \"{s}\": strconv.Atoi: parsing \"{digits}\": invalid syntax")
            })?;
            (n, true)
        }
        Value::Null => return Err("nil value for IntOrString".into()),
        _ => return Err("invalid value for IntOrString: invalid type: neither int nor percentage".into()),
    };
    if !percent {
        return Ok(number);
    }
    // Upstream computes through float64's ceil and floor; exact integer division agrees for these sizes.
    let product = number * total;
    Ok(if round_up {
        product.div_euclid(100) + i64::from(product.rem_euclid(100) != 0)
    } else {
        product.div_euclid(100)
    })
}

/// The workload kinds whose `spec.replicas` the finders read, and the API groups each may come from.
pub const SCALED_KINDS: &[(&str, &[&str])] = &[
    ("ReplicationController", &[""]),
    ("ReplicaSet", &["apps", "extensions"]),
    ("Deployment", &["apps", "extensions"]),
    ("StatefulSet", &["apps"]),
];

/// `verifyGroupKind`: whether an owner reference names `kind` in one of `groups`.
fn is_kind(reference: &Value, kind: &str, groups: &[&str]) -> bool {
    let api_version = reference.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    reference.get("kind").and_then(Value::as_str) == Some(kind) && groups.contains(&group)
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Reads a workload: `(kind, namespace, name)` to the cached object, if any.
pub type Lookup<'a> = dyn Fn(&str, &str, &str) -> Option<Value> + 'a;

/// The object `reference` names, if it is of `kind` (in one of its groups) and still the same object.
fn referenced(reference: &Value, kind: &str, namespace: &str, lookup: &Lookup<'_>) -> Option<Value> {
    let groups = SCALED_KINDS.iter().find(|(k, _)| *k == kind).map_or(&[][..], |(_, g)| *g);
    if !is_kind(reference, kind, groups) {
        return None;
    }
    let obj = lookup(kind, namespace, text(reference, "/name"))?;
    (text(&obj, "/metadata/uid") == text(reference, "/uid")).then_some(obj)
}

fn replicas(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)
}

/// The finders in upstream's order (`getPodReplicationController`, `getPodDeployment`, `getPodReplicaSet`,
/// `getPodStatefulSet`): the controller's UID and scale. A ReplicaSet a Deployment controls counts as its
/// Deployment. (The generic scale-subresource finder is not carried.)
pub fn find_scale(reference: &Value, namespace: &str, lookup: &Lookup<'_>) -> Option<(String, i64)> {
    let scale = |obj: &Value| (text(obj, "/metadata/uid").to_string(), replicas(obj));
    if let Some(rc) = referenced(reference, "ReplicationController", namespace, lookup) {
        return Some(scale(&rc));
    }
    if let Some(rs) = referenced(reference, "ReplicaSet", namespace, lookup) {
        match controller_ref(&rs) {
            Some(owner) => {
                if let Some(d) = referenced(owner, "Deployment", namespace, lookup) {
                    return Some(scale(&d));
                }
                if owner.get("kind").and_then(Value::as_str) != Some("Deployment") {
                    return Some(scale(&rs));
                }
            }
            None => return Some(scale(&rs)),
        }
    }
    referenced(reference, "StatefulSet", namespace, lookup).map(|ss| scale(&ss))
}

/// `getExpectedScale`: the sum of the scales of the pods' controllers, and the pods without one.
fn expected_scale(pods: &[Value], lookup: &Lookup<'_>) -> Result<(i64, Vec<String>), String> {
    let mut scales: BTreeMap<String, i64> = BTreeMap::new();
    let mut unmanaged = Vec::new();
    for pod in pods {
        let Some(reference) = controller_ref(pod) else {
            unmanaged.push(text(pod, "/metadata/name").to_string());
            continue;
        };
        if scales.contains_key(text(reference, "/uid")) {
            continue;
        }
        match find_scale(reference, text(pod, "/metadata/namespace"), lookup) {
            Some((uid, scale)) => {
                scales.insert(uid, scale);
            }
            None => return Err(format!("found no controllers for pod \"{}\"", text(pod, "/metadata/name"))),
        }
    }
    Ok((scales.values().sum(), unmanaged))
}

/// What `getExpectedPodCount` finds: expected pods, desired healthy, the unmanaged pods' names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub expected: i64,
    pub desired_healthy: i64,
    pub unmanaged: Vec<String>,
}

/// `getExpectedPodCount`: `maxUnavailable` and a percentage `minAvailable` need the controllers' scale; an
/// integer `minAvailable` counts the selected pods.
pub fn expected_pod_count(budget: &Value, pods: &[Value], lookup: &Lookup<'_>) -> Result<Expected, String> {
    let mut out = Expected { expected: 0, desired_healthy: 0, unmanaged: Vec::new() };
    if let Some(max) = budget.pointer("/spec/maxUnavailable").filter(|v| !v.is_null()) {
        (out.expected, out.unmanaged) = expected_scale(pods, lookup)?;
        let max = scaled_value(max, out.expected, true)?;
        out.desired_healthy = (out.expected - max).max(0);
    } else if let Some(min) = budget.pointer("/spec/minAvailable").filter(|v| !v.is_null()) {
        if let Some(n) = min.as_i64() {
            out.desired_healthy = n;
            out.expected = pods.len() as i64;
        } else if min.is_string() {
            (out.expected, out.unmanaged) = expected_scale(pods, lookup)?;
            out.desired_healthy = scaled_value(min, out.expected, true)?;
        }
    }
    Ok(out)
}

/// What `buildDisruptedPodMap` keeps: the recorded disruptions of live pods not yet overdue, when to look
/// again (the earliest due time), and the pods overdue (a `NotDeleted` event each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disrupted {
    pub pods: BTreeMap<String, String>,
    pub recheck_at_us: Option<i64>,
    pub overdue: Vec<String>,
}

/// `buildDisruptedPodMap` at `now_us`.
pub fn disrupted_pods(budget: &Value, pods: &[Value], now_us: i64) -> Disrupted {
    let mut out = Disrupted::default();
    let Some(recorded) = budget.pointer("/status/disruptedPods").and_then(Value::as_object) else { return out };
    for pod in pods.iter().filter(|p| !is_deleting(p)) {
        let name = text(pod, "/metadata/name");
        let Some(at) = recorded.get(name) else { continue };
        let due_us = at.as_str().and_then(parse_time_us).unwrap_or(0) + DELETION_TIMEOUT_US;
        if due_us < now_us {
            out.overdue.push(name.to_string());
        } else {
            out.recheck_at_us = Some(out.recheck_at_us.map_or(due_us, |r| r.min(due_us)));
            out.pods.insert(name.to_string(), at.as_str().unwrap_or("").to_string());
        }
    }
    out
}

/// `countHealthyPods`: ready pods that are neither being deleted nor recorded as disrupted.
pub fn healthy_pods(pods: &[Value], disrupted: &BTreeMap<String, String>, now_us: i64) -> i64 {
    let counted = pods.iter().filter(|pod| {
        let pending_disruption = disrupted
            .get(text(pod, "/metadata/name"))
            .and_then(|at| parse_time_us(at))
            .is_some_and(|at| at + DELETION_TIMEOUT_US > now_us);
        !is_deleting(pod) && !pending_disruption && is_ready(pod)
    });
    counted.count() as i64
}

fn status_int(budget: &Value, field: &str) -> i64 {
    budget.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0)
}

fn conditions_of(budget: &Value) -> Vec<Value> {
    budget.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// `meta.SetStatusCondition`: adds the condition, or updates the one of its type; the transition time
/// moves only when the status changes.
pub fn set_condition(conditions: &mut Vec<Value>, wanted: Value, now: &str) {
    let kind = wanted["type"].clone();
    match conditions.iter_mut().find(|c| c["type"] == kind) {
        None => {
            let mut new = wanted;
            new["lastTransitionTime"] = json!(now);
            conditions.push(new);
        }
        Some(existing) => {
            if existing["status"] != wanted["status"] {
                existing["status"] = wanted["status"].clone();
                existing["lastTransitionTime"] = json!(now);
            }
            for field in ["reason", "message", "observedGeneration"] {
                existing[field] = wanted[field].clone();
            }
        }
    }
}

/// The `DisruptionAllowed` condition (its transition time left to [`set_condition`]).
fn allowed_condition(status: &str, reason: &str, message: &str, observed_generation: i64) -> Value {
    json!({"type": DISRUPTION_ALLOWED, "status": status, "observedGeneration": observed_generation, "reason": reason, "message": message})
}

/// `ConditionsAreUpToDate`.
fn conditions_up_to_date(budget: &Value) -> bool {
    let conditions = conditions_of(budget);
    let Some(c) = conditions.iter().find(|c| c["type"] == DISRUPTION_ALLOWED) else { return false };
    if c.get("observedGeneration").and_then(Value::as_i64).unwrap_or(0) != status_int(budget, "observedGeneration") {
        return false;
    }
    if status_int(budget, "disruptionsAllowed") > 0 {
        c["status"] == "True" && c["reason"] == SUFFICIENT_PODS
    } else {
        c["status"] == "False" && c["reason"] == INSUFFICIENT_PODS
    }
}

/// What one sync found for a budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts {
    pub current_healthy: i64,
    pub desired_healthy: i64,
    pub expected: i64,
    pub disrupted: BTreeMap<String, String>,
}

/// `updatePdbStatus`: the budget with its new status, or `None` when the stored status already says it.
pub fn next_status(budget: &Value, counts: &Counts, now: &str) -> Option<Value> {
    let mut allowed = counts.current_healthy - counts.desired_healthy;
    if counts.expected <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let generation = budget.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
    let stored_disrupted: BTreeMap<String, String> = budget
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
        .unwrap_or_default();
    let current = status_int(budget, "currentHealthy") == counts.current_healthy
        && status_int(budget, "desiredHealthy") == counts.desired_healthy
        && status_int(budget, "expectedPods") == counts.expected
        && status_int(budget, "disruptionsAllowed") == allowed
        && stored_disrupted == counts.disrupted
        && status_int(budget, "observedGeneration") == generation
        && conditions_up_to_date(budget);
    if current {
        return None;
    }
    let mut conditions = conditions_of(budget);
    let wanted = if allowed > 0 {
        allowed_condition("True", SUFFICIENT_PODS, "", generation)
    } else {
        allowed_condition("False", INSUFFICIENT_PODS, "", generation)
    };
    set_condition(&mut conditions, wanted, now);
    let mut status = Map::new();
    status.insert("observedGeneration".into(), json!(generation));
    if !counts.disrupted.is_empty() {
        status.insert("disruptedPods".into(), json!(counts.disrupted));
    }
    status.insert("disruptionsAllowed".into(), json!(allowed));
    status.insert("currentHealthy".into(), json!(counts.current_healthy));
    status.insert("desiredHealthy".into(), json!(counts.desired_healthy));
    status.insert("expectedPods".into(), json!(counts.expected));
    status.insert("conditions".into(), Value::Array(conditions));
    let mut out = budget.clone();
    out["status"] = Value::Object(status);
    Some(out)
}

/// `failSafe`: no disruptions allowed, and the condition says why the sync failed.
pub fn fail_safe(budget: &Value, error: &str, now: &str) -> Value {
    let mut out = budget.clone();
    if !out.get("status").is_some_and(Value::is_object) {
        out["status"] = json!({});
    }
    out["status"]["disruptionsAllowed"] = json!(0);
    let mut conditions = conditions_of(budget);
    let observed = status_int(budget, "observedGeneration");
    set_condition(&mut conditions, allowed_condition("False", SYNC_FAILED, error, observed), now);
    out["status"]["conditions"] = Value::Array(conditions);
    out
}

/// `nonTerminatingPodHasStaleDisruptionCondition`: for a pod not being deleted, not terminal, with a
/// `DisruptionTarget` condition that is `True` and not the kubelet's, how long until it is stale (zero when
/// it is already).
pub fn stale_disruption_wait_us(pod: &Value, now_us: i64) -> Option<i64> {
    if is_deleting(pod) || matches!(text(pod, "/status/phase"), "Succeeded" | "Failed") {
        return None;
    }
    let conditions = pod.pointer("/status/conditions").and_then(Value::as_array)?;
    let c = conditions.iter().find(|c| c["type"] == "DisruptionTarget")?;
    if c["status"] != "True" || c["reason"] == "TerminationByKubelet" {
        return None;
    }
    let since = c.get("lastTransitionTime").and_then(Value::as_str).and_then(parse_time_us).unwrap_or(0);
    Some((STALE_POD_DISRUPTION_TIMEOUT_US - (now_us - since)).max(0))
}

/// `UpdatePodCondition` with `DisruptionTarget=False`: the pod with the condition replaced (no reason or
/// message), or `None` when nothing changes.
pub fn clear_disruption_condition(pod: &Value, now: &str) -> Option<Value> {
    let mut out = pod.clone();
    let conditions = out.pointer_mut("/status/conditions").and_then(Value::as_array_mut)?;
    let c = conditions.iter_mut().find(|c| c["type"] == "DisruptionTarget")?;
    if c["status"] == "False" && c.get("reason").is_none() && c.get("message").is_none() {
        return None;
    }
    let transition = if c["status"] == "False" { c["lastTransitionTime"].clone() } else { json!(now) };
    *c =
        json!({"type": "DisruptionTarget", "status": "False", "lastProbeTime": null, "lastTransitionTime": transition});
    Some(out)
}

/// `LabelSelector.String()` as `%v` prints a budget's selector in the `UnmanagedPods` event.
pub fn selector_string(selector: Option<&Value>) -> String {
    let Some(selector) = selector.filter(|s| !s.is_null()) else { return "nil".into() };
    let mut labels = String::from("map[string]string{");
    if let Some(map) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in map {
            labels.push_str(&format!("{k}: {},", v.as_str().unwrap_or("")));
        }
    }
    labels.push('}');
    let mut exprs = String::from("[]LabelSelectorRequirement{");
    for e in selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let values: Vec<&str> =
            e.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        exprs.push_str(&format!(
            "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
            text(e, "/key"),
            text(e, "/operator"),
            values.join(" ")
        ));
    }
    exprs.push('}');
    format!("&LabelSelector{{MatchLabels:{labels},MatchExpressions:{exprs},}}")
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
