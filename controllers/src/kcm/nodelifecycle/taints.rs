//! The taints the node lifecycle controller owns, and how it edits a node's list (kube-controller-manager
//! 1.32, `node_lifecycle_controller.go`'s `doNoScheduleTaintingPass` and taint templates,
//! `pkg/util/taints` `TaintSetDiff`/`AddOrUpdateTaint`/`DeleteTaint`, `pkg/controller/util/node`'s
//! `SwapNodeControllerTaint`). Sans-IO: taints are the JSON objects of `spec.taints`.

use serde_json::{json, Value};

pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
pub const TAINT_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
pub const TAINT_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
pub const TAINT_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
pub const TAINT_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// `nodeConditionToTaintKeyStatusMap`: the NoSchedule taint a condition in a status calls for.
fn condition_taint(kind: &str, status: &str) -> Option<&'static str> {
    match (kind, status) {
        ("Ready", "False") => Some(TAINT_NOT_READY),
        ("Ready", "Unknown") => Some(TAINT_UNREACHABLE),
        ("MemoryPressure", "True") => Some(TAINT_MEMORY_PRESSURE),
        ("DiskPressure", "True") => Some(TAINT_DISK_PRESSURE),
        ("NetworkUnavailable", "True") => Some(TAINT_NETWORK_UNAVAILABLE),
        ("PIDPressure", "True") => Some(TAINT_PID_PRESSURE),
        _ => None,
    }
}

/// `taintKeyToNodeConditionMap`'s keys: the condition taints.
fn is_condition_taint(key: &str) -> bool {
    [
        TAINT_NOT_READY,
        TAINT_UNREACHABLE,
        TAINT_NETWORK_UNAVAILABLE,
        TAINT_MEMORY_PRESSURE,
        TAINT_DISK_PRESSURE,
        TAINT_PID_PRESSURE,
    ]
    .contains(&key)
}

/// A taint with no value and no time (a template).
pub fn taint(key: &str, effect: &str) -> Value {
    json!({"key": key, "effect": effect})
}

/// `UnreachableTaintTemplate` and `NotReadyTaintTemplate`.
pub fn unreachable_no_execute() -> Value {
    taint(TAINT_UNREACHABLE, "NoExecute")
}

pub fn not_ready_no_execute() -> Value {
    taint(TAINT_NOT_READY, "NoExecute")
}

fn field<'a>(v: &'a Value, f: &str) -> &'a str {
    v.get(f).and_then(Value::as_str).unwrap_or("")
}

/// `MatchTaint`: the same key and effect.
pub fn matches(a: &Value, b: &Value) -> bool {
    field(a, "key") == field(b, "key") && field(a, "effect") == field(b, "effect")
}

/// A node's `spec.taints`.
pub fn node_taints(node: &Value) -> Vec<Value> {
    node.pointer("/spec/taints").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// `TaintExists`.
pub fn has_taint(node: &Value, template: &Value) -> bool {
    node_taints(node).iter().any(|t| matches(t, template))
}

/// `doNoScheduleTaintingPass`'s diff: the NoSchedule taints `node` should gain and lose, from its
/// conditions and `spec.unschedulable`, among the condition and unschedulable taints it carries.
pub fn no_schedule_diff(node: &Value) -> (Vec<Value>, Vec<Value>) {
    let mut wanted = Vec::new();
    let conditions = node.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    for c in &conditions {
        if let Some(key) = condition_taint(field(c, "type"), field(c, "status")) {
            wanted.push(taint(key, "NoSchedule"));
        }
    }
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        wanted.push(taint(TAINT_UNSCHEDULABLE, "NoSchedule"));
    }
    let owned: Vec<Value> = node_taints(node)
        .into_iter()
        .filter(|t| {
            field(t, "effect") == "NoSchedule"
                && (field(t, "key") == TAINT_UNSCHEDULABLE || is_condition_taint(field(t, "key")))
        })
        .collect();
    let add = wanted.iter().filter(|w| !owned.iter().any(|o| matches(o, w))).cloned().collect();
    let remove = owned.iter().filter(|o| !wanted.iter().any(|w| matches(o, w))).cloned().collect();
    (add, remove)
}

/// `SwapNodeControllerTaint` on a taint list: each of `add` stamped `time_added` and put in (replacing a
/// matching one that differs), then each of `remove` taken out; `None` when nothing changes.
pub fn swap(taints: &[Value], add: &[Value], remove: &[Value], time_added: &str) -> Option<Vec<Value>> {
    let mut out = taints.to_vec();
    let mut changed = false;
    for new in add {
        let mut new = new.clone();
        new["timeAdded"] = json!(time_added);
        match out.iter_mut().find(|t| matches(t, &new)) {
            Some(old) if *old == new => {}
            Some(old) => {
                *old = new;
                changed = true;
            }
            None => {
                out.push(new);
                changed = true;
            }
        }
    }
    let before = out.len();
    out.retain(|t| !remove.iter().any(|r| matches(t, r)));
    changed |= out.len() != before;
    changed.then_some(out)
}

/// The primary/secondary label pairs kept in step (`labelReconcileInfo`): the beta OS and arch labels
/// follow the stable ones.
const LABEL_PAIRS: [(&str, &str); 2] =
    [("kubernetes.io/os", "beta.kubernetes.io/os"), ("kubernetes.io/arch", "beta.kubernetes.io/arch")];

/// `reconcileNodeLabels`: the labels to set so that each beta label exists and equals its stable one.
pub fn label_fixes(node: &Value) -> serde_json::Map<String, Value> {
    let mut fixes = serde_json::Map::new();
    let Some(labels) = node.pointer("/metadata/labels").and_then(Value::as_object) else { return fixes };
    for (primary, secondary) in LABEL_PAIRS {
        let Some(value) = labels.get(primary) else { continue };
        if labels.get(secondary) != Some(value) {
            fixes.insert(secondary.to_string(), value.clone());
        }
    }
    fixes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(ready: &str, unschedulable: bool, taints: Value) -> Value {
        json!({"spec": {"unschedulable": unschedulable, "taints": taints},
            "status": {"conditions": [{"type": "Ready", "status": ready},
                {"type": "DiskPressure", "status": "False"}]}})
    }

    fn keys(taints: &[Value]) -> Vec<String> {
        taints.iter().map(|t| format!("{}:{}", field(t, "key"), field(t, "effect"))).collect()
    }

    #[test]
    fn no_schedule_taints_follow_conditions_and_unschedulable() {
        let user = json!({"key": "dedicated", "effect": "NoSchedule"});
        let unreachable_ns = json!({"key": TAINT_UNREACHABLE, "effect": "NoSchedule"});
        let unreachable_ne = json!({"key": TAINT_UNREACHABLE, "effect": "NoExecute"});
        // (ready, unschedulable, taints, add, remove)
        let cases = [
            ("True", false, json!([user]), vec![], vec![]),
            ("False", false, json!([]), vec!["node.kubernetes.io/not-ready:NoSchedule"], vec![]),
            ("Unknown", false, json!([unreachable_ns]), vec![], vec![]),
            (
                "Unknown",
                true,
                json!([unreachable_ne]),
                vec!["node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"],
                vec![],
            ),
            (
                "True",
                false,
                json!([user, unreachable_ns, unreachable_ne]),
                vec![],
                vec!["node.kubernetes.io/unreachable:NoSchedule"],
            ),
            (
                "False",
                false,
                json!([unreachable_ns]),
                vec!["node.kubernetes.io/not-ready:NoSchedule"],
                vec!["node.kubernetes.io/unreachable:NoSchedule"],
            ),
        ];
        for (ready, unschedulable, taints, add, remove) in cases {
            let (a, r) = no_schedule_diff(&node(ready, unschedulable, taints.clone()));
            assert_eq!(
                (keys(&a), keys(&r)),
                (add.iter().map(|s| s.to_string()).collect(), remove.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
                "{ready} {unschedulable} {taints}"
            );
        }
    }

    #[test]
    fn swapping_stamps_added_taints_and_reports_no_change() {
        let have = vec![json!({"key": "a", "effect": "NoSchedule"}), not_ready_no_execute()];
        let out = swap(&have, &[unreachable_no_execute()], &[not_ready_no_execute()], "T").unwrap();
        assert_eq!(
            out,
            vec![
                json!({"key": "a", "effect": "NoSchedule"}),
                json!({"key": TAINT_UNREACHABLE, "effect": "NoExecute", "timeAdded": "T"})
            ]
        );
        assert_eq!(swap(&out, &[unreachable_no_execute()], &[not_ready_no_execute()], "T"), None);
        // The same taint added later is stamped anew, as `AddOrUpdateTaint` replaces one that differs.
        assert_eq!(swap(&out, &[unreachable_no_execute()], &[], "U").unwrap()[1]["timeAdded"], "U");
        assert_eq!(swap(&have, &[], &[unreachable_no_execute()], "T"), None);
    }

    #[test]
    fn beta_labels_follow_the_stable_ones() {
        let n = json!({"metadata": {"labels": {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/arch": "arm64"}}});
        let fixes = label_fixes(&n);
        assert_eq!(Value::Object(fixes), json!({"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}));
        assert!(label_fixes(&json!({"metadata": {}})).is_empty());
    }
}
