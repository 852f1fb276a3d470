//! The StatefulSet controller's informer handlers (kube-controller-manager 1.32,
//! `pkg/controller/statefulset/stateful_set.go`: `addPod`, `updatePod`, `deletePod`,
//! `getStatefulSetsForPod`, `resolveControllerRef`, the set handlers; the lister's
//! `GetPodStatefulSets`). Sans-IO: a change in, the queue additions it causes out, in order.
//!
//! A pod with a controller reference concerns only the set it names (by name, kind and uid). An orphan
//! created or relabelled wakes every set of its namespace whose selector picks it, so that one adopts it;
//! an orphan's deletion concerns nobody. A pod first seen with a `deletionTimestamp` counts as deleted. A
//! pod turning ready wakes its set again `minReadySeconds` plus a second later, when it may be available.
//! Unlike the ReplicaSet controller there are no expectations: the set is synced from what the cache holds.

use std::time::Duration;

use serde_json::Value;

use super::identity::{meta, min_ready_seconds, KIND};
use crate::kcm::replicaset::pods::{controller_ref, is_deleting, is_ready, object_key};
use crate::kcm::replicaset::selector::label_selector_as_selector;

/// What the handlers read of the StatefulSet informer's cache.
pub trait Sets {
    /// The set at `namespace/name`.
    fn get(&self, key: &str) -> Option<Value>;
    /// The sets of one namespace.
    fn in_namespace(&self, namespace: &str) -> Vec<Value>;
}

/// One consequence of a change, to apply in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// `queue.Add(set key)`.
    Enqueue(String),
    /// `queue.AddAfter(set key, delay)`.
    EnqueueAfter(String, Duration),
}

fn labels(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/labels")
}

/// `resolveControllerRef`: the set `owner` names in `namespace`, if its kind is ours and its uid is the
/// one cached under that name.
fn resolve(sets: &dyn Sets, namespace: &str, owner: &Value) -> Option<Value> {
    if owner.get("kind").and_then(Value::as_str) != Some(KIND) {
        return None;
    }
    let name = owner.get("name").and_then(Value::as_str).unwrap_or("");
    let set = sets.get(&format!("{namespace}/{name}"))?;
    (meta(&set, "uid") == owner.get("uid").and_then(Value::as_str).unwrap_or("")).then_some(set)
}

/// `GetPodStatefulSets`: the sets of the pod's namespace whose non-empty selector picks it; none for a pod
/// without labels, and none at all when some set's selector does not parse (the lister's error).
pub fn pod_stateful_sets(sets: &dyn Sets, pod: &Value) -> Vec<Value> {
    if labels(pod).and_then(Value::as_object).is_none_or(|l| l.is_empty()) {
        return Vec::new();
    }
    let mut found = Vec::new();
    for set in sets.in_namespace(meta(pod, "namespace")) {
        let Ok(selector) = label_selector_as_selector(set.pointer("/spec/selector")) else { return Vec::new() };
        // A set with an empty selector would match everything; it must match nothing instead.
        if !selector.is_empty() && selector.matches(labels(pod)) {
            found.push(set);
        }
    }
    if found.len() > 1 {
        let names: Vec<&str> = found.iter().map(|s| meta(s, "name")).collect();
        tracing::warn!(pod = %object_key(pod), "user error: more than one StatefulSet is selecting pods with labels: {:?}. Sets: {names:?}", labels(pod));
    }
    found
}

fn enqueue_all(sets: Vec<Value>) -> Vec<Action> {
    sets.iter().map(|s| Action::Enqueue(object_key(s))).collect()
}

/// `addPod`.
pub fn pod_added(sets: &dyn Sets, pod: &Value) -> Vec<Action> {
    if is_deleting(pod) {
        // A restarted controller manager may first see a pod already being deleted.
        return pod_deleted(sets, pod);
    }
    if let Some(owner) = controller_ref(pod) {
        return match resolve(sets, meta(pod, "namespace"), owner) {
            Some(set) => vec![Action::Enqueue(object_key(&set))],
            None => Vec::new(),
        };
    }
    enqueue_all(pod_stateful_sets(sets, pod))
}

/// `updatePod`.
pub fn pod_updated(sets: &dyn Sets, old: &Value, cur: &Value) -> Vec<Action> {
    if meta(old, "resourceVersion") == meta(cur, "resourceVersion") {
        // A relist of an unchanged pod.
        return Vec::new();
    }
    let label_changed = labels(old) != labels(cur);
    let (cur_ref, old_ref) = (controller_ref(cur), controller_ref(old));
    let ref_changed = cur_ref != old_ref;
    let mut actions = Vec::new();
    if ref_changed {
        if let Some(set) = old_ref.and_then(|r| resolve(sets, meta(old, "namespace"), r)) {
            actions.push(Action::Enqueue(object_key(&set)));
        }
    }
    if let Some(owner) = cur_ref {
        let Some(set) = resolve(sets, meta(cur, "namespace"), owner) else { return actions };
        let key = object_key(&set);
        actions.push(Action::Enqueue(key.clone()));
        let min_ready = min_ready_seconds(&set);
        if !is_ready(old) && is_ready(cur) && min_ready > 0 {
            // A second more, against milliseconds of skew.
            let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0) + 1);
            actions.push(Action::EnqueueAfter(key, delay));
        }
        return actions;
    }
    if label_changed || ref_changed {
        actions.extend(enqueue_all(pod_stateful_sets(sets, cur)));
    }
    actions
}

/// `deletePod` (also for a tombstone, whose state may be stale).
pub fn pod_deleted(sets: &dyn Sets, pod: &Value) -> Vec<Action> {
    let Some(owner) = controller_ref(pod) else { return Vec::new() };
    match resolve(sets, meta(pod, "namespace"), owner) {
        Some(set) => vec![Action::Enqueue(object_key(&set))],
        None => Vec::new(),
    }
}

/// `enqueueStatefulSet`: every add, update and delete of a set syncs it.
pub fn set_changed(set: &Value) -> Vec<Action> {
    vec![Action::Enqueue(object_key(set))]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    impl Sets for BTreeMap<String, Value> {
        fn get(&self, key: &str) -> Option<Value> {
            BTreeMap::get(self, key).cloned()
        }
        fn in_namespace(&self, namespace: &str) -> Vec<Value> {
            self.values().filter(|s| meta(s, "namespace") == namespace).cloned().collect()
        }
    }

    fn set(name: &str, uid: &str, selector: Value, min_ready: i64) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "uid": uid}, "spec": {"selector": selector, "minReadySeconds": min_ready}})
    }

    fn cache() -> BTreeMap<String, Value> {
        [
            set("web", "u-web", json!({"matchLabels": {"app": "web"}}), 0),
            set("db", "u-db", json!({"matchLabels": {"app": "db"}}), 10),
            set(
                "also-web",
                "u-also",
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}),
                0,
            ),
            set("empty", "u-empty", json!({}), 0),
        ]
        .into_iter()
        .map(|s| (object_key(&s), s))
        .collect()
    }

    fn pod(rv: &str, labels: Value, owner: Option<(&str, &str, &str)>) -> Value {
        let mut pod = json!({"metadata": {"name": "web-0", "namespace": "ns", "resourceVersion": rv, "labels": labels}, "status": {}});
        if let Some((kind, name, uid)) = owner {
            pod["metadata"]["ownerReferences"] = json!([{"kind": kind, "name": name, "uid": uid, "controller": true}]);
        }
        pod
    }

    fn ready(mut pod: Value) -> Value {
        pod["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        pod
    }

    fn enqueue(key: &str) -> Action {
        Action::Enqueue(key.to_string())
    }

    #[test]
    fn pod_events() {
        let web = || json!({"app": "web"});
        let owned = |rv: &str| pod(rv, web(), Some(("StatefulSet", "web", "u-web")));
        let db = |rv: &str| pod(rv, json!({"app": "db"}), Some(("StatefulSet", "db", "u-db")));
        let mut deleting = owned("1");
        deleting["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        let adds = [
            ("owned", owned("1"), vec![enqueue("ns/web")]),
            ("a stale uid", pod("1", web(), Some(("StatefulSet", "web", "old"))), vec![]),
            ("another kind", pod("1", web(), Some(("ReplicaSet", "web", "u-web"))), vec![]),
            ("an orphan wakes its selectors", pod("1", web(), None), vec![enqueue("ns/also-web"), enqueue("ns/web")]),
            ("an orphan without labels", pod("1", json!({}), None), vec![]),
            ("already deleting", deleting, vec![enqueue("ns/web")]),
        ];
        for (name, p, want) in adds {
            assert_eq!(pod_added(&cache(), &p), want, "add: {name}");
        }
        let updates = [
            ("same resourceVersion", owned("1"), owned("1"), vec![]),
            ("owned", owned("1"), owned("2"), vec![enqueue("ns/web")]),
            ("turned ready, minReadySeconds 0", owned("1"), ready(owned("2")), vec![enqueue("ns/web")]),
            (
                "turned ready, minReadySeconds 10",
                db("1"),
                ready(db("2")),
                vec![enqueue("ns/db"), Action::EnqueueAfter("ns/db".into(), Duration::from_secs(11))],
            ),
            (
                "released",
                owned("1"),
                pod("2", web(), None),
                vec![enqueue("ns/web"), enqueue("ns/also-web"), enqueue("ns/web")],
            ),
            ("an orphan unchanged", pod("1", web(), None), pod("2", web(), None), vec![]),
        ];
        for (name, old, cur, want) in updates {
            assert_eq!(pod_updated(&cache(), &old, &cur), want, "update: {name}");
        }
        assert_eq!(pod_deleted(&cache(), &owned("1")), vec![enqueue("ns/web")]);
        assert_eq!(pod_deleted(&cache(), &pod("1", web(), None)), vec![]);
        assert_eq!(set_changed(&cache()["ns/web"]), vec![enqueue("ns/web")]);
    }

    #[test]
    fn an_invalid_selector_hides_every_set() {
        let mut sets = cache();
        let broken = set("broken", "u-b", json!({"matchExpressions": [{"key": "app", "operator": "Bad"}]}), 0);
        sets.insert(object_key(&broken), broken);
        assert_eq!(pod_added(&sets, &pod("1", json!({"app": "web"}), None)), vec![]);
    }
}
