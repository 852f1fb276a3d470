//! The ReplicaSet controller's informer handlers (kube-controller-manager 1.32,
//! `pkg/controller/replicaset/replica_set.go`: `addPod`, `updatePod`, `deletePod`, `addRS`, `updateRS`,
//! `deleteRS`, `resolveControllerRef`, and the lister's `GetPodReplicaSets`). Sans-IO: a change in, the
//! expectation updates and queue additions it causes out, in order.
//!
//! A pod with a controller reference concerns only the ReplicaSet it names (by name, kind and uid): its
//! creation and deletion are counted against that ReplicaSet's expectations and the ReplicaSet is synced.
//! An orphan created or relabelled wakes every ReplicaSet of its namespace whose selector picks it, so that
//! one adopts it; an orphan's deletion concerns nobody. A pod given a `deletionTimestamp` counts as deleted
//! at once. A pod turning ready wakes its ReplicaSet again `minReadySeconds` plus a second later, when it
//! may have become available.

use std::time::Duration;

use serde_json::Value;

use super::pods::{controller_ref, is_deleting, is_ready, object_key};
use super::refs::KIND;
use super::selector::label_selector_as_selector;
use super::status::min_ready_seconds;

/// What the handlers read of the ReplicaSet informer's cache.
pub trait ReplicaSets {
    /// The ReplicaSet at `namespace/name`.
    fn get(&self, key: &str) -> Option<Value>;
    /// The ReplicaSets of one namespace.
    fn in_namespace(&self, namespace: &str) -> Vec<Value>;
}

/// One consequence of a change, to apply in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// `expectations.CreationObserved(rs key)`.
    CreationObserved(String),
    /// `expectations.DeletionObserved(rs key, pod key)`.
    DeletionObserved { rs: String, pod: String },
    /// `expectations.DeleteExpectations(rs key)`.
    DeleteExpectations(String),
    /// `queue.Add(rs key)`.
    Enqueue(String),
    /// `queue.AddAfter(rs key, delay)`.
    EnqueueAfter(String, Duration),
}

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

fn labels(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/labels")
}

/// `resolveControllerRef`: the ReplicaSet `owner` names in `namespace`, if its kind is ours and its uid
/// is the one cached under that name.
fn resolve(rss: &dyn ReplicaSets, namespace: &str, owner: &Value) -> Option<Value> {
    if owner.get("kind").and_then(Value::as_str) != Some(KIND) {
        return None;
    }
    let name = owner.get("name").and_then(Value::as_str).unwrap_or("");
    let rs = rss.get(&format!("{namespace}/{name}"))?;
    (meta(&rs, "uid") == owner.get("uid").and_then(Value::as_str).unwrap_or("")).then_some(rs)
}

/// `GetPodReplicaSets`: the ReplicaSets of the pod's namespace whose valid, non-empty selector picks it
/// (none for a pod without labels).
pub fn pod_replica_sets(rss: &dyn ReplicaSets, pod: &Value) -> Vec<Value> {
    if labels(pod).and_then(Value::as_object).is_none_or(|l| l.is_empty()) {
        return Vec::new();
    }
    let found: Vec<Value> = rss
        .in_namespace(meta(pod, "namespace"))
        .into_iter()
        .filter(|rs| match label_selector_as_selector(rs.pointer("/spec/selector")) {
            // A ReplicaSet with an empty selector would match everything; it must match nothing instead.
            Ok(selector) => !selector.is_empty() && selector.matches(labels(pod)),
            Err(_) => false,
        })
        .collect();
    if found.len() > 1 {
        tracing::warn!(pod = %object_key(pod), "user error! more than one ReplicaSet is selecting pods with labels: {:?}", labels(pod));
    }
    found
}

/// `addPod`.
pub fn pod_added(rss: &dyn ReplicaSets, pod: &Value) -> Vec<Action> {
    if is_deleting(pod) {
        // A pod first seen already being deleted (a restarted controller manager) is no creation.
        return pod_deleted(rss, pod);
    }
    if let Some(owner) = controller_ref(pod) {
        return match resolve(rss, meta(pod, "namespace"), owner) {
            Some(rs) => vec![Action::CreationObserved(object_key(&rs)), Action::Enqueue(object_key(&rs))],
            None => Vec::new(),
        };
    }
    // An orphan: every ReplicaSet that might adopt it syncs; nobody was waiting for its creation.
    pod_replica_sets(rss, pod).iter().map(|rs| Action::Enqueue(object_key(rs))).collect()
}

/// `updatePod`.
pub fn pod_updated(rss: &dyn ReplicaSets, old: &Value, cur: &Value) -> Vec<Action> {
    if meta(old, "resourceVersion") == meta(cur, "resourceVersion") {
        // A resync (or a relist) of an unchanged pod.
        return Vec::new();
    }
    let label_changed = labels(old) != labels(cur);
    if is_deleting(cur) {
        // A graceful deletion: the ReplicaSet should replace the pod now, not when it is finally gone.
        let mut actions = pod_deleted(rss, cur);
        if label_changed {
            actions.extend(pod_deleted(rss, old));
        }
        return actions;
    }
    let (cur_ref, old_ref) = (controller_ref(cur), controller_ref(old));
    let ref_changed = cur_ref != old_ref;
    let mut actions = Vec::new();
    if ref_changed {
        if let Some(rs) = old_ref.and_then(|r| resolve(rss, meta(old, "namespace"), r)) {
            actions.push(Action::Enqueue(object_key(&rs)));
        }
    }
    if let Some(owner) = cur_ref {
        let Some(rs) = resolve(rss, meta(cur, "namespace"), owner) else { return actions };
        let key = object_key(&rs);
        actions.push(Action::Enqueue(key.clone()));
        let min_ready = min_ready_seconds(&rs);
        if !is_ready(old) && is_ready(cur) && min_ready > 0 {
            // A second more, against milliseconds of skew.
            let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0) + 1);
            actions.push(Action::EnqueueAfter(key, delay));
        }
        return actions;
    }
    if label_changed || ref_changed {
        actions.extend(pod_replica_sets(rss, cur).iter().map(|rs| Action::Enqueue(object_key(rs))));
    }
    actions
}

/// `deletePod` (also for a tombstone, whose state may be stale).
pub fn pod_deleted(rss: &dyn ReplicaSets, pod: &Value) -> Vec<Action> {
    let Some(owner) = controller_ref(pod) else { return Vec::new() };
    let Some(rs) = resolve(rss, meta(pod, "namespace"), owner) else { return Vec::new() };
    let key = object_key(&rs);
    vec![Action::DeletionObserved { rs: key.clone(), pod: object_key(pod) }, Action::Enqueue(key)]
}

/// `addRS`.
pub fn rs_added(rs: &Value) -> Vec<Action> {
    vec![Action::Enqueue(object_key(rs))]
}

/// `updateRS`: a ReplicaSet replaced under the same name (a new uid) is first handled as deleted.
pub fn rs_updated(old: &Value, cur: &Value) -> Vec<Action> {
    let mut actions = Vec::new();
    if meta(old, "uid") != meta(cur, "uid") {
        actions.extend(rs_deleted(old));
    }
    actions.push(Action::Enqueue(object_key(cur)));
    actions
}

/// `deleteRS`: its expectations go, so that a new ReplicaSet of the same name starts clean.
pub fn rs_deleted(rs: &Value) -> Vec<Action> {
    let key = object_key(rs);
    vec![Action::DeleteExpectations(key.clone()), Action::Enqueue(key)]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    impl ReplicaSets for BTreeMap<String, Value> {
        fn get(&self, key: &str) -> Option<Value> {
            BTreeMap::get(self, key).cloned()
        }
        fn in_namespace(&self, namespace: &str) -> Vec<Value> {
            self.values().filter(|rs| meta(rs, "namespace") == namespace).cloned().collect()
        }
    }

    fn rs(name: &str, uid: &str, selector: Value, min_ready: i64) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "uid": uid}, "spec": {"selector": selector, "minReadySeconds": min_ready}})
    }

    fn cache() -> BTreeMap<String, Value> {
        [
            rs("web", "u-web", json!({"matchLabels": {"app": "web"}}), 0),
            rs("slow", "u-slow", json!({"matchLabels": {"app": "slow"}}), 10),
            rs(
                "also-web",
                "u-also",
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}),
                0,
            ),
            rs("empty", "u-empty", json!({}), 0),
            rs("broken", "u-broken", json!({"matchExpressions": [{"key": "app", "operator": "Bad"}]}), 0),
        ]
        .into_iter()
        .map(|rs| (object_key(&rs), rs))
        .collect()
    }

    fn pod(rv: &str, labels: Value, owner: Option<(&str, &str, &str)>) -> Value {
        let mut pod = json!({"metadata": {"name": "p", "namespace": "ns", "resourceVersion": rv, "labels": labels}, "status": {}});
        if let Some((kind, name, uid)) = owner {
            pod["metadata"]["ownerReferences"] = json!([{"kind": kind, "name": name, "uid": uid, "controller": true}]);
        }
        pod
    }

    fn deleting(mut pod: Value) -> Value {
        pod["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
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
    fn pod_additions() {
        let web = || json!({"app": "web"});
        let cases = [
            (
                "owned",
                pod("1", web(), Some(("ReplicaSet", "web", "u-web"))),
                vec![Action::CreationObserved("ns/web".into()), enqueue("ns/web")],
            ),
            ("owned by a stale uid", pod("1", web(), Some(("ReplicaSet", "web", "old"))), vec![]),
            ("owned by another kind", pod("1", web(), Some(("StatefulSet", "web", "u-web"))), vec![]),
            (
                "an orphan wakes every selecting ReplicaSet",
                pod("1", web(), None),
                vec![enqueue("ns/also-web"), enqueue("ns/web")],
            ),
            ("an orphan without labels wakes nobody", pod("1", json!({}), None), vec![]),
            (
                "a pod already being deleted counts as deleted",
                deleting(pod("1", web(), Some(("ReplicaSet", "web", "u-web")))),
                vec![Action::DeletionObserved { rs: "ns/web".into(), pod: "ns/p".into() }, enqueue("ns/web")],
            ),
        ];
        for (name, pod, want) in cases {
            assert_eq!(pod_added(&cache(), &pod), want, "{name}");
        }
    }

    #[test]
    fn pod_updates() {
        let web = || json!({"app": "web"});
        let owned = |rv: &str| pod(rv, web(), Some(("ReplicaSet", "web", "u-web")));
        let slow = |rv: &str| pod(rv, json!({"app": "slow"}), Some(("ReplicaSet", "slow", "u-slow")));
        let cases = [
            ("same resourceVersion", owned("1"), owned("1"), vec![]),
            ("owned", owned("1"), owned("2"), vec![enqueue("ns/web")]),
            (
                "deletion timestamp set",
                owned("1"),
                deleting(owned("2")),
                vec![Action::DeletionObserved { rs: "ns/web".into(), pod: "ns/p".into() }, enqueue("ns/web")],
            ),
            ("turned ready without minReadySeconds", owned("1"), ready(owned("2")), vec![enqueue("ns/web")]),
            (
                "turned ready with minReadySeconds",
                slow("1"),
                ready(slow("2")),
                vec![enqueue("ns/slow"), Action::EnqueueAfter("ns/slow".into(), Duration::from_secs(11))],
            ),
            ("already ready", ready(slow("1")), ready(slow("2")), vec![enqueue("ns/slow")]),
            (
                "released: the old owner syncs, then adopters",
                owned("1"),
                pod("2", web(), None),
                vec![enqueue("ns/web"), enqueue("ns/also-web"), enqueue("ns/web")],
            ),
            (
                "an orphan relabelled",
                pod("1", json!({"app": "x"}), None),
                pod("2", web(), None),
                vec![enqueue("ns/also-web"), enqueue("ns/web")],
            ),
            ("an orphan otherwise changed", pod("1", web(), None), pod("2", web(), None), vec![]),
            (
                "owner changed",
                slow("1"),
                pod("2", web(), Some(("ReplicaSet", "web", "u-web"))),
                vec![enqueue("ns/slow"), enqueue("ns/web")],
            ),
        ];
        for (name, old, cur, want) in cases {
            assert_eq!(pod_updated(&cache(), &old, &cur), want, "{name}");
        }
    }

    #[test]
    fn pod_deletions_and_replica_set_changes() {
        let owned = pod("1", json!({"app": "web"}), Some(("ReplicaSet", "web", "u-web")));
        assert_eq!(
            pod_deleted(&cache(), &owned),
            vec![Action::DeletionObserved { rs: "ns/web".into(), pod: "ns/p".into() }, enqueue("ns/web")]
        );
        assert_eq!(
            pod_deleted(&cache(), &pod("1", json!({"app": "web"}), None)),
            vec![],
            "an orphan's deletion concerns nobody"
        );

        let web = cache()["ns/web"].clone();
        assert_eq!(rs_added(&web), vec![enqueue("ns/web")]);
        assert_eq!(rs_updated(&web, &web), vec![enqueue("ns/web")]);
        let mut recreated = web.clone();
        recreated["metadata"]["uid"] = json!("u-new");
        assert_eq!(
            rs_updated(&web, &recreated),
            vec![Action::DeleteExpectations("ns/web".into()), enqueue("ns/web"), enqueue("ns/web")]
        );
        assert_eq!(rs_deleted(&web), vec![Action::DeleteExpectations("ns/web".into()), enqueue("ns/web")]);
    }
}
