//! Scoring the feasible nodes and picking one (1.32): NodeResourcesFit's LeastAllocated strategy
//! (`noderesources/least_allocated.go`, `resource_allocation.go`: cpu and memory weighted 1 each, counting
//! the non-zero defaults for requests left out), TaintToleration (fewer untolerated `PreferNoSchedule`
//! taints is better, normalized in reverse), NodeAffinity (the summed weights of matching preferred
//! terms, normalized), combined with the default profile's plugin weights (TaintToleration 3,
//! NodeAffinity 2, NodeResourcesFit 1); then `selectHost` in `schedule_one.go`: among the nodes with the
//! top total, one by reservoir sampling, with the seeded generator handed in.
//!
//! Left out: NodeResourcesBalancedAllocation, ImageLocality, PodTopologySpread and InterPodAffinity (the
//! first would only reorder equally loaded nodes; kubesim has no images or topology labels).

use rand::Rng;

use super::affinity::preferred_score;
use super::cache::NodeInfo;
use super::facts::{tolerated, PodFacts, Toleration};

/// `framework.MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;
/// The default profile's score weights.
pub const WEIGHT_TAINT_TOLERATION: i64 = 3;
pub const WEIGHT_NODE_AFFINITY: i64 = 2;
pub const WEIGHT_NODE_RESOURCES_FIT: i64 = 1;

/// `leastRequestedScore`: the unused share of `capacity`, 0 to 100.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// NodeResourcesFit's LeastAllocated score of `node` for `pod`: cpu and memory, weight 1 each, a
/// resource the node does not offer left out.
pub fn least_allocated(pod: &PodFacts, node: &NodeInfo) -> i64 {
    let Some(facts) = &node.node else { return 0 };
    let resources = [
        (facts.allocatable.milli_cpu, node.non_zero_milli_cpu + pod.non_zero_milli_cpu, 1),
        (facts.allocatable.memory_bytes, node.non_zero_memory_bytes + pod.non_zero_memory_bytes, 1),
    ];
    let (mut score, mut weights) = (0, 0);
    for (allocatable, requested, weight) in resources {
        if allocatable == 0 {
            continue;
        }
        score += least_requested_score(requested, allocatable) * weight;
        weights += weight;
    }
    if weights == 0 {
        0
    } else {
        score / weights
    }
}

/// TaintToleration's raw score: the node's `PreferNoSchedule` taints the pod's tolerations (those with
/// no effect or `PreferNoSchedule`) leave untolerated.
pub fn intolerable_prefer_no_schedule(pod: &PodFacts, node: &NodeInfo) -> i64 {
    let Some(facts) = &node.node else { return 0 };
    let tolerations: Vec<Toleration> =
        pod.tolerations.iter().filter(|t| t.effect.is_empty() || t.effect == "PreferNoSchedule").cloned().collect();
    facts.taints.iter().filter(|t| t.effect == "PreferNoSchedule" && !tolerated(&tolerations, t)).count() as i64
}

/// `DefaultNormalizeScore`: scale to 0..=100 by the highest score; `reverse` turns high into low.
pub fn default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().max().unwrap_or(0).max(0);
    if max == 0 {
        if reverse {
            scores.iter_mut().for_each(|s| *s = MAX_NODE_SCORE);
        }
        return;
    }
    for s in scores.iter_mut() {
        let scaled = MAX_NODE_SCORE * *s / max;
        *s = if reverse { MAX_NODE_SCORE - scaled } else { scaled };
    }
}

/// `prioritizeNodes`: each node's weighted total, in the order given.
pub fn prioritize(pod: &PodFacts, nodes: &[&NodeInfo]) -> Vec<i64> {
    let fit: Vec<i64> = nodes.iter().map(|n| least_allocated(pod, n)).collect();
    let mut taints: Vec<i64> = nodes.iter().map(|n| intolerable_prefer_no_schedule(pod, n)).collect();
    default_normalize(&mut taints, true);
    // NodeAffinity's PreScore skips the plugin for a pod without preferred terms.
    let mut affinity: Vec<i64> = if pod.preferred_terms.is_empty() {
        vec![0; nodes.len()]
    } else {
        nodes.iter().map(|n| n.node.as_ref().map_or(0, |f| preferred_score(&pod.preferred_terms, f))).collect()
    };
    default_normalize(&mut affinity, false);
    (0..nodes.len())
        .map(|i| {
            fit[i] * WEIGHT_NODE_RESOURCES_FIT
                + taints[i] * WEIGHT_TAINT_TOLERATION
                + affinity[i] * WEIGHT_NODE_AFFINITY
        })
        .collect()
}

/// `selectHost`: the index of a node with the top score, each such node equally likely (reservoir
/// sampling over the top-scoring nodes in the order given). `None` for no nodes.
pub fn select_host(scores: &[i64], rng: &mut impl Rng) -> Option<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    // Highest first; ties keep their given order (upstream's heap pops ties in an order of its own).
    order.sort_by_key(|&i| std::cmp::Reverse(scores[i]));
    let (&first, rest) = order.split_first()?;
    let top = scores[first];
    let mut selected = first;
    for (count, &i) in (2..).zip(rest.iter().take_while(|&&i| scores[i] == top)) {
        // Replace the pick with probability 1/count.
        if rng.random_range(0..count) == 0 {
            selected = i;
        }
    }
    Some(selected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::facts::NodeFacts;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use serde_json::{json, Value};

    fn node(name: &str, cpu: &str, taints: Value, labels: Value) -> NodeInfo {
        NodeInfo::new(NodeFacts::from_json(&json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": cpu, "memory": "1000", "pods": "10"}},
        })))
    }

    fn pod(spec: Value) -> PodFacts {
        PodFacts::from_json(&json!({"metadata": {"namespace": "ns", "name": "p"}, "spec": spec}))
    }

    #[test]
    fn least_allocated_prefers_emptier_nodes() {
        let p = pod(json!({"containers": [{"resources": {"requests": {"cpu": "500m", "memory": "100"}}}]}));
        let mut busy = node("busy", "2", json!([]), json!({}));
        busy.add_pod(pod(json!({"containers": [{"resources": {"requests": {"cpu": "1", "memory": "400"}}}]})));
        let idle = node("idle", "2", json!([]), json!({}));
        // cpu (2000-1500)*100/2000 = 25, memory (1000-500)*100/1000 = 50: (25+50)/2.
        assert_eq!(least_allocated(&p, &busy), 37);
        // cpu 75, memory 90.
        assert_eq!(least_allocated(&p, &idle), 82);
        // Requests left out count as 100m and 200Mi: memory past allocatable scores 0.
        assert_eq!(least_allocated(&pod(json!({"containers": [{}]})), &idle), 47);
        assert_eq!(least_requested_score(3, 2), 0);
        assert_eq!(least_requested_score(0, 0), 0);
    }

    #[test]
    fn normalizing_scales_and_reverses() {
        let cases: &[(&[i64], bool, &[i64])] = &[
            (&[0, 1, 2], true, &[100, 50, 0]),
            (&[0, 0], true, &[100, 100]),
            (&[0, 0], false, &[0, 0]),
            (&[3, 6], false, &[50, 100]),
        ];
        for (input, reverse, want) in cases {
            let mut scores = input.to_vec();
            default_normalize(&mut scores, *reverse);
            assert_eq!(&scores, want);
        }
    }

    #[test]
    fn totals_weigh_taints_and_preferences() {
        let soft = json!([{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]);
        let a = node("a", "2", soft.clone(), json!({"tier": "gold"}));
        let b = node("b", "2", json!([]), json!({}));
        let preferring = pod(
            json!({"containers": [{}], "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}}]}}}),
        );
        let fit = least_allocated(&preferring, &a);
        // a: taint untolerated (0 * 3), preferred (100 * 2); b: no taint (100 * 3), not preferred.
        assert_eq!(prioritize(&preferring, &[&a, &b]), vec![fit + 200, fit + 300]);
        let tolerating = pod(
            json!({"containers": [{}], "tolerations": [{"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"}]}),
        );
        assert_eq!(prioritize(&tolerating, &[&a, &b]), vec![fit + 300, fit + 300]);
        let wrong_effect = pod(
            json!({"containers": [{}], "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}),
        );
        assert_eq!(intolerable_prefer_no_schedule(&wrong_effect, &a), 1);
    }

    #[test]
    fn select_host_samples_among_the_top_scores() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(select_host(&[], &mut rng), None);
        assert_eq!(select_host(&[5, 9, 7], &mut rng), Some(1));
        let mut seen = [0; 4];
        for _ in 0..3000 {
            seen[select_host(&[9, 3, 9, 9], &mut rng).unwrap()] += 1;
        }
        assert_eq!(seen[1], 0);
        for i in [0, 2, 3] {
            assert!((800..1200).contains(&seen[i]), "{seen:?}");
        }
        // The same seed picks the same nodes.
        let picks = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..20).map(|_| select_host(&[1, 1, 1], &mut rng).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(picks(7), picks(7));
    }
}
