//! What one sync of a StatefulSet does to its pods (kube-controller-manager 1.32,
//! `pkg/controller/statefulset/stateful_set_control.go` `updateStatefulSet`, `processReplica`,
//! `processCondemned`, `runForAll`; with `stateful_pod_control.go`'s `ClaimsMatchRetentionPolicy` and
//! `PodClaimIsStale` over the claim cache). Sans-IO: the set, its two revisions, its pods and the cached
//! claims in; the status and a [`Plan`] of requests out, which `sync` carries out.
//!
//! Pods with an ordinal in `[start, start + replicas)` are replicas, the rest with a valid ordinal are
//! condemned. Under `OrderedReady` ("monotonic") the replicas are processed in ordinal order and the first
//! that is missing (created now), terminating, not running and ready, or not available ends the sync;
//! condemned pods go highest ordinal first, one per sync, and only while everything below is healthy
//! (the first unhealthy pod itself may go). Under `Parallel` nothing waits. A failed or succeeded replica
//! is deleted, to be created afresh on a later sync. With every replica in place, a rolling update deletes
//! the highest replica (by index, down to the partition) not at the update revision, one per sync, and
//! waits while one at or above the partition is unhealthy; `OnDelete` leaves updates to the user.
//!
//! The plan's steps for one pod (a "unit") run in order; in parallel mode units run in slow-start batches.
//! Under `OrderedReady` a unit that ends the sync is the plan's last.

use serde_json::Value;

use super::identity::{
    allows_burst, claim_name, claims_for, end_ordinal, identity_matches, in_ordinal_range, is_created, is_failed,
    is_healthy, is_pending, is_running_and_available, is_running_and_ready, is_succeeded, is_terminating, meta,
    min_ready_seconds, new_versioned_pod, ordinal, pod_revision, start_ordinal, storage_matches,
};
use super::retention::{claim_is_stale, is_claim_owner_up_to_date};
use super::status::Status;

/// One request the sync makes (the pod as the plan saw it).
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// `DeleteStatefulPod`: a failed or succeeded replica, or a condemned pod.
    Delete(Value),
    /// `DeleteStatefulPod` of a rolling update: `currentReplicas` drops by one once it is done.
    DeleteForUpdate(Value),
    /// `CreateStatefulPod`: the claims, then the pod, then the claims' owners.
    Create(Value),
    /// `createMissingPersistentVolumeClaims` of a pending pod.
    CreateMissingClaims(Value),
    /// `UpdateStatefulPod`: identity, storage and the claims' owners put right.
    Update(Value),
    /// `UpdatePodClaimForRetentionPolicy` of a condemned pod.
    FixClaims(Value),
}

/// One `runForAll`: units in order, or in slow-start batches when parallel.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub parallel: bool,
    pub units: Vec<Vec<Step>>,
}

/// The status the sync reports and the requests it makes.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub status: Status,
    pub phases: Vec<Phase>,
    /// The pods in range, by index (those still to be created as the plan builds them).
    pub replicas: Vec<Value>,
}

/// What the plan is made from.
pub struct Inputs<'a> {
    pub set: &'a Value,
    /// The set at its current and at its update revision (`ApplyRevision`).
    pub current_set: &'a Value,
    pub update_set: &'a Value,
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    pub collision_count: i32,
    /// The pods the set claimed.
    pub pods: &'a [Value],
    /// The cached claim of a name in the set's namespace.
    pub claims: &'a dyn Fn(&str) -> Option<Value>,
    pub now_us: i64,
}

/// `ClaimsMatchRetentionPolicy`: every existing claim of the pod has the owners the policy wants.
pub fn claims_match_retention_policy(set: &Value, pod: &Value, claims: &dyn Fn(&str) -> Option<Value>) -> bool {
    let ord = ordinal(pod);
    let templates = set.pointer("/spec/volumeClaimTemplates").and_then(Value::as_array).cloned().unwrap_or_default();
    templates.iter().all(|template| match claims(&claim_name(set, meta(template, "name"), ord)) {
        // A claim not there yet is picked up on a later sync.
        None => true,
        Some(claim) => is_claim_owner_up_to_date(&claim, set, pod),
    })
}

/// `PodClaimIsStale`.
pub fn pod_claim_is_stale(set: &Value, pod: &Value, claims: &dyn Fn(&str) -> Option<Value>) -> bool {
    claims_for(set, pod)
        .values()
        .any(|claim| claims(meta(claim, "name")).is_some_and(|existing| claim_is_stale(set, &existing, pod)))
}

/// `processReplica`: the steps for one replica, and whether it ends an ordered sync.
fn process_replica(inputs: &Inputs, monotonic: bool, pod: &Value) -> (Vec<Step>, bool) {
    let (set, update_set) = (inputs.set, inputs.update_set);
    if is_failed(pod) || is_succeeded(pod) {
        // The replacement is created on a later sync, once this pod is gone from the apiserver.
        let steps = if is_terminating(pod) { vec![] } else { vec![Step::Delete(pod.clone())] };
        return (steps, true);
    }
    let mut steps = Vec::new();
    if !is_created(pod) {
        if pod_claim_is_stale(set, pod, inputs.claims) {
            // A claim of an earlier pod of this name is still to be collected: nothing more this round.
            return (steps, true);
        }
        steps.push(Step::Create(pod.clone()));
        if monotonic {
            return (steps, true);
        }
    }
    if is_pending(pod) {
        steps.push(Step::CreateMissingClaims(pod.clone()));
    }
    if monotonic
        && (is_terminating(pod)
            || !is_running_and_ready(pod)
            || !is_running_and_available(pod, min_ready_seconds(set), inputs.now_us))
    {
        return (steps, true);
    }
    let retention_match = claims_match_retention_policy(update_set, pod, inputs.claims);
    if !(identity_matches(set, pod) && storage_matches(set, pod) && retention_match) {
        steps.push(Step::Update(pod.clone()));
    }
    (steps, false)
}

/// `processCondemned`: the steps for one condemned pod, and whether it ends an ordered sync.
fn process_condemned(
    set: &Value,
    monotonic: bool,
    first_unhealthy: Option<&str>,
    pod: &Value,
    now_us: i64,
) -> (Vec<Step>, bool) {
    if is_terminating(pod) {
        return (vec![], monotonic);
    }
    let is_first_unhealthy = first_unhealthy == Some(meta(pod, "name"));
    if monotonic
        && !is_first_unhealthy
        && (!is_running_and_ready(pod) || !is_running_and_available(pod, min_ready_seconds(set), now_us))
    {
        return (vec![], true);
    }
    (vec![Step::Delete(pod.clone())], true)
}

/// Adds a `runForAll` over `work` to `phases`; under `OrderedReady` the units end at the first that ends
/// the sync, and the return says whether one did.
fn run_for_all(phases: &mut Vec<Phase>, monotonic: bool, work: Vec<(Vec<Step>, bool)>) -> bool {
    let mut units = Vec::new();
    let mut exited = false;
    for (steps, exits) in work {
        units.push(steps);
        if monotonic && exits {
            exited = true;
            break;
        }
    }
    units.retain(|u| !u.is_empty());
    if !units.is_empty() {
        phases.push(Phase { parallel: !monotonic, units });
    }
    exited
}

/// `updateStatefulSet`: the status and the requests of one sync.
pub fn plan(inputs: &Inputs) -> Plan {
    let set = inputs.set;
    let min_ready = min_ready_seconds(set);
    let mut status = Status {
        observed_generation: set.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0),
        current_revision: inputs.current_revision.to_string(),
        update_revision: inputs.update_revision.to_string(),
        collision_count: inputs.collision_count,
        ..Status::default()
    };
    status.count(inputs.pods, min_ready, inputs.now_us);

    let start = start_ordinal(set);
    let count = usize::try_from(end_ordinal(set) - start + 1).unwrap_or(0);
    let mut replicas: Vec<Option<Value>> = vec![None; count];
    let mut condemned = Vec::new();
    for pod in inputs.pods {
        if in_ordinal_range(pod, set) {
            replicas[usize::try_from(ordinal(pod) - start).unwrap_or(0)] = Some(pod.clone());
        } else if ordinal(pod) >= 0 {
            condemned.push(pod.clone());
        }
    }
    let replicas: Vec<Value> = replicas
        .into_iter()
        .zip(start..)
        .map(|(pod, ord)| {
            pod.unwrap_or_else(|| {
                new_versioned_pod(
                    inputs.current_set,
                    inputs.update_set,
                    inputs.current_revision,
                    inputs.update_revision,
                    ord,
                )
            })
        })
        .collect();
    // Highest ordinal first (stable, as upstream's sort of distinct ordinals).
    condemned.sort_by_key(|p| std::cmp::Reverse(ordinal(p)));

    let first_unhealthy =
        replicas.iter().chain(condemned.iter().rev()).find(|p| !is_healthy(p)).map(|p| meta(p, "name").to_string());

    let mut plan = Plan { status, phases: Vec::new(), replicas: replicas.clone() };
    if set.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
        // A set being deleted only reports.
        return plan;
    }
    plan.status.reset_counts();
    plan.status.count(&replicas, min_ready, inputs.now_us);
    plan.status.count(&condemned, min_ready, inputs.now_us);

    let monotonic = !allows_burst(set);
    let work = replicas.iter().map(|pod| process_replica(inputs, monotonic, pod)).collect();
    if run_for_all(&mut plan.phases, monotonic, work) {
        return plan;
    }
    // Condemned pods' claims take the owners their policy wants before the pods go.
    let work = condemned
        .iter()
        .map(|pod| {
            let steps = if claims_match_retention_policy(inputs.update_set, pod, inputs.claims) {
                vec![]
            } else {
                vec![Step::FixClaims(pod.clone())]
            };
            (steps, false)
        })
        .collect();
    run_for_all(&mut plan.phases, monotonic, work);
    let work = condemned
        .iter()
        .map(|pod| process_condemned(set, monotonic, first_unhealthy.as_deref(), pod, inputs.now_us))
        .collect();
    if run_for_all(&mut plan.phases, monotonic, work) {
        return plan;
    }
    if set.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("OnDelete") {
        return plan;
    }
    // The partition bounds the index into the replicas, as upstream compares it.
    let partition = set.pointer("/spec/updateStrategy/rollingUpdate/partition").and_then(Value::as_i64).unwrap_or(0);
    for (index, pod) in replicas.iter().enumerate().rev() {
        if i64::try_from(index).unwrap_or(i64::MAX) < partition {
            break;
        }
        if pod_revision(pod) != inputs.update_revision && !is_terminating(pod) {
            plan.phases.push(Phase { parallel: false, units: vec![vec![Step::DeleteForUpdate(pod.clone())]] });
            break;
        }
        if !is_healthy(pod) {
            break;
        }
    }
    plan
}

#[cfg(test)]
#[path = "control_tests.rs"]
mod tests;
