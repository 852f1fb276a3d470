//! What the scheduler reads off a pod and a node, decoded once from their JSON: a pod's requests, host
//! ports, tolerations, node selector and node affinity, priority; a node's labels, taints, allocatable
//! resources and `spec.unschedulable`. Tolerations match taints as `core/v1`'s `Toleration.ToleratesTaint`
//! does (`staging/src/k8s.io/api/core/v1/toleration.go`, 1.32: `Equal` and `Exists` only).

use std::collections::BTreeMap;

use serde_json::Value;

use super::affinity::{NodeSelectorTerm, PreferredTerm};
pub use super::node_facts::{NodeFacts, Taint};
use super::resources::{non_zero_defaults, pod_requests, Resource, ResourceList};

/// A pod toleration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    pub operator: String,
    pub value: String,
    pub effect: String,
}

impl Toleration {
    /// `ToleratesTaint`: an empty effect or key matches any; `Exists` any value, `Equal` (or none) the
    /// same value.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator.as_str() {
            "" | "Equal" => self.value == taint.value,
            "Exists" => true,
            _ => false,
        }
    }
}

/// `TolerationsTolerateTaint`.
pub fn tolerated(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| t.tolerates(taint))
}

/// A host port a container asks for, with `HostPortInfo`'s defaults applied (`0.0.0.0`, `TCP`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostPort {
    pub ip: String,
    pub protocol: String,
    pub port: i64,
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn array_of<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// What the scheduler needs of a pod.
#[derive(Clone, Debug, PartialEq)]
pub struct PodFacts {
    /// `namespace/name`.
    pub key: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub node_name: String,
    /// `spec.priority` (0 when unset, as `corev1helpers.PodPriority`).
    pub priority: i64,
    /// `spec.preemptionPolicy: Never`.
    pub preempt_never: bool,
    /// `PodRequests` as the fit check counts them.
    pub requests: Resource,
    /// The cpu and memory scoring counts, with the non-zero defaults for missing requests.
    pub non_zero_milli_cpu: i64,
    pub non_zero_memory_bytes: i64,
    pub host_ports: Vec<HostPort>,
    pub tolerations: Vec<Toleration>,
    pub node_selector: BTreeMap<String, String>,
    /// `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`, when set.
    pub required_terms: Option<Vec<NodeSelectorTerm>>,
    pub preferred_terms: Vec<PreferredTerm>,
}

impl PodFacts {
    pub fn from_json(pod: &Value) -> PodFacts {
        let namespace = str_of(pod, "/metadata/namespace").to_string();
        let name = str_of(pod, "/metadata/name").to_string();
        let requests = Resource::from_list(&pod_requests(pod, &ResourceList::new()));
        let non_zero = Resource::from_list(&pod_requests(pod, &non_zero_defaults()));
        let host_ports = array_of(pod, "/spec/containers")
            .iter()
            .flat_map(|c| array_of(c, "/ports"))
            .filter_map(|p| {
                let port = p.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
                (port > 0).then(|| HostPort {
                    ip: match str_of(p, "/hostIP") {
                        "" => "0.0.0.0".to_string(),
                        ip => ip.to_string(),
                    },
                    protocol: match str_of(p, "/protocol") {
                        "" => "TCP".to_string(),
                        proto => proto.to_string(),
                    },
                    port,
                })
            })
            .collect();
        let tolerations = array_of(pod, "/spec/tolerations")
            .iter()
            .map(|t| Toleration {
                key: str_of(t, "/key").into(),
                operator: str_of(t, "/operator").into(),
                value: str_of(t, "/value").into(),
                effect: str_of(t, "/effect").into(),
            })
            .collect();
        let node_selector = pod
            .pointer("/spec/nodeSelector")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
            .unwrap_or_default();
        let node_affinity = pod.pointer("/spec/affinity/nodeAffinity");
        let required_terms = node_affinity
            .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
            .filter(|r| r.is_object())
            .map(|r| array_of(r, "/nodeSelectorTerms").iter().map(NodeSelectorTerm::from_json).collect());
        let preferred_terms = node_affinity
            .map(|a| array_of(a, "/preferredDuringSchedulingIgnoredDuringExecution"))
            .unwrap_or(&[])
            .iter()
            .map(PreferredTerm::from_json)
            .collect();
        PodFacts {
            key: format!("{namespace}/{name}"),
            namespace,
            name,
            uid: str_of(pod, "/metadata/uid").into(),
            node_name: str_of(pod, "/spec/nodeName").into(),
            priority: pod.pointer("/spec/priority").and_then(Value::as_i64).unwrap_or(0),
            preempt_never: str_of(pod, "/spec/preemptionPolicy") == "Never",
            requests,
            non_zero_milli_cpu: non_zero.milli_cpu,
            non_zero_memory_bytes: non_zero.memory_bytes,
            host_ports,
            tolerations,
            node_selector,
            required_terms,
            preferred_terms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tol(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
        Toleration { key: key.into(), operator: operator.into(), value: value.into(), effect: effect.into() }
    }

    #[test]
    fn tolerations_match_taints_as_upstreams() {
        let taint = Taint { key: "k".into(), value: "v".into(), effect: "NoSchedule".into() };
        let cases = [
            (tol("k", "Equal", "v", "NoSchedule"), true),
            (tol("k", "", "v", ""), true),
            (tol("k", "Equal", "w", "NoSchedule"), false),
            (tol("k", "Exists", "", ""), true),
            (tol("", "Exists", "", ""), true),
            (tol("", "Exists", "", "NoExecute"), false),
            (tol("other", "Exists", "", ""), false),
            (tol("k", "Gt", "v", ""), false),
        ];
        for (t, want) in cases {
            assert_eq!(t.tolerates(&taint), want, "{t:?}");
        }
    }

    #[test]
    fn a_pod_is_decoded_with_defaults() {
        let pod = json!({
            "metadata": {"namespace": "ns", "name": "p", "uid": "u"},
            "spec": {
                "containers": [{"ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81}],
                                "resources": {"requests": {"cpu": "250m"}}}],
                "nodeSelector": {"disk": "ssd"},
                "preemptionPolicy": "Never",
            },
        });
        let facts = PodFacts::from_json(&pod);
        assert_eq!(facts.key, "ns/p");
        assert_eq!(facts.host_ports, vec![HostPort { ip: "0.0.0.0".into(), protocol: "TCP".into(), port: 8080 }]);
        assert_eq!(facts.requests.milli_cpu, 250);
        assert_eq!((facts.non_zero_milli_cpu, facts.non_zero_memory_bytes), (250, 200 * 1024 * 1024));
        assert_eq!(facts.node_selector.get("disk").map(String::as_str), Some("ssd"));
        assert!(facts.preempt_never);
        assert_eq!(facts.required_terms, None);
    }
}
