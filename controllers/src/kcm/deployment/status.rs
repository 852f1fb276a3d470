//! A Deployment's status as the controller computes it (kube-controller-manager 1.32,
//! `pkg/controller/deployment/sync.go` `calculateStatus`; the condition helpers of
//! `pkg/controller/deployment/util/deployment_util.go`: `NewDeploymentCondition`, `GetDeploymentCondition`,
//! `SetDeploymentCondition`, `RemoveDeploymentCondition`, `ReplicaSetToDeploymentCondition`). Sans-IO.
//!
//! The counts add up the Deployment's ReplicaSets: `replicas`, `readyReplicas` and `availableReplicas`
//! from their statuses, `updatedReplicas` from the new one's, `unavailableReplicas` as what is wanted
//! (their `spec.replicas`) less what is available, never below zero. The `Available` condition says
//! whether at least `replicas - maxUnavailable` pods are available. Times are microseconds since the
//! epoch in, RFC 3339 seconds out, as `metav1.Time` is written.

use apiserver::registry::system::rfc3339;
use serde_json::{json, Map, Value};

use super::util::{max_unavailable, replicas, spec_replica_sum, status_sum};

/// `apps.DeploymentAvailable`.
pub const AVAILABLE: &str = "Available";
/// `apps.DeploymentProgressing`.
pub const PROGRESSING: &str = "Progressing";
/// `apps.DeploymentReplicaFailure` (and `apps.ReplicaSetReplicaFailure`).
pub const REPLICA_FAILURE: &str = "ReplicaFailure";
/// `MinimumReplicasAvailable`.
pub const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// `MinimumReplicasUnavailable`.
pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";

/// `apps.DeploymentCondition`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Condition {
    pub kind: String,
    pub status: String,
    pub last_update_time: String,
    pub last_transition_time: String,
    pub reason: String,
    pub message: String,
}

fn str_of(obj: &Value, field: &str) -> String {
    obj.get(field).and_then(Value::as_str).unwrap_or("").to_string()
}

impl Condition {
    /// `NewDeploymentCondition`: updated and turned now.
    pub fn new(kind: &str, status: &str, reason: &str, message: &str, now_us: i64) -> Condition {
        let now = rfc3339(now_us.div_euclid(1_000_000));
        Condition {
            kind: kind.into(),
            status: status.into(),
            last_update_time: now.clone(),
            last_transition_time: now,
            reason: reason.into(),
            message: message.into(),
        }
    }

    pub fn from_json(c: &Value) -> Condition {
        Condition {
            kind: str_of(c, "type"),
            status: str_of(c, "status"),
            last_update_time: str_of(c, "lastUpdateTime"),
            last_transition_time: str_of(c, "lastTransitionTime"),
            reason: str_of(c, "reason"),
            message: str_of(c, "message"),
        }
    }

    /// As Go writes it: empty strings left out.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        let fields = [
            ("type", &self.kind),
            ("status", &self.status),
            ("lastUpdateTime", &self.last_update_time),
            ("lastTransitionTime", &self.last_transition_time),
            ("reason", &self.reason),
            ("message", &self.message),
        ];
        for (key, value) in fields {
            if !value.is_empty() {
                out.insert(key.into(), json!(value));
            }
        }
        Value::Object(out)
    }

    /// `ReplicaSetToDeploymentCondition`: a ReplicaSet's condition, updated when it turned.
    pub fn from_replica_set(c: &Value) -> Condition {
        let turned = str_of(c, "lastTransitionTime");
        Condition {
            kind: str_of(c, "type"),
            status: str_of(c, "status"),
            last_update_time: turned.clone(),
            last_transition_time: turned,
            reason: str_of(c, "reason"),
            message: str_of(c, "message"),
        }
    }
}

/// `apps.DeploymentStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub observed_generation: i64,
    pub replicas: i32,
    pub updated_replicas: i32,
    pub ready_replicas: i32,
    pub available_replicas: i32,
    pub unavailable_replicas: i32,
    pub conditions: Vec<Condition>,
    pub collision_count: Option<i32>,
}

impl Status {
    /// The status `d` carries.
    pub fn of(d: &Value) -> Status {
        let count = |field: &str| super::util::status_count(d, field);
        Status {
            observed_generation: d.pointer("/status/observedGeneration").and_then(Value::as_i64).unwrap_or(0),
            replicas: count("replicas"),
            updated_replicas: count("updatedReplicas"),
            ready_replicas: count("readyReplicas"),
            available_replicas: count("availableReplicas"),
            unavailable_replicas: count("unavailableReplicas"),
            conditions: d
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .map(|cs| cs.iter().map(Condition::from_json).collect())
                .unwrap_or_default(),
            collision_count: d.pointer("/status/collisionCount").and_then(Value::as_i64).map(super::util::go_int32),
        }
    }

    /// As Go writes it: zero counts and no conditions left out, `collisionCount` whenever set.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        let counts = [
            ("observedGeneration", self.observed_generation),
            ("replicas", i64::from(self.replicas)),
            ("updatedReplicas", i64::from(self.updated_replicas)),
            ("readyReplicas", i64::from(self.ready_replicas)),
            ("availableReplicas", i64::from(self.available_replicas)),
            ("unavailableReplicas", i64::from(self.unavailable_replicas)),
        ];
        for (key, value) in counts {
            if value != 0 {
                out.insert(key.into(), json!(value));
            }
        }
        if !self.conditions.is_empty() {
            out.insert("conditions".into(), Value::Array(self.conditions.iter().map(Condition::to_json).collect()));
        }
        if let Some(count) = self.collision_count {
            out.insert("collisionCount".into(), json!(count));
        }
        Value::Object(out)
    }

    /// `GetDeploymentCondition`.
    pub fn condition(&self, kind: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.kind == kind)
    }

    /// `SetDeploymentCondition`: nothing when one of the same status and reason is there; otherwise the
    /// condition replaces its type's (keeping when it turned, if its status stays) and goes last.
    pub fn set_condition(&mut self, mut condition: Condition) {
        if let Some(current) = self.condition(&condition.kind) {
            if current.status == condition.status && current.reason == condition.reason {
                return;
            }
            if current.status == condition.status {
                condition.last_transition_time = current.last_transition_time.clone();
            }
        }
        self.remove_condition(&condition.kind.clone());
        self.conditions.push(condition);
    }

    /// `RemoveDeploymentCondition`.
    pub fn remove_condition(&mut self, kind: &str) {
        self.conditions.retain(|c| c.kind != kind);
    }
}

/// `calculateStatus`: the status of `d` with `all_rss` (every ReplicaSet it owns, the new one included)
/// and `new_rs`, with the `Available` condition set at `now_us`.
pub fn calculate(all_rss: &[Value], new_rs: Option<&Value>, d: &Value, now_us: i64) -> Status {
    let available = status_sum(all_rss, "availableReplicas");
    // More available than wanted (while scaling down) is no negative shortfall.
    let unavailable = spec_replica_sum(all_rss).wrapping_sub(available).max(0);
    let current = Status::of(d);
    let mut status = Status {
        observed_generation: d.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0),
        replicas: status_sum(all_rss, "replicas"),
        updated_replicas: new_rs.map_or(0, |rs| super::util::status_count(rs, "replicas")),
        ready_replicas: status_sum(all_rss, "readyReplicas"),
        available_replicas: available,
        unavailable_replicas: unavailable,
        conditions: current.conditions,
        collision_count: current.collision_count,
    };
    let condition = if available >= replicas(d).wrapping_sub(max_unavailable(d)) {
        Condition::new(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability.", now_us)
    } else {
        Condition::new(
            AVAILABLE,
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now_us,
        )
    };
    status.set_condition(condition);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000_000;

    fn rs(spec: i32, replicas: i32, ready: i32, available: i32) -> Value {
        json!({"spec": {"replicas": spec}, "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": available}})
    }

    fn deployment(replicas: i32, status: Value) -> Value {
        json!({"metadata": {"generation": 3}, "spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}, "status": status})
    }

    #[test]
    fn counts_and_the_available_condition() {
        // (replica sets (spec, replicas, ready, available), the new one's index, deployment replicas,
        //  want (replicas, updated, ready, available, unavailable), want Available status)
        let cases = [
            (vec![rs(3, 3, 0, 0)], Some(0), 3, (3, 3, 0, 0, 3), "False"),
            (vec![rs(3, 3, 3, 3)], Some(0), 3, (3, 3, 3, 3, 0), "True"),
            // A rollout of 4 at 25 %/25 %: one new pod, three old ones available: enough.
            (vec![rs(3, 3, 3, 3), rs(1, 1, 0, 0)], Some(1), 4, (4, 1, 3, 3, 1), "True"),
            (vec![rs(2, 2, 2, 2), rs(2, 2, 0, 0)], Some(1), 4, (4, 2, 2, 2, 2), "False"),
            // Scaling down: more available than wanted is no negative shortfall.
            (vec![rs(1, 3, 3, 3)], Some(0), 1, (3, 3, 3, 3, 0), "True"),
            (vec![rs(2, 2, 0, 0)], None, 2, (2, 0, 0, 0, 2), "False"),
        ];
        for (rss, new_index, replicas, want, want_available) in cases {
            let d = deployment(replicas, json!({"collisionCount": 2}));
            let new_rs = new_index.map(|i: usize| &rss[i]);
            let status = calculate(&rss, new_rs, &d, T0);
            let got = (
                status.replicas,
                status.updated_replicas,
                status.ready_replicas,
                status.available_replicas,
                status.unavailable_replicas,
            );
            assert_eq!(got, want, "{rss:?}");
            assert_eq!(status.observed_generation, 3);
            assert_eq!(status.collision_count, Some(2));
            let available = status.condition(AVAILABLE).unwrap();
            assert_eq!(available.status, want_available);
            let (reason, message) = if want_available == "True" {
                (MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability.")
            } else {
                (MINIMUM_REPLICAS_UNAVAILABLE, "Deployment does not have minimum availability.")
            };
            assert_eq!((available.reason.as_str(), available.message.as_str()), (reason, message));
            assert_eq!(available.last_update_time, "2023-11-14T22:13:20Z");
        }
    }

    #[test]
    fn conditions_keep_their_transition_time_while_their_status_holds() {
        let mut status = Status::default();
        status.set_condition(Condition::new(PROGRESSING, "True", "NewReplicaSetCreated", "a", T0));
        status.set_condition(Condition::new(AVAILABLE, "False", MINIMUM_REPLICAS_UNAVAILABLE, "b", T0));
        // Same status and reason: nothing changes, not even the update time.
        status.set_condition(Condition::new(PROGRESSING, "True", "NewReplicaSetCreated", "c", T0 + 5_000_000));
        assert_eq!(status.condition(PROGRESSING).unwrap().message, "a");
        // Same status, new reason: replaced and moved last, the transition time kept.
        status.set_condition(Condition::new(PROGRESSING, "True", "ReplicaSetUpdated", "d", T0 + 5_000_000));
        let progressing = status.conditions.last().unwrap();
        assert_eq!((progressing.kind.as_str(), progressing.message.as_str()), (PROGRESSING, "d"));
        assert_eq!(progressing.last_transition_time, "2023-11-14T22:13:20Z");
        assert_eq!(progressing.last_update_time, "2023-11-14T22:13:25Z");
        // A new status: a new transition time.
        status.set_condition(Condition::new(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, "e", T0 + 9_000_000));
        assert_eq!(status.condition(AVAILABLE).unwrap().last_transition_time, "2023-11-14T22:13:29Z");
        status.remove_condition(PROGRESSING);
        assert!(status.condition(PROGRESSING).is_none());
    }

    #[test]
    fn statuses_round_trip_as_go_writes_them() {
        let d = json!({"status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "unavailableReplicas": 3, "collisionCount": 0,
            "conditions": [{"type": "Available", "status": "False", "lastUpdateTime": "2023-11-14T22:13:20Z", "lastTransitionTime": "2023-11-14T22:13:20Z", "reason": "MinimumReplicasUnavailable", "message": "m"}]}});
        let status = Status::of(&d);
        assert_eq!(status.to_json(), d["status"]);
        assert_eq!(Status::default().to_json(), json!({}));
        let rs_condition = json!({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z", "reason": "FailedCreate", "message": "quota"});
        let converted = Condition::from_replica_set(&rs_condition);
        assert_eq!(converted.last_update_time, "2023-11-14T22:13:20Z");
        assert_eq!(converted.reason, "FailedCreate");
    }
}
