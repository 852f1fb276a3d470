//! A StatefulSet's status (kube-controller-manager 1.32, `pkg/controller/statefulset/stateful_set_control.go`
//! `computeReplicaStatus`, `updateStatus`, `updateStatefulSetStatus`; `stateful_set_utils.go`
//! `completeRollingUpdate`, `inconsistentStatus`). Sans-IO.
//!
//! `replicas` counts the pods the apiserver holds (they have a phase), `readyReplicas` those running and
//! ready, `availableReplicas` those ready for `minReadySeconds`; `currentReplicas` and `updatedReplicas`
//! the live pods labelled with the current and the update revision. A rolling update whose pods are all
//! updated and ready completes: the update revision becomes the current one. The status is written only
//! when a field that matters differs (`collisionCount` alone does not), and it is written whole, as
//! upstream's `set.Status = *status` does (conditions included, which the controller never sets).

use serde_json::{json, Map, Value};

use super::identity::{
    is_created, is_running_and_available, is_running_and_ready, is_terminating, pod_revision, spec_replicas,
};

/// `apps.StatefulSetStatus`, as the controller computes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub observed_generation: i64,
    pub replicas: i64,
    pub ready_replicas: i64,
    pub current_replicas: i64,
    pub updated_replicas: i64,
    pub available_replicas: i64,
    pub current_revision: String,
    pub update_revision: String,
    pub collision_count: i32,
}

impl Status {
    /// The status a set carries now.
    pub fn of(set: &Value) -> Status {
        let int = |f: &str| set.pointer(&format!("/status/{f}")).and_then(Value::as_i64).unwrap_or(0);
        let text = |f: &str| set.pointer(&format!("/status/{f}")).and_then(Value::as_str).unwrap_or("").to_string();
        Status {
            observed_generation: int("observedGeneration"),
            replicas: int("replicas"),
            ready_replicas: int("readyReplicas"),
            current_replicas: int("currentReplicas"),
            updated_replicas: int("updatedReplicas"),
            available_replicas: int("availableReplicas"),
            current_revision: text("currentRevision"),
            update_revision: text("updateRevision"),
            collision_count: i32::try_from(int("collisionCount")).unwrap_or(0),
        }
    }

    /// `computeReplicaStatus` over `pods` added to the counts (`updateStatus` sums it over pod lists after
    /// zeroing them with [`Status::reset_counts`]).
    pub fn count(&mut self, pods: &[Value], min_ready_seconds: i64, now_us: i64) {
        for pod in pods {
            if is_created(pod) {
                self.replicas += 1;
            }
            if is_running_and_ready(pod) {
                self.ready_replicas += 1;
                if is_running_and_available(pod, min_ready_seconds, now_us) {
                    self.available_replicas += 1;
                }
            }
            if is_created(pod) && !is_terminating(pod) {
                let revision = pod_revision(pod);
                if revision == self.current_revision {
                    self.current_replicas += 1;
                }
                if revision == self.update_revision {
                    self.updated_replicas += 1;
                }
            }
        }
    }

    /// `updateStatus`'s zeroing of the counts.
    pub fn reset_counts(&mut self) {
        self.replicas = 0;
        self.ready_replicas = 0;
        self.current_replicas = 0;
        self.updated_replicas = 0;
        self.available_replicas = 0;
    }

    /// `completeRollingUpdate`: a rolling update with every replica updated and ready is complete.
    pub fn complete_rolling_update(&mut self, set: &Value) {
        let rolling = set.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("RollingUpdate");
        let want = spec_replicas(set);
        if rolling && self.updated_replicas == want && self.ready_replicas == want && self.replicas == want {
            self.current_replicas = self.updated_replicas;
            self.current_revision = self.update_revision.clone();
        }
    }

    /// `inconsistentStatus`: whether this status must be written over the set's.
    pub fn differs_from(&self, set: &Value) -> bool {
        let old = Status::of(set);
        self.observed_generation > old.observed_generation
            || self.replicas != old.replicas
            || self.current_replicas != old.current_replicas
            || self.ready_replicas != old.ready_replicas
            || self.updated_replicas != old.updated_replicas
            || self.current_revision != old.current_revision
            || self.available_replicas != old.available_replicas
            || self.update_revision != old.update_revision
    }

    /// The status as Go writes `apps/v1.StatefulSetStatus`: the `omitempty` fields left out when zero.
    pub fn to_json(&self) -> Value {
        let mut status = Map::new();
        let mut put = |key: &str, value: Value, omit: bool| {
            if !omit {
                status.insert(key.into(), value);
            }
        };
        put("observedGeneration", json!(self.observed_generation), self.observed_generation == 0);
        put("replicas", json!(self.replicas), false);
        put("readyReplicas", json!(self.ready_replicas), self.ready_replicas == 0);
        put("currentReplicas", json!(self.current_replicas), self.current_replicas == 0);
        put("updatedReplicas", json!(self.updated_replicas), self.updated_replicas == 0);
        put("currentRevision", json!(self.current_revision), self.current_revision.is_empty());
        put("updateRevision", json!(self.update_revision), self.update_revision.is_empty());
        // A pointer upstream always sets, so it is written even at 0.
        put("collisionCount", json!(self.collision_count), false);
        put("availableReplicas", json!(self.available_replicas), false);
        Value::Object(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000_000;

    fn pod(phase: &str, ready: bool, deleting: bool, revision: &str) -> Value {
        let mut p = json!({"metadata": {"name": "web-0", "labels": {"controller-revision-hash": revision}}, "status": {"phase": phase}});
        if ready {
            p["status"]["conditions"] =
                json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z"}]);
        }
        if deleting {
            p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        }
        p
    }

    fn counts(s: &Status) -> [i64; 5] {
        [s.replicas, s.ready_replicas, s.available_replicas, s.current_replicas, s.updated_replicas]
    }

    #[test]
    fn counts_follow_phase_readiness_and_revision() {
        // (pods, minReadySeconds, now, [replicas, ready, available, current, updated])
        let cases = [
            (vec![pod("", false, false, "a")], 0, T0, [0, 0, 0, 0, 0]),
            (vec![pod("Pending", false, false, "a")], 0, T0, [1, 0, 0, 1, 0]),
            (vec![pod("Running", true, false, "a"), pod("Running", true, false, "b")], 0, T0, [2, 2, 2, 1, 1]),
            (vec![pod("Running", true, false, "b")], 10, T0 + 5_000_000, [1, 1, 0, 0, 1]),
            (vec![pod("Running", true, false, "b")], 10, T0 + 11_000_000, [1, 1, 1, 0, 1]),
            (vec![pod("Running", true, true, "a")], 0, T0, [1, 1, 1, 0, 0]),
            (vec![pod("Pending", true, false, "a")], 0, T0, [1, 0, 0, 1, 0]),
        ];
        for (pods, min_ready, now, want) in cases {
            let mut s = Status { current_revision: "a".into(), update_revision: "b".into(), ..Status::default() };
            s.count(&pods, min_ready, now);
            assert_eq!(counts(&s), want, "{pods:?}");
        }
    }

    #[test]
    fn a_rolling_update_completes_when_all_are_updated_and_ready() {
        let set = |kind: &str| json!({"spec": {"replicas": 3, "updateStrategy": {"type": kind}}});
        let status = |replicas, ready, updated| Status {
            replicas,
            ready_replicas: ready,
            updated_replicas: updated,
            current_replicas: 1,
            current_revision: "a".into(),
            update_revision: "b".into(),
            ..Status::default()
        };
        let cases = [
            ("RollingUpdate", status(3, 3, 3), true),
            ("RollingUpdate", status(3, 2, 3), false),
            ("RollingUpdate", status(4, 3, 3), false),
            ("RollingUpdate", status(3, 3, 2), false),
            ("OnDelete", status(3, 3, 3), false),
        ];
        for (kind, mut s, complete) in cases {
            s.complete_rolling_update(&set(kind));
            assert_eq!(s.current_revision == "b" && s.current_replicas == 3, complete, "{kind} {s:?}");
        }
    }

    #[test]
    fn only_fields_that_matter_force_a_write() {
        let set = json!({"status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "availableReplicas": 3, "currentRevision": "a", "updateRevision": "a", "collisionCount": 0}});
        let same = Status::of(&set);
        assert!(!same.differs_from(&set));
        assert!(!Status { collision_count: 4, ..same.clone() }.differs_from(&set));
        assert!(
            !Status { observed_generation: 1, ..same.clone() }.differs_from(&set),
            "an older generation is no news"
        );
        assert!(Status { observed_generation: 3, ..same.clone() }.differs_from(&set));
        assert!(Status { ready_replicas: 2, ..same.clone() }.differs_from(&set));
        assert!(Status { update_revision: "b".into(), ..same.clone() }.differs_from(&set));
        assert_eq!(Status::of(&json!({"status": same.to_json()})), same);
        assert_eq!(
            Status { replicas: 0, ..Status::default() }.to_json(),
            json!({"replicas": 0, "collisionCount": 0, "availableReplicas": 0})
        );
    }
}
