//! The pod-creation backoff after failures (kube-controller-manager 1.32, `pkg/controller/job/backoff_utils.go`:
//! `backoffRecord`, `newBackoffRecord`, `getRemainingTimeForFailuresCount`, `getFinishedTime`;
//! `job_controller.go` `DefaultJobPodFailureBackOff`, `MaxJobPodFailureBackOff`). Sans-IO: times are
//! microseconds since the Unix epoch, passed in.
//!
//! Each Job remembers how many of its pods failed since its last success and when the last of them
//! finished. New pods wait 10 s after one failure, doubling per further failure up to 6 minutes, counted
//! from that last failure. A success after the failures clears the record; failures that finished after
//! the newest success still count.

use std::time::Duration;

use serde_json::Value;

use crate::kcm::replicaset::pods::parse_time_us;

/// `DefaultJobPodFailureBackOff`.
pub const DEFAULT_POD_FAILURE_BACKOFF: Duration = Duration::from_secs(10);
/// `MaxJobPodFailureBackOff`.
pub const MAX_POD_FAILURE_BACKOFF: Duration = Duration::from_secs(6 * 60);

/// `backoffRecord` (keyed by the Job in the caller's store).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub failures_after_last_success: i64,
    pub last_failure_us: Option<i64>,
}

fn time_at(obj: &Value, pointer: &str) -> Option<i64> {
    obj.pointer(pointer).and_then(Value::as_str).and_then(parse_time_us)
}

/// `getFinishedTime`: the latest `finishedAt` of the pod's terminated containers, else when its `Ready`
/// condition turned `False`, else its deletion time less its grace period, else its creation time.
pub fn finished_time_us(pod: &Value) -> i64 {
    let containers = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| time_at(c, "/state/terminated/finishedAt"))
        .max();
    let ready_false = || {
        let conditions = pod.pointer("/status/conditions")?.as_array()?;
        let ready = conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))?;
        (ready.get("status").and_then(Value::as_str) == Some("False")).then(|| time_at(ready, "/lastTransitionTime"))?
    };
    let deleted = || {
        let at = time_at(pod, "/metadata/deletionTimestamp")?;
        let grace_s = pod.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0);
        Some(at - grace_s * 1_000_000)
    };
    containers
        .or_else(ready_false)
        .or_else(deleted)
        .or_else(|| time_at(pod, "/metadata/creationTimestamp"))
        .unwrap_or(0)
}

/// `newBackoffRecord`: `previous` updated with the pods newly found succeeded and failed.
pub fn new_record(previous: Record, new_succeeded: &[Value], new_failed: &[Value]) -> Record {
    let mut failed_times: Vec<i64> = new_failed.iter().map(finished_time_us).collect();
    failed_times.sort_unstable();
    let last_success = new_succeeded.iter().map(finished_time_us).max();
    match (last_success, failed_times.last()) {
        (None, None) => previous,
        (None, Some(&last)) => Record {
            failures_after_last_success: previous.failures_after_last_success + failed_times.len() as i64,
            last_failure_us: Some(last),
        },
        (Some(success), _) => {
            // Only the failures that finished after the newest success still count.
            let after: Vec<i64> = failed_times.into_iter().filter(|t| *t > success).collect();
            Record { failures_after_last_success: after.len() as i64, last_failure_us: after.last().copied() }
        }
    }
}

/// `getRemainingTimeForFailuresCount`: how long pod creation must still wait at `now_us`.
pub fn remaining(record: Record, now_us: i64) -> Duration {
    let Some(last_failure_us) = record.last_failure_us.filter(|_| record.failures_after_last_success > 0) else {
        return Duration::ZERO;
    };
    let mut backoff = DEFAULT_POD_FAILURE_BACKOFF;
    for _ in 1..record.failures_after_last_success {
        backoff *= 2;
        if backoff >= MAX_POD_FAILURE_BACKOFF {
            backoff = MAX_POD_FAILURE_BACKOFF;
            break;
        }
    }
    let elapsed_us = now_us.saturating_sub(last_failure_us);
    let elapsed = Duration::from_micros(u64::try_from(elapsed_us).unwrap_or(0));
    if elapsed_us < 0 {
        return backoff;
    }
    backoff.saturating_sub(elapsed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const T0: i64 = 1_700_000_000_000_000;
    const S: i64 = 1_000_000;

    fn finished(at: &str) -> Value {
        json!({"status": {"containerStatuses": [{"state": {"terminated": {"finishedAt": at}}}]}})
    }

    #[test]
    fn finish_times_fall_back_in_order() {
        let cases = [
            (finished("2023-11-14T22:13:25Z"), T0 + 5 * S),
            (
                json!({"status": {"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2023-11-14T22:13:21Z"}]}}),
                T0 + S,
            ),
            (json!({"metadata": {"deletionTimestamp": "2023-11-14T22:13:50Z", "deletionGracePeriodSeconds": 30}}), T0),
            (json!({"metadata": {"creationTimestamp": "2023-11-14T22:13:22Z"}}), T0 + 2 * S),
        ];
        for (i, (pod, want)) in cases.into_iter().enumerate() {
            assert_eq!(finished_time_us(&pod), want, "case {i}");
        }
    }

    #[test]
    fn records_count_failures_since_the_last_success() {
        let fail = |s: i64| finished(&apiserver::registry::system::rfc3339(T0 / S + s));
        let old = Record { failures_after_last_success: 2, last_failure_us: Some(T0) };
        let cases = [
            ("nothing new", old, vec![], vec![], old),
            (
                "more failures",
                old,
                vec![],
                vec![fail(3), fail(1)],
                Record { failures_after_last_success: 4, last_failure_us: Some(T0 + 3 * S) },
            ),
            ("a success clears", old, vec![fail(5)], vec![], Record::default()),
            (
                "failures after the success count",
                old,
                vec![fail(5)],
                vec![fail(4), fail(6), fail(7)],
                Record { failures_after_last_success: 2, last_failure_us: Some(T0 + 7 * S) },
            ),
        ];
        for (name, previous, succeeded, failed, want) in cases {
            assert_eq!(new_record(previous, &succeeded, &failed), want, "{name}");
        }
    }

    #[test]
    fn the_delay_doubles_to_six_minutes() {
        let at = |failures: i64| Record { failures_after_last_success: failures, last_failure_us: Some(T0) };
        let cases = [
            (Record::default(), T0, 0),
            (at(1), T0, 10),
            (at(1), T0 + 4 * S, 6),
            (at(1), T0 + 11 * S, 0),
            (at(2), T0, 20),
            (at(3), T0, 40),
            (at(6), T0, 320),
            (at(7), T0, 360),
            (at(30), T0, 360),
        ];
        for (record, now, want_s) in cases {
            assert_eq!(remaining(record, now), Duration::from_secs(want_s), "{record:?} at {now}");
        }
    }
}
