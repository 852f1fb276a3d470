//! Which nodes a DaemonSet's pod belongs on, and the pod the controller makes for one (kube-controller-manager
//! 1.32: `pkg/controller/daemon/daemon_controller.go` `NodeShouldRunDaemonPod`, `predicates`, `NewPod`;
//! `pkg/controller/daemon/util/daemonset_util.go` `AddOrUpdateDaemonPodTolerations`, `CreatePodTemplate`,
//! `ReplaceDaemonSetPodNodeNameNodeAffinity`, `GetTargetNodeName`). Sans-IO.
//!
//! A node fits when the template's `nodeName` (if any) is the node's, its node selector and required node
//! affinity match the node, and every `NoSchedule`/`NoExecute` taint is tolerated by the template's
//! tolerations plus the ones the controller always adds (node problems must never evict or keep out a
//! daemon). Such a node *should run* a pod; a node that fails only on taints, none of them an untolerated
//! `NoExecute`, *should continue running* a pod that is already there.
//!
//! Node affinity and toleration matching are the scheduler's (`scheduler::affinity`, `scheduler::facts`),
//! so the controller and the scheduler can never disagree about a node.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::scheduler::affinity::{required_matches, NodeSelectorTerm};
use crate::scheduler::facts::{NodeFacts, Taint, Toleration};

/// `v1.TaintNodeNotReady`.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// `v1.TaintNodeUnreachable`.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `v1.TaintNodeDiskPressure`.
pub const TAINT_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// `v1.TaintNodeMemoryPressure`.
pub const TAINT_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// `v1.TaintNodePIDPressure`.
pub const TAINT_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// `v1.TaintNodeUnschedulable`.
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// `v1.TaintNodeNetworkUnavailable`.
pub const TAINT_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// `extensions.DaemonSetTemplateGenerationKey`.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// `apps.DefaultDaemonSetUniqueLabelKey` (= `ControllerRevisionHashLabelKey`).
pub const HASH_LABEL: &str = "controller-revision-hash";
/// `apps.DeprecatedTemplateGeneration`.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// `AddOrUpdateDaemonPodTolerations`'s tolerations, in upstream's order: the `NoExecute` ones without
/// `tolerationSeconds` (tolerated forever), then the node-condition `NoSchedule` ones.
pub fn daemon_tolerations(host_network: bool) -> Vec<Value> {
    let mut keys = vec![
        (TAINT_NOT_READY, "NoExecute"),
        (TAINT_UNREACHABLE, "NoExecute"),
        (TAINT_DISK_PRESSURE, "NoSchedule"),
        (TAINT_MEMORY_PRESSURE, "NoSchedule"),
        (TAINT_PID_PRESSURE, "NoSchedule"),
        (TAINT_UNSCHEDULABLE, "NoSchedule"),
    ];
    if host_network {
        keys.push((TAINT_NETWORK_UNAVAILABLE, "NoSchedule"));
    }
    keys.into_iter().map(|(key, effect)| json!({"key": key, "operator": "Exists", "effect": effect})).collect()
}

/// `AddOrUpdateTolerationInPodSpec` for each of [`daemon_tolerations`]: a toleration with the same key,
/// operator and effect (`MatchToleration`) is replaced in place, any other is appended.
pub fn add_daemon_tolerations(spec: &mut Value) {
    let host_network = spec.get("hostNetwork").and_then(Value::as_bool).unwrap_or(false);
    let mut list = spec.get("tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
    for toleration in daemon_tolerations(host_network) {
        let same = |t: &Value| {
            ["key", "operator", "effect"]
                .iter()
                .all(|f| t.get(*f).and_then(Value::as_str).unwrap_or("") == toleration[*f].as_str().unwrap_or(""))
        };
        match list.iter_mut().find(|t| same(t)) {
            Some(existing) => *existing = toleration,
            None => list.push(toleration),
        }
    }
    spec["tolerations"] = Value::Array(list);
}

fn tolerations_of(spec: &Value) -> Vec<Toleration> {
    let text = |t: &Value, f: &str| t.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    spec.get("tolerations")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|t| Toleration {
                    key: text(t, "key"),
                    operator: text(t, "operator"),
                    value: text(t, "value"),
                    effect: text(t, "effect"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `FindMatchingUntoleratedTaint` over the taints `filter` keeps.
fn untolerated(taints: &[Taint], tolerations: &[Toleration], filter: impl Fn(&Taint) -> bool) -> Option<Taint> {
    taints.iter().filter(|t| filter(t)).find(|t| !tolerations.iter().any(|tol| tol.tolerates(t))).cloned()
}

/// `NodeShouldRunDaemonPod`: `(shouldRun, shouldContinueRunning)` for the DaemonSet `ds` on `node`.
pub fn node_should_run(node: &Value, ds: &Value) -> (bool, bool) {
    let node = NodeFacts::from_json(node);
    let mut spec = ds.pointer("/spec/template/spec").cloned().filter(Value::is_object).unwrap_or_else(|| json!({}));
    let template_node = spec.get("nodeName").and_then(Value::as_str).unwrap_or("").to_string();
    if !(template_node.is_empty() || template_node == node.name) {
        return (false, false);
    }
    add_daemon_tolerations(&mut spec);
    // `GetRequiredNodeAffinity(pod).Match(node)`: the node selector, then the required terms.
    let selector: BTreeMap<String, String> = spec
        .get("nodeSelector")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
        .unwrap_or_default();
    let terms: Option<Vec<NodeSelectorTerm>> = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
        .filter(|r| !r.is_null())
        .map(|r| {
            r.get("nodeSelectorTerms")
                .and_then(Value::as_array)
                .map(|ts| ts.iter().map(NodeSelectorTerm::from_json).collect())
                .unwrap_or_default()
        });
    if !required_matches(&selector, terms.as_deref(), &node) {
        return (false, false);
    }
    let tolerations = tolerations_of(&spec);
    let hard = |t: &Taint| t.effect == "NoExecute" || t.effect == "NoSchedule";
    if untolerated(&node.taints, &tolerations, hard).is_none() {
        return (true, true);
    }
    // A pod already there may stay unless some NoExecute taint would evict it.
    (false, untolerated(&node.taints, &tolerations, |t| t.effect == "NoExecute").is_none())
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the pod's required node affinity becomes the single term
/// `metadata.name In [node]`, keeping the rest of its affinity (and the preferred terms).
pub fn pin_to_node(spec: &mut Value, node_name: &str) {
    let terms = json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]);
    if !spec.get("affinity").is_some_and(Value::is_object) {
        spec["affinity"] = json!({});
    }
    let affinity = &mut spec["affinity"];
    if !affinity.get("nodeAffinity").is_some_and(Value::is_object) {
        affinity["nodeAffinity"] = json!({});
    }
    let node_affinity = &mut affinity["nodeAffinity"];
    match node_affinity.get_mut("requiredDuringSchedulingIgnoredDuringExecution").filter(|r| r.is_object()) {
        Some(required) => required["nodeSelectorTerms"] = terms,
        None => node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = json!({"nodeSelectorTerms": terms}),
    }
}

/// `GetTargetNodeName`: the node a pod is bound to, or the one its `metadata.name In` field term names.
pub fn target_node_name(pod: &Value) -> Option<String> {
    if let Some(name) = pod.pointer("/spec/nodeName").and_then(Value::as_str).filter(|n| !n.is_empty()) {
        return Some(name.to_string());
    }
    let terms = pod
        .pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
        .as_array()?;
    for term in terms {
        for exp in term.get("matchFields").and_then(Value::as_array).into_iter().flatten() {
            if exp.get("key").and_then(Value::as_str) == Some("metadata.name")
                && exp.get("operator").and_then(Value::as_str) == Some("In")
            {
                let values = exp.get("values").and_then(Value::as_array)?;
                // More than one value is no single target (upstream's error).
                return (values.len() == 1).then(|| values[0].as_str().unwrap_or("").to_string());
            }
        }
    }
    None
}

/// `GetTemplateGeneration`: the deprecated annotation's number, `None` if absent or unparsable.
pub fn template_generation(ds: &Value) -> Option<i64> {
    ds.pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

/// `CreatePodTemplate`: the template with the daemon tolerations, the template-generation label (when the
/// annotation carries one) and the revision hash label.
pub fn pod_template(ds: &Value, hash: &str) -> Value {
    let mut template = ds.pointer("/spec/template").cloned().filter(Value::is_object).unwrap_or_else(|| json!({}));
    if !template.get("spec").is_some_and(Value::is_object) {
        template["spec"] = json!({});
    }
    add_daemon_tolerations(&mut template["spec"]);
    if !template.get("metadata").is_some_and(Value::is_object) {
        template["metadata"] = json!({});
    }
    if !template["metadata"].get("labels").is_some_and(Value::is_object) {
        template["metadata"]["labels"] = json!({});
    }
    let labels = &mut template["metadata"]["labels"];
    if let Some(generation) = template_generation(ds) {
        labels[TEMPLATE_GENERATION_LABEL] = json!(generation.to_string());
    }
    if !hash.is_empty() {
        labels[HASH_LABEL] = json!(hash);
    }
    template
}

/// `IsPodUpdated`: the pod carries the current hash. Upstream also compares the template-generation
/// label with `fmt.Sprint` of a *pointer* to the generation, which prints an address and so never matches;
/// only the hash counts there, and so here.
pub fn is_pod_updated(pod: &Value, hash: &str) -> bool {
    let label = pod.pointer("/metadata/labels").and_then(|l| l.get(HASH_LABEL)).and_then(Value::as_str);
    !hash.is_empty() && label == Some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, labels: Value, taints: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints}})
    }

    fn ds(spec: Value) -> Value {
        json!({"metadata": {"name": "d", "namespace": "ns"}, "spec": {"template": {"spec": spec}}})
    }

    fn taint(key: &str, effect: &str) -> Value {
        json!({"key": key, "value": "v", "effect": effect})
    }

    #[test]
    fn nodes_fit_by_name_selector_affinity_and_taints() {
        let plain = || node("n1", json!({"zone": "a", "size": "3"}), json!([]));
        let affinity = |op: &str, values: Value| json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": op, "values": values}]}]}}}});
        let cases = [
            ("no constraints", plain(), json!({}), (true, true)),
            ("nodeName names another node", plain(), json!({"nodeName": "n2"}), (false, false)),
            ("nodeName names this node", plain(), json!({"nodeName": "n1"}), (true, true)),
            ("selector matches", plain(), json!({"nodeSelector": {"zone": "a"}}), (true, true)),
            ("selector misses", plain(), json!({"nodeSelector": {"zone": "b"}}), (false, false)),
            ("affinity In", plain(), affinity("In", json!(["a"])), (true, true)),
            ("affinity NotIn", plain(), affinity("NotIn", json!(["a"])), (false, false)),
            (
                "affinity Gt",
                plain(),
                json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["2"]}]}]}}}}),
                (true, true),
            ),
            (
                "NoSchedule taint untolerated: no new pod, the old one stays",
                node("n1", json!({}), json!([taint("dedicated", "NoSchedule")])),
                json!({}),
                (false, true),
            ),
            (
                "NoExecute taint untolerated: none at all",
                node("n1", json!({}), json!([taint("dedicated", "NoExecute")])),
                json!({}),
                (false, false),
            ),
            (
                "PreferNoSchedule never keeps a daemon out",
                node("n1", json!({}), json!([taint("dedicated", "PreferNoSchedule")])),
                json!({}),
                (true, true),
            ),
            (
                "a matching toleration",
                node("n1", json!({}), json!([taint("dedicated", "NoExecute")])),
                json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "v"}]}),
                (true, true),
            ),
            (
                "a toleration for another value",
                node("n1", json!({}), json!([taint("dedicated", "NoSchedule")])),
                json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "w"}]}),
                (false, true),
            ),
            (
                "node problems are tolerated",
                node(
                    "n1",
                    json!({}),
                    json!([
                        taint(TAINT_NOT_READY, "NoExecute"),
                        taint(TAINT_UNREACHABLE, "NoExecute"),
                        taint(TAINT_DISK_PRESSURE, "NoSchedule"),
                        taint(TAINT_MEMORY_PRESSURE, "NoSchedule"),
                        taint(TAINT_PID_PRESSURE, "NoSchedule"),
                        taint(TAINT_UNSCHEDULABLE, "NoSchedule"),
                    ]),
                ),
                json!({}),
                (true, true),
            ),
            (
                "network-unavailable only for host-network pods",
                node("n1", json!({}), json!([taint(TAINT_NETWORK_UNAVAILABLE, "NoSchedule")])),
                json!({}),
                (false, true),
            ),
            (
                "network-unavailable tolerated with hostNetwork",
                node("n1", json!({}), json!([taint(TAINT_NETWORK_UNAVAILABLE, "NoSchedule")])),
                json!({"hostNetwork": true}),
                (true, true),
            ),
        ];
        for (name, node, spec, want) in cases {
            assert_eq!(node_should_run(&node, &ds(spec)), want, "{name}");
        }
    }

    #[test]
    fn daemon_tolerations_are_added_or_replaced() {
        let mut spec = json!({"tolerations": [
            {"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "mine", "operator": "Exists"},
        ]});
        add_daemon_tolerations(&mut spec);
        let list = spec["tolerations"].as_array().unwrap();
        assert_eq!(list.len(), 7, "{list:?}");
        // The user's not-ready toleration is replaced in place: no tolerationSeconds, evicted never.
        assert_eq!(list[0], json!({"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute"}));
        assert_eq!(list[1]["key"], "mine");
        let keys: Vec<&str> = list[2..].iter().map(|t| t["key"].as_str().unwrap()).collect();
        assert_eq!(
            keys,
            [TAINT_UNREACHABLE, TAINT_DISK_PRESSURE, TAINT_MEMORY_PRESSURE, TAINT_PID_PRESSURE, TAINT_UNSCHEDULABLE]
        );
        let mut host = json!({"hostNetwork": true});
        add_daemon_tolerations(&mut host);
        assert_eq!(
            host["tolerations"][6],
            json!({"key": TAINT_NETWORK_UNAVAILABLE, "operator": "Exists", "effect": "NoSchedule"})
        );
    }

    #[test]
    fn pods_are_pinned_by_affinity_and_found_again() {
        let cases = [
            json!({}),
            json!({"affinity": {"podAffinity": {"x": 1}}}),
            json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}}}),
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}}}}),
        ];
        for spec in cases {
            let mut pinned = spec.clone();
            pin_to_node(&mut pinned, "node-7");
            let pod = json!({"spec": pinned});
            assert_eq!(target_node_name(&pod).as_deref(), Some("node-7"), "{spec}");
            let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"];
            assert_eq!(terms.as_array().unwrap().len(), 1, "{spec}");
            if spec.pointer("/affinity/podAffinity").is_some() {
                assert_eq!(pod["spec"]["affinity"]["podAffinity"], json!({"x": 1}));
            }
            if spec.pointer("/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution").is_some() {
                assert_eq!(
                    pod["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
                        ["weight"],
                    1
                );
            }
        }
        assert_eq!(target_node_name(&json!({"spec": {"nodeName": "n"}})).as_deref(), Some("n"));
        assert_eq!(target_node_name(&json!({"spec": {}})), None);
    }

    #[test]
    fn templates_carry_the_hash_and_generation() {
        let mut d = ds(json!({"containers": []}));
        d["spec"]["template"]["metadata"] = json!({"labels": {"app": "x"}});
        d["metadata"]["annotations"] = json!({TEMPLATE_GENERATION_ANNOTATION: "4"});
        let t = pod_template(&d, "abc");
        assert_eq!(t["metadata"]["labels"], json!({"app": "x", HASH_LABEL: "abc", TEMPLATE_GENERATION_LABEL: "4"}));
        assert_eq!(t["spec"]["tolerations"].as_array().unwrap().len(), 6);
        let pod = json!({"metadata": {"labels": {HASH_LABEL: "abc", TEMPLATE_GENERATION_LABEL: "4"}}});
        let cases = [("abc", true), ("def", false), ("", false)];
        for (hash, want) in cases {
            assert_eq!(is_pod_updated(&pod, hash), want, "{hash}");
        }
    }
}
