//! Counting a Job's finished pods and its conditions (kube-controller-manager 1.32,
//! `pkg/controller/job/job_controller.go`: `getNewFinishedPods`, `nonIgnoredFailedPodsCount`,
//! `trackJobStatusAndRemoveFinalizers`' bookkeeping, `cleanUncountedPodsWithoutFinalizers`, `canRemoveFinalizer`,
//! `enactJobFinished`, `ensureJobConditionStatus`, `newCondition`, `pastActiveDeadline`, `manageJob`'s
//! `wantActive`; `tracking_utils.go`'s role, the finalizer removals in flight). Sans-IO: the Job as JSON,
//! changed in place.
//!
//! Upstream's two-phase tracking: a finished pod still carrying the tracking finalizer is first recorded by
//! uid in `status.uncountedTerminatedPods` (written to the apiserver), then its finalizer is removed, and
//! once the pod no longer carries the finalizer its uid moves from the uncounted list into `succeeded` or
//! `failed`. A crash between the steps neither loses nor double-counts a pod. Indexed Jobs count by
//! completion index (`completedIndexes`) instead of uids. A terminal condition is written only when nothing
//! is left uncounted (and no pod is terminating), preceded by the interim `FailureTarget` or
//! `SuccessCriteriaMet` condition (1.32 delays terminal conditions, `JobManagedBy` and
//! `JobPodReplacementPolicy` being on).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use super::failure_policy::{fail_job_message, match_policy};
use super::indexes;
use super::pods::{completion_index, has_tracking_finalizer, is_pod_failed, past_backoff_limit_on_failure, phase, uid};
use apiserver::registry::system::rfc3339;

/// `MaxUncountedPods`: the most uids recorded as uncounted per status write.
pub const MAX_UNCOUNTED_PODS: usize = 500;

/// A condition to set, its time added when written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub kind: String,
    pub reason: String,
    pub message: String,
}

impl Condition {
    pub fn new(kind: &str, reason: &str, message: &str) -> Condition {
        Condition { kind: kind.into(), reason: reason.into(), message: message.into() }
    }
}

/// `newCondition`: both times at `now_us` (to the second); `reason` and `message` left out when empty.
pub fn condition_json(kind: &str, status: &str, reason: &str, message: &str, now_us: i64) -> Value {
    let now = rfc3339(now_us.div_euclid(1_000_000));
    let mut c = json!({"type": kind, "status": status, "lastProbeTime": now, "lastTransitionTime": now});
    if !reason.is_empty() {
        c["reason"] = json!(reason);
    }
    if !message.is_empty() {
        c["message"] = json!(message);
    }
    c
}

fn conditions_mut(job: &mut Value) -> &mut Vec<Value> {
    if !job["status"]["conditions"].is_array() {
        job["status"]["conditions"] = json!([]);
    }
    job["status"]["conditions"].as_array_mut().expect("just made an array")
}

/// `findConditionByType`.
pub fn find_condition<'a>(job: &'a Value, kind: &str) -> Option<&'a Value> {
    job.pointer("/status/conditions")?.as_array()?.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
}

fn is_true(job: &Value, kind: &str) -> bool {
    find_condition(job, kind).is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"))
}

/// `IsJobFinished`: `Complete` or `Failed` is `True`.
pub fn is_finished(job: &Value) -> bool {
    is_true(job, "Complete") || is_true(job, "Failed")
}

/// `ensureJobConditionStatus`: sets the condition (replacing one of the type that differs); a missing
/// condition is not added as `False`. Returns whether anything changed.
pub fn ensure_condition(job: &mut Value, kind: &str, status: &str, reason: &str, message: &str, now_us: i64) -> bool {
    let fresh = condition_json(kind, status, reason, message, now_us);
    let text = |c: &Value, f: &str| c.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let conditions = conditions_mut(job);
    if let Some(existing) = conditions.iter_mut().find(|c| c.get("type").and_then(Value::as_str) == Some(kind)) {
        if text(existing, "status") != status
            || text(existing, "reason") != reason
            || text(existing, "message") != message
        {
            *existing = fresh;
            return true;
        }
        return false;
    }
    if status != "False" {
        conditions.push(fresh);
        return true;
    }
    false
}

/// The uids of `status.uncountedTerminatedPods.<which>`, in order.
pub fn uncounted(job: &Value, which: &str) -> Vec<String> {
    job.pointer(&format!("/status/uncountedTerminatedPods/{which}"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
        .unwrap_or_default()
}

fn set_uncounted(job: &mut Value, which: &str, uids: &[String]) {
    if !job["status"]["uncountedTerminatedPods"].is_object() {
        job["status"]["uncountedTerminatedPods"] = json!({});
    }
    let slot = &mut job["status"]["uncountedTerminatedPods"];
    if uids.is_empty() {
        slot.as_object_mut().expect("an object").remove(which);
    } else {
        slot[which] = json!(uids);
    }
}

pub fn status_count(job: &Value, field: &str) -> i64 {
    job.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0)
}

pub fn completions(job: &Value) -> Option<i64> {
    job.pointer("/spec/completions").and_then(Value::as_i64)
}

pub fn is_indexed(job: &Value) -> bool {
    job.pointer("/spec/completionMode").and_then(Value::as_str) == Some("Indexed")
}

/// `getNewFinishedPods`: pods carrying the finalizer, not yet uncounted, not awaiting a finalizer
/// removal (and, for Indexed Jobs, with a valid index) that succeeded, and those that failed.
pub fn new_finished_pods(job: &Value, pods: &[Value], expected_rm: &BTreeSet<String>) -> (Vec<Value>, Vec<Value>) {
    let (uncounted_ok, uncounted_failed) = (uncounted(job, "succeeded"), uncounted(job, "failed"));
    let completions = completions(job).unwrap_or(0);
    let candidates = |seen: &[String]| {
        pods.iter()
            .filter(|p| has_tracking_finalizer(p) && !seen.iter().any(|u| u == uid(p)) && !expected_rm.contains(uid(p)))
            .filter(|p| !is_indexed(job) || completion_index(p).is_some_and(|ix| ix < completions))
            .cloned()
            .collect::<Vec<Value>>()
    };
    let succeeded = candidates(&uncounted_ok).into_iter().filter(|p| phase(p) == "Succeeded").collect();
    let failed = candidates(&uncounted_failed).into_iter().filter(|p| is_pod_failed(p, job)).collect();
    (succeeded, failed)
}

/// `nonIgnoredFailedPodsCount`.
pub fn non_ignored_failed_count(job: &Value, failed: &[Value]) -> i64 {
    let policy = job.pointer("/spec/podFailurePolicy").filter(|p| !p.is_null());
    failed.iter().filter(|p| policy.is_none() || match_policy(policy, p).count_failed).count() as i64
}

/// `cleanUncountedPodsWithoutFinalizers`: uids whose pods no longer carry the finalizer move into the
/// counters. Returns whether anything moved.
pub fn clean_uncounted(job: &mut Value, with_finalizer: &BTreeSet<String>) -> bool {
    let mut updated = false;
    for (which, counter) in [("succeeded", "succeeded"), ("failed", "failed")] {
        let before = uncounted(job, which);
        let kept: Vec<String> = before.iter().filter(|u| with_finalizer.contains(*u)).cloned().collect();
        if kept.len() != before.len() {
            updated = true;
            let moved = (before.len() - kept.len()) as i64;
            job["status"][counter] = json!(status_count(job, counter) + moved);
            set_uncounted(job, which, &kept);
        }
    }
    updated
}

/// `manageJob`'s `wantActive`: without completions, parallelism until a pod succeeded (then whatever
/// runs); with them, the remaining completions capped at parallelism.
pub fn want_active(job: &Value, active: i64, succeeded: i64) -> i64 {
    let parallelism = job.pointer("/spec/parallelism").and_then(Value::as_i64).unwrap_or(1);
    match completions(job) {
        None if succeeded > 0 => active,
        None => parallelism,
        Some(c) => (c - succeeded).min(parallelism).max(0),
    }
}

pub fn is_suspended(job: &Value) -> bool {
    job.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true)
}

/// The time left before `activeDeadlineSeconds` (`None` without a deadline, a start time, or while
/// suspended); zero or less means `pastActiveDeadline`.
pub fn deadline_left_us(job: &Value, now_us: i64) -> Option<i64> {
    let deadline_s = job.pointer("/spec/activeDeadlineSeconds").and_then(Value::as_i64)?;
    let start = job.pointer("/status/startTime").and_then(Value::as_str)?;
    let start_us = crate::kcm::replicaset::pods::parse_time_us(start)?;
    if is_suspended(job) {
        return None;
    }
    Some(start_us + deadline_s * 1_000_000 - now_us)
}

/// `syncJob`'s choice of the condition a Job is finishing with: a `SuccessCriteriaMet` already set is
/// kept, a `FailureTarget` already set becomes `Failed`; else a `FailJob` rule of the pod failure policy,
/// then more than `backoffLimit` failures (or restarts under `OnFailure`), then the deadline make a new
/// `FailureTarget`. `failed` is the failures counted so far. A deadline still ahead comes back as the
/// time until it passes.
pub fn finishing_condition(
    job: &Value,
    pods: &[Value],
    failed: i64,
    now_us: i64,
) -> (Option<Condition>, Option<Duration>) {
    let text = |c: &Value, f: &str| c.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let kept = |kind: &str, into: &str| {
        find_condition(job, kind).filter(|c| text(c, "status") == "True").map(|c| Condition {
            kind: into.into(),
            reason: text(c, "reason"),
            message: text(c, "message"),
        })
    };
    if let Some(met) = kept("SuccessCriteriaMet", "SuccessCriteriaMet") {
        return (Some(met), None);
    }
    if let Some(failed) = kept("FailureTarget", "Failed") {
        return (Some(failed), None);
    }
    if let Some(message) = fail_job_message(job, pods) {
        return (Some(Condition::new("FailureTarget", "PodFailurePolicy", &message)), None);
    }
    let backoff_limit = job.pointer("/spec/backoffLimit").and_then(Value::as_i64).unwrap_or(6);
    if failed > backoff_limit || past_backoff_limit_on_failure(job, pods) {
        let reached =
            Condition::new("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit");
        return (Some(reached), None);
    }
    match deadline_left_us(job, now_us) {
        Some(left) if left <= 0 => {
            let exceeded =
                Condition::new("FailureTarget", "DeadlineExceeded", "Job was active longer than specified deadline");
            (Some(exceeded), None)
        }
        Some(left) => (None, Some(Duration::from_micros(left.unsigned_abs()))),
        None => (None, None),
    }
}

/// What `trackJobStatusAndRemoveFinalizers` decided before its writes.
#[derive(Debug, Default)]
pub struct Tracking {
    /// Pods whose finalizer goes after the first status write.
    pub remove_finalizer: Vec<Value>,
    /// Uids still carrying the finalizer (and not awaiting its removal).
    pub with_finalizer: BTreeSet<String>,
    pub needs_flush: bool,
    pub reached_max_uncounted: bool,
    /// The terminal condition to set once nothing is left uncounted.
    pub finished: Option<Condition>,
}

/// `canRemoveFinalizer` (without per-index backoff): when the Job is deleted or finishing, or the pod
/// succeeded or failed.
fn can_remove_finalizer(job: &Value, finishing: bool, pod: &Value, failed: bool) -> bool {
    crate::kcm::replicaset::pods::is_deleting(job) || finishing || phase(pod) == "Succeeded" || failed
}

/// The first half of `trackJobStatusAndRemoveFinalizers`: records new finished pods as uncounted (or their
/// indexes as completed), moves counted ones, and adds the interim condition; `job` is changed in place.
/// `succeeded_indexes` are an Indexed Job's completed indexes before and after this sync's pods.
pub fn track(
    job: &mut Value,
    pods: &[Value],
    expected_rm: &BTreeSet<String>,
    finished: Option<Condition>,
    succeeded_indexes: (&BTreeSet<i64>, &BTreeSet<i64>),
    now_us: i64,
    mut needs_flush: bool,
) -> Tracking {
    let indexed = is_indexed(job);
    let completions = completions(job).unwrap_or(0);
    let (prev_succeeded_indexes, all_succeeded_indexes) = succeeded_indexes;
    let mut pods: Vec<&Value> = pods.iter().collect();
    if indexed {
        // Completed indexes are introduced in order.
        pods.sort_by_key(|p| completion_index(p).unwrap_or(-1));
    }
    let with_finalizer: BTreeSet<String> = pods
        .iter()
        .filter(|p| has_tracking_finalizer(p) && !expected_rm.contains(uid(p)))
        .map(|p| uid(p).to_string())
        .collect();
    needs_flush |= clean_uncounted(job, &with_finalizer);
    let (was_ok, was_failed) = (uncounted(job, "succeeded"), uncounted(job, "failed"));
    let (mut new_ok, mut new_failed) = (was_ok.clone(), was_failed.clone());
    let mut new_indexes = BTreeSet::new();
    let mut remove_finalizer = Vec::new();
    let mut reached_max_uncounted = false;
    let finishing_as_failure = finished.as_ref().is_some_and(|c| c.kind != "SuccessCriteriaMet");
    let policy = job.pointer("/spec/podFailurePolicy").filter(|p| !p.is_null()).cloned();
    for pod in pods {
        let pod_uid = uid(pod).to_string();
        if !has_tracking_finalizer(pod) || expected_rm.contains(&pod_uid) {
            continue;
        }
        let failed = is_pod_failed(pod, job);
        if !can_remove_finalizer(job, finished.is_some(), pod, failed) {
            continue;
        }
        remove_finalizer.push(pod.clone());
        if phase(pod) == "Succeeded" && !was_failed.contains(&pod_uid) {
            if indexed {
                if let Some(ix) = completion_index(pod).filter(|ix| *ix < completions) {
                    if !prev_succeeded_indexes.contains(&ix) {
                        new_indexes.insert(ix);
                    }
                }
            } else if !was_ok.contains(&pod_uid) {
                needs_flush = true;
                new_ok.push(pod_uid);
            }
        } else if failed || finishing_as_failure {
            // When the Job is finishing as failed, every pod not terminated counts as failed.
            let valid = !indexed || completion_index(pod).is_some_and(|ix| ix < completions);
            if !was_failed.contains(&pod_uid) && valid && match_policy(policy.as_ref(), pod).count_failed {
                needs_flush = true;
                new_failed.push(pod_uid);
            }
        }
        if new_indexes.len() + new_ok.len() + new_failed.len() >= MAX_UNCOUNTED_PODS {
            reached_max_uncounted = true;
            break;
        }
    }
    set_uncounted(job, "succeeded", &new_ok);
    set_uncounted(job, "failed", &new_failed);
    if indexed {
        let all: BTreeSet<i64> = all_succeeded_indexes.union(&new_indexes).copied().collect();
        let text = indexes::format(&all);
        if job.pointer("/status/completedIndexes").and_then(Value::as_str).unwrap_or("") != text {
            needs_flush = true;
        }
        job["status"]["succeeded"] = json!(all.len());
        job["status"]["completedIndexes"] = json!(text);
    }
    let finished = match finished {
        Some(c) if c.kind == "FailureTarget" => {
            // The interim condition goes in first; `Failed` follows once the finalizers are gone.
            conditions_mut(job).push(condition_json("FailureTarget", "True", &c.reason, &c.message, now_us));
            needs_flush = true;
            Some(Condition { kind: "Failed".into(), ..c })
        }
        Some(c) if c.kind == "SuccessCriteriaMet" => {
            if find_condition(job, "SuccessCriteriaMet").is_none() {
                conditions_mut(job).push(condition_json("SuccessCriteriaMet", "True", &c.reason, &c.message, now_us));
                needs_flush = true;
            }
            Some(Condition { kind: "Complete".into(), ..c })
        }
        other => other,
    };
    Tracking { remove_finalizer, with_finalizer, needs_flush, reached_max_uncounted, finished }
}

/// `enactJobFinished`: sets the terminal condition (and `completionTime` for `Complete`) unless pods are
/// still uncounted or terminating. Returns whether it did.
pub fn enact_finished(job: &mut Value, finished: Option<&Condition>, terminating: i64, now_us: i64) -> bool {
    let Some(c) = finished else { return false };
    if !uncounted(job, "succeeded").is_empty() || !uncounted(job, "failed").is_empty() || terminating > 0 {
        return false;
    }
    ensure_condition(job, &c.kind, "True", &c.reason, &c.message, now_us);
    if c.kind == "Complete" {
        let at = find_condition(job, "Complete").and_then(|c| c.get("lastTransitionTime")).cloned();
        job["status"]["completionTime"] = at.unwrap_or(Value::Null);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::pods::JOB_TRACKING_FINALIZER;
    use super::*;

    const NOW: i64 = 1_700_000_000_000_000;

    fn job(spec: Value, status: Value) -> Value {
        json!({"metadata": {"name": "j", "namespace": "ns", "uid": "ju"}, "spec": spec, "status": status})
    }

    fn pod(uid: &str, phase: &str, finalizer: bool) -> Value {
        let mut p = json!({"metadata": {"name": uid, "namespace": "ns", "uid": uid}, "status": {"phase": phase}});
        if finalizer {
            p["metadata"]["finalizers"] = json!([JOB_TRACKING_FINALIZER]);
        }
        p
    }

    #[test]
    fn active_pods_wanted() {
        let cases = [
            (json!({"completions": 3, "parallelism": 2}), 0, 0, 2),
            (json!({"completions": 3, "parallelism": 2}), 2, 2, 1),
            (json!({"completions": 3, "parallelism": 2}), 0, 3, 0),
            (json!({"completions": 3, "parallelism": 2}), 0, 5, 0),
            (json!({"parallelism": 4}), 1, 0, 4),
            (json!({"parallelism": 4}), 1, 1, 1),
        ];
        for (spec, active, succeeded, want) in cases {
            assert_eq!(
                want_active(&job(spec.clone(), json!({})), active, succeeded),
                want,
                "{spec} {active} {succeeded}"
            );
        }
    }

    #[test]
    fn two_phase_counting() {
        let spec = json!({"completions": 3, "parallelism": 2});
        // Phase one: a succeeded pod with its finalizer becomes uncounted, and its finalizer is to go.
        let mut j = job(spec.clone(), json!({"succeeded": 0}));
        let pods = [pod("a", "Succeeded", true), pod("b", "Running", true), pod("c", "Failed", true)];
        let t = track(&mut j, &pods, &BTreeSet::new(), None, (&BTreeSet::new(), &BTreeSet::new()), NOW, false);
        assert!(t.needs_flush);
        assert_eq!(uncounted(&j, "succeeded"), ["a"]);
        assert_eq!(uncounted(&j, "failed"), ["c"]);
        let names: Vec<&str> = t.remove_finalizer.iter().map(uid).collect();
        assert_eq!(names, ["a", "c"]);
        // A removal in flight is skipped.
        let mut again = j.clone();
        let expected = BTreeSet::from(["a".to_string(), "c".to_string()]);
        let t = track(&mut again, &pods, &expected, None, (&BTreeSet::new(), &BTreeSet::new()), NOW, false);
        assert!(t.remove_finalizer.is_empty());
        // Phase two: the finalizers are gone, the uids move into the counters.
        assert_eq!(status_count(&again, "succeeded"), 1);
        assert_eq!(status_count(&again, "failed"), 1);
        assert!(uncounted(&again, "succeeded").is_empty());
        let done = [pod("a", "Succeeded", false), pod("b", "Running", true), pod("c", "Failed", false)];
        let mut later = j.clone();
        let t = track(&mut later, &done, &BTreeSet::new(), None, (&BTreeSet::new(), &BTreeSet::new()), NOW, false);
        assert!(t.needs_flush);
        assert_eq!((status_count(&later, "succeeded"), status_count(&later, "failed")), (1, 1));
    }

    #[test]
    fn finished_jobs_take_interim_conditions_first() {
        let mut j = job(json!({"completions": 1}), json!({}));
        let failing = Some(Condition::new(
            "FailureTarget",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ));
        let pods = [pod("a", "Running", true)];
        let t = track(&mut j, &pods, &BTreeSet::new(), failing, (&BTreeSet::new(), &BTreeSet::new()), NOW, false);
        assert_eq!(find_condition(&j, "FailureTarget").unwrap()["reason"], "BackoffLimitExceeded");
        // The running pod counts as failed once the Job is failing.
        assert_eq!(uncounted(&j, "failed"), ["a"]);
        let failed = t.finished.unwrap();
        assert_eq!(failed.kind, "Failed");
        assert!(!enact_finished(&mut j, Some(&failed), 0, NOW), "uncounted pods delay it");
        j["status"]["uncountedTerminatedPods"] = json!({});
        assert!(!enact_finished(&mut j, Some(&failed), 1, NOW), "terminating pods delay it");
        assert!(enact_finished(&mut j, Some(&failed), 0, NOW));
        assert_eq!(find_condition(&j, "Failed").unwrap()["message"], "Job has reached the specified backoff limit");
        assert!(is_finished(&j));

        let mut ok = job(json!({"completions": 1}), json!({"succeeded": 1}));
        let met = Some(Condition::new(
            "SuccessCriteriaMet",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
        ));
        let t = track(&mut ok, &[], &BTreeSet::new(), met, (&BTreeSet::new(), &BTreeSet::new()), NOW, false);
        assert!(find_condition(&ok, "SuccessCriteriaMet").is_some());
        assert!(enact_finished(&mut ok, t.finished.as_ref(), 0, NOW));
        assert_eq!(find_condition(&ok, "Complete").unwrap()["reason"], "CompletionsReached");
        assert_eq!(ok["status"]["completionTime"], "2023-11-14T22:13:20Z");
    }

    #[test]
    fn indexed_jobs_count_indexes() {
        let mut j = job(json!({"completions": 4, "completionMode": "Indexed"}), json!({"completedIndexes": "0"}));
        let mut p = pod("a", "Succeeded", true);
        p["metadata"]["annotations"] = json!({"batch.kubernetes.io/job-completion-index": "2"});
        let (prev, all) = indexes::succeeded_indexes(&j, std::slice::from_ref(&p), 4);
        let t = track(&mut j, &[p], &BTreeSet::new(), None, (&prev, &all), NOW, false);
        assert!(t.needs_flush);
        assert_eq!(j["status"]["completedIndexes"], "0,2");
        assert_eq!(status_count(&j, "succeeded"), 2);
        assert!(uncounted(&j, "succeeded").is_empty());
    }

    #[test]
    fn the_condition_a_job_finishes_with() {
        let failing_pod = json!({"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": "Failed",
            "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 3}}}]}});
        let policy = json!({"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]});
        let started = json!({"startTime": "2023-11-14T22:13:20Z"});
        let with =
            |kind: &str| json!({"conditions": [{"type": kind, "status": "True", "reason": "R", "message": "M"}]});
        let cases: Vec<(&str, Value, Value, i64, Option<(&str, &str, &str)>, Option<Duration>)> = vec![
            ("nothing yet", json!({"backoffLimit": 1}), json!({}), 1, None, None),
            (
                "over the backoff limit",
                json!({"backoffLimit": 1}),
                json!({}),
                2,
                Some(("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit")),
                None,
            ),
            (
                "a FailJob rule",
                json!({"backoffLimit": 6, "podFailurePolicy": policy}),
                json!({}),
                1,
                Some((
                    "FailureTarget",
                    "PodFailurePolicy",
                    "Container c for pod ns/p failed with exit code 3 matching FailJob rule at index 0",
                )),
                None,
            ),
            (
                "past the deadline",
                json!({"activeDeadlineSeconds": 5}),
                started.clone(),
                0,
                Some(("FailureTarget", "DeadlineExceeded", "Job was active longer than specified deadline")),
                None,
            ),
            (
                "before the deadline",
                json!({"activeDeadlineSeconds": 60}),
                started.clone(),
                0,
                None,
                Some(Duration::from_secs(50)),
            ),
            ("suspended: no deadline", json!({"activeDeadlineSeconds": 5, "suspend": true}), started, 0, None, None),
            ("a failure target becomes Failed", json!({}), with("FailureTarget"), 0, Some(("Failed", "R", "M")), None),
            (
                "success criteria are kept",
                json!({"backoffLimit": 0}),
                with("SuccessCriteriaMet"),
                9,
                Some(("SuccessCriteriaMet", "R", "M")),
                None,
            ),
        ];
        for (name, spec, status, failed, want, want_requeue) in cases {
            let (got, requeue) =
                finishing_condition(&job(spec, status), std::slice::from_ref(&failing_pod), failed, NOW + 10_000_000);
            let got = got.as_ref().map(|c| (c.kind.as_str(), c.reason.as_str(), c.message.as_str()));
            assert_eq!(got, want, "{name}");
            assert_eq!(requeue, want_requeue, "{name}");
        }
    }

    #[test]
    fn conditions_are_ensured() {
        let mut j = job(json!({}), json!({}));
        assert!(!ensure_condition(&mut j, "Suspended", "False", "JobResumed", "Job resumed", NOW));
        assert!(ensure_condition(&mut j, "Suspended", "True", "JobSuspended", "Job suspended", NOW));
        assert!(!ensure_condition(&mut j, "Suspended", "True", "JobSuspended", "Job suspended", NOW));
        assert!(ensure_condition(&mut j, "Suspended", "False", "JobResumed", "Job resumed", NOW));
        assert_eq!(j["status"]["conditions"].as_array().unwrap().len(), 1);
        let deadline = job(json!({"activeDeadlineSeconds": 10}), json!({"startTime": "2023-11-14T22:13:20Z"}));
        assert_eq!(deadline_left_us(&deadline, NOW + 4_000_000), Some(6_000_000));
        assert_eq!(deadline_left_us(&job(json!({}), json!({})), NOW), None);
        let (ok, failed) = new_finished_pods(
            &job(json!({}), json!({"uncountedTerminatedPods": {"succeeded": ["a"]}})),
            &[
                pod("a", "Succeeded", true),
                pod("b", "Succeeded", true),
                pod("c", "Failed", false),
                pod("d", "Failed", true),
            ],
            &BTreeSet::new(),
        );
        assert_eq!(ok.iter().map(uid).collect::<Vec<_>>(), ["b"]);
        assert_eq!(failed.iter().map(uid).collect::<Vec<_>>(), ["d"]);
    }
}
