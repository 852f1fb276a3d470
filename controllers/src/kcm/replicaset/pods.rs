//! What the ReplicaSet controller reads off a pod (kube-controller-manager 1.32: `pkg/controller/controller_utils.go`
//! `IsPodActive`, `FilterActivePods`, `PodKey`, `maxContainerRestarts`; `pkg/api/v1/pod/util.go`
//! `IsPodReady`, `IsPodAvailable`; `pkg/apis/core/helper` `GetDeletionCostFromPodAnnotations`;
//! apimachinery's `metav1.GetControllerOf`). Sans-IO: pod JSON in, facts out. Times are microseconds since
//! the Unix epoch, `None` standing for Go's zero time.

use serde_json::Value;

pub use crate::runtime::time::parse_time_us;

/// `core.PodDeletionCost`: the annotation that ranks a pod for deletion (feature `PodDeletionCost`, beta
/// and on in 1.32).
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `controller.PodKey` (and `KeyFunc` of any namespaced object): `namespace/name`.
pub fn object_key(obj: &Value) -> String {
    format!("{}/{}", str_at(obj, "/metadata/namespace"), str_at(obj, "/metadata/name"))
}

/// Whether the object carries a `deletionTimestamp`.
pub fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null())
}

/// `IsPodActive`: neither finished (`Succeeded`, `Failed`) nor being deleted.
pub fn is_active(pod: &Value) -> bool {
    !matches!(str_at(pod, "/status/phase"), "Succeeded" | "Failed") && !is_deleting(pod)
}

/// `FilterActivePods`, over owned pods or the cache's shared ones.
pub fn filter_active<P: std::borrow::Borrow<Value>>(pods: Vec<P>) -> Vec<P> {
    pods.into_iter().filter(|pod| is_active(pod.borrow())).collect()
}

/// The pod's `Ready` condition, if it has one.
fn ready_condition(pod: &Value) -> Option<&Value> {
    pod.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
}

/// `IsPodReady`: the `Ready` condition is `True`.
pub fn is_ready(pod: &Value) -> bool {
    ready_condition(pod).is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"))
}

/// `podReadyTime`: when a ready pod's `Ready` condition last turned (the zero time for a pod not ready).
pub fn ready_time_us(pod: &Value) -> Option<i64> {
    if !is_ready(pod) {
        return None;
    }
    ready_condition(pod).and_then(|c| c.get("lastTransitionTime")).and_then(Value::as_str).and_then(parse_time_us)
}

/// `IsPodAvailable`: ready, and ready for longer than `min_ready_seconds` at `now_us` (at once when it is 0).
pub fn is_available(pod: &Value, min_ready_seconds: i64, now_us: i64) -> bool {
    if !is_ready(pod) {
        return false;
    }
    if min_ready_seconds == 0 {
        return true;
    }
    // `LastTransitionTime.Add(minReadySeconds).Before(now)`: strictly before; a zero time never counts.
    ready_time_us(pod).is_some_and(|since| since.saturating_add(min_ready_seconds.saturating_mul(1_000_000)) < now_us)
}

/// `metadata.creationTimestamp`, or the zero time.
pub fn creation_time_us(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/creationTimestamp").and_then(Value::as_str).and_then(parse_time_us)
}

/// `maxContainerRestarts`: the largest `restartCount` among the pod's containers.
pub fn max_container_restarts(pod: &Value) -> i64 {
    pod.pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map(|cs| cs.iter().filter_map(|c| c.get("restartCount").and_then(Value::as_i64)).max().unwrap_or(0).max(0))
        .unwrap_or(0)
}

/// `GetDeletionCostFromPodAnnotations`: the annotation as an `int32`, 0 when absent or invalid (a leading
/// `+` or a leading zero is invalid).
pub fn deletion_cost(pod: &Value) -> i32 {
    let Some(text) =
        pod.pointer("/metadata/annotations").and_then(|a| a.get(POD_DELETION_COST)).and_then(Value::as_str)
    else {
        return 0;
    };
    let valid_first = match text.as_bytes().first() {
        Some(b'-') => true,
        Some(b'0') => text == "0",
        Some(c) => c.is_ascii_digit(),
        None => false,
    };
    if !valid_first {
        return 0;
    }
    text.parse::<i32>().unwrap_or(0)
}

/// `metav1.GetControllerOf`: the first owner reference with `controller: true`.
pub fn controller_ref(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const T0: i64 = 1_700_000_000_000_000;

    fn pod(phase: &str, deleting: bool, ready: Option<(&str, &str)>) -> Value {
        let mut pod = json!({"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": phase}});
        if deleting {
            pod["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        }
        if let Some((status, since)) = ready {
            pod["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": status, "lastTransitionTime": since}]);
        }
        pod
    }

    #[test]
    fn active_pods_are_neither_finished_nor_deleting() {
        let cases = [
            ("Pending", false, true),
            ("Running", false, true),
            ("Unknown", false, true),
            ("", false, true),
            ("Succeeded", false, false),
            ("Failed", false, false),
            ("Running", true, false),
        ];
        for (phase, deleting, want) in cases {
            assert_eq!(is_active(&pod(phase, deleting, None)), want, "{phase} deleting={deleting}");
        }
        let kept = filter_active(vec![pod("Running", false, None), pod("Failed", false, None)]);
        assert_eq!(kept.len(), 1);
    }

    #[test]
    fn readiness_and_availability_follow_the_ready_condition() {
        let since = "2023-11-14T22:13:20Z"; // T0
        let cases = [
            // (ready condition, minReadySeconds, now, ready, available)
            (None, 0, T0, false, false),
            (Some(("False", since)), 0, T0, false, false),
            (Some(("True", since)), 0, T0, true, true),
            (Some(("True", since)), 10, T0 + 9_000_000, true, false),
            // Exactly minReadySeconds later is not yet available: the comparison is strict.
            (Some(("True", since)), 10, T0 + 10_000_000, true, false),
            (Some(("True", since)), 10, T0 + 10_000_001, true, true),
            (Some(("True", "not a time")), 10, T0 + 100_000_000, true, false),
        ];
        for (ready, min_ready, now, want_ready, want_available) in cases {
            let p = pod("Running", false, ready);
            assert_eq!(is_ready(&p), want_ready, "{ready:?}");
            assert_eq!(is_available(&p, min_ready, now), want_available, "{ready:?} {min_ready} {now}");
        }
        assert_eq!(ready_time_us(&pod("Running", false, Some(("True", since)))), Some(T0));
        assert_eq!(ready_time_us(&pod("Running", false, Some(("False", since)))), None);
    }

    #[test]
    fn deletion_cost_reads_the_annotation_strictly() {
        let cases = [
            (None, 0),
            (Some("10"), 10),
            (Some("-5"), -5),
            (Some("0"), 0),
            (Some("+10"), 0),
            (Some("08"), 0),
            (Some("x"), 0),
            (Some("3000000000"), 0),
        ];
        for (value, want) in cases {
            let mut p = json!({"metadata": {"name": "p"}});
            if let Some(v) = value {
                p["metadata"]["annotations"] = json!({POD_DELETION_COST: v});
            }
            assert_eq!(deletion_cost(&p), want, "{value:?}");
        }
    }

    #[test]
    fn the_controller_ref_is_the_first_controlling_owner() {
        let p = json!({"metadata": {"ownerReferences": [
            {"kind": "A", "name": "a", "uid": "1"},
            {"kind": "B", "name": "b", "uid": "2", "controller": false},
            {"kind": "C", "name": "c", "uid": "3", "controller": true},
        ]}});
        assert_eq!(controller_ref(&p).unwrap()["uid"], "3");
        assert!(controller_ref(&json!({"metadata": {}})).is_none());
        let restarts = json!({"status": {"containerStatuses": [{"restartCount": 2}, {"restartCount": 7}]}});
        assert_eq!(max_container_restarts(&restarts), 7);
        assert_eq!(object_key(&json!({"metadata": {"namespace": "ns", "name": "p"}})), "ns/p");
    }
}
