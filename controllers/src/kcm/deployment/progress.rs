//! Whether a rollout progresses, finished, or is stuck (kube-controller-manager 1.32,
//! `pkg/controller/deployment/progress.go`: `syncRolloutStatus`'s status, `getReplicaFailures`,
//! `requeueStuckDeployment`; `sync.go` `checkPausedConditions`; `util/deployment_util.go`:
//! `DeploymentComplete`, `DeploymentProgressing`, `DeploymentTimedOut`, `HasProgressDeadline`,
//! `HasRevisionHistoryLimit`, and the `Progressing` reasons). Sans-IO: the Deployment, its ReplicaSets and
//! the time in, the new status and when to look again out.
//!
//! The `Progressing` condition says `NewReplicaSetCreated` or `FoundNewReplicaSet` when a rollout starts,
//! `ReplicaSetUpdated` each time pods move (its update time refreshed, its transition time kept),
//! `NewReplicaSetAvailable` when it is complete, and `ProgressDeadlineExceeded` (status `False`) when
//! nothing moved for `progressDeadlineSeconds`; pausing and resuming set `DeploymentPaused` and
//! `DeploymentResumed` (status `Unknown`), so that time spent paused never counts as being stuck. A
//! stuck-looking rollout is looked at again when its deadline would pass.

use std::time::Duration;

use serde_json::Value;

use super::status::{calculate, Condition, Status, PROGRESSING, REPLICA_FAILURE};
use super::util::{meta, replicas};
use crate::kcm::replicaset::pods::parse_time_us;

/// `ReplicaSetUpdatedReason`.
pub const REPLICA_SET_UPDATED: &str = "ReplicaSetUpdated";
/// `FailedRSCreateReason`.
pub const FAILED_RS_CREATE: &str = "ReplicaSetCreateError";
/// `NewReplicaSetReason`.
pub const NEW_REPLICA_SET: &str = "NewReplicaSetCreated";
/// `FoundNewRSReason`.
pub const FOUND_NEW_RS: &str = "FoundNewReplicaSet";
/// `NewRSAvailableReason`.
pub const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
/// `TimedOutReason`.
pub const TIMED_OUT: &str = "ProgressDeadlineExceeded";
/// `PausedDeployReason`.
pub const PAUSED: &str = "DeploymentPaused";
/// `ResumedDeployReason`.
pub const RESUMED: &str = "DeploymentResumed";

/// `HasProgressDeadline`: set, and not `MaxInt32` (which means none).
pub fn has_progress_deadline(d: &Value) -> bool {
    progress_deadline_seconds(d).is_some()
}

fn progress_deadline_seconds(d: &Value) -> Option<i64> {
    d.pointer("/spec/progressDeadlineSeconds").and_then(Value::as_i64).filter(|&s| s != i64::from(i32::MAX))
}

/// `HasRevisionHistoryLimit`: the limit, unless absent or `MaxInt32` (keep everything).
pub fn revision_history_limit(d: &Value) -> Option<i32> {
    d.pointer("/spec/revisionHistoryLimit")
        .and_then(Value::as_i64)
        .filter(|&l| l != i64::from(i32::MAX))
        .map(super::util::go_int32)
}

/// `DeploymentComplete`: every desired replica updated and available, no old one left, and the current
/// generation observed.
pub fn deployment_complete(d: &Value, status: &Status) -> bool {
    let desired = replicas(d);
    status.updated_replicas == desired
        && status.replicas == desired
        && status.available_replicas == desired
        && status.observed_generation >= d.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0)
}

/// `DeploymentProgressing`: compared with the status `d` carries, more pods are updated, ready or
/// available, or fewer old ones are left.
pub fn deployment_progressing(d: &Value, status: &Status) -> bool {
    let old = Status::of(d);
    let old_olds = old.replicas - old.updated_replicas;
    let new_olds = status.replicas - status.updated_replicas;
    status.updated_replicas > old.updated_replicas
        || new_olds < old_olds
        || status.ready_replicas > old.ready_replicas
        || status.available_replicas > old.available_replicas
}

/// `DeploymentTimedOut`: the `Progressing` condition was last updated more than the deadline before
/// `now_us` (or already says so). A finished rollout never times out.
pub fn deployment_timed_out(d: &Value, status: &Status, now_us: i64) -> bool {
    let Some(deadline_s) = progress_deadline_seconds(d) else { return false };
    let Some(condition) = status.condition(PROGRESSING) else { return false };
    // A resync may still see the previous rollout's success before the new ReplicaSet's condition.
    if condition.reason == NEW_RS_AVAILABLE {
        return false;
    }
    if condition.reason == TIMED_OUT {
        return true;
    }
    // A zero (unreadable) time is long past.
    let from_us = parse_time_us(&condition.last_update_time).unwrap_or(i64::MIN / 2);
    from_us.saturating_add(deadline_s.saturating_mul(1_000_000)) < now_us
}

fn progressing(status: &str, reason: &str, message: String, now_us: i64) -> Condition {
    Condition::new(PROGRESSING, status, reason, &message, now_us)
}

/// `getReplicaFailures`: the new ReplicaSet's `ReplicaFailure` conditions, else every other's.
fn replica_failures(all_rss: &[Value], new_rs: Option<&Value>) -> Vec<Condition> {
    let failures = |rs: &Value| -> Vec<Condition> {
        rs.pointer("/status/conditions")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .filter(|c| c.get("type").and_then(Value::as_str) == Some(REPLICA_FAILURE))
                    .map(Condition::from_replica_set)
                    .collect()
            })
            .unwrap_or_default()
    };
    let from_new = new_rs.map(failures).unwrap_or_default();
    if !from_new.is_empty() {
        return from_new;
    }
    all_rss.iter().flat_map(failures).collect()
}

/// The status `syncRolloutStatus` writes at `now_us`.
pub fn rollout_status(d: &Value, all_rss: &[Value], new_rs: Option<&Value>, now_us: i64) -> Status {
    let mut status = calculate(all_rss, new_rs, d, now_us);
    if !has_progress_deadline(d) {
        status.remove_condition(PROGRESSING);
    }
    let current = Status::of(d).condition(PROGRESSING).cloned();
    let complete_before =
        status.replicas == status.updated_replicas && current.as_ref().is_some_and(|c| c.reason == NEW_RS_AVAILABLE);
    // Progress is estimated only with a deadline, and only until the latest rollout has completed.
    if has_progress_deadline(d) && !complete_before {
        let name = new_rs.map(|rs| meta(rs, "name"));
        let message = |rs_text: &str, d_text: &str| match name {
            Some(rs) => format!("ReplicaSet \"{rs}\" {rs_text}"),
            None => format!("Deployment \"{}\" {d_text}", meta(d, "name")),
        };
        if deployment_complete(d, &status) {
            let text = message("has successfully progressed.", "has successfully progressed.");
            status.set_condition(progressing("True", NEW_RS_AVAILABLE, text, now_us));
        } else if deployment_progressing(d, &status) {
            let text = message("is progressing.", "is progressing.");
            let mut condition = progressing("True", REPLICA_SET_UPDATED, text, now_us);
            // Progress refreshes the update time even under the same reason, so the condition is replaced
            // here rather than through `set_condition`; it keeps when it turned if it stays true.
            if let Some(current) = &current {
                if current.status == "True" {
                    condition.last_transition_time = current.last_transition_time.clone();
                }
                status.remove_condition(PROGRESSING);
            }
            status.set_condition(condition);
        } else if deployment_timed_out(d, &status, now_us) {
            let text = message("has timed out progressing.", "has timed out progressing.");
            status.set_condition(progressing("False", TIMED_OUT, text, now_us));
        }
    }
    // Only one failure is surfaced, the new ReplicaSet's first.
    match replica_failures(all_rss, new_rs).into_iter().next() {
        Some(failure) => status.set_condition(failure),
        None => status.remove_condition(REPLICA_FAILURE),
    }
    status
}

/// When an unchanged rollout should be looked at again (`requeueStuckDeployment`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recheck {
    /// Not stuck-looking, or no deadline: no need.
    Never,
    /// The deadline passes within a second: now, rate limited.
    NowRateLimited,
    /// After this long (the remaining time plus a second against clock skew).
    After(Duration),
}

/// `requeueStuckDeployment` for `d` whose newly computed status is `status`, at `now_us`.
pub fn recheck_stuck(d: &Value, status: &Status, now_us: i64) -> Recheck {
    let Some(deadline_s) = progress_deadline_seconds(d) else { return Recheck::Never };
    let Some(current) = Status::of(d).condition(PROGRESSING).cloned() else { return Recheck::Never };
    if deployment_complete(d, status) || current.reason == TIMED_OUT {
        return Recheck::Never;
    }
    let from_us = parse_time_us(&current.last_update_time).unwrap_or(i64::MIN / 2);
    let after_us = from_us.saturating_add(deadline_s.saturating_mul(1_000_000)).saturating_sub(now_us);
    if after_us < 1_000_000 {
        return Recheck::NowRateLimited;
    }
    Recheck::After(Duration::from_micros(u64::try_from(after_us).unwrap_or(0)) + Duration::from_secs(1))
}

/// `checkPausedConditions`: the status to write when `d` was paused or resumed since its `Progressing`
/// condition last said so; `None` when nothing is to change (no deadline, or a timeout already reported).
pub fn paused_conditions(d: &Value, now_us: i64) -> Option<Status> {
    if !has_progress_deadline(d) {
        return None;
    }
    let mut status = Status::of(d);
    let current = status.condition(PROGRESSING);
    if current.is_some_and(|c| c.reason == TIMED_OUT) {
        return None;
    }
    let paused_shown = current.is_some_and(|c| c.reason == PAUSED);
    let paused = d.pointer("/spec/paused").and_then(Value::as_bool).unwrap_or(false);
    let condition = match (paused, paused_shown) {
        (true, false) => Condition::new(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", now_us),
        (false, true) => Condition::new(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", now_us),
        _ => return None,
    };
    status.set_condition(condition);
    Some(status)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const T0: i64 = 1_700_000_000_000_000;
    const S: i64 = 1_000_000;

    fn condition(status: &str, reason: &str, updated: &str) -> Value {
        json!({"type": "Progressing", "status": status, "reason": reason, "lastUpdateTime": updated, "lastTransitionTime": "2023-11-14T22:00:00Z", "message": "m"})
    }

    fn deployment(replicas: i32, status: Value) -> Value {
        json!({"metadata": {"name": "web", "generation": 2}, "spec": {"replicas": replicas, "progressDeadlineSeconds": 600,
               "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}, "status": status})
    }

    fn rs(name: &str, spec: i32, replicas: i32, available: i32) -> Value {
        json!({"metadata": {"name": name}, "spec": {"replicas": spec}, "status": {"replicas": replicas, "readyReplicas": available, "availableReplicas": available}})
    }

    #[test]
    fn completion_progress_and_timeouts() {
        let status = |replicas, updated, ready, available| Status {
            observed_generation: 2,
            replicas,
            updated_replicas: updated,
            ready_replicas: ready,
            available_replicas: available,
            ..Status::default()
        };
        // upstream's TestDeploymentComplete.
        let cases = [((5, 5, 5, 5), true), ((5, 5, 5, 4), false), ((6, 5, 5, 5), false), ((5, 4, 5, 5), false)];
        for ((r, u, rd, a), want) in cases {
            assert_eq!(deployment_complete(&deployment(5, json!({})), &status(r, u, rd, a)), want, "{r} {u} {a}");
        }
        // upstream's TestDeploymentProgressing: against the status (replicas 10, updated 4, ready 3, available 2).
        let d =
            deployment(10, json!({"replicas": 10, "updatedReplicas": 4, "readyReplicas": 3, "availableReplicas": 2}));
        let cases = [
            ((10, 4, 3, 2), false),
            ((10, 5, 3, 2), true),
            ((9, 4, 3, 2), true),
            ((10, 4, 4, 2), true),
            ((10, 4, 3, 3), true),
            ((11, 4, 3, 2), false),
        ];
        for ((r, u, rd, a), want) in cases {
            assert_eq!(deployment_progressing(&d, &status(r, u, rd, a)), want, "{r} {u} {rd} {a}");
        }
        // upstream's TestDeploymentTimedOut: a 600 s deadline from 22:13:20.
        let cases = [
            (condition("True", REPLICA_SET_UPDATED, "2023-11-14T22:13:20Z"), T0 + 599 * S, false),
            (condition("True", REPLICA_SET_UPDATED, "2023-11-14T22:13:20Z"), T0 + 600 * S, false),
            (condition("True", REPLICA_SET_UPDATED, "2023-11-14T22:13:20Z"), T0 + 601 * S, true),
            (condition("True", NEW_RS_AVAILABLE, "2023-11-14T22:13:20Z"), T0 + 6000 * S, false),
            (condition("False", TIMED_OUT, "2023-11-14T22:13:20Z"), T0, true),
        ];
        for (cond, now, want) in cases {
            let mut s = Status::default();
            s.conditions.push(Condition::from_json(&cond));
            assert_eq!(deployment_timed_out(&deployment(1, json!({})), &s, now), want, "{cond} {now}");
        }
        assert!(!deployment_timed_out(&deployment(1, json!({})), &Status::default(), T0));
    }

    #[test]
    fn rollout_statuses() {
        let progressing_of = |s: &Status| s.condition(PROGRESSING).cloned().map(|c| (c.status, c.reason, c.message));
        // (deployment status, replica sets, the new one's index, now, want Progressing (status, reason, message))
        let updated = "2023-11-14T22:13:20Z";
        let cases = [
            // Pods moved: ReplicaSetUpdated.
            (
                json!({"replicas": 3, "conditions": [condition("True", NEW_REPLICA_SET, updated)]}),
                vec![rs("old", 2, 2, 2), rs("new", 2, 2, 0)],
                1,
                T0 + S,
                Some(("True", REPLICA_SET_UPDATED, "ReplicaSet \"new\" is progressing.")),
            ),
            // Everything updated and available: complete.
            (
                json!({"replicas": 4, "updatedReplicas": 4, "conditions": [condition("True", REPLICA_SET_UPDATED, updated)]}),
                vec![rs("new", 4, 4, 4)],
                0,
                T0 + S,
                Some(("True", NEW_RS_AVAILABLE, "ReplicaSet \"new\" has successfully progressed.")),
            ),
            // Nothing moved for longer than the deadline: timed out.
            (
                json!({"replicas": 4, "updatedReplicas": 1, "readyReplicas": 3, "availableReplicas": 3, "conditions": [condition("True", REPLICA_SET_UPDATED, updated)]}),
                vec![rs("old", 3, 3, 3), rs("new", 1, 1, 0)],
                1,
                T0 + 601 * S,
                Some(("False", TIMED_OUT, "ReplicaSet \"new\" has timed out progressing.")),
            ),
            // Nothing moved within the deadline: the condition stays.
            (
                json!({"replicas": 4, "updatedReplicas": 1, "readyReplicas": 3, "availableReplicas": 3, "conditions": [condition("True", REPLICA_SET_UPDATED, updated)]}),
                vec![rs("old", 3, 3, 3), rs("new", 1, 1, 0)],
                1,
                T0 + 60 * S,
                Some(("True", REPLICA_SET_UPDATED, "m")),
            ),
        ];
        for (status, rss, new_index, now, want) in cases {
            let d = deployment(4, status);
            let got = rollout_status(&d, &rss, Some(&rss[new_index]), now);
            let want = want.map(|(s, r, m)| (s.to_string(), r.to_string(), m.to_string()));
            assert_eq!(progressing_of(&got), want, "{}", d["status"]);
        }
        // Progress under the same reason refreshes the update time, keeping the transition time.
        let d = deployment(
            4,
            json!({"replicas": 4, "updatedReplicas": 1, "conditions": [condition("True", REPLICA_SET_UPDATED, updated)]}),
        );
        let rss = vec![rs("old", 2, 2, 2), rs("new", 2, 2, 0)];
        let got = rollout_status(&d, &rss, Some(&rss[1]), T0 + 30 * S);
        let c = got.condition(PROGRESSING).unwrap();
        assert_eq!(
            (c.last_update_time.as_str(), c.last_transition_time.as_str()),
            ("2023-11-14T22:13:50Z", "2023-11-14T22:00:00Z")
        );
        // Without a deadline there is no Progressing condition; a ReplicaSet's failure is surfaced.
        let mut d = deployment(1, json!({"conditions": [condition("True", REPLICA_SET_UPDATED, updated)]}));
        d["spec"]["progressDeadlineSeconds"] = json!(i32::MAX);
        let mut failing = rs("new", 1, 0, 0);
        failing["status"]["conditions"] = json!([{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": "quota", "lastTransitionTime": updated}]);
        let got = rollout_status(&d, std::slice::from_ref(&failing), Some(&failing), T0);
        assert!(got.condition(PROGRESSING).is_none());
        assert_eq!(got.condition(REPLICA_FAILURE).map(|c| c.reason.as_str()), Some("FailedCreate"));
    }

    #[test]
    fn stuck_rollouts_are_looked_at_when_their_deadline_passes() {
        let stuck = Status { replicas: 4, updated_replicas: 1, ..Status::default() };
        let with = |cond: Value| deployment(4, json!({"conditions": [cond]}));
        let cases = [
            (
                with(condition("True", REPLICA_SET_UPDATED, "2023-11-14T22:13:20Z")),
                T0 + 180 * S,
                Recheck::After(Duration::from_secs(421)),
            ),
            (
                with(condition("True", REPLICA_SET_UPDATED, "2023-11-14T22:13:20Z")),
                T0 + 599 * S + 500_000,
                Recheck::NowRateLimited,
            ),
            (with(condition("False", TIMED_OUT, "2023-11-14T22:13:20Z")), T0, Recheck::Never),
            (deployment(4, json!({})), T0, Recheck::Never),
        ];
        for (d, now, want) in cases {
            assert_eq!(recheck_stuck(&d, &stuck, now), want, "{}", d["status"]);
        }
        let complete = Status {
            observed_generation: 2,
            replicas: 4,
            updated_replicas: 4,
            available_replicas: 4,
            ..Status::default()
        };
        assert_eq!(
            recheck_stuck(&with(condition("True", REPLICA_SET_UPDATED, "2023-11-14T22:13:20Z")), &complete, T0),
            Recheck::Never
        );
    }

    #[test]
    fn pausing_and_resuming() {
        let paused = |paused: bool, cond: Option<Value>| {
            let mut d = deployment(1, json!({"conditions": cond.into_iter().collect::<Vec<_>>()}));
            d["spec"]["paused"] = json!(paused);
            d
        };
        let reason_of = |s: Option<Status>| {
            s.and_then(|s| s.condition(PROGRESSING).map(|c| (c.status.clone(), c.reason.clone(), c.message.clone())))
        };
        let cases = [
            (paused(true, None), Some(("Unknown", PAUSED, "Deployment is paused"))),
            (paused(true, Some(condition("Unknown", PAUSED, "2023-11-14T22:13:20Z"))), None),
            (
                paused(false, Some(condition("Unknown", PAUSED, "2023-11-14T22:13:20Z"))),
                Some(("Unknown", RESUMED, "Deployment is resumed")),
            ),
            (paused(false, None), None),
            (paused(true, Some(condition("False", TIMED_OUT, "2023-11-14T22:13:20Z"))), None),
        ];
        for (d, want) in cases {
            let want = want.map(|(s, r, m)| (s.to_string(), r.to_string(), m.to_string()));
            assert_eq!(reason_of(paused_conditions(&d, T0)), want, "{}", d["spec"]);
        }
    }
}
