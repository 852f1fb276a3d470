//! A DaemonSet's ControllerRevisions, sans-IO (kube-controller-manager 1.32, `pkg/controller/daemon/update.go`
//! `getPatch`, `Match`, `snapshot`'s revision, `constructHistory`'s split, `dedupCurHistories`' choice,
//! `cleanupHistory`'s choice, `maxRevision`; `pkg/controller/controller_utils.go` `ComputeHash`).
//!
//! The revision's data is the same patch a StatefulSet's holds, `{"spec":{"template":{...,"$patch":
//! "replace"}}}` in Go's JSON, so the statefulset module's [`patch`] and [`go_json`] make its bytes, and a
//! revision is current when its bytes are the DaemonSet's. Unlike a StatefulSet's, the name and the
//! `controller-revision-hash` label use `ComputeHash` over the pod template and `status.collisionCount`
//! (FNV-1a, the Deployment's pod-template-hash), and the name is `<ds>-<hash>` without truncation.

use serde_json::{json, Map, Value};

use super::eligibility::HASH_LABEL;
use crate::kcm::deployment::hash::compute_hash;
use crate::kcm::statefulset::revision::{data_bytes, go_json, number, patch};

/// `controllerKind`.
pub const KIND: &str = "DaemonSet";
/// The DaemonSet's `apiVersion`.
pub const API_VERSION: &str = "apps/v1";

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// `metav1.NewControllerRef(ds, apps/v1 DaemonSet)`.
pub fn controller_ref(ds: &Value) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": meta(ds, "name"),
        "uid": meta(ds, "uid"),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// `ownerRefControllerPatch`: the strategic merge patch adopting `obj` (owner references merge by uid).
pub fn adopt_patch(ds: &Value, obj: &Value) -> Value {
    json!({"metadata": {"ownerReferences": [controller_ref(ds)], "uid": meta(obj, "uid")}})
}

/// `status.collisionCount`, when set.
pub fn collision_count(ds: &Value) -> Option<i32> {
    ds.pointer("/status/collisionCount").and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok())
}

/// The hash the current revision is named and labelled with.
pub fn template_hash(ds: &Value) -> String {
    compute_hash(ds.pointer("/spec/template"), collision_count(ds))
}

/// `getPatch` in Go's JSON bytes.
pub fn patch_bytes(ds: &Value) -> String {
    go_json(&patch(ds))
}

/// `Match`: the revision holds the DaemonSet's current template.
pub fn matches(ds: &Value, revision: &Value) -> bool {
    data_bytes(revision) == patch_bytes(ds)
}

/// The revision's `controller-revision-hash` label.
pub fn revision_hash(revision: &Value) -> &str {
    revision.pointer("/metadata/labels").and_then(|l| l.get(HASH_LABEL)).and_then(Value::as_str).unwrap_or("")
}

/// `snapshot`'s ControllerRevision: revision `number` of the current template, owned by the DaemonSet.
pub fn snapshot(ds: &Value, number: i64) -> Value {
    let hash = template_hash(ds);
    let mut labels =
        ds.pointer("/spec/template/metadata/labels").and_then(Value::as_object).cloned().unwrap_or_default();
    labels.insert(HASH_LABEL.into(), json!(hash));
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(format!("{}-{hash}", meta(ds, "name"))));
    metadata.insert("namespace".into(), json!(meta(ds, "namespace")));
    metadata.insert("labels".into(), Value::Object(labels));
    if let Some(a) = ds.pointer("/metadata/annotations").filter(|a| a.as_object().is_some_and(|m| !m.is_empty())) {
        metadata.insert("annotations".into(), a.clone());
    }
    metadata.insert("ownerReferences".into(), json!([controller_ref(ds)]));
    json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata, "data": patch(ds), "revision": number})
}

/// `maxRevision`: 0 for none.
pub fn max_revision(revisions: &[Value]) -> i64 {
    revisions.iter().map(number).max().unwrap_or(0)
}

/// `dedupCurHistories`' keeper: the current revision with the highest number (the last of equals).
pub fn keeper(current: &[Value]) -> Option<&Value> {
    let mut best: Option<&Value> = None;
    for revision in current {
        if best.is_none_or(|b| number(revision) >= number(b)) {
            best = Some(revision);
        }
    }
    best
}

/// `cleanupHistory`'s choice: beyond `revisionHistoryLimit` (default 10), the lowest-numbered old revisions
/// whose hash no pod carries.
pub fn history_to_delete(ds: &Value, old: &[Value], live_hashes: &[&str]) -> Vec<String> {
    let limit = ds.pointer("/spec/revisionHistoryLimit").and_then(Value::as_i64).unwrap_or(10);
    let mut to_kill = i64::try_from(old.len()).unwrap_or(i64::MAX) - limit;
    let mut sorted: Vec<&Value> = old.iter().collect();
    sorted.sort_by_key(|r| number(r));
    let mut doomed = Vec::new();
    for revision in sorted {
        if to_kill <= 0 {
            break;
        }
        if live_hashes.contains(&revision_hash(revision)) {
            continue;
        }
        doomed.push(meta(revision, "name").to_string());
        to_kill -= 1;
    }
    doomed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(image: &str) -> Value {
        json!({
            "metadata": {"name": "d", "namespace": "ns", "uid": "u1", "annotations": {"a": "b"}},
            "spec": {"template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": image}]}}},
        })
    }

    #[test]
    fn snapshots_are_named_by_the_template_hash() {
        let d = ds("nginx:1");
        let rev = snapshot(&d, 3);
        let hash = template_hash(&d);
        assert_eq!(rev["metadata"]["name"], format!("d-{hash}"));
        assert_eq!(rev["metadata"]["labels"], json!({"app": "d", HASH_LABEL: hash}));
        assert_eq!(rev["metadata"]["annotations"], json!({"a": "b"}));
        assert_eq!(rev["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
        assert_eq!(rev["revision"], 3);
        assert_eq!(rev["data"]["spec"]["template"]["$patch"], "replace");
        assert!(matches(&d, &rev));
        assert!(!matches(&ds("nginx:2"), &rev));
        assert_ne!(template_hash(&ds("nginx:2")), hash);
        let mut bumped = d.clone();
        bumped["status"] = json!({"collisionCount": 1});
        assert_ne!(template_hash(&bumped), hash, "a collision renames the revision");
    }

    fn rev(name: &str, number: i64, hash: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {HASH_LABEL: hash}}, "revision": number})
    }

    #[test]
    fn old_history_goes_oldest_first_unless_live() {
        let old = vec![rev("r3", 3, "h3"), rev("r1", 1, "h1"), rev("r2", 2, "h2"), rev("r4", 4, "h4")];
        let mut d = ds("x");
        let cases = [
            (2, vec![], vec!["r1", "r2"]),
            (2, vec!["h1"], vec!["r2", "r3"]),
            (4, vec![], vec![]),
            (0, vec!["h2"], vec!["r1", "r3", "r4"]),
        ];
        for (limit, live, want) in cases {
            d["spec"]["revisionHistoryLimit"] = json!(limit);
            assert_eq!(history_to_delete(&d, &old, &live), want, "limit {limit}, live {live:?}");
        }
        assert_eq!(max_revision(&old), 4);
        assert_eq!(max_revision(&[]), 0);
        let current = [rev("a", 2, "x"), rev("b", 5, "x"), rev("c", 5, "x")];
        assert_eq!(keeper(&current).map(|r| r["metadata"]["name"].clone()), Some(json!("c")));
    }
}
