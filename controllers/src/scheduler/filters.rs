//! The default profile's filter plugins, each a function from a pod and a node to `None` (fits) or the
//! rejection with upstream's code and reason strings (1.32, `pkg/scheduler/framework/plugins/`):
//! `nodeunschedulable`, `nodename`, `tainttoleration`, `nodeaffinity`, `nodeports`, `noderesources/fit.go`.
//! [`run_filters`] runs them in the default profile's order and stops at the first rejection, as
//! `RunFilterPlugins` does, so that a node carries one plugin's reasons.
//!
//! Left out: the volume plugins, PodTopologySpread and InterPodAffinity (kubesim has no volumes to bind
//! and no topology labels), and the scheduler-enforced `addedAffinity` of a profile.

use super::affinity::required_matches;
use super::cache::NodeInfo;
use super::diagnosis::{Code, Status};
use super::facts::{tolerated, PodFacts, Taint};

pub const NODE_UNSCHEDULABLE: &str = "NodeUnschedulable";
pub const NODE_NAME: &str = "NodeName";
pub const TAINT_TOLERATION: &str = "TaintToleration";
pub const NODE_AFFINITY: &str = "NodeAffinity";
pub const NODE_PORTS: &str = "NodePorts";
pub const NODE_RESOURCES_FIT: &str = "NodeResourcesFit";

/// `nodeunschedulable.ErrReasonUnschedulable`.
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// `nodename.ErrReason`.
pub const ERR_REASON_NODE_NAME: &str = "node(s) didn't match the requested node name";
/// `nodeaffinity.ErrReasonPod`.
pub const ERR_REASON_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
/// `nodeaffinity.errReasonConflict`: required terms naming nodes that no term can agree on.
pub const ERR_REASON_AFFINITY_CONFLICT: &str = "pod affinity terms conflict";
/// `nodeports.ErrReason`.
pub const ERR_REASON_PORTS: &str = "node(s) didn't have free ports for the requested pod ports";
/// `v1.TaintNodeUnschedulable`.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// NodeUnschedulable: a cordoned node takes only pods tolerating its `unschedulable` taint.
pub fn node_unschedulable(pod: &PodFacts, node: &NodeInfo) -> Option<Status> {
    let facts = node.node.as_ref()?;
    let taint = Taint { key: TAINT_NODE_UNSCHEDULABLE.into(), value: String::new(), effect: "NoSchedule".into() };
    (facts.unschedulable && !tolerated(&pod.tolerations, &taint))
        .then(|| Status::new(Code::UnschedulableAndUnresolvable, NODE_UNSCHEDULABLE, &[ERR_REASON_UNSCHEDULABLE]))
}

/// NodeName: a pod naming a node fits only there.
pub fn node_name(pod: &PodFacts, node: &NodeInfo) -> Option<Status> {
    (!pod.node_name.is_empty() && pod.node_name != node.name())
        .then(|| Status::new(Code::UnschedulableAndUnresolvable, NODE_NAME, &[ERR_REASON_NODE_NAME]))
}

/// TaintToleration: the node's first `NoSchedule` or `NoExecute` taint the pod does not tolerate.
pub fn taint_toleration(pod: &PodFacts, node: &NodeInfo) -> Option<Status> {
    let facts = node.node.as_ref()?;
    let taint = facts
        .taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| !tolerated(&pod.tolerations, t))?;
    let reason = format!("node(s) had untolerated taint {{{}: {}}}", taint.key, taint.value);
    Some(Status { code: Code::UnschedulableAndUnresolvable, reasons: vec![reason], plugin: TAINT_TOLERATION })
}

/// NodeAffinity: the pod's `nodeSelector` and required node affinity.
pub fn node_affinity(pod: &PodFacts, node: &NodeInfo) -> Option<Status> {
    let facts = node.node.as_ref()?;
    (!required_matches(&pod.node_selector, pod.required_terms.as_deref(), facts))
        .then(|| Status::new(Code::UnschedulableAndUnresolvable, NODE_AFFINITY, &[ERR_REASON_AFFINITY]))
}

/// NodePorts: every host port the pod wants is free (`HostPortInfo.CheckConflict`: `0.0.0.0` conflicts
/// with any address on the same protocol and port).
pub fn node_ports(pod: &PodFacts, node: &NodeInfo) -> Option<Status> {
    let conflict = pod.host_ports.iter().any(|want| {
        node.used_ports.iter().any(|used| {
            used.protocol == want.protocol
                && used.port == want.port
                && (want.ip == "0.0.0.0" || used.ip == "0.0.0.0" || used.ip == want.ip)
        })
    });
    conflict.then(|| Status::new(Code::Unschedulable, NODE_PORTS, &[ERR_REASON_PORTS]))
}

/// NodeResourcesFit (`fitsRequest`): room for one more pod, then for each requested resource; every
/// shortfall is a reason of its own, in upstream's order (pods, cpu, memory, ephemeral-storage, then
/// scalar resources, here by name where upstream walks a map).
pub fn node_resources_fit(pod: &PodFacts, node: &NodeInfo) -> Option<Status> {
    let allocatable = &node.node.as_ref()?.allocatable;
    let used = &node.requested;
    let want = &pod.requests;
    let mut reasons = Vec::new();
    if node.pods.len() as i64 + 1 > allocatable.allowed_pods {
        reasons.push("Too many pods".to_string());
    }
    if !want.is_empty_request() {
        let short = |want: i64, have: i64, used: i64| want > 0 && want > have - used;
        if short(want.milli_cpu, allocatable.milli_cpu, used.milli_cpu) {
            reasons.push("Insufficient cpu".into());
        }
        if short(want.memory_bytes, allocatable.memory_bytes, used.memory_bytes) {
            reasons.push("Insufficient memory".into());
        }
        if short(want.ephemeral_storage_bytes, allocatable.ephemeral_storage_bytes, used.ephemeral_storage_bytes) {
            reasons.push("Insufficient ephemeral-storage".into());
        }
        for (name, quantity) in &want.scalar {
            // The default profile ignores no extended resources (`ignoredResources` is empty).
            let have = allocatable.scalar.get(name).copied().unwrap_or(0);
            let taken = used.scalar.get(name).copied().unwrap_or(0);
            if *quantity != 0 && *quantity > have - taken {
                reasons.push(format!("Insufficient {name}"));
            }
        }
    }
    (!reasons.is_empty()).then_some(Status { code: Code::Unschedulable, reasons, plugin: NODE_RESOURCES_FIT })
}

/// A filter plugin.
pub type Filter = fn(&PodFacts, &NodeInfo) -> Option<Status>;

/// The default profile's filters in its order (1.32 `getDefaultPlugins`, volume and topology plugins
/// left out).
pub const FILTERS: &[Filter] =
    &[node_unschedulable, node_name, taint_toleration, node_affinity, node_ports, node_resources_fit];

/// `RunFilterPlugins`: the first rejection, if any.
pub fn run_filters(pod: &PodFacts, node: &NodeInfo) -> Option<Status> {
    FILTERS.iter().find_map(|f| f(pod, node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::facts::NodeFacts;
    use serde_json::{json, Value};

    fn node(spec: Value, labels: Value, allocatable: Value) -> NodeInfo {
        NodeInfo::new(NodeFacts::from_json(&json!({
            "metadata": {"name": "n1", "labels": labels},
            "spec": spec,
            "status": {"allocatable": allocatable},
        })))
    }

    fn plain_node() -> NodeInfo {
        node(
            json!({}),
            json!({"disk": "ssd"}),
            json!({"cpu": "2", "memory": "4Gi", "pods": "3", "example.com/gpu": "1"}),
        )
    }

    fn pod(spec: Value) -> PodFacts {
        let mut spec = spec;
        if spec.get("containers").is_none() {
            spec["containers"] = json!([{"name": "c"}]);
        }
        PodFacts::from_json(&json!({"metadata": {"namespace": "ns", "name": "p"}, "spec": spec}))
    }

    fn reasons(status: Option<Status>) -> Option<(Code, Vec<String>, &'static str)> {
        status.map(|s| (s.code, s.reasons, s.plugin))
    }

    fn req(cpu: &str, mem: &str) -> Value {
        json!([{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}}])
    }

    #[test]
    fn node_unschedulable_rejects_cordoned_nodes_unless_tolerated() {
        let cordoned = node(json!({"unschedulable": true}), json!({}), json!({}));
        let cases = [
            (pod(json!({})), &plain_node(), None),
            (
                pod(json!({})),
                &cordoned,
                Some((
                    Code::UnschedulableAndUnresolvable,
                    vec![ERR_REASON_UNSCHEDULABLE.to_string()],
                    NODE_UNSCHEDULABLE,
                )),
            ),
            (
                pod(
                    json!({"tolerations": [{"key": TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}]}),
                ),
                &cordoned,
                None,
            ),
            (pod(json!({"tolerations": [{"operator": "Exists"}]})), &cordoned, None),
        ];
        for (p, n, want) in cases {
            assert_eq!(reasons(node_unschedulable(&p, n)), want);
        }
    }

    #[test]
    fn node_name_rejects_other_nodes() {
        let n = plain_node();
        assert_eq!(reasons(node_name(&pod(json!({})), &n)), None);
        assert_eq!(reasons(node_name(&pod(json!({"nodeName": "n1"})), &n)), None);
        assert_eq!(
            reasons(node_name(&pod(json!({"nodeName": "n2"})), &n)),
            Some((Code::UnschedulableAndUnresolvable, vec![ERR_REASON_NODE_NAME.to_string()], NODE_NAME))
        );
    }

    #[test]
    fn taint_toleration_names_the_first_untolerated_hard_taint() {
        let tainted = node(
            json!({"taints": [
                {"key": "soft", "value": "x", "effect": "PreferNoSchedule"},
                {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                {"key": "evict", "effect": "NoExecute"},
            ]}),
            json!({}),
            json!({}),
        );
        let reason = |r: &str| Some((Code::UnschedulableAndUnresolvable, vec![r.to_string()], TAINT_TOLERATION));
        let cases = [
            (json!([]), reason("node(s) had untolerated taint {dedicated: gpu}")),
            (
                json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
                reason("node(s) had untolerated taint {evict: }"),
            ),
            (
                json!([{"key": "dedicated", "operator": "Exists"}, {"key": "evict", "operator": "Exists", "effect": "NoExecute"}]),
                None,
            ),
            (
                json!([{"key": "dedicated", "value": "cpu"}, {"key": "evict", "operator": "Exists"}]),
                reason("node(s) had untolerated taint {dedicated: gpu}"),
            ),
            (json!([{"operator": "Exists"}]), None),
        ];
        for (tolerations, want) in cases {
            assert_eq!(
                reasons(taint_toleration(&pod(json!({"tolerations": tolerations})), &tainted)),
                want,
                "{tolerations}"
            );
        }
    }

    #[test]
    fn node_affinity_checks_selector_and_required_terms() {
        let n = plain_node();
        let miss = Some((Code::UnschedulableAndUnresolvable, vec![ERR_REASON_AFFINITY.to_string()], NODE_AFFINITY));
        let required = |op: &str, values: Value| {
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disk", "operator": op, "values": values}]}]}}})
        };
        let cases = [
            (json!({}), None),
            (json!({"nodeSelector": {"disk": "ssd"}}), None),
            (json!({"nodeSelector": {"disk": "hdd"}}), miss.clone()),
            (json!({"affinity": required("In", json!(["ssd", "nvme"]))}), None),
            (json!({"affinity": required("NotIn", json!(["ssd"]))}), miss.clone()),
            (json!({"affinity": required("Exists", json!([]))}), None),
            (json!({"affinity": required("DoesNotExist", json!([]))}), miss.clone()),
            (json!({"nodeSelector": {"disk": "hdd"}, "affinity": required("Exists", json!([]))}), miss),
        ];
        for (spec, want) in cases {
            assert_eq!(reasons(node_affinity(&pod(spec.clone()), &n)), want, "{spec}");
        }
    }

    #[test]
    fn node_ports_conflict_by_protocol_port_and_address() {
        let mut n = plain_node();
        n.add_pod(pod(json!({"containers": [{"name": "c", "ports": [{"hostPort": 80, "hostIP": "10.0.0.1"}]}]})));
        let ports = |p: Value| pod(json!({"containers": [{"name": "c", "ports": p}]}));
        let taken = Some((Code::Unschedulable, vec![ERR_REASON_PORTS.to_string()], NODE_PORTS));
        let cases = [
            (json!([{"hostPort": 80}]), taken.clone()),
            (json!([{"hostPort": 80, "hostIP": "10.0.0.1"}]), taken),
            (json!([{"hostPort": 80, "hostIP": "10.0.0.2"}]), None),
            (json!([{"hostPort": 80, "protocol": "UDP"}]), None),
            (json!([{"hostPort": 81}]), None),
            (json!([{"containerPort": 80}]), None),
        ];
        for (p, want) in cases {
            assert_eq!(reasons(node_ports(&ports(p.clone()), &n)), want, "{p}");
        }
    }

    #[test]
    fn node_resources_fit_lists_every_shortfall() {
        let mut n = plain_node();
        n.add_pod(pod(json!({"containers": req("1500m", "1Gi")})));
        let fit = |reasons: &[&str]| {
            Some((Code::Unschedulable, reasons.iter().map(|r| r.to_string()).collect::<Vec<_>>(), NODE_RESOURCES_FIT))
        };
        let cases = [
            (json!({"containers": req("500m", "3Gi")}), None),
            (json!({"containers": req("501m", "1Gi")}), fit(&["Insufficient cpu"])),
            (json!({"containers": req("1", "4Gi")}), fit(&["Insufficient cpu", "Insufficient memory"])),
            (
                json!({"containers": [{"name": "c", "resources": {"requests": {"ephemeral-storage": "1"}}}]}),
                fit(&["Insufficient ephemeral-storage"]),
            ),
            (
                json!({"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "2"}}}]}),
                fit(&["Insufficient example.com/gpu"]),
            ),
            (json!({"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]}), None),
            (
                json!({"containers": [{"name": "c", "resources": {"requests": {"example.com/fpga": "1"}}}]}),
                fit(&["Insufficient example.com/fpga"]),
            ),
            // Init containers and overhead count as upstream sums them.
            (json!({"containers": req("100m", "0"), "initContainers": req("600m", "0")}), fit(&["Insufficient cpu"])),
            (json!({"containers": req("400m", "0"), "overhead": {"cpu": "101m"}}), fit(&["Insufficient cpu"])),
        ];
        for (spec, want) in cases {
            assert_eq!(reasons(node_resources_fit(&pod(spec.clone()), &n)), want, "{spec}");
        }
        n.add_pod(PodFacts { key: "ns/q".into(), ..pod(json!({})) });
        n.add_pod(PodFacts { key: "ns/r".into(), ..pod(json!({})) });
        assert_eq!(reasons(node_resources_fit(&pod(json!({})), &n)), fit(&["Too many pods"]));
        assert_eq!(
            reasons(node_resources_fit(&pod(json!({"containers": req("1", "0")})), &n)),
            fit(&["Too many pods", "Insufficient cpu"])
        );
    }

    #[test]
    fn the_first_failing_filter_decides() {
        let cordoned = node(
            json!({"unschedulable": true, "taints": [{"key": "k", "effect": "NoSchedule"}]}),
            json!({}),
            json!({}),
        );
        let status = run_filters(&pod(json!({"containers": req("9", "0")})), &cordoned).unwrap();
        assert_eq!(status.plugin, NODE_UNSCHEDULABLE);
        assert_eq!(run_filters(&pod(json!({})), &plain_node()), None);
    }
}
