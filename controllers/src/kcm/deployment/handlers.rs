//! The Deployment controller's informer handlers and ReplicaSet ownership (kube-controller-manager 1.32,
//! `pkg/controller/deployment/deployment_controller.go`: `addDeployment`, `updateDeployment`,
//! `deleteDeployment`, `addReplicaSet`, `updateReplicaSet`, `deleteReplicaSet`, `deletePod`,
//! `getDeploymentForPod`, `resolveControllerRef`; `util.GetDeploymentsForReplicaSet`;
//! `controller_ref_manager.go`'s `ReplicaSetControllerRefManager` patches). Sans-IO: a change in, the
//! Deployments to sync out.
//!
//! A ReplicaSet with a controller reference concerns only the Deployment it names; an orphan created or
//! relabelled wakes every Deployment of its namespace whose selector picks it, so that one adopts it.
//! A deleted pod wakes a `Recreate` Deployment once none of its pods is left, for that strategy waits for
//! the old pods to be gone. Upstream counts those pods over a live list of ReplicaSets; here the informer
//! caches serve, as everywhere else in the controller.

use serde_json::{json, Value};

use super::util::{meta, strategy_type, RECREATE};
use crate::kcm::replicaset::pods::{controller_ref, is_deleting, object_key};
use crate::kcm::replicaset::selector::label_selector_as_selector;

/// The kind a Deployment owns its ReplicaSets as, and its group version.
pub const KIND: &str = "Deployment";
pub const API_VERSION: &str = "apps/v1";

/// What the handlers read of the informers' caches.
pub trait Caches {
    /// The Deployment at `namespace/name`.
    fn deployment(&self, key: &str) -> Option<Value>;
    /// The Deployments of one namespace.
    fn deployments_in(&self, namespace: &str) -> Vec<Value>;
    /// The ReplicaSet at `namespace/name`.
    fn replica_set(&self, key: &str) -> Option<Value>;
    /// The ReplicaSets of one namespace.
    fn replica_sets_in(&self, namespace: &str) -> Vec<Value>;
    /// The pods of one namespace.
    fn pods_in(&self, namespace: &str) -> Vec<Value>;
}

/// `metav1.NewControllerRef(d, apps/v1 Deployment)`.
pub fn new_controller_ref(d: &Value) -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND, "name": meta(d, "name"), "uid": meta(d, "uid"), "controller": true, "blockOwnerDeletion": true})
}

/// `AdoptReplicaSet`'s strategic merge patch (owner references merge by uid; the uid guards against a
/// ReplicaSet of the same name made since).
pub fn adopt_patch(d: &Value, rs: &Value) -> Value {
    json!({"metadata": {"ownerReferences": [new_controller_ref(d)], "uid": meta(rs, "uid")}})
}

/// `resolveControllerRef`: the Deployment `owner` names in `namespace`, if its kind is ours and its uid
/// is the cached one's.
fn resolve(caches: &dyn Caches, namespace: &str, owner: &Value) -> Option<Value> {
    if owner.get("kind").and_then(Value::as_str) != Some(KIND) {
        return None;
    }
    let name = owner.get("name").and_then(Value::as_str).unwrap_or("");
    let d = caches.deployment(&format!("{namespace}/{name}"))?;
    (meta(&d, "uid") == owner.get("uid").and_then(Value::as_str).unwrap_or("")).then_some(d)
}

/// Whether `d`'s selector (valid and not empty) picks an object with `labels`.
pub fn selects(d: &Value, labels: Option<&Value>) -> bool {
    match label_selector_as_selector(d.pointer("/spec/selector")) {
        // A Deployment with an empty selector must match nothing, not everything.
        Ok(selector) => !selector.is_empty() && selector.matches(labels),
        Err(_) => false,
    }
}

/// `GetDeploymentsForReplicaSet`: the Deployments of the ReplicaSet's namespace that select it (none for
/// a ReplicaSet without labels).
pub fn deployments_for_replica_set(caches: &dyn Caches, rs: &Value) -> Vec<Value> {
    let labels = rs.pointer("/metadata/labels");
    if labels.and_then(Value::as_object).is_none_or(|l| l.is_empty()) {
        return Vec::new();
    }
    let found: Vec<Value> =
        caches.deployments_in(meta(rs, "namespace")).into_iter().filter(|d| selects(d, labels)).collect();
    if found.len() > 1 {
        tracing::debug!(rs = %object_key(rs), "user error! more than one deployment is selecting replica set");
    }
    found
}

/// `addDeployment`, `updateDeployment`, `deleteDeployment`: the Deployment itself syncs.
pub fn deployment_changed(d: &Value) -> Vec<String> {
    vec![object_key(d)]
}

/// `addReplicaSet`.
pub fn rs_added(caches: &dyn Caches, rs: &Value) -> Vec<String> {
    if is_deleting(rs) {
        // Seen for the first time while being deleted (a restarted controller manager).
        return rs_deleted(caches, rs);
    }
    if let Some(owner) = controller_ref(rs) {
        return resolve(caches, meta(rs, "namespace"), owner).iter().map(object_key).collect();
    }
    deployments_for_replica_set(caches, rs).iter().map(object_key).collect()
}

/// `updateReplicaSet`.
pub fn rs_updated(caches: &dyn Caches, old: &Value, cur: &Value) -> Vec<String> {
    if meta(old, "resourceVersion") == meta(cur, "resourceVersion") {
        return Vec::new();
    }
    let (cur_ref, old_ref) = (controller_ref(cur), controller_ref(old));
    let ref_changed = cur_ref != old_ref;
    let mut keys = Vec::new();
    if ref_changed {
        if let Some(d) = old_ref.and_then(|r| resolve(caches, meta(old, "namespace"), r)) {
            keys.push(object_key(&d));
        }
    }
    if let Some(owner) = cur_ref {
        keys.extend(resolve(caches, meta(cur, "namespace"), owner).iter().map(object_key));
        return keys;
    }
    let label_changed = old.pointer("/metadata/labels") != cur.pointer("/metadata/labels");
    if label_changed || ref_changed {
        keys.extend(deployments_for_replica_set(caches, cur).iter().map(object_key));
    }
    keys
}

/// `deleteReplicaSet`: only an owned ReplicaSet's deletion concerns anybody.
pub fn rs_deleted(caches: &dyn Caches, rs: &Value) -> Vec<String> {
    let Some(owner) = controller_ref(rs) else { return Vec::new() };
    resolve(caches, meta(rs, "namespace"), owner).iter().map(object_key).collect()
}

/// `getDeploymentForPod`: the Deployment owning the ReplicaSet owning `pod`.
fn deployment_for_pod(caches: &dyn Caches, pod: &Value) -> Option<Value> {
    let owner = controller_ref(pod)?;
    if owner.get("kind").and_then(Value::as_str) != Some("ReplicaSet") {
        return None;
    }
    let name = owner.get("name").and_then(Value::as_str).unwrap_or("");
    let rs = caches.replica_set(&format!("{}/{name}", meta(pod, "namespace")))?;
    if meta(&rs, "uid") != owner.get("uid").and_then(Value::as_str).unwrap_or("") {
        return None;
    }
    resolve(caches, meta(&rs, "namespace"), controller_ref(&rs)?)
}

/// The pods of `d`'s ReplicaSets (`ListReplicaSets` then `getPodMapForDeployment`): those its selector
/// picks whose controller is one of the ReplicaSets it selects and controls.
fn pods_of(caches: &dyn Caches, d: &Value) -> usize {
    let ns = meta(d, "namespace");
    let owned: Vec<String> = caches
        .replica_sets_in(ns)
        .iter()
        .filter(|rs| selects(d, rs.pointer("/metadata/labels")))
        .filter(|rs| controller_ref(rs).and_then(|r| r.get("uid")).and_then(Value::as_str) == Some(meta(d, "uid")))
        .map(|rs| meta(rs, "uid").to_string())
        .collect();
    caches
        .pods_in(ns)
        .iter()
        .filter(|pod| selects(d, pod.pointer("/metadata/labels")))
        .filter(|pod| {
            controller_ref(pod)
                .and_then(|r| r.get("uid"))
                .and_then(Value::as_str)
                .is_some_and(|uid| owned.iter().any(|o| o == uid))
        })
        .count()
}

/// `deletePod`: a `Recreate` Deployment syncs once its last pod is gone. The deleted pod is already out
/// of the cache when this runs.
pub fn pod_deleted(caches: &dyn Caches, pod: &Value) -> Vec<String> {
    match deployment_for_pod(caches, pod) {
        Some(d) if strategy_type(&d) == RECREATE && pods_of(caches, &d) == 0 => vec![object_key(&d)],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Default)]
    struct Fake {
        deployments: BTreeMap<String, Value>,
        rss: BTreeMap<String, Value>,
        pods: Vec<Value>,
    }

    impl Caches for Fake {
        fn deployment(&self, key: &str) -> Option<Value> {
            self.deployments.get(key).cloned()
        }
        fn deployments_in(&self, ns: &str) -> Vec<Value> {
            self.deployments.values().filter(|d| meta(d, "namespace") == ns).cloned().collect()
        }
        fn replica_set(&self, key: &str) -> Option<Value> {
            self.rss.get(key).cloned()
        }
        fn replica_sets_in(&self, ns: &str) -> Vec<Value> {
            self.rss.values().filter(|r| meta(r, "namespace") == ns).cloned().collect()
        }
        fn pods_in(&self, ns: &str) -> Vec<Value> {
            self.pods.iter().filter(|p| meta(p, "namespace") == ns).cloned().collect()
        }
    }

    fn deployment(name: &str, app: &str, strategy: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}")},
               "spec": {"selector": {"matchLabels": {"app": app}}, "strategy": {"type": strategy}}})
    }

    fn owned(kind: &str, name: &str, uid: &str) -> Value {
        json!([{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": true}])
    }

    fn rs(name: &str, rv: &str, app: &str, owner: Option<(&str, &str)>) -> Value {
        let mut rs = json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}"), "resourceVersion": rv, "labels": {"app": app}}});
        if let Some((kind, d)) = owner {
            rs["metadata"]["ownerReferences"] = owned(kind, d, &format!("u-{d}"));
        }
        rs
    }

    fn fake() -> Fake {
        let mut f = Fake::default();
        for d in [
            deployment("web", "web", "RollingUpdate"),
            deployment("also", "web", "RollingUpdate"),
            deployment("db", "db", "Recreate"),
        ] {
            f.deployments.insert(object_key(&d), d);
        }
        let db_rs = rs("db-1", "1", "db", Some(("Deployment", "db")));
        f.rss.insert(object_key(&db_rs), db_rs);
        f
    }

    fn keys(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn replica_set_changes() {
        let f = fake();
        let cases = [
            ("owned", rs_added(&f, &rs("x", "1", "web", Some(("Deployment", "web")))), keys(&["ns/web"])),
            ("owned by another kind", rs_added(&f, &rs("x", "1", "web", Some(("StatefulSet", "web")))), keys(&[])),
            (
                "an orphan wakes every selecting Deployment",
                rs_added(&f, &rs("x", "1", "web", None)),
                keys(&["ns/also", "ns/web"]),
            ),
            ("an unchanged resync", rs_updated(&f, &rs("x", "1", "web", None), &rs("x", "1", "db", None)), keys(&[])),
            (
                "released: the old owner, then adopters",
                rs_updated(&f, &rs("x", "1", "web", Some(("Deployment", "web"))), &rs("x", "2", "web", None)),
                keys(&["ns/web", "ns/also", "ns/web"]),
            ),
            (
                "an orphan relabelled",
                rs_updated(&f, &rs("x", "1", "none", None), &rs("x", "2", "db", None)),
                keys(&["ns/db"]),
            ),
            (
                "an orphan otherwise changed",
                rs_updated(&f, &rs("x", "1", "db", None), &rs("x", "2", "db", None)),
                keys(&[]),
            ),
            ("deleted, owned", rs_deleted(&f, &rs("x", "1", "web", Some(("Deployment", "web")))), keys(&["ns/web"])),
            ("deleted, an orphan", rs_deleted(&f, &rs("x", "1", "web", None)), keys(&[])),
        ];
        for (name, got, want) in cases {
            assert_eq!(got, want, "{name}");
        }
        let mut deleting = rs("x", "1", "web", Some(("Deployment", "web")));
        deleting["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        assert_eq!(rs_added(&f, &deleting), keys(&["ns/web"]));
        let mut unlabelled = rs("x", "1", "web", None);
        unlabelled["metadata"]["labels"] = json!({});
        assert!(rs_added(&f, &unlabelled).is_empty());
    }

    #[test]
    fn a_recreate_deployment_wakes_when_its_last_pod_is_gone() {
        let pod = |name: &str| json!({"metadata": {"name": name, "namespace": "ns", "labels": {"app": "db"}, "ownerReferences": owned("ReplicaSet", "db-1", "u-db-1")}});
        let mut f = fake();
        assert_eq!(pod_deleted(&f, &pod("gone")), keys(&["ns/db"]));
        f.pods.push(pod("left"));
        assert!(pod_deleted(&f, &pod("gone")).is_empty(), "a pod is left");
        // A rolling Deployment's pods never wake it on deletion.
        let web_rs = rs("web-1", "1", "web", Some(("Deployment", "web")));
        f.rss.insert(object_key(&web_rs), web_rs);
        let web_pod = json!({"metadata": {"namespace": "ns", "labels": {"app": "web"}, "ownerReferences": owned("ReplicaSet", "web-1", "u-web-1")}});
        assert!(pod_deleted(&f, &web_pod).is_empty());
    }

    #[test]
    fn adoption_patches() {
        let d = deployment("web", "web", "RollingUpdate");
        assert_eq!(
            adopt_patch(&d, &json!({"metadata": {"uid": "rs-uid"}})),
            json!({"metadata": {"uid": "rs-uid", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u-web", "controller": true, "blockOwnerDeletion": true}]}})
        );
        assert!(selects(&d, Some(&json!({"app": "web"}))));
        let mut everything = d.clone();
        everything["spec"]["selector"] = json!({});
        assert!(!selects(&everything, Some(&json!({"app": "web"}))));
    }
}
