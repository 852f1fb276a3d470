//! A simulated node's Node object, as the kubelet registers and reports it (kubelet 1.32,
//! `pkg/kubelet/kubelet_node_status.go` `initialNode`, `registerWithAPIServer`, `updateDefaultLabels`;
//! `pkg/kubelet/nodestatus/setters.go`): the standard labels (`kubernetes.io/hostname`, `/os`, `/arch` and
//! their `beta.` forms), the attach-detach annotation, capacity with allocatable equal to it, the four
//! conditions with upstream's reasons and messages, the addresses, the kubelet endpoint and `nodeInfo`.
//! Sans-IO: objects and patches built from a template, an index and a time; `mod.rs` sends them.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Map, Value};

use super::status::stamp;
use super::NodeTemplate;

/// The version the simulated kubelets report.
pub const KUBELET_VERSION: &str = "v1.32.0";
/// The kubelet's port (`daemonEndpoints.kubeletEndpoint`).
const KUBELET_PORT: u16 = 10250;
const OS: &str = "linux";
const ARCH: &str = "amd64";

/// The labels the kubelet owns and puts right on a node it takes over (`updateDefaultLabels`).
pub fn default_labels(name: &str) -> BTreeMap<String, String> {
    [
        ("kubernetes.io/hostname", name),
        ("kubernetes.io/os", OS),
        ("kubernetes.io/arch", ARCH),
        ("beta.kubernetes.io/os", OS),
        ("beta.kubernetes.io/arch", ARCH),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// `node-<index>`.
pub fn node_name(index: usize) -> String {
    format!("node-{index}")
}

/// The node's pod CIDR: `10.244.<index>.0/24` (for an index past 255, the /24s carry on into
/// `10.245.0.0/24` and up, as consecutive /24s of a cluster CIDR would).
pub fn pod_cidr_base(index: usize) -> [u8; 3] {
    [10, (244 + index / 256).min(255) as u8, (index % 256) as u8]
}

pub fn pod_cidr(index: usize) -> String {
    let [a, b, c] = pod_cidr_base(index);
    format!("{a}.{b}.{c}.0/24")
}

/// The node's own address: `10.0.<index / 256>.<index % 256>`.
pub fn internal_ip(index: usize) -> String {
    format!("10.0.{}.{}", (index / 256) % 256, index % 256)
}

/// The four conditions (`MemoryPressureCondition`, `DiskPressureCondition`, `PIDPressureCondition`,
/// `ReadyCondition`) of a healthy node, heartbeat `now`; each keeps the transition time `existing` shows if
/// its status is unchanged.
pub fn conditions(now_us: i64, existing: Option<&Value>) -> Vec<Value> {
    let now = stamp(now_us);
    [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    .into_iter()
    .map(|(kind, status, reason, message)| {
        let since = existing
            .and_then(|node| node.pointer("/status/conditions"))
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|c| c["type"] == kind && c["status"] == status))
            .and_then(|c| c["lastTransitionTime"].as_str())
            .map_or_else(|| now.clone(), String::from);
        json!({
            "type": kind,
            "status": status,
            "lastHeartbeatTime": now,
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        })
    })
    .collect()
}

/// A UUID-shaped identifier drawn from `rng` (machine ID, system UUID, boot ID).
fn uuid(rng: &mut ChaCha8Rng) -> String {
    let hex = format!("{:016x}{:016x}", rng.random::<u64>(), rng.random::<u64>());
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The node's status: everything the kubelet reports. `existing` is the stored node, whose conditions'
/// transition times carry on.
pub fn status(template: &NodeTemplate, index: usize, seed: u64, now_us: i64, existing: Option<&Value>) -> Value {
    // The identifiers hang on the node's index and the fleet's seed only, so every report repeats them.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let machine_id = uuid(&mut rng).replace('-', "");
    let system_uuid = uuid(&mut rng);
    let boot_id = uuid(&mut rng);
    let capacity: Map<String, Value> = template.capacity.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    json!({
        "capacity": capacity,
        "allocatable": capacity,
        "conditions": conditions(now_us, existing),
        "addresses": [
            {"type": "InternalIP", "address": internal_ip(index)},
            {"type": "Hostname", "address": node_name(index)},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": KUBELET_PORT}},
        "nodeInfo": {
            "machineID": machine_id,
            "systemUUID": system_uuid,
            "bootID": boot_id,
            "kernelVersion": "6.8.0-kubesim",
            "osImage": "kubesim simulated node",
            "containerRuntimeVersion": "kubesim://1.32.0",
            "kubeletVersion": KUBELET_VERSION,
            "operatingSystem": OS,
            "architecture": ARCH,
        },
    })
}

/// The Node a kubelet registers (`initialNode` and its first status).
pub fn node_object(template: &NodeTemplate, index: usize, seed: u64, now_us: i64) -> Value {
    let name = node_name(index);
    let mut labels = default_labels(&name);
    // The template's labels go on top, except that the kubelet's own stay its own.
    for (k, v) in &template.labels {
        labels.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let mut spec = json!({"podCIDR": pod_cidr(index), "podCIDRs": [pod_cidr(index)]});
    if !template.taints.is_empty() {
        spec["taints"] = template
            .taints
            .iter()
            .map(|t| {
                let mut taint = json!({"key": t.key, "effect": t.effect});
                if !t.value.is_empty() {
                    taint["value"] = json!(t.value);
                }
                taint
            })
            .collect();
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": spec,
        "status": status(template, index, seed, now_us, None),
    })
}

/// The merge patch that puts the kubelet's default labels right on a node it takes over, if any is wrong.
pub fn label_patch(existing: &Value, name: &str) -> Option<Value> {
    let labels = existing.pointer("/metadata/labels");
    let wrong: Map<String, Value> = default_labels(name)
        .into_iter()
        .filter(|(k, v)| labels.and_then(|l| l.get(k)).and_then(Value::as_str) != Some(v.as_str()))
        .map(|(k, v)| (k, json!(v)))
        .collect();
    (!wrong.is_empty()).then(|| json!({"metadata": {"labels": wrong}}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::Taint;

    const NOW_US: i64 = 1_700_000_000_000_000;

    #[test]
    fn the_registered_node_carries_the_kubelets_labels_status_and_cidr() {
        let mut template = NodeTemplate::default();
        template.labels.insert("pool".into(), "a".into());
        template.labels.insert("kubernetes.io/hostname".into(), "spoofed".into());
        template.taints.push(Taint { key: "dedicated".into(), value: "gpu".into(), effect: "NoSchedule".into() });
        let node = node_object(&template, 3, 1, NOW_US);
        assert_eq!(node["metadata"]["name"], "node-3");
        let labels = &node["metadata"]["labels"];
        // (label, value)
        let cases = [
            ("kubernetes.io/hostname", "node-3"),
            ("kubernetes.io/os", "linux"),
            ("kubernetes.io/arch", "amd64"),
            ("beta.kubernetes.io/os", "linux"),
            ("beta.kubernetes.io/arch", "amd64"),
            ("pool", "a"),
        ];
        for (k, v) in cases {
            assert_eq!(labels[k], v, "{k}");
        }
        assert_eq!(node["spec"]["podCIDR"], "10.244.3.0/24");
        assert_eq!(node["spec"]["taints"], json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]));
        let status = &node["status"];
        assert_eq!(
            status["capacity"],
            json!({"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"})
        );
        assert_eq!(status["allocatable"], status["capacity"]);
        assert_eq!(status["nodeInfo"]["kubeletVersion"], "v1.32.0");
        assert_eq!(
            status["addresses"],
            json!([{"type": "InternalIP", "address": "10.0.0.3"}, {"type": "Hostname", "address": "node-3"}])
        );
        assert_eq!(status["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10250);
        let kinds: Vec<_> = status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["type"].clone(), c["status"].clone(), c["reason"].clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (json!("MemoryPressure"), json!("False"), json!("KubeletHasSufficientMemory")),
                (json!("DiskPressure"), json!("False"), json!("KubeletHasNoDiskPressure")),
                (json!("PIDPressure"), json!("False"), json!("KubeletHasSufficientPID")),
                (json!("Ready"), json!("True"), json!("KubeletReady")),
            ]
        );
        assert_eq!(status["conditions"][3]["message"], "kubelet is posting ready status");
        assert_eq!(status["nodeInfo"], node_object(&template, 3, 1, NOW_US + 5)["status"]["nodeInfo"], "stable IDs");
        assert_ne!(status["nodeInfo"]["bootID"], node_object(&template, 4, 1, NOW_US)["status"]["nodeInfo"]["bootID"]);
    }

    #[test]
    fn a_report_keeps_transition_times_of_unchanged_conditions() {
        let existing = json!({"status": {"conditions": [
            {"type": "Ready", "status": "Unknown", "lastTransitionTime": "2020-01-01T00:00:00Z"},
            {"type": "DiskPressure", "status": "False", "lastTransitionTime": "2020-01-01T00:00:00Z"},
        ]}});
        let cs = conditions(NOW_US, Some(&existing));
        let since = |kind: &str| cs.iter().find(|c| c["type"] == kind).unwrap()["lastTransitionTime"].clone();
        assert_eq!(since("DiskPressure"), "2020-01-01T00:00:00Z");
        assert_eq!(since("Ready"), "2023-11-14T22:13:20Z", "Unknown to True is a transition");
        assert!(cs.iter().all(|c| c["lastHeartbeatTime"] == "2023-11-14T22:13:20Z"));
    }

    #[test]
    fn cidrs_addresses_and_label_repairs() {
        // (index, pod CIDR, internal IP)
        let cases = [
            (1, "10.244.1.0/24", "10.0.0.1"),
            (255, "10.244.255.0/24", "10.0.0.255"),
            (256, "10.245.0.0/24", "10.0.1.0"),
        ];
        for (index, cidr, ip) in cases {
            assert_eq!((pod_cidr(index), internal_ip(index)), (cidr.to_string(), ip.to_string()));
        }
        let existing =
            json!({"metadata": {"labels": {"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "windows"}}});
        let patch = label_patch(&existing, "node-1").unwrap();
        let labels = patch["metadata"]["labels"].as_object().unwrap();
        assert_eq!(labels["kubernetes.io/os"], "linux");
        assert!(!labels.contains_key("kubernetes.io/hostname"), "only what is wrong");
        let right = json!({"metadata": {"labels": default_labels("node-1")}});
        assert_eq!(label_patch(&right, "node-1"), None);
    }
}
