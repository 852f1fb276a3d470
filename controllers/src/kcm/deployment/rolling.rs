//! The rolling update's steps (kube-controller-manager 1.32, `pkg/controller/deployment/rolling.go`:
//! `reconcileNewReplicaSet`, `reconcileOldReplicaSets`, `cleanupUnhealthyReplicas`,
//! `scaleDownOldReplicaSetsForRollingUpdate`). Sans-IO: each step is planned as the resizes it makes, in
//! order; the controller carries them out and stops at the first that fails.
//!
//! The new ReplicaSet grows while all of them together stay within `replicas + maxSurge`. Old ones
//! shrink while `replicas - maxUnavailable` pods stay available, counting the new ReplicaSet's
//! unavailable pods against that room: first their unavailable pods (which costs no availability), then
//! available ones, oldest ReplicaSet first.

use serde_json::Value;

use super::scaling::Resize;
use super::util::{
    by_creation, max_unavailable, meta, new_rs_new_replicas, replicas, spec_replica_sum, status_count, status_sum,
};

/// `reconcileNewReplicaSet`: the size the new ReplicaSet is to have (its own when nothing changes); down
/// to the Deployment's replicas when it has more.
pub fn reconcile_new_replica_set(all_rss: &[Value], new_rs: &Value, d: &Value) -> Result<i32, String> {
    let (have, want) = (replicas(new_rs), replicas(d));
    if have >= want {
        return Ok(want);
    }
    new_rs_new_replicas(d, all_rss, new_rs)
}

/// One planned step: a resize, or the error that ends the plan.
pub type Step = Result<Resize, String>;

fn set_replicas(rs: &mut Value, to: i32) {
    rs["spec"]["replicas"] = Value::from(to);
}

/// `cleanupUnhealthyReplicas`: shrinks old ReplicaSets (oldest first) by their unavailable pods, at most
/// `max_cleanup` in all. `old_rss` is left sorted and resized as planned.
pub fn cleanup_unhealthy_replicas(old_rss: &mut [Value], max_cleanup: i32) -> (Vec<Step>, i32) {
    old_rss.sort_by(by_creation);
    let mut steps = Vec::new();
    let mut total = 0i32;
    for rs in old_rss.iter_mut() {
        if total >= max_cleanup {
            break;
        }
        let (have, available) = (replicas(rs), status_count(rs, "availableReplicas"));
        if have == 0 || have == available {
            // Nothing to shrink, or nothing unhealthy.
            continue;
        }
        let count = (max_cleanup - total).min(have - available);
        let to = have - count;
        if to > have {
            // More available than wanted (a stale status): upstream refuses rather than grow it.
            steps.push(Err(format!(
                "when cleaning up unhealthy replicas, got invalid request to scale down {}/{} {have} -> {to}",
                meta(rs, "namespace"),
                meta(rs, "name")
            )));
            return (steps, total);
        }
        steps.push(Ok(Resize::checked(meta(rs, "name"), to)));
        set_replicas(rs, to);
        total += count;
    }
    (steps, total)
}

/// `scaleDownOldReplicaSetsForRollingUpdate`: shrinks old ReplicaSets (oldest first) by as many pods as
/// are available beyond `replicas - maxUnavailable`, counted over `all_rss`.
pub fn scale_down_old_replica_sets(all_rss: &[Value], old_rss: &mut [Value], d: &Value) -> Vec<Step> {
    let min_available = replicas(d) - max_unavailable(d);
    let available = status_sum(all_rss, "availableReplicas");
    if available <= min_available {
        return Vec::new();
    }
    old_rss.sort_by(by_creation);
    let to_remove = available - min_available;
    let mut removed = 0i32;
    let mut steps = Vec::new();
    for rs in old_rss.iter_mut() {
        if removed >= to_remove {
            break;
        }
        let have = replicas(rs);
        if have == 0 {
            continue;
        }
        let count = have.min(to_remove - removed);
        let to = have - count;
        if to > have {
            steps.push(Err(format!(
                "when scaling down old RS, got invalid request to scale down {}/{} {have} -> {to}",
                meta(rs, "namespace"),
                meta(rs, "name")
            )));
            return steps;
        }
        steps.push(Ok(Resize::checked(meta(rs, "name"), to)));
        set_replicas(rs, to);
        removed += count;
    }
    steps
}

/// `reconcileOldReplicaSets`: the resizes of the active old ReplicaSets `old_rss`, given every ReplicaSet
/// `all_rss` and the new one. Empty when none may shrink.
pub fn reconcile_old_replica_sets(all_rss: &[Value], old_rss: &[Value], new_rs: &Value, d: &Value) -> Vec<Step> {
    if spec_replica_sum(old_rss) == 0 {
        return Vec::new();
    }
    let all_pods = spec_replica_sum(all_rss);
    let min_available = replicas(d) - max_unavailable(d);
    // The new ReplicaSet's unavailable pods use up room too, so that they never let old pods go.
    let new_unavailable = replicas(new_rs) - status_count(new_rs, "availableReplicas");
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return Vec::new();
    }
    let mut olds = old_rss.to_vec();
    let (mut steps, _) = cleanup_unhealthy_replicas(&mut olds, max_scaled_down);
    if steps.iter().any(Result::is_err) {
        return steps;
    }
    let mut all = olds.clone();
    all.push(new_rs.clone());
    steps.extend(scale_down_old_replica_sets(&all, &mut olds, d));
    steps
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment(replicas: i32, surge: i32, unavailable: i32) -> Value {
        json!({"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}}})
    }

    fn rs(name: &str, replicas: i32, available: i32, created: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "creationTimestamp": created}, "spec": {"replicas": replicas}, "status": {"availableReplicas": available}})
    }

    const OLD: &str = "2023-11-14T22:13:20Z";
    const NEW: &str = "2023-11-14T22:13:30Z";

    fn sizes(steps: &[Step]) -> Vec<(String, i32)> {
        steps.iter().map(|s| s.as_ref().map(|r| (r.name.clone(), r.to)).unwrap()).collect()
    }

    #[test]
    fn the_new_replica_set_grows_within_the_surge() {
        // upstream's TestDeploymentController_reconcileNewReplicaSet: (replicas, surge, old, new, want).
        let cases = [(10, 0, 10, 0, 0), (10, 2, 10, 0, 2), (10, 2, 5, 0, 7), (10, 2, 10, 2, 2), (2, 2, 2, 4, 2)];
        for (dr, surge, old, new, want) in cases {
            let d = deployment(dr, surge, 0);
            let new_rs = rs("new", new, 0, NEW);
            let all = vec![rs("old", old, old, OLD), new_rs.clone()];
            assert_eq!(reconcile_new_replica_set(&all, &new_rs, &d), Ok(want), "{dr} {surge} {old} {new}");
        }
    }

    #[test]
    fn old_replica_sets_shrink_within_the_unavailability() {
        // upstream's TestDeploymentController_reconcileOldReplicaSets:
        // (replicas, maxUnavailable, old, new, available old, available new, want old size).
        let cases = [
            (10, 0, 10, 0, 10, 0, Some(9)),
            (10, 2, 10, 0, 10, 0, Some(8)),
            // Unhealthy old pods go first.
            (10, 2, 10, 0, 8, 0, Some(8)),
            // One unhealthy pod goes, then one available one.
            (10, 2, 10, 0, 9, 0, Some(8)),
            // The new ReplicaSet's unavailable pods use up the room.
            (10, 2, 8, 2, 8, 0, None),
        ];
        for (dr, unavailable, old, new, old_available, new_available, want) in cases {
            let d = deployment(dr, 0, unavailable);
            let old_rs = rs("old", old, old_available, OLD);
            let new_rs = rs("new", new, new_available, NEW);
            let all = vec![old_rs.clone(), new_rs.clone()];
            let steps = reconcile_old_replica_sets(&all, &[old_rs], &new_rs, &d);
            assert_eq!(sizes(&steps).last().map(|(_, to)| *to), want, "{dr} {unavailable} {old} {new} {old_available}");
        }
    }

    #[test]
    fn the_brief_rollout_of_four() {
        // 4 replicas at 25 %/25 % (surge 1, unavailable 1), nothing available: the new ReplicaSet was made
        // at 1, so one unhealthy old pod may go (5 - 3 - 1).
        let mut d = deployment(4, 0, 0);
        d["spec"]["strategy"]["rollingUpdate"] = json!({"maxSurge": "25%", "maxUnavailable": "25%"});
        let old_rs = rs("old", 4, 0, OLD);
        let new_rs = rs("new", 1, 0, NEW);
        let all = vec![old_rs.clone(), new_rs.clone()];
        assert_eq!(reconcile_new_replica_set(&all, &new_rs, &d), Ok(1), "no room to surge further");
        assert_eq!(sizes(&reconcile_old_replica_sets(&all, &[old_rs], &new_rs, &d)), [("old".to_string(), 3)]);
        // Then the new one grows to 2, and everything waits for availability.
        let (old_rs, new_rs) = (rs("old", 3, 0, OLD), rs("new", 1, 0, NEW));
        let all = vec![old_rs.clone(), new_rs.clone()];
        assert_eq!(reconcile_new_replica_set(&all, &new_rs, &d), Ok(2));
        let new_rs = rs("new", 2, 0, NEW);
        let all = vec![old_rs.clone(), new_rs.clone()];
        assert!(reconcile_old_replica_sets(&all, &[old_rs], &new_rs, &d).is_empty());
    }

    #[test]
    fn unhealthy_replicas_are_cleaned_up_first() {
        // upstream's TestDeploymentController_cleanupUnhealthyReplicas: (old, available, max, want).
        let cases = [(10, 8, 1, 1), (10, 8, 3, 2), (10, 8, 0, 0), (10, 10, 3, 0)];
        for (old, available, max, want) in cases {
            let mut olds = vec![rs("old", old, available, OLD)];
            let (_, count) = cleanup_unhealthy_replicas(&mut olds, max);
            assert_eq!(count, want, "{old} {available} {max}");
            assert_eq!(replicas(&olds[0]), old - want);
        }
        // Oldest first, and a stale status that would grow one is refused.
        let mut olds = vec![rs("b", 3, 0, NEW), rs("a", 2, 0, OLD)];
        let (steps, count) = cleanup_unhealthy_replicas(&mut olds, 3);
        assert_eq!((sizes(&steps), count), (vec![("a".to_string(), 0), ("b".to_string(), 2)], 3));
        let mut olds = vec![rs("a", 2, 3, OLD)];
        let (steps, _) = cleanup_unhealthy_replicas(&mut olds, 3);
        assert_eq!(
            steps,
            vec![Err("when cleaning up unhealthy replicas, got invalid request to scale down ns/a 2 -> 3".to_string())]
        );
    }

    #[test]
    fn available_old_pods_scale_down() {
        // upstream's TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate:
        // (replicas, maxUnavailable, available, old, want).
        let cases = [(10, 0, 10, 10, Some(9)), (10, 2, 10, 10, Some(8)), (10, 2, 8, 10, None), (10, 2, 2, 0, None)];
        for (dr, unavailable, available, old, want) in cases {
            let d = deployment(dr, 0, unavailable);
            let old_rs = rs("old", old, available, OLD);
            let mut olds = vec![old_rs.clone()];
            let steps = scale_down_old_replica_sets(&[old_rs], &mut olds, &d);
            assert_eq!(sizes(&steps).first().map(|(_, to)| *to), want, "{dr} {unavailable} {available} {old}");
        }
    }
}
