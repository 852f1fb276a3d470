//! One scheduling cycle's decision, sans-IO (`pkg/scheduler/schedule_one.go`'s `schedulePod`,
//! `findNodesThatFitPod`, `findNodesThatPassFilters`, `numFeasibleNodesToFind`, and the default
//! preemption plugin's diagnosis in `framework/preemption/preemption.go` and
//! `plugins/defaultpreemption/default_preemption.go`, 1.32).
//!
//! Filtering starts where the previous cycle stopped (so every node gets its turn) and stops once enough
//! feasible nodes are found: all of them below 100 nodes, else an adaptive share, `50 - nodes/125`
//! percent but at least 5 percent and at least 100 nodes. One feasible node is taken without scoring;
//! more are scored and one of the best is sampled with the generator handed in.
//!
//! Preemption is not carried out: no pod is ever evicted and no node nominated. Its diagnosis is,
//! because upstream's message includes it: a pod with `preemptionPolicy: Never` is not eligible; nodes
//! whose rejection preemption cannot resolve are "not helpful"; on the others, a node without
//! lower-priority pods has "No preemption victims found for incoming pod", and one where the pod still
//! does not fit without them keeps the filter's reasons. Where upstream would find victims (and go on to
//! preempt), the message carries no preemption part, as upstream's does after a successful preemption.

use std::borrow::Borrow;
use std::collections::BTreeSet;

use rand::Rng;

use super::affinity::required_node_names;
use super::cache::NodeInfo;
use super::diagnosis::{fit_error_message, Code, Diagnosis, Status, NO_NODES_AVAILABLE};
use super::facts::PodFacts;
use super::filters::{run_filters, ERR_REASON_AFFINITY_CONFLICT, NODE_AFFINITY};
use super::score::{prioritize, select_host};

/// `minFeasibleNodesToFind`.
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// `minFeasibleNodesPercentageToFind`.
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: usize = 5;

/// `numFeasibleNodesToFind` with `percentageOfNodesToScore` `percentage` (0: the adaptive default).
pub fn num_feasible_nodes_to_find(percentage: usize, num_all_nodes: usize) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let percentage = match percentage {
        0 => 50usize.saturating_sub(num_all_nodes / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND),
        p => p,
    };
    (num_all_nodes * percentage / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// Why a cycle found no node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    /// `ErrNoNodesAvailable`: the cluster has no nodes.
    NoNodesAvailable,
    /// `FitError`: no node passed the filters.
    Fit { num_all_nodes: usize, diagnosis: Box<Diagnosis> },
}

impl ScheduleError {
    /// The plugins that rejected the pod, for matching cluster events (none: retry after backoff).
    pub fn unschedulable_plugins(&self) -> BTreeSet<&'static str> {
        match self {
            ScheduleError::NoNodesAvailable => BTreeSet::new(),
            ScheduleError::Fit { diagnosis, .. } => diagnosis.unschedulable_plugins.clone(),
        }
    }
}

/// The scheduler's decision state across cycles.
#[derive(Clone, Debug, Default)]
pub struct Algorithm {
    /// `nextStartNodeIndex`.
    pub next_start_node_index: usize,
    /// `percentageOfNodesToScore` (0: adaptive, the default).
    pub percentage_of_nodes_to_score: usize,
}

impl Algorithm {
    /// `schedulePod`: the node `pod` goes to, among `nodes` (the snapshot, every real node).
    pub fn schedule_pod(
        &mut self,
        pod: &PodFacts,
        nodes: &[impl Borrow<NodeInfo>],
        rng: &mut impl Rng,
    ) -> Result<String, ScheduleError> {
        if nodes.is_empty() {
            return Err(ScheduleError::NoNodesAvailable);
        }
        let num_all_nodes = nodes.len();
        let mut diagnosis = Diagnosis::default();
        // NodeAffinity's PreFilter: required terms that name nodes restrict the search to them.
        let candidates: Vec<&NodeInfo> = match required_node_names(pod.required_terms.as_deref()) {
            Some(names) if names.is_empty() => {
                let status =
                    Status::new(Code::UnschedulableAndUnresolvable, NODE_AFFINITY, &[ERR_REASON_AFFINITY_CONFLICT]);
                diagnosis.prefilter_msg = status.message();
                diagnosis.absent = status;
                diagnosis.unschedulable_plugins.insert(NODE_AFFINITY);
                return Err(ScheduleError::Fit { num_all_nodes, diagnosis: Box::new(diagnosis) });
            }
            Some(names) => {
                diagnosis.absent = Status {
                    code: Code::UnschedulableAndUnresolvable,
                    reasons: vec![format!("node(s) didn't satisfy plugin(s) [{NODE_AFFINITY}]")],
                    plugin: "",
                };
                nodes.iter().map(Borrow::borrow).filter(|n: &&NodeInfo| names.contains(n.name())).collect()
            }
            None => nodes.iter().map(Borrow::borrow).collect(),
        };
        let mut feasible: Vec<&NodeInfo> = Vec::new();
        if !candidates.is_empty() {
            let to_find = num_feasible_nodes_to_find(self.percentage_of_nodes_to_score, candidates.len());
            let start = self.next_start_node_index % candidates.len();
            for i in 0..candidates.len() {
                let node = candidates[(start + i) % candidates.len()];
                match run_filters(pod, node) {
                    None => {
                        feasible.push(node);
                        if feasible.len() >= to_find {
                            break;
                        }
                    }
                    Some(status) => {
                        diagnosis.unschedulable_plugins.insert(status.plugin);
                        diagnosis.node_to_status.insert(node.name().to_string(), status);
                    }
                }
            }
            let processed = feasible.len() + diagnosis.node_to_status.len();
            self.next_start_node_index = (start + processed) % candidates.len();
        }
        match feasible.len() {
            0 => Err(ScheduleError::Fit { num_all_nodes, diagnosis: Box::new(diagnosis) }),
            1 => Ok(feasible[0].name().to_string()),
            _ => {
                let scores = prioritize(pod, &feasible);
                let chosen = select_host(&scores, rng).expect("feasible nodes were found");
                Ok(feasible[chosen].name().to_string())
            }
        }
    }
}

/// `PodEligibleToPreemptOthers`'s refusal.
pub const NOT_ELIGIBLE_NEVER: &str = "not eligible due to preemptionPolicy=Never.";
/// The status of nodes where preemption cannot resolve the rejection.
pub const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// `SelectVictimsOnNode` on a node without lower-priority pods.
pub const NO_PREEMPTION_VICTIMS: &str = "No preemption victims found for incoming pod";

/// DefaultPreemption's PostFilter message for a pod no node fits (empty where it would preempt).
pub fn preemption_message(
    pod: &PodFacts,
    nodes: &[impl Borrow<NodeInfo>],
    num_all_nodes: usize,
    diagnosis: &Diagnosis,
) -> String {
    if pod.preempt_never {
        return format!("preemption: {NOT_ELIGIBLE_NEVER}");
    }
    let mut dry_run = Diagnosis {
        absent: Status::new(Code::UnschedulableAndUnresolvable, "", &[PREEMPTION_NOT_HELPFUL]),
        ..Diagnosis::default()
    };
    let mut candidates = 0;
    for node in nodes.iter().map(Borrow::borrow) {
        let status = diagnosis.node_to_status.get(node.name()).unwrap_or(&diagnosis.absent);
        if status.code != Code::Unschedulable {
            continue;
        }
        let mut without_victims = node.clone();
        let victims: Vec<String> =
            node.pods.values().filter(|p| p.priority < pod.priority).map(|p| p.key.clone()).collect();
        let outcome = if victims.is_empty() {
            Some(Status::new(Code::UnschedulableAndUnresolvable, "", &[NO_PREEMPTION_VICTIMS]))
        } else {
            victims.iter().for_each(|k| {
                without_victims.remove_pod(k);
            });
            run_filters(pod, &without_victims)
        };
        match outcome {
            Some(status) => {
                dry_run.node_to_status.insert(node.name().to_string(), status);
            }
            None => candidates += 1,
        }
    }
    if candidates > 0 {
        return String::new();
    }
    format!("preemption: {}", fit_error_message(num_all_nodes, &dry_run))
}

/// The `PodScheduled=False` message for a failed cycle: `no nodes available to schedule pods`, or the
/// fit error with its preemption part.
pub fn failure_message(error: &ScheduleError, pod: &PodFacts, nodes: &[impl Borrow<NodeInfo>]) -> String {
    match error {
        ScheduleError::NoNodesAvailable => NO_NODES_AVAILABLE.to_string(),
        ScheduleError::Fit { num_all_nodes, diagnosis } => {
            let mut diagnosis = (**diagnosis).clone();
            diagnosis.postfilter_msg = preemption_message(pod, nodes, *num_all_nodes, &diagnosis);
            fit_error_message(*num_all_nodes, &diagnosis)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::facts::NodeFacts;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use serde_json::{json, Value};

    fn node(name: &str, cpu: &str, spec: Value) -> NodeInfo {
        NodeInfo::new(NodeFacts::from_json(&json!({
            "metadata": {"name": name, "labels": {"name": name}},
            "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
        })))
    }

    fn pod(name: &str, cpu: &str, extra: Value) -> PodFacts {
        let mut spec = json!({"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        PodFacts::from_json(&json!({"metadata": {"namespace": "ns", "name": name}, "spec": spec}))
    }

    fn message(p: &PodFacts, nodes: &[NodeInfo]) -> String {
        let mut algorithm = Algorithm::default();
        let err = algorithm.schedule_pod(p, nodes, &mut ChaCha8Rng::seed_from_u64(1)).unwrap_err();
        failure_message(&err, p, nodes)
    }

    #[test]
    fn the_feasible_share_adapts_to_cluster_size() {
        let cases = [
            (0, 0, 0),
            (0, 99, 99),
            (0, 100, 100),
            (0, 1000, 420),
            (0, 5000, 500),
            (0, 6000, 300),
            (0, 20000, 1000),
            (10, 5000, 500),
            (1, 1000, 100),
        ];
        for (percentage, nodes, want) in cases {
            assert_eq!(num_feasible_nodes_to_find(percentage, nodes), want, "{nodes} nodes at {percentage}%");
        }
    }

    #[test]
    fn filtering_rotates_its_start_and_stops_when_enough_are_found() {
        let nodes: Vec<NodeInfo> = (0..300).map(|i| node(&format!("n{i:03}"), "4", json!({}))).collect();
        let mut algorithm = Algorithm::default();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // 300 nodes: 50 - 2 = 48 percent, 144 nodes, so the next cycle starts at 144.
        algorithm.schedule_pod(&pod("p", "1", json!({})), &nodes, &mut rng).unwrap();
        assert_eq!(algorithm.next_start_node_index, 144);
        algorithm.schedule_pod(&pod("p", "1", json!({})), &nodes, &mut rng).unwrap();
        assert_eq!(algorithm.next_start_node_index, 288);
    }

    #[test]
    fn a_pod_goes_to_the_emptier_feasible_node() {
        let mut busy = node("a", "4", json!({}));
        busy.add_pod(pod("q", "3", json!({})));
        let nodes = vec![busy, node("b", "4", json!({})), node("c", "1", json!({}))];
        let mut algorithm = Algorithm::default();
        let chosen = algorithm.schedule_pod(&pod("p", "1", json!({})), &nodes, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(chosen.as_deref(), Ok("b"));
        let selected = pod("p", "1", json!({"nodeSelector": {"name": "c"}}));
        assert_eq!(algorithm.schedule_pod(&selected, &nodes, &mut ChaCha8Rng::seed_from_u64(1)).as_deref(), Ok("c"));
    }

    #[test]
    fn failure_messages_are_upstreams() {
        let three = vec![node("a", "1", json!({})), node("b", "1", json!({})), node("c", "1", json!({}))];
        let mixed = vec![
            node("a", "1", json!({})),
            node("b", "8", json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]})),
            node("c", "8", json!({"unschedulable": true})),
        ];
        let mut low = node("a", "2", json!({}));
        low.add_pod(PodFacts { priority: -1, ..pod("victim", "2", json!({})) });
        let pinned = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]},
                             {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}});
        let only_b = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}});
        let cases: Vec<(PodFacts, Vec<NodeInfo>, &str)> = vec![
            (
                pod("p", "2", json!({})),
                three.clone(),
                "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..",
            ),
            (
                pod("p", "2", json!({})),
                mixed.clone(),
                "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..",
            ),
            (
                pod("p", "2", json!({"preemptionPolicy": "Never"})),
                three.clone(),
                "0/3 nodes are available: 3 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..",
            ),
            (
                pod("p", "1", json!({"nodeSelector": {"name": "z"}})),
                three.clone(),
                "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
            ),
            // Removing the lower-priority pod would not make room for 3 cpus: the filter's reason stays.
            (
                pod("p", "3", json!({})),
                vec![low.clone()],
                "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu..",
            ),
            // Where preemption would succeed, upstream preempts and adds no preemption part.
            (pod("p", "2", json!({})), vec![low], "0/1 nodes are available: 1 Insufficient cpu."),
            (
                pod("p", "1", pinned),
                three.clone(),
                "0/3 nodes are available: pod affinity terms conflict. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
            ),
            (
                pod("p", "2", only_b),
                three,
                "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..",
            ),
            (pod("p", "1", json!({})), vec![], "no nodes available to schedule pods"),
        ];
        for (p, nodes, want) in cases {
            assert_eq!(message(&p, &nodes), want);
        }
    }

    #[test]
    fn rejecting_plugins_are_recorded() {
        let nodes = vec![node("a", "1", json!({"unschedulable": true})), node("b", "1", json!({}))];
        let mut algorithm = Algorithm::default();
        let err =
            algorithm.schedule_pod(&pod("p", "2", json!({})), &nodes, &mut ChaCha8Rng::seed_from_u64(1)).unwrap_err();
        let plugins: Vec<&str> = err.unschedulable_plugins().into_iter().collect();
        assert_eq!(plugins, ["NodeResourcesFit", "NodeUnschedulable"]);
        assert!(ScheduleError::NoNodesAvailable.unschedulable_plugins().is_empty());
    }
}
