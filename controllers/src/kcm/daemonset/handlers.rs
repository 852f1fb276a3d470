//! The DaemonSet controller's informer handlers (kube-controller-manager 1.32,
//! `pkg/controller/daemon/daemon_controller.go`: `addDaemonset`, `updateDaemonset`, `deleteDaemonset`,
//! `addPod`, `updatePod`, `deletePod`, `addNode`, `updateNode`, `shouldIgnoreNodeUpdate`, `addHistory`,
//! `updateHistory`, `deleteHistory`, `resolveControllerRef`, the lister's `GetPodDaemonSets` and
//! `GetHistoryDaemonSets`). Sans-IO: a change in, the expectation updates and queue additions out.
//!
//! A pod or revision with a controller reference concerns only the DaemonSet it names; an orphan wakes the
//! DaemonSets whose selector picks it, so that one adopts it. A node wakes the DaemonSets whose answer to
//! "should a pod run here" it changes; a heartbeat that only renews conditions changes nothing.

use std::time::Duration;

use serde_json::Value;

use super::eligibility::node_should_run;
use super::history::KIND;
use super::plan::min_ready_seconds;
use crate::kcm::replicaset::pods::{controller_ref, is_deleting, is_ready, object_key};
use crate::kcm::replicaset::selector::label_selector_as_selector;

/// What the handlers read of the DaemonSet informer's cache.
pub trait DaemonSets {
    fn get(&self, key: &str) -> Option<Value>;
    fn all(&self) -> Vec<Value>;
}

/// One consequence of a change, to apply in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    CreationObserved(String),
    DeletionObserved(String),
    DeleteExpectations(String),
    Enqueue(String),
    EnqueueAfter(String, Duration),
}

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// `resolveControllerRef`.
fn resolve(dss: &dyn DaemonSets, namespace: &str, owner: &Value) -> Option<Value> {
    if owner.get("kind").and_then(Value::as_str) != Some(KIND) {
        return None;
    }
    let ds = dss.get(&format!("{namespace}/{}", owner.get("name").and_then(Value::as_str).unwrap_or("")))?;
    (meta(&ds, "uid") == owner.get("uid").and_then(Value::as_str).unwrap_or("")).then_some(ds)
}

/// `GetPodDaemonSets` / `GetHistoryDaemonSets`: the DaemonSets of the object's namespace whose valid,
/// non-empty selector picks its labels (none for an object without labels).
pub fn selecting(dss: &dyn DaemonSets, obj: &Value) -> Vec<Value> {
    let labels = obj.pointer("/metadata/labels");
    if labels.and_then(Value::as_object).is_none_or(|l| l.is_empty()) {
        return Vec::new();
    }
    dss.all()
        .into_iter()
        .filter(|ds| meta(ds, "namespace") == meta(obj, "namespace"))
        .filter(|ds| match label_selector_as_selector(ds.pointer("/spec/selector")) {
            Ok(selector) => !selector.is_empty() && selector.matches(labels),
            Err(_) => false,
        })
        .collect()
}

fn enqueue_all(dss: Vec<Value>) -> Vec<Action> {
    dss.iter().map(|ds| Action::Enqueue(object_key(ds))).collect()
}

/// `addDaemonset`.
pub fn ds_added(ds: &Value) -> Vec<Action> {
    vec![Action::Enqueue(object_key(ds))]
}

/// `updateDaemonset`: a DaemonSet replaced under the same name is first handled as deleted.
pub fn ds_updated(old: &Value, cur: &Value) -> Vec<Action> {
    let mut actions = Vec::new();
    if meta(old, "uid") != meta(cur, "uid") {
        actions.extend(ds_deleted(old));
    }
    actions.push(Action::Enqueue(object_key(cur)));
    actions
}

/// `deleteDaemonset`.
pub fn ds_deleted(ds: &Value) -> Vec<Action> {
    let key = object_key(ds);
    vec![Action::DeleteExpectations(key.clone()), Action::Enqueue(key)]
}

/// `addPod`.
pub fn pod_added(dss: &dyn DaemonSets, pod: &Value) -> Vec<Action> {
    if is_deleting(pod) {
        return pod_deleted(dss, pod);
    }
    match controller_ref(pod) {
        Some(owner) => match resolve(dss, meta(pod, "namespace"), owner) {
            Some(ds) => vec![Action::CreationObserved(object_key(&ds)), Action::Enqueue(object_key(&ds))],
            None => Vec::new(),
        },
        None => enqueue_all(selecting(dss, pod)),
    }
}

/// `updatePod`.
pub fn pod_updated(dss: &dyn DaemonSets, old: &Value, cur: &Value) -> Vec<Action> {
    if meta(old, "resourceVersion") == meta(cur, "resourceVersion") {
        return Vec::new();
    }
    if is_deleting(cur) {
        return pod_deleted(dss, cur);
    }
    let (cur_ref, old_ref) = (controller_ref(cur), controller_ref(old));
    let ref_changed = cur_ref != old_ref;
    let mut actions = Vec::new();
    if ref_changed {
        if let Some(ds) = old_ref.and_then(|r| resolve(dss, meta(old, "namespace"), r)) {
            actions.push(Action::Enqueue(object_key(&ds)));
        }
    }
    if let Some(owner) = cur_ref {
        let Some(ds) = resolve(dss, meta(cur, "namespace"), owner) else { return actions };
        actions.push(Action::Enqueue(object_key(&ds)));
        let min_ready = min_ready_seconds(&ds);
        if !is_ready(old) && is_ready(cur) && min_ready > 0 {
            // A second more, against milliseconds of skew.
            let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0) + 1);
            actions.push(Action::EnqueueAfter(object_key(&ds), delay));
        }
        return actions;
    }
    let label_changed = old.pointer("/metadata/labels") != cur.pointer("/metadata/labels");
    if label_changed || ref_changed {
        actions.extend(enqueue_all(selecting(dss, cur)));
    }
    actions
}

/// `deletePod` (also for a tombstone).
pub fn pod_deleted(dss: &dyn DaemonSets, pod: &Value) -> Vec<Action> {
    let Some(ds) = controller_ref(pod).and_then(|o| resolve(dss, meta(pod, "namespace"), o)) else {
        return Vec::new();
    };
    let key = object_key(&ds);
    vec![Action::DeletionObserved(key.clone()), Action::Enqueue(key)]
}

/// `addNode`: the DaemonSets that should run a pod on it.
pub fn node_added(dss: &dyn DaemonSets, node: &Value) -> Vec<Action> {
    enqueue_all(dss.all().into_iter().filter(|ds| node_should_run(node, ds).0).collect())
}

/// `nodeInSameCondition`: the same condition types are `True`.
fn true_conditions(node: &Value) -> std::collections::BTreeSet<&str> {
    node.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("status").and_then(Value::as_str) == Some("True"))
        .filter_map(|c| c.get("type").and_then(Value::as_str))
        .collect()
}

/// `shouldIgnoreNodeUpdate`: the same true conditions, and nothing else changed but the resourceVersion
/// and the conditions.
pub fn should_ignore_node_update(old: &Value, cur: &Value) -> bool {
    if true_conditions(old) != true_conditions(cur) {
        return false;
    }
    let strip = |n: &Value| {
        let mut n = n.clone();
        if let Some(m) = n.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
        }
        if let Some(s) = n.get_mut("status").and_then(Value::as_object_mut) {
            s.remove("conditions");
        }
        n
    };
    strip(old) == strip(cur)
}

/// `updateNode`.
pub fn node_updated(dss: &dyn DaemonSets, old: &Value, cur: &Value) -> Vec<Action> {
    if should_ignore_node_update(old, cur) {
        return Vec::new();
    }
    enqueue_all(dss.all().into_iter().filter(|ds| node_should_run(old, ds) != node_should_run(cur, ds)).collect())
}

/// `addHistory`, `updateHistory` and `deleteHistory` (a deleted orphan concerns nobody).
pub fn history_changed(dss: &dyn DaemonSets, revision: &Value, deleted: bool) -> Vec<Action> {
    if let Some(owner) = controller_ref(revision) {
        return resolve(dss, meta(revision, "namespace"), owner)
            .map(|ds| vec![Action::Enqueue(object_key(&ds))])
            .unwrap_or_default();
    }
    if deleted {
        return Vec::new();
    }
    enqueue_all(selecting(dss, revision))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    impl DaemonSets for BTreeMap<String, Value> {
        fn get(&self, key: &str) -> Option<Value> {
            BTreeMap::get(self, key).cloned()
        }
        fn all(&self) -> Vec<Value> {
            self.values().cloned().collect()
        }
    }

    fn cache() -> BTreeMap<String, Value> {
        let ds = |name: &str, uid: &str, spec: Value| {
            (format!("ns/{name}"), json!({"metadata": {"name": name, "namespace": "ns", "uid": uid}, "spec": spec}))
        };
        BTreeMap::from([
            ds("web", "u-web", json!({"selector": {"matchLabels": {"app": "web"}}, "minReadySeconds": 5})),
            ds(
                "ssd",
                "u-ssd",
                json!({"selector": {"matchLabels": {"app": "ssd"}}, "template": {"spec": {"nodeSelector": {"disk": "ssd"}}}}),
            ),
        ])
    }

    fn pod(rv: &str, owner: Option<(&str, &str)>, ready: bool) -> Value {
        let mut p =
            json!({"metadata": {"name": "p", "namespace": "ns", "resourceVersion": rv, "labels": {"app": "web"}}});
        if let Some((name, uid)) = owner {
            p["metadata"]["ownerReferences"] =
                json!([{"kind": "DaemonSet", "name": name, "uid": uid, "controller": true}]);
        }
        if ready {
            p["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        }
        p
    }

    fn enqueue(key: &str) -> Action {
        Action::Enqueue(key.into())
    }

    #[test]
    fn pods_reach_their_daemon_set() {
        let c = cache();
        let owned = |rv| pod(rv, Some(("web", "u-web")), false);
        let cases = [
            (
                "owned added",
                pod_added(&c, &owned("1")),
                vec![Action::CreationObserved("ns/web".into()), enqueue("ns/web")],
            ),
            ("stale owner", pod_added(&c, &pod("1", Some(("web", "old")), false)), vec![]),
            ("orphan added", pod_added(&c, &pod("1", None, false)), vec![enqueue("ns/web")]),
            ("unchanged", pod_updated(&c, &owned("1"), &owned("1")), vec![]),
            (
                "turned ready with minReadySeconds",
                pod_updated(&c, &owned("1"), &pod("2", Some(("web", "u-web")), true)),
                vec![enqueue("ns/web"), Action::EnqueueAfter("ns/web".into(), Duration::from_secs(6))],
            ),
            (
                "deleted",
                pod_deleted(&c, &owned("1")),
                vec![Action::DeletionObserved("ns/web".into()), enqueue("ns/web")],
            ),
            ("orphan deleted", pod_deleted(&c, &pod("1", None, false)), vec![]),
        ];
        for (name, got, want) in cases {
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn nodes_wake_the_daemon_sets_they_concern() {
        let c = cache();
        let node = |rv: &str, labels: Value, ready: &str| json!({"metadata": {"name": "n", "resourceVersion": rv, "labels": labels}, "status": {"conditions": [{"type": "Ready", "status": ready, "lastHeartbeatTime": rv}]}});
        assert_eq!(node_added(&c, &node("1", json!({}), "True")), vec![enqueue("ns/web")]);
        assert_eq!(
            node_added(&c, &node("1", json!({"disk": "ssd"}), "True")),
            vec![enqueue("ns/ssd"), enqueue("ns/web")]
        );
        let cases = [
            ("a heartbeat", node("1", json!({}), "True"), node("2", json!({}), "True"), vec![]),
            (
                "labelled for ssd",
                node("1", json!({}), "True"),
                node("2", json!({"disk": "ssd"}), "True"),
                vec![enqueue("ns/ssd")],
            ),
            // Readiness alone changes no DaemonSet's answer (not-ready taints are tolerated).
            ("turned not ready", node("1", json!({}), "True"), node("2", json!({}), "False"), vec![]),
        ];
        for (name, old, cur, want) in cases {
            assert_eq!(node_updated(&c, &old, &cur), want, "{name}");
        }
        assert!(should_ignore_node_update(&node("1", json!({}), "True"), &node("2", json!({}), "True")));
        assert!(!should_ignore_node_update(&node("1", json!({}), "True"), &node("2", json!({}), "False")));
    }

    #[test]
    fn daemon_set_changes_and_history() {
        let c = cache();
        let web = c["ns/web"].clone();
        let mut recreated = web.clone();
        recreated["metadata"]["uid"] = json!("u-new");
        assert_eq!(
            ds_updated(&web, &recreated),
            vec![Action::DeleteExpectations("ns/web".into()), enqueue("ns/web"), enqueue("ns/web")]
        );
        let rev = json!({"metadata": {"name": "r", "namespace": "ns", "labels": {"app": "web"}}});
        assert_eq!(history_changed(&c, &rev, false), vec![enqueue("ns/web")]);
        assert_eq!(history_changed(&c, &rev, true), vec![]);
        let mut owned = rev.clone();
        owned["metadata"]["ownerReferences"] =
            json!([{"kind": "DaemonSet", "name": "ssd", "uid": "u-ssd", "controller": true}]);
        assert_eq!(history_changed(&c, &owned, true), vec![enqueue("ns/ssd")]);
    }
}
