//! Which pods a ReplicaSet with too many deletes first (kube-controller-manager 1.32:
//! `pkg/controller/replicaset/replica_set.go` `getPodsToDelete` and `getPodsRankedByRelatedPodsOnSameNode`,
//! `pkg/controller/controller_utils.go` `ActivePodsWithRanks.Less` with the `PodDeletionCost` and
//! `LogarithmicScaleDown` features on, as they are in 1.32).
//!
//! Earlier in startup goes first: unscheduled before scheduled; `Pending` before `Unknown` before
//! `Running`; not ready before ready; a lower `pod-deletion-cost` first; then pods on nodes crowded with
//! more of this ReplicaSet's (and its siblings') active pods; then, among ready pods, the more recently
//! ready (compared on a base-2 logarithmic scale of age, ties broken by uid); more container restarts
//! first; and the more recently created (same scale, same tie-break).
//!
//! Sans-IO: pods in, the ones to delete out; `now_us` is the instant ages are measured from. Go sorts with
//! an unstable sort; here a stable merge sort keeps the informer's order among equals, so that the choice
//! is deterministic, and never fails on a comparison that is not a strict weak order.

use std::collections::BTreeMap;

use serde_json::Value;

use super::pods::{creation_time_us, deletion_cost, is_active, is_ready, max_container_restarts, ready_time_us};

fn node_name(pod: &Value) -> &str {
    pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("")
}

fn uid(pod: &Value) -> &str {
    pod.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("")
}

/// `podPhaseToOrdinal`: phases not listed (`Succeeded`, `Failed`, none) count as `Pending`'s 0.
fn phase_ordinal(pod: &Value) -> u8 {
    match pod.pointer("/status/phase").and_then(Value::as_str) {
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 0,
    }
}

/// `afterOrZero`: whether `t1` is after `t2`, a zero time counting as after any other.
fn after_or_zero(t1: Option<i64>, t2: Option<i64>) -> bool {
    match (t1, t2) {
        (Some(a), Some(b)) => a > b,
        (t1, _) => t1.is_none(),
    }
}

/// `logarithmicRankDiff`: the difference of the two times' ages at `now_us`, each as the integer part of
/// its base-2 logarithm in nanoseconds (-1 for an age that is not positive).
pub fn logarithmic_rank_diff(t1_us: i64, t2_us: i64, now_us: i64) -> i64 {
    let rank = |t_us: i64| {
        let age_ns = now_us.saturating_sub(t_us).saturating_mul(1_000);
        if age_ns > 0 {
            (age_ns as f64).log2() as i64
        } else {
            -1
        }
    };
    rank(t1_us) - rank(t2_us)
}

/// The time comparison of steps 6 and 8: the more recent first, on the logarithmic scale when both times
/// are known, ties on that scale broken by uid.
fn newer_first(a: &Value, b: &Value, ta: Option<i64>, tb: Option<i64>, now_us: Option<i64>) -> bool {
    match (ta, tb, now_us) {
        (Some(ta), Some(tb), Some(now)) => match logarithmic_rank_diff(ta, tb, now) {
            0 => uid(a) < uid(b),
            diff => diff < 0,
        },
        _ => after_or_zero(ta, tb),
    }
}

/// `ActivePodsWithRanks.Less`: whether pod `a` (of rank `rank_a`) should be deleted before pod `b`.
/// `now_us` of `None` is Go's zero `Now`, which turns the logarithmic comparisons off.
pub fn delete_before(a: &Value, rank_a: usize, b: &Value, rank_b: usize, now_us: Option<i64>) -> bool {
    // 1. Unassigned before assigned.
    let (node_a, node_b) = (node_name(a), node_name(b));
    if node_a != node_b && (node_a.is_empty() || node_b.is_empty()) {
        return node_a.is_empty();
    }
    // 2. Pending before Unknown before Running.
    if phase_ordinal(a) != phase_ordinal(b) {
        return phase_ordinal(a) < phase_ordinal(b);
    }
    // 3. Not ready before ready.
    let (ready_a, ready_b) = (is_ready(a), is_ready(b));
    if ready_a != ready_b {
        return !ready_a;
    }
    // 4. Lower deletion cost first.
    if deletion_cost(a) != deletion_cost(b) {
        return deletion_cost(a) < deletion_cost(b);
    }
    // 5. Doubled up (more related pods on the same node) first.
    if rank_a != rank_b {
        return rank_a > rank_b;
    }
    // 6. Ready for less time first.
    if ready_a && ready_b {
        let (ta, tb) = (ready_time_us(a), ready_time_us(b));
        if ta != tb {
            return newer_first(a, b, ta, tb, now_us);
        }
    }
    // 7. More container restarts first.
    if max_container_restarts(a) != max_container_restarts(b) {
        return max_container_restarts(a) > max_container_restarts(b);
    }
    // 8. Created more recently first.
    let (ca, cb) = (creation_time_us(a), creation_time_us(b));
    if ca != cb {
        return newer_first(a, b, ca, cb, now_us);
    }
    false
}

/// `getPodsRankedByRelatedPodsOnSameNode`: each pod's rank is the number of active related pods on its
/// node (unscheduled pods share the node "").
pub fn ranks_by_node(pods: &[Value], related: &[Value]) -> Vec<usize> {
    let mut on_node: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in related.iter().filter(|p| is_active(p)) {
        *on_node.entry(node_name(pod)).or_default() += 1;
    }
    pods.iter().map(|p| on_node.get(node_name(p)).copied().unwrap_or(0)).collect()
}

/// A stable merge sort of `0..len` by `less`, which needs no more than `less` to decide each step.
fn stable_sort_indices(len: usize, less: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut width = 1;
    let mut buf = Vec::with_capacity(len);
    while width < len {
        buf.clear();
        for start in (0..len).step_by(2 * width) {
            let mid = (start + width).min(len);
            let end = (start + 2 * width).min(len);
            let (mut i, mut j) = (start, mid);
            while i < mid && j < end {
                // Take from the right only when it is strictly less, so equal elements keep their order.
                if less(order[j], order[i]) {
                    buf.push(order[j]);
                    j += 1;
                } else {
                    buf.push(order[i]);
                    i += 1;
                }
            }
            buf.extend_from_slice(&order[i..mid]);
            buf.extend_from_slice(&order[j..end]);
        }
        std::mem::swap(&mut order, &mut buf);
        width *= 2;
    }
    order
}

/// `getPodsToDelete`: the first `diff` of `filtered` in deletion order (all of them, unsorted, when
/// `diff` is not less than their number). `related` are the pods of every ReplicaSet with the same
/// controller, for the ranks.
pub fn pods_to_delete(filtered: &[Value], related: &[Value], diff: usize, now_us: i64) -> Vec<Value> {
    if diff >= filtered.len() {
        return filtered.to_vec();
    }
    let ranks = ranks_by_node(filtered, related);
    let order = stable_sort_indices(filtered.len(), |i, j| {
        delete_before(&filtered[i], ranks[i], &filtered[j], ranks[j], Some(now_us))
    });
    order.into_iter().take(diff).map(|i| filtered[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NOW_S: i64 = 1_700_000_000;
    const NOW_US: i64 = NOW_S * 1_000_000;

    fn stamp(unix_s: i64) -> String {
        apiserver::registry::system::rfc3339(unix_s)
    }

    /// A pod: name (also its uid), node, phase, ready since (seconds before now, `None` for not ready),
    /// created (seconds before now).
    fn pod(name: &str, node: &str, phase: &str, ready_ago_s: Option<i64>, created_ago_s: i64) -> Value {
        let mut p = json!({
            "metadata": {"name": name, "namespace": "ns", "uid": name, "creationTimestamp": stamp(NOW_S - created_ago_s)},
            "spec": {"nodeName": node},
            "status": {"phase": phase},
        });
        if let Some(ago) = ready_ago_s {
            p["status"]["conditions"] =
                json!([{"type": "Ready", "status": "True", "lastTransitionTime": stamp(NOW_S - ago)}]);
        }
        p
    }

    fn with(mut p: Value, pointer: &str, value: Value) -> Value {
        *p.pointer_mut(pointer).expect("the field's parent exists") = value;
        p
    }

    #[test]
    fn the_order_of_two_pods() {
        let base = || pod("b", "n1", "Running", Some(100), 1000);
        let cases = [
            ("unscheduled first", pod("a", "", "Running", Some(100), 1000), base(), true),
            ("two different nodes are not compared by node", pod("a", "n2", "Running", Some(100), 1000), base(), false),
            ("pending before running", pod("a", "n1", "Pending", Some(100), 1000), base(), true),
            ("unknown before running", pod("a", "n1", "Unknown", Some(100), 1000), base(), true),
            ("running after pending", base(), pod("a", "n1", "Pending", Some(100), 1000), false),
            ("not ready first", pod("a", "n1", "Running", None, 1000), base(), true),
            ("ready more recently on another log scale", pod("a", "n1", "Running", Some(10), 1000), base(), true),
            ("ready at the same log scale: uid decides", pod("a", "n1", "Running", Some(90), 1000), base(), true),
            (
                "ready at the same log scale: uid decides the other way",
                pod("c", "n1", "Running", Some(90), 1000),
                base(),
                false,
            ),
            ("created more recently first", pod("z", "n1", "Running", Some(100), 10), base(), true),
            ("created at the same instant: neither first", pod("a", "n1", "Running", Some(100), 1000), base(), false),
        ];
        for (name, a, b, want) in cases {
            assert_eq!(delete_before(&a, 0, &b, 0, Some(NOW_US)), want, "{name}");
        }

        let costly = with(
            pod("a", "n1", "Running", Some(100), 1000),
            "/metadata",
            json!({"name": "a", "uid": "a", "annotations": {"controller.kubernetes.io/pod-deletion-cost": "5"}}),
        );
        assert!(!delete_before(&costly, 0, &base(), 0, Some(NOW_US)), "a higher cost goes later");
        assert!(delete_before(&base(), 0, &costly, 0, Some(NOW_US)), "a lower cost goes first");

        let restarted = with(
            base(),
            "/status",
            json!({"phase": "Running", "conditions": base()["status"]["conditions"], "containerStatuses": [{"restartCount": 3}]}),
        );
        assert!(delete_before(&restarted, 0, &base(), 0, Some(NOW_US)), "more restarts go first");

        assert!(delete_before(&base(), 3, &base(), 1, Some(NOW_US)), "a crowded node's pod goes first");
        // Without a `Now`, times compare exactly: the more recent goes first.
        assert!(!delete_before(
            &pod("c", "n1", "Running", Some(100), 1000),
            0,
            &pod("b", "n1", "Running", Some(99), 1000),
            0,
            None
        ));
    }

    #[test]
    fn logarithmic_ranks() {
        let cases = [
            // (t1 ago, t2 ago, diff): 1 s is 2^29.9 ns, 2 s is 2^30.9, 4 s is 2^31.9.
            (1_000_000, 1_000_000, 0),
            (1_000_000, 2_000_000, -1),
            (4_000_000, 1_000_000, 2),
            (0, 1_000_000, -30),
            (-5, 0, 0),
        ];
        for (ago1, ago2, want) in cases {
            assert_eq!(logarithmic_rank_diff(NOW_US - ago1, NOW_US - ago2, NOW_US), want, "{ago1} {ago2}");
        }
    }

    #[test]
    fn ranks_count_active_related_pods_per_node() {
        let related = vec![
            pod("a", "n1", "Running", None, 1),
            pod("b", "n1", "Running", None, 1),
            pod("c", "n2", "Running", None, 1),
            pod("d", "n2", "Failed", None, 1),
            pod("e", "", "Pending", None, 1),
        ];
        let pods = vec![
            pod("a", "n1", "Running", None, 1),
            pod("c", "n2", "Running", None, 1),
            pod("x", "n3", "Running", None, 1),
            pod("e", "", "Pending", None, 1),
        ];
        assert_eq!(ranks_by_node(&pods, &related), vec![2, 1, 0, 1]);
    }

    #[test]
    fn which_pods_are_deleted() {
        let names = |pods: Vec<Value>| {
            pods.iter().map(|p| p["metadata"]["name"].as_str().unwrap().to_string()).collect::<Vec<_>>()
        };
        let pods = vec![
            pod("old-ready", "n1", "Running", Some(5000), 10_000),
            pod("pending", "n1", "Pending", None, 100),
            pod("new-ready", "n1", "Running", Some(5), 10),
            pod("unscheduled", "", "Pending", None, 50),
        ];
        let cases = [
            (1, vec!["unscheduled"]),
            (2, vec!["unscheduled", "pending"]),
            (3, vec!["unscheduled", "pending", "new-ready"]),
            // Deleting them all keeps the given order: there is nothing to choose.
            (4, vec!["old-ready", "pending", "new-ready", "unscheduled"]),
            (9, vec!["old-ready", "pending", "new-ready", "unscheduled"]),
        ];
        for (diff, want) in cases {
            assert_eq!(names(pods_to_delete(&pods, &pods, diff, NOW_US)), want, "diff {diff}");
        }
        // Equal pods keep their listed order.
        let same = vec![
            pod("p1", "", "Pending", None, 5),
            pod("p2", "", "Pending", None, 5),
            pod("p3", "", "Pending", None, 5),
        ];
        assert_eq!(names(pods_to_delete(&same, &same, 2, NOW_US)), vec!["p1", "p2"]);
        // A crowded node's pods go before a lone pod's.
        let spread = vec![
            pod("lone", "n1", "Running", None, 5),
            pod("c1", "n2", "Running", None, 5),
            pod("c2", "n2", "Running", None, 5),
        ];
        assert_eq!(names(pods_to_delete(&spread, &spread, 1, NOW_US)), vec!["c1"]);
    }

    #[test]
    fn the_merge_sort_is_stable_and_sorts() {
        let keys = [5, 3, 5, 1, 3, 9, 0, 5];
        let order = stable_sort_indices(keys.len(), |i, j| keys[i] < keys[j]);
        assert_eq!(order, vec![6, 3, 1, 4, 0, 2, 7, 5]);
        assert!(stable_sort_indices(0, |_, _| true).is_empty());
    }
}
