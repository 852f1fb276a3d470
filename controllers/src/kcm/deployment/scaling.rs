//! Scaling a Deployment outside a rollout, and cleaning up after one (kube-controller-manager 1.32,
//! `pkg/controller/deployment/sync.go`: `isScalingEvent`, `scale`, `cleanupDeployment`; `recreate.go`:
//! `scaleDownOldReplicaSetsForRecreate`, `oldPodsRunning`). Sans-IO: plans of resizes and deletions.
//!
//! A change of `spec.replicas` shows as ReplicaSets whose `desired-replicas` annotation differs from it.
//! With one active ReplicaSet (or none, then the newest) it alone takes the new size; a new ReplicaSet
//! already saturated sends the old ones to zero; otherwise, in a rolling Deployment, every active
//! ReplicaSet grows or shrinks in proportion to its share of the `max-replicas` it was sized for, the
//! largest taking what rounding leaves over. Old ReplicaSets beyond `revisionHistoryLimit` that hold and
//! want no pod are deleted, lowest revision first.

use std::collections::BTreeMap;

use serde_json::Value;

use super::progress::revision_history_limit;
use super::revision::{by_revision, DESIRED_REPLICAS};
use super::util::{
    by_size_newer, by_size_older, filter_active, find_active_or_latest, get_proportion, int_annotation,
    is_rolling_update, is_saturated, max_surge, meta, replicas, spec_replica_sum, status_count,
};
use crate::kcm::replicaset::pods::is_deleting;

/// One ReplicaSet resize.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resize {
    pub name: String,
    pub to: i32,
    /// `None` for `scaleReplicaSetAndRecordEvent` (nothing at all when the size is already `to`, the
    /// direction from the sizes); `Some(direction)` for `scaleReplicaSet` (the replica annotations are
    /// rewritten even when the size stays, and a resize's event says `direction`).
    pub direction: Option<&'static str>,
}

impl Resize {
    pub fn checked(name: &str, to: i32) -> Resize {
        Resize { name: name.into(), to, direction: None }
    }
}

/// `isScalingEvent`: an active ReplicaSet was sized for another `spec.replicas`.
pub fn is_scaling_event(d: &Value, all_rss: &[Value]) -> bool {
    let desired = replicas(d);
    filter_active(all_rss).iter().any(|rs| int_annotation(rs, DESIRED_REPLICAS).is_some_and(|want| want != desired))
}

/// `scale`: the resizes that bring the ReplicaSets to the Deployment's size.
pub fn scale(d: &Value, new_rs: Option<&Value>, old_rss: &[Value]) -> Vec<Resize> {
    let desired = replicas(d);
    if let Some(only) = find_active_or_latest(new_rs, old_rss) {
        if replicas(&only) == desired {
            return Vec::new();
        }
        return vec![Resize::checked(meta(&only, "name"), desired)];
    }
    // A saturated new ReplicaSet (one adopted in that state, say) leaves the old ones nothing.
    if is_saturated(d, new_rs) {
        return filter_active(old_rss).iter().map(|rs| Resize::checked(meta(rs, "name"), 0)).collect();
    }
    if !is_rolling_update(d) {
        return Vec::new();
    }
    let mut all = old_rss.to_vec();
    all.extend(new_rs.cloned());
    let mut active = filter_active(&all);
    let allowed = if desired > 0 { desired.wrapping_add(max_surge(d)) } else { 0 };
    let to_add = allowed - spec_replica_sum(&active);
    // Growing favours newer ReplicaSets among equals, shrinking older ones.
    let direction = match to_add {
        n if n > 0 => {
            active.sort_by(by_size_newer);
            "up"
        }
        n if n < 0 => {
            active.sort_by(by_size_older);
            "down"
        }
        _ => "",
    };
    let mut added = 0i32;
    let mut sizes: BTreeMap<String, i32> = BTreeMap::new();
    for rs in &active {
        let share = if to_add != 0 { get_proportion(Some(rs), d, to_add, added) } else { 0 };
        sizes.insert(meta(rs, "name").to_string(), replicas(rs) + share);
        added += share;
    }
    active
        .iter()
        .enumerate()
        .map(|(i, rs)| {
            let name = meta(rs, "name").to_string();
            let mut to = sizes[&name];
            if i == 0 && to_add != 0 {
                // What rounding left over goes to (or comes from) the first, largest ReplicaSet.
                to = (to + to_add - added).max(0);
            }
            Resize { name, to, direction: Some(direction) }
        })
        .collect()
}

/// `scaleDownOldReplicaSetsForRecreate`: every old ReplicaSet with replicas goes to zero.
pub fn scale_down_for_recreate(active_old_rss: &[Value]) -> Vec<Resize> {
    active_old_rss.iter().filter(|rs| replicas(rs) != 0).map(|rs| Resize::checked(meta(rs, "name"), 0)).collect()
}

/// `oldPodsRunning`: an old ReplicaSet still counts pods, or a pod of one (by controller uid in
/// `pods_by_rs`) is not finished.
pub fn old_pods_running<P: std::borrow::Borrow<Value>>(
    new_rs: Option<&Value>,
    old_rss: &[Value],
    pods_by_rs: &BTreeMap<String, Vec<P>>,
) -> bool {
    if old_rss.iter().map(|rs| status_count(rs, "replicas")).sum::<i32>() > 0 {
        return true;
    }
    let new_uid = new_rs.map(|rs| meta(rs, "uid"));
    pods_by_rs.iter().filter(|(uid, _)| Some(uid.as_str()) != new_uid).any(|(_, pods)| {
        // A pod in `Unknown` may still run (a node out of touch): it counts.
        pods.iter().any(|pod| {
            !matches!(pod.borrow().pointer("/status/phase").and_then(Value::as_str), Some("Failed" | "Succeeded"))
        })
    })
}

/// `cleanupDeployment`: the old ReplicaSets to delete, in order, to keep `revisionHistoryLimit`.
pub fn cleanup(d: &Value, old_rss: &[Value]) -> Vec<String> {
    let Some(limit) = revision_history_limit(d) else { return Vec::new() };
    let mut cleanable: Vec<Value> = old_rss.iter().filter(|rs| !is_deleting(rs)).cloned().collect();
    let diff = i64::try_from(cleanable.len()).unwrap_or(i64::MAX) - i64::from(limit);
    if diff <= 0 {
        return Vec::new();
    }
    cleanable.sort_by(by_revision);
    cleanable
        .iter()
        .take(usize::try_from(diff).unwrap_or(0))
        .filter(|rs| {
            // Only a ReplicaSet that holds and wants no pod, and whose controller has seen that.
            let generation = rs.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
            let observed = rs.pointer("/status/observedGeneration").and_then(Value::as_i64).unwrap_or(0);
            status_count(rs, "replicas") == 0 && replicas(rs) == 0 && generation <= observed && !is_deleting(rs)
        })
        .map(|rs| meta(rs, "name").to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kcm::deployment::revision::{set_replicas_annotations, REVISION};

    const OLD: &str = "2023-11-14T22:13:20Z";
    const NEW: &str = "2023-11-14T22:13:30Z";

    fn deployment(replicas: i32, surge: i32) -> Value {
        json!({"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": 0}}}})
    }

    /// A ReplicaSet sized for a Deployment of `was` replicas with `was_surge` (upstream's TestScale setup).
    fn rs(name: &str, replicas: i32, created: &str, was: i32, was_surge: i32) -> Value {
        let mut rs = json!({"metadata": {"name": name, "uid": name, "creationTimestamp": created}, "spec": {"replicas": replicas}});
        set_replicas_annotations(&mut rs, was, was + was_surge);
        rs
    }

    fn apply(plan: &[Resize], rss: &[Value]) -> Vec<(String, i32)> {
        rss.iter()
            .map(|rs| {
                let name = meta(rs, "name").to_string();
                let to = plan.iter().find(|r| r.name == name).map_or(replicas(rs), |r| r.to);
                (name, to)
            })
            .collect()
    }

    #[test]
    fn scaling_as_upstreams_test_scale() {
        // (name, replicas, surge, was, was surge, new (size) or none, olds (size, newest first), want sizes)
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, i32, i32, i32, i32, Option<i32>, Vec<i32>, Vec<i32>)> = vec![
            ("normal scaling event: 10 -> 12", 12, 0, 10, 0, Some(10), vec![], vec![12]),
            ("normal scaling event: 10 -> 5", 5, 0, 10, 0, Some(10), vec![], vec![5]),
            ("proportional scaling: 5 -> 10", 10, 0, 5, 0, Some(2), vec![3], vec![4, 6]),
            ("proportional scaling: 5 -> 3", 3, 0, 5, 0, Some(2), vec![3], vec![1, 2]),
            ("proportional scaling: 9 -> 4", 4, 0, 9, 0, Some(8), vec![1], vec![4, 0]),
            ("proportional scaling: 7 -> 10", 10, 0, 7, 0, Some(2), vec![3, 2], vec![3, 4, 3]),
            ("proportional scaling: 13 -> 8", 8, 0, 13, 0, Some(2), vec![8, 3], vec![1, 5, 2]),
            ("leftover distribution: 3 -> 4", 4, 0, 3, 0, Some(1), vec![1, 1], vec![2, 1, 1]),
            ("leftover distribution: 3 -> 2", 2, 0, 3, 0, Some(1), vec![1, 1], vec![1, 1, 0]),
            ("proportional scaling (no new rs): 4 -> 5", 5, 0, 4, 0, None, vec![2, 2], vec![3, 2]),
            ("proportional scaling: 6 -> 0", 0, 0, 6, 0, Some(3), vec![2, 1], vec![0, 0, 0]),
            ("proportional scaling: 0 -> 6", 6, 0, 0, 0, Some(0), vec![0, 0], vec![6, 0, 0]),
            ("deployment with surge pods", 20, 2, 10, 2, Some(6), vec![6], vec![11, 11]),
            ("change both surge and size", 50, 6, 10, 3, Some(5), vec![8], vec![22, 34]),
        ];
        let stamps = ["2023-11-14T22:13:19Z", "2023-11-14T22:13:18Z"];
        for (name, dr, surge, was, was_surge, new_size, olds, want) in cases {
            let d = deployment(dr, surge);
            let new_rs = new_size.map(|n| rs("foo-v3", n, NEW, was, was_surge));
            let old_rss: Vec<Value> = olds
                .iter()
                .enumerate()
                .map(|(i, &n)| rs(&format!("foo-v{}", 2 - i), n, stamps[i], was, was_surge))
                .collect();
            let plan = scale(&d, new_rs.as_ref(), &old_rss);
            let mut all: Vec<Value> = new_rs.into_iter().collect();
            all.extend(old_rss);
            let got: Vec<i32> = apply(&plan, &all).into_iter().map(|(_, n)| n).collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn saturated_and_broken_new_replica_sets() {
        // A saturated new ReplicaSet sends the old ones to zero.
        let d = deployment(3, 0);
        let mut new_rs = rs("new", 3, NEW, 3, 0);
        new_rs["status"] = json!({"availableReplicas": 3});
        let plan = scale(&d, Some(&new_rs), &[rs("old", 2, OLD, 3, 0)]);
        assert_eq!(plan, vec![Resize::checked("old", 0)]);
        // upstream's "saturated but broken new replica set does not affect old pods": only annotations.
        let mut d = deployment(2, 1);
        d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] = json!(1);
        let new_rs = rs("new", 2, NEW, 2, 1);
        let plan = scale(&d, Some(&new_rs), &[rs("old", 1, OLD, 2, 1)]);
        // Nothing to add: the ReplicaSets keep their order (old ones, then the new one) and their sizes.
        assert_eq!(
            plan,
            vec![
                Resize { name: "old".into(), to: 1, direction: Some("") },
                Resize { name: "new".into(), to: 2, direction: Some("") }
            ]
        );
        // A Recreate Deployment is not scaled in proportion.
        let recreate = json!({"spec": {"replicas": 4, "strategy": {"type": "Recreate"}}});
        assert!(scale(&recreate, Some(&rs("new", 1, NEW, 3, 0)), &[rs("old", 2, OLD, 3, 0)]).is_empty());
        assert!(is_scaling_event(&deployment(4, 0), &[rs("a", 2, OLD, 3, 0)]));
        assert!(!is_scaling_event(&deployment(3, 0), &[rs("a", 2, OLD, 3, 0), rs("b", 0, OLD, 1, 0)]));
    }

    #[test]
    fn cleanup_keeps_the_history_limit() {
        // upstream's TestDeploymentController_cleanupDeployment: (olds (spec, status replicas), limit, deletions).
        let old = |name: &str, spec: i32, status: i32, revision: &str| json!({"metadata": {"name": name, "creationTimestamp": OLD, "annotations": {REVISION: revision}}, "spec": {"replicas": spec}, "status": {"replicas": status}});
        let cases = [
            (
                vec![old("foo-1", 0, 0, "1"), old("foo-2", 0, 0, "2"), old("foo-3", 0, 0, "3")],
                1,
                vec!["foo-1", "foo-2"],
            ),
            (
                vec![
                    old("foo-1", 0, 0, "1"),
                    old("foo-2", 0, 1, "2"),
                    old("foo-3", 1, 0, "3"),
                    old("foo-4", 1, 1, "4"),
                ],
                0,
                vec!["foo-1"],
            ),
            (vec![old("foo-1", 0, 0, "1"), old("foo-2", 0, 0, "2")], 0, vec!["foo-1", "foo-2"]),
            (vec![old("foo-1", 1, 1, "1"), old("foo-2", 1, 1, "2")], 0, vec![]),
            // Lowest revision first, whatever the list order.
            (vec![old("foo-b", 0, 0, "5"), old("foo-a", 0, 0, "4")], 1, vec!["foo-a"]),
        ];
        for (olds, limit, want) in cases {
            let mut d = deployment(1, 0);
            d["spec"]["revisionHistoryLimit"] = json!(limit);
            assert_eq!(cleanup(&d, &olds), want, "limit {limit}");
        }
        // A generation not yet observed, or a deletion under way, is left alone; no limit keeps everything.
        let mut unobserved = old("foo-1", 0, 0, "1");
        unobserved["metadata"]["generation"] = json!(2);
        let mut d = deployment(1, 0);
        d["spec"]["revisionHistoryLimit"] = json!(0);
        assert!(cleanup(&d, &[unobserved]).is_empty());
        d["spec"]["revisionHistoryLimit"] = json!(i32::MAX);
        assert!(cleanup(&d, &[old("foo-1", 0, 0, "1")]).is_empty());
    }

    #[test]
    fn recreate_waits_for_old_pods() {
        let pod = |phase: &str| json!({"status": {"phase": phase}});
        let new_rs = json!({"metadata": {"uid": "new"}});
        let old_rs = |replicas: i32| json!({"metadata": {"uid": "old"}, "status": {"replicas": replicas}});
        let map = |uid: &str, pods: Vec<Value>| BTreeMap::from([(uid.to_string(), pods)]);
        let cases = [
            (vec![old_rs(1)], map("old", vec![]), true),
            (vec![old_rs(0)], map("old", vec![pod("Running")]), true),
            (vec![old_rs(0)], map("old", vec![pod("Unknown")]), true),
            (vec![old_rs(0)], map("old", vec![pod("Failed"), pod("Succeeded")]), false),
            (vec![old_rs(0)], map("new", vec![pod("Running")]), false),
            (vec![], BTreeMap::new(), false),
        ];
        for (olds, pods, want) in cases {
            assert_eq!(old_pods_running(Some(&new_rs), &olds, &pods), want, "{olds:?} {pods:?}");
        }
        let olds = [rs("a", 2, OLD, 2, 0), rs("b", 0, OLD, 2, 0)];
        assert_eq!(scale_down_for_recreate(&filter_active(&olds)), vec![Resize::checked("a", 0)]);
    }
}
