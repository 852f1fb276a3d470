//! A node's health as the node lifecycle controller judges it (kube-controller-manager 1.32,
//! `pkg/controller/nodelifecycle/node_lifecycle_controller.go`: `tryUpdateNodeHealth`, `ComputeZoneState`,
//! `ReducedQPSFunc`, `HealthyQPSFunc`; `k8s.io/component-helpers/node/topology`'s `GetZoneKey`). Sans-IO:
//! the Node, its Lease's renew time and the controller's clock go in; the health record to keep and, for a
//! node silent past its grace period, the status to write come out.
//!
//! The probe time is the controller's own clock at the moment it last saw the node's Ready heartbeat or
//! its Lease's `renewTime` change, never a time the node wrote: that keeps clock skew between node and
//! controller out of the judgement, as upstream intends.

use serde_json::{json, Value};

use crate::runtime::time::parse_time_us;

/// The conditions a silent node's are set Unknown (`NetworkUnavailable` is the control plane's, untouched).
pub const CONDITIONS_MADE_UNKNOWN: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];
/// The label that keeps a node out of the zone disruption counts.
pub const LABEL_EXCLUDE_DISRUPTION: &str = "node.kubernetes.io/exclude-disruption";

/// What the controller remembers of a node between passes (`nodeHealthData`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeHealth {
    /// When (on the controller's clock, unix µs) the node last showed a sign of life.
    pub probe_us: i64,
    /// When the Ready condition last changed as the controller saw it.
    pub ready_transition_us: i64,
    /// The node's status as last seen (or as last written by the controller).
    pub status: Value,
    /// The Lease's `renewTime` last seen, in unix µs.
    pub lease_renew_us: Option<i64>,
}

/// The outcome of one look at a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The health record to keep.
    pub health: NodeHealth,
    /// The Ready condition the node carried when looked at (a made-up Unknown one if it had none).
    pub observed_ready: Value,
    /// The Ready condition after the look: the node's own, or the Unknown one the controller sets.
    pub current_ready: Option<Value>,
    /// The status to write through `nodes/{name}/status` when the node was silent past its grace period
    /// and its Ready condition changes by that.
    pub status_update: Option<Value>,
}

/// The grace periods, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grace {
    /// `--node-monitor-grace-period`.
    pub monitor_us: i64,
    /// `--node-startup-grace-period`, for a node that never posted a Ready condition.
    pub startup_us: i64,
}

/// The condition of type `kind` in a status's `conditions`.
pub fn condition<'a>(status: &'a Value, kind: &str) -> Option<&'a Value> {
    status.get("conditions")?.as_array()?.iter().find(|c| c["type"] == kind)
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

/// `tryUpdateNodeHealth`, without the write: judges `node` against what was `saved`, with the Lease's
/// `lease_renew_us` (if the node has a Lease), at `now_us` on the controller's clock; `stamp` is the time
/// to write into conditions that change.
pub fn judge(
    saved: Option<&NodeHealth>,
    node: &Value,
    lease_renew_us: Option<i64>,
    now_us: i64,
    stamp: &str,
    grace: Grace,
) -> Judgement {
    let status = node.get("status").cloned().unwrap_or_else(|| json!({}));
    let created = node.pointer("/metadata/creationTimestamp").and_then(Value::as_str).unwrap_or("");
    let created_us = parse_time_us(created).unwrap_or(now_us);
    let current = condition(&status, "Ready").cloned();
    let mut health = saved.cloned();
    let (observed_ready, grace_us) = match &current {
        // A node that never posted a status gets the startup grace period, counted from its creation.
        None => {
            match &mut health {
                Some(h) => h.status = status.clone(),
                None => {
                    health = Some(NodeHealth {
                        probe_us: created_us,
                        ready_transition_us: created_us,
                        status: status.clone(),
                        lease_renew_us: None,
                    })
                }
            }
            let made_up = json!({"type": "Ready", "status": "Unknown", "lastHeartbeatTime": created,
                "lastTransitionTime": created});
            (made_up, grace.startup_us)
        }
        Some(ready) => (ready.clone(), grace.monitor_us),
    };
    let saved_ready = saved.and_then(|h| condition(&h.status, "Ready")).cloned();
    let saved_lease = saved.and_then(|h| h.lease_renew_us);
    let fresh = |status: &Value| NodeHealth {
        probe_us: now_us,
        ready_transition_us: now_us,
        status: status.clone(),
        lease_renew_us: saved_lease,
    };
    let mut health = match (health, &saved_ready, &current) {
        (None, _, _) => fresh(&status),
        // A node first seen with a Ready condition, or one whose Ready condition went missing.
        (Some(_), None, Some(_)) | (Some(_), Some(_), None) => fresh(&status),
        (Some(h), Some(was), Some(is)) if was["lastHeartbeatTime"] != is["lastHeartbeatTime"] => {
            let transition_us =
                if was["lastTransitionTime"] != is["lastTransitionTime"] { now_us } else { h.ready_transition_us };
            NodeHealth { probe_us: now_us, ready_transition_us: transition_us, status: status.clone(), ..h }
        }
        (Some(h), _, _) => h,
    };
    // A renewed Lease is a sign of life on its own, even from a node whose status never changes.
    if let Some(renew_us) = lease_renew_us {
        if saved_lease.is_none_or(|was| was < renew_us) {
            health.lease_renew_us = Some(renew_us);
            health.probe_us = now_us;
        }
    }
    let mut judgement = Judgement { health, observed_ready, current_ready: current, status_update: None };
    if now_us <= judgement.health.probe_us + grace_us {
        return judgement;
    }
    let mut status = status;
    mark_unknown(&mut status, created, stamp);
    let current = condition(&status, "Ready").cloned();
    if current.as_ref() != Some(&judgement.observed_ready) {
        judgement.health = NodeHealth {
            probe_us: judgement.health.probe_us,
            ready_transition_us: now_us,
            status: status.clone(),
            lease_renew_us: lease_renew_us.or(judgement.health.lease_renew_us),
        };
        judgement.current_ready = current;
        judgement.status_update = Some(status);
    }
    judgement
}

/// Sets the conditions of a silent node Unknown: those it has with `NodeStatusUnknown`, those it never
/// posted with `NodeStatusNeverUpdated`; a condition already Unknown is left as it is.
pub fn mark_unknown(status: &mut Value, created: &str, stamp: &str) {
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let conditions = status["conditions"].as_array_mut().expect("made an array above");
    for kind in CONDITIONS_MADE_UNKNOWN {
        match conditions.iter_mut().find(|c| c["type"] == kind) {
            None => conditions.push(json!({
                "type": kind,
                "status": "Unknown",
                "reason": "NodeStatusNeverUpdated",
                "message": "Kubelet never posted node status.",
                "lastHeartbeatTime": created,
                "lastTransitionTime": stamp,
            })),
            Some(c) if c["status"] != "Unknown" => {
                c["status"] = json!("Unknown");
                c["reason"] = json!("NodeStatusUnknown");
                c["message"] = json!("Kubelet stopped posting node status.");
                c["lastTransitionTime"] = json!(stamp);
            }
            Some(_) => {}
        }
    }
}

/// A zone's state, as `ComputeZoneState` names it (`Initial` until its first pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ZoneState {
    Initial,
    Normal,
    PartialDisruption,
    FullDisruption,
}

/// `ComputeZoneState`: from the Ready statuses of a zone's nodes (`None` for a node without one), how many
/// are not ready and the zone's state. No ready node is a full disruption; more than two not ready and at
/// least `unhealthy_threshold` of them a partial one.
pub fn zone_state(ready: &[Option<&str>], unhealthy_threshold: f32) -> (usize, ZoneState) {
    let ready_nodes = ready.iter().filter(|s| **s == Some("True")).count();
    let not_ready = ready.len() - ready_nodes;
    let state = if ready_nodes == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2 && not_ready as f32 / (not_ready + ready_nodes) as f32 >= unhealthy_threshold {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    };
    (not_ready, state)
}

/// The tainting rate a zone in `state` of `size` nodes gets (`setLimiterInZone` with `ReducedQPSFunc` and
/// `HealthyQPSFunc`): the primary rate when normal or fully disrupted; when partially disrupted, the
/// secondary rate in a large zone and none in a small one.
pub fn zone_rate(state: ZoneState, size: usize, rates: &Rates) -> Option<f32> {
    match state {
        ZoneState::Initial => None,
        ZoneState::Normal | ZoneState::FullDisruption => Some(rates.eviction_qps),
        ZoneState::PartialDisruption if size as i64 > i64::from(rates.large_cluster_threshold) => {
            Some(rates.secondary_eviction_qps)
        }
        ZoneState::PartialDisruption => Some(0.0),
    }
}

/// The zone tainting rates and thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// `--node-eviction-rate`.
    pub eviction_qps: f32,
    /// `--secondary-node-eviction-rate`.
    pub secondary_eviction_qps: f32,
    /// `--large-cluster-size-threshold`.
    pub large_cluster_threshold: i32,
    /// `--unhealthy-zone-threshold`.
    pub unhealthy_zone_threshold: f32,
}

/// `GetZoneKey`: "region:\0:zone" from the node's topology labels (the beta failure-domain ones first),
/// "" for a node with neither.
pub fn zone_key(node: &Value) -> String {
    let label = |k: &str| node.pointer("/metadata/labels").and_then(|l| l.get(k)).and_then(Value::as_str);
    let zone = label("failure-domain.beta.kubernetes.io/zone").or_else(|| label("topology.kubernetes.io/zone"));
    let region = label("failure-domain.beta.kubernetes.io/region").or_else(|| label("topology.kubernetes.io/region"));
    let (region, zone) = (region.unwrap_or(""), zone.unwrap_or(""));
    if region.is_empty() && zone.is_empty() {
        return String::new();
    }
    format!("{region}:\0:{zone}")
}

/// Whether a node counts in its zone's disruption state.
pub fn excluded_from_disruption(node: &Value) -> bool {
    node.pointer("/metadata/labels").and_then(|l| l.get(LABEL_EXCLUDE_DISRUPTION)).is_some()
}

/// A Ready condition's status ("" for none).
pub fn ready_status(ready: Option<&Value>) -> &str {
    ready.map(|c| str_of(c, "status")).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;
    const T0: i64 = 1_700_000_000 * S;
    const GRACE: Grace = Grace { monitor_us: 50 * S, startup_us: 60 * S };

    fn node(ready: Option<(&str, &str)>) -> Value {
        let mut node = json!({"metadata": {"name": "n", "creationTimestamp": "2023-11-14T22:13:20Z"},
            "status": {"conditions": [{"type": "MemoryPressure", "status": "False",
                "lastHeartbeatTime": "x", "lastTransitionTime": "x"}]}});
        if let Some((status, heartbeat)) = ready {
            node["status"]["conditions"].as_array_mut().unwrap().push(json!({"type": "Ready", "status": status,
                "reason": "KubeletReady", "lastHeartbeatTime": heartbeat, "lastTransitionTime": "t0"}));
        }
        node
    }

    #[test]
    fn a_node_is_unknown_only_once_silent_past_its_grace_period() {
        // (what, saved probe time relative to T0, heartbeat, lease renew, now relative to T0, goes unknown)
        let ready = Some(("True", "h1"));
        let cases: Vec<(&str, Option<i64>, Option<(&str, &str)>, Option<i64>, i64, bool)> = vec![
            ("first look: probe now", None, ready, None, 100 * S, false),
            ("silent 49 s", Some(0), ready, None, 49 * S, false),
            ("silent exactly 50 s", Some(0), ready, None, 50 * S, false),
            ("silent 51 s", Some(0), ready, None, 51 * S, true),
            ("new heartbeat", Some(0), Some(("True", "h2")), None, 51 * S, false),
            ("lease renewed", Some(0), ready, Some(T0 + 5 * S), 51 * S, false),
            ("lease not renewed", Some(0), ready, Some(T0), 51 * S, true),
            ("never posted, 59 s after creation", None, None, None, 59 * S, false),
            ("never posted, 61 s after creation", None, None, None, 61 * S, true),
        ];
        for (what, saved_probe, ready, lease, now, unknown) in cases {
            let saved = saved_probe.map(|p| NodeHealth {
                probe_us: T0 + p,
                ready_transition_us: T0,
                status: node(Some(("True", "h1")))["status"].clone(),
                lease_renew_us: Some(T0),
            });
            let j = judge(saved.as_ref(), &node(ready), lease, T0 + now, "stamp", GRACE);
            assert_eq!(j.status_update.is_some(), unknown, "{what}");
            if unknown {
                assert_eq!(ready_status(j.current_ready.as_ref()), "Unknown", "{what}");
            } else {
                assert_eq!(j.current_ready.as_ref(), condition(&node(ready)["status"], "Ready"), "{what}");
            }
        }
    }

    #[test]
    fn a_silent_node_gets_upstreams_reasons_and_messages() {
        let saved = NodeHealth {
            probe_us: T0,
            ready_transition_us: T0,
            status: node(Some(("True", "h1")))["status"].clone(),
            lease_renew_us: None,
        };
        let j = judge(Some(&saved), &node(Some(("True", "h1"))), None, T0 + 60 * S, "now", GRACE);
        let status = j.status_update.expect("written");
        let ready = condition(&status, "Ready").unwrap();
        assert_eq!((&ready["status"], &ready["reason"]), (&json!("Unknown"), &json!("NodeStatusUnknown")));
        assert_eq!(
            (&ready["message"], &ready["lastTransitionTime"]),
            (&json!("Kubelet stopped posting node status."), &json!("now"))
        );
        let disk = condition(&status, "DiskPressure").unwrap();
        assert_eq!(
            (&disk["reason"], &disk["message"]),
            (&json!("NodeStatusNeverUpdated"), &json!("Kubelet never posted node status."))
        );
        assert_eq!(disk["lastHeartbeatTime"], "2023-11-14T22:13:20Z");
        assert_eq!(condition(&status, "MemoryPressure").unwrap()["reason"], "NodeStatusUnknown");
        assert_eq!(j.observed_ready["status"], "True");
        // Already Unknown: nothing more to write.
        let again =
            judge(Some(&j.health), &json!({"metadata": {}, "status": status}), None, T0 + 70 * S, "later", GRACE);
        assert_eq!(again.status_update, None);
    }

    #[test]
    fn zone_states_follow_upstreams_thresholds() {
        let t = Some("True");
        let f = Some("False");
        let u = Some("Unknown");
        // (ready statuses, unhealthy count, state)
        let cases: Vec<(Vec<Option<&str>>, usize, ZoneState)> = vec![
            (vec![t, t], 0, ZoneState::Normal),
            (vec![t, u], 1, ZoneState::Normal),
            (vec![u, f], 2, ZoneState::FullDisruption),
            (vec![None], 1, ZoneState::FullDisruption),
            (vec![t, u, u, f], 3, ZoneState::PartialDisruption),
            (vec![t, t, t, u, u, f], 3, ZoneState::Normal),
            (vec![t, t, u, u, f], 3, ZoneState::PartialDisruption),
            (vec![], 0, ZoneState::Normal),
        ];
        for (ready, unhealthy, state) in cases {
            assert_eq!(zone_state(&ready, 0.55), (unhealthy, state), "{ready:?}");
        }
    }

    #[test]
    fn zone_rates_and_keys() {
        let rates = Rates {
            eviction_qps: 0.1,
            secondary_eviction_qps: 0.01,
            large_cluster_threshold: 50,
            unhealthy_zone_threshold: 0.55,
        };
        assert_eq!(zone_rate(ZoneState::Normal, 3, &rates), Some(0.1));
        assert_eq!(zone_rate(ZoneState::FullDisruption, 3, &rates), Some(0.1));
        assert_eq!(zone_rate(ZoneState::PartialDisruption, 51, &rates), Some(0.01));
        assert_eq!(zone_rate(ZoneState::PartialDisruption, 50, &rates), Some(0.0));
        let labelled = |l: Value| json!({"metadata": {"labels": l}});
        assert_eq!(zone_key(&json!({"metadata": {}})), "");
        assert_eq!(zone_key(&labelled(json!({"topology.kubernetes.io/zone": "a"}))), ":\0:a");
        assert_eq!(
            zone_key(&labelled(json!({"topology.kubernetes.io/region": "r",
            "failure-domain.beta.kubernetes.io/zone": "b", "topology.kubernetes.io/zone": "a"}))),
            "r:\0:b"
        );
        assert!(excluded_from_disruption(&labelled(json!({LABEL_EXCLUDE_DISRUPTION: ""}))));
    }
}
