//! A ReplicaSet's status as the controller computes it (kube-controller-manager 1.32,
//! `pkg/controller/replicaset/replica_set_utils.go`: `calculateStatus`, the `ReplicaFailure` condition's
//! `NewReplicaSetCondition` / `SetCondition` / `RemoveCondition`, and the steady-state test that opens
//! `updateReplicaSetStatus`). Sans-IO: the ReplicaSet and its claimed active pods in, the status out.
//!
//! `replicas` counts the claimed active pods, `fullyLabeledReplicas` those carrying every label of the
//! template, `readyReplicas` the ready ones, `availableReplicas` those ready for longer than
//! `minReadySeconds`. A failed create or delete adds a `ReplicaFailure` condition (reason `FailedCreate`
//! with too few pods, `FailedDelete` with too many, the error as its message) unless one is already there;
//! a sync without failure removes it.

use apiserver::registry::system::rfc3339;
use serde_json::{json, Map, Value};

use super::pods::{is_available, is_ready};
use super::selector::Selector;

/// `apps.ReplicaSetReplicaFailure`.
pub const REPLICA_FAILURE: &str = "ReplicaFailure";
/// `controller.FailedCreatePodReason`.
pub const FAILED_CREATE: &str = "FailedCreate";
/// `controller.FailedDeletePodReason`.
pub const FAILED_DELETE: &str = "FailedDelete";

/// `apps.ReplicaSetStatus`; conditions are kept as the JSON they are stored as.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Status {
    pub replicas: i64,
    pub fully_labeled_replicas: i64,
    pub ready_replicas: i64,
    pub available_replicas: i64,
    pub observed_generation: i64,
    pub conditions: Vec<Value>,
}

fn int_at(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// `*rs.Spec.Replicas` (the apiserver defaults it to 1).
pub fn spec_replicas(rs: &Value) -> i64 {
    rs.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)
}

/// `rs.Spec.MinReadySeconds`.
pub fn min_ready_seconds(rs: &Value) -> i64 {
    int_at(rs, "/spec/minReadySeconds")
}

impl Status {
    /// The status the ReplicaSet carries.
    pub fn of(rs: &Value) -> Status {
        Status {
            replicas: int_at(rs, "/status/replicas"),
            fully_labeled_replicas: int_at(rs, "/status/fullyLabeledReplicas"),
            ready_replicas: int_at(rs, "/status/readyReplicas"),
            available_replicas: int_at(rs, "/status/availableReplicas"),
            observed_generation: int_at(rs, "/status/observedGeneration"),
            conditions: rs.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default(),
        }
    }

    /// Writes this status into `rs`, as Go serializes it: `replicas` always, the other counts and the
    /// conditions only when not zero or empty. Status fields this controller does not own are kept.
    pub fn write_into(&self, rs: &mut Value) {
        let Some(obj) = rs.as_object_mut() else { return };
        let status = obj.entry("status").or_insert_with(|| Value::Object(Map::new()));
        if !status.is_object() {
            *status = Value::Object(Map::new());
        }
        let map = status.as_object_mut().expect("made an object above");
        map.insert("replicas".into(), json!(self.replicas));
        let counts = [
            ("fullyLabeledReplicas", self.fully_labeled_replicas),
            ("readyReplicas", self.ready_replicas),
            ("availableReplicas", self.available_replicas),
            ("observedGeneration", self.observed_generation),
        ];
        for (field, value) in counts {
            if value == 0 {
                map.remove(field);
            } else {
                map.insert(field.into(), json!(value));
            }
        }
        if self.conditions.is_empty() {
            map.remove("conditions");
        } else {
            map.insert("conditions".into(), Value::Array(self.conditions.clone()));
        }
    }

    fn condition(&self, kind: &str) -> Option<&Value> {
        self.conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
    }

    /// `SetCondition`: replaces the condition of its type, unless one with the same status and reason is
    /// already there; a new condition goes last.
    pub fn set_condition(&mut self, condition: Value) {
        let kind = condition.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        if let Some(current) = self.condition(&kind) {
            if current.get("status") == condition.get("status") && current.get("reason") == condition.get("reason") {
                return;
            }
        }
        self.remove_condition(&kind);
        self.conditions.push(condition);
    }

    /// `RemoveCondition`.
    pub fn remove_condition(&mut self, kind: &str) {
        self.conditions.retain(|c| c.get("type").and_then(Value::as_str) != Some(kind));
    }
}

/// `NewReplicaSetCondition` with status `True` at `now_us` (stored to the second, as `metav1.Time`).
pub fn new_condition(kind: &str, reason: &str, message: &str, now_us: i64) -> Value {
    let mut condition =
        json!({"type": kind, "status": "True", "lastTransitionTime": rfc3339(now_us.div_euclid(1_000_000))});
    // `reason` and `message` are `omitempty`.
    if !reason.is_empty() {
        condition["reason"] = json!(reason);
    }
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    condition
}

/// `calculateStatus`: the status of `rs` with `pods` (its claimed active pods) at `now_us`, after a sync
/// whose create or delete failed with `manage_error`, if it did.
pub fn calculate<P: std::borrow::Borrow<Value>>(
    rs: &Value,
    pods: &[P],
    manage_error: Option<&str>,
    now_us: i64,
) -> Status {
    let mut status = Status::of(rs);
    let template = Selector::from_set(rs.pointer("/spec/template/metadata/labels"));
    let min_ready = min_ready_seconds(rs);
    let (mut fully_labeled, mut ready, mut available) = (0, 0, 0);
    for pod in pods {
        let pod = pod.borrow();
        if template.matches(pod.pointer("/metadata/labels")) {
            fully_labeled += 1;
        }
        if is_ready(pod) {
            ready += 1;
            if is_available(pod, min_ready, now_us) {
                available += 1;
            }
        }
    }
    let has_failure = status.condition(REPLICA_FAILURE).is_some();
    match manage_error {
        Some(message) if !has_failure => {
            let diff = pods.len() as i64 - spec_replicas(rs);
            let reason = match diff {
                d if d < 0 => FAILED_CREATE,
                d if d > 0 => FAILED_DELETE,
                _ => "",
            };
            status.set_condition(new_condition(REPLICA_FAILURE, reason, message, now_us));
        }
        None if has_failure => status.remove_condition(REPLICA_FAILURE),
        _ => {}
    }
    status.replicas = pods.len() as i64;
    status.fully_labeled_replicas = fully_labeled;
    status.ready_replicas = ready;
    status.available_replicas = available;
    status
}

/// The steady state of `updateReplicaSetStatus`: whether `rs` already carries `status` and has observed
/// its own generation, so that nothing need be written.
pub fn is_current(rs: &Value, status: &Status) -> bool {
    let current = Status::of(rs);
    current.replicas == status.replicas
        && current.fully_labeled_replicas == status.fully_labeled_replicas
        && current.ready_replicas == status.ready_replicas
        && current.available_replicas == status.available_replicas
        && int_at(rs, "/metadata/generation") == current.observed_generation
        && current.conditions == status.conditions
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW_S: i64 = 1_700_000_000;
    const NOW_US: i64 = NOW_S * 1_000_000;

    fn rs(replicas: i64, min_ready: i64, status: Value) -> Value {
        json!({
            "metadata": {"name": "rs", "namespace": "ns", "generation": 2},
            "spec": {"replicas": replicas, "minReadySeconds": min_ready, "template": {"metadata": {"labels": {"app": "web", "tier": "fe"}}}},
            "status": status,
        })
    }

    fn pod(labels: Value, ready_ago_s: Option<i64>) -> Value {
        let mut p = json!({"metadata": {"name": "p", "labels": labels}, "status": {"phase": "Running"}});
        if let Some(ago) = ready_ago_s {
            p["status"]["conditions"] =
                json!([{"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(NOW_S - ago)}]);
        }
        p
    }

    #[test]
    fn counts_follow_labels_readiness_and_min_ready_seconds() {
        let full = || json!({"app": "web", "tier": "fe"});
        let partial = || json!({"app": "web"});
        let cases = [
            // (minReadySeconds, pods, replicas, fully labeled, ready, available)
            (0, vec![], 0, 0, 0, 0),
            (0, vec![pod(full(), None), pod(partial(), None)], 2, 1, 0, 0),
            (0, vec![pod(full(), Some(1)), pod(partial(), Some(0))], 2, 1, 2, 2),
            (10, vec![pod(full(), Some(5)), pod(full(), Some(11)), pod(full(), Some(10))], 3, 3, 3, 1),
        ];
        for (min_ready, pods, replicas, fully, ready, available) in cases {
            let status = calculate(&rs(3, min_ready, json!({})), &pods, None, NOW_US);
            assert_eq!(
                (status.replicas, status.fully_labeled_replicas, status.ready_replicas, status.available_replicas),
                (replicas, fully, ready, available),
                "minReadySeconds {min_ready}, {} pods",
                pods.len()
            );
        }
    }

    #[test]
    fn the_replica_failure_condition() {
        let existing = json!({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z", "reason": "FailedCreate", "message": "old"});
        let other = json!({"type": "Other", "status": "True"});
        let fresh = |reason: &str| json!({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z", "reason": reason, "message": "boom"});
        let no_reason = json!({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z", "message": "boom"});
        let cases = [
            ("too few pods", 3, vec![], Some("boom"), vec![fresh("FailedCreate")]),
            ("too many pods", 0, vec![], Some("boom"), vec![fresh("FailedDelete")]),
            ("the right number", 1, vec![], Some("boom"), vec![no_reason]),
            ("an existing failure is kept as it was", 3, vec![existing.clone()], Some("boom"), vec![existing.clone()]),
            ("success removes it", 3, vec![other.clone(), existing.clone()], None, vec![other.clone()]),
            ("success without one changes nothing", 3, vec![other.clone()], None, vec![other.clone()]),
            ("a new one goes last", 3, vec![other.clone()], Some("boom"), vec![other.clone(), fresh("FailedCreate")]),
        ];
        for (name, replicas, conditions, error, want) in cases {
            let pods = if replicas == 0 || replicas == 1 { vec![pod(json!({}), None)] } else { vec![] };
            let status = calculate(&rs(replicas, 0, json!({"conditions": conditions})), &pods, error, NOW_US + 999_999);
            assert_eq!(status.conditions, want, "{name}");
        }
    }

    #[test]
    fn a_status_is_current_only_when_nothing_differs() {
        let stored = json!({"replicas": 2, "fullyLabeledReplicas": 2, "observedGeneration": 2});
        let status = Status { replicas: 2, fully_labeled_replicas: 2, observed_generation: 2, ..Status::default() };
        let cases = [
            ("same", rs(2, 0, stored.clone()), status.clone(), true),
            ("replicas differ", rs(2, 0, stored.clone()), Status { replicas: 3, ..status.clone() }, false),
            ("ready differs", rs(2, 0, stored.clone()), Status { ready_replicas: 1, ..status.clone() }, false),
            (
                "generation not observed",
                rs(2, 0, json!({"replicas": 2, "fullyLabeledReplicas": 2, "observedGeneration": 1})),
                status.clone(),
                false,
            ),
            (
                "conditions differ",
                rs(2, 0, stored.clone()),
                Status { conditions: vec![json!({"type": "X"})], ..status.clone() },
                false,
            ),
        ];
        for (name, rs, status, want) in cases {
            assert_eq!(is_current(&rs, &status), want, "{name}");
        }
    }

    #[test]
    fn writing_omits_zeroes_and_keeps_foreign_fields() {
        let mut obj = rs(2, 0, json!({"replicas": 5, "readyReplicas": 4, "terminatingReplicas": 1}));
        Status { replicas: 0, fully_labeled_replicas: 0, observed_generation: 2, ..Status::default() }
            .write_into(&mut obj);
        assert_eq!(obj["status"], json!({"replicas": 0, "observedGeneration": 2, "terminatingReplicas": 1}));
        let written =
            Status { replicas: 2, ready_replicas: 1, conditions: vec![json!({"type": "X"})], ..Status::default() };
        written.write_into(&mut obj);
        assert_eq!(Status::of(&obj), written);
    }
}
