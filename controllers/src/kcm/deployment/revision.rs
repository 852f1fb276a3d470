//! A Deployment's revisions and the annotations it keeps on its ReplicaSets (kube-controller-manager 1.32,
//! `pkg/controller/deployment/util/deployment_util.go`: `Revision`, `MaxRevision`, `LastRevision`,
//! `SetNewReplicaSetAnnotations`, `copyDeploymentAnnotationsToReplicaSet`, `SetDeploymentAnnotationsTo`,
//! `SetReplicasAnnotations`, `ReplicasAnnotationsNeedUpdate`, `SetDeploymentRevision`, `EqualIgnoreHash`,
//! `FindNewReplicaSet`, `FindOldReplicaSets`, `SetFromReplicaSetTemplate`, `ReplicaSetsByRevision`;
//! `pkg/util/labels`: `CloneAndAddLabel`, `CloneSelectorAndAddLabel`). Sans-IO.
//!
//! The new ReplicaSet is the oldest whose pod template equals the Deployment's, the `pod-template-hash`
//! label aside; every other one it owns is old. Each ReplicaSet carries the revision it last served; the
//! new one is renumbered past every old one, and a ReplicaSet that comes back (a rollback) keeps its
//! earlier numbers in `revision-history`, cut to 2000 characters.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::util::{by_creation, meta, POD_TEMPLATE_HASH_LABEL};
pub use super::util::{DESIRED_REPLICAS, MAX_REPLICAS};

/// `RevisionAnnotation`.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// `RevisionHistoryAnnotation`.
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// `v1.LastAppliedConfigAnnotation`.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// `apps.DeprecatedRollbackTo`: the round-tripped `spec.rollbackTo` of the old API versions.
pub const DEPRECATED_ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";
/// `maxRevHistoryLengthInChars`.
pub const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

/// The annotations never copied between a Deployment and its ReplicaSets (`annotationsToSkip`).
const SKIPPED: [&str; 6] =
    [LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, DEPRECATED_ROLLBACK_TO];

fn skip_copy(key: &str) -> bool {
    SKIPPED.contains(&key)
}

/// The object's annotations (empty when absent).
pub fn annotations(obj: &Value) -> Map<String, Value> {
    obj.pointer("/metadata/annotations").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// One annotation.
pub fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations").and_then(|a| a.get(key)).and_then(Value::as_str)
}

/// The object's annotations, made an object if they were not.
pub fn annotations_mut(obj: &mut Value) -> &mut Map<String, Value> {
    let metadata = &mut obj["metadata"];
    if !metadata["annotations"].is_object() {
        metadata["annotations"] = Value::Object(Map::new());
    }
    metadata["annotations"].as_object_mut().expect("made an object above")
}

/// `strconv.ParseInt(s, 10, 64)`'s error text.
fn parse_int_error(text: &str) -> String {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        format!("strconv.ParseInt: parsing \"{text}\": value out of range")
    } else {
        format!("strconv.ParseInt: parsing \"{text}\": invalid syntax")
    }
}

/// `Revision`: the revision annotation, 0 when absent.
pub fn revision(obj: &Value) -> Result<i64, String> {
    match annotation(obj, REVISION) {
        None => Ok(0),
        Some(text) => super::util::parse_go_int(text).ok_or_else(|| parse_int_error(text)),
    }
}

/// `MaxRevision`: the highest revision, skipping unreadable ones.
pub fn max_revision(rss: &[Value]) -> i64 {
    rss.iter().filter_map(|rs| revision(rs).ok()).fold(0, i64::max)
}

/// `LastRevision`: the second highest revision (the one before the current).
pub fn last_revision(rss: &[Value]) -> i64 {
    let (mut max, mut second) = (0i64, 0i64);
    for v in rss.iter().filter_map(|rs| revision(rs).ok()) {
        if v >= max {
            second = max;
            max = v;
        } else if v > second {
            second = v;
        }
    }
    second
}

/// `ReplicaSetsByRevision`: lower revisions first, the creation order among equals. Upstream compares a
/// ReplicaSet whose revision is unreadable by creation alone, which is no consistent order; here it counts
/// as revision 0, which agrees with upstream whenever every revision reads.
pub fn by_revision(a: &Value, b: &Value) -> Ordering {
    let rev = |rs: &Value| revision(rs).unwrap_or(0);
    rev(a).cmp(&rev(b)).then_with(|| by_creation(a, b))
}

/// `copyDeploymentAnnotationsToReplicaSet`: whether anything was copied.
fn copy_deployment_annotations(d: &Value, rs: &mut Value) -> bool {
    let mut changed = false;
    let target = annotations_mut(rs);
    for (key, value) in annotations(d) {
        if skip_copy(&key) || target.get(&key) == Some(&value) {
            continue;
        }
        target.insert(key, value);
        changed = true;
    }
    changed
}

/// `SetReplicasAnnotations`: whether either changed.
pub fn set_replicas_annotations(rs: &mut Value, desired: i32, max: i32) -> bool {
    let target = annotations_mut(rs);
    let mut changed = false;
    for (key, value) in [(DESIRED_REPLICAS, desired.to_string()), (MAX_REPLICAS, max.to_string())] {
        if target.get(key).and_then(Value::as_str) != Some(value.as_str()) {
            target.insert(key.to_string(), Value::from(value));
            changed = true;
        }
    }
    changed
}

/// `ReplicasAnnotationsNeedUpdate`.
pub fn replicas_annotations_need_update(rs: &Value, desired: i32, max: i32) -> bool {
    annotation(rs, DESIRED_REPLICAS) != Some(desired.to_string().as_str())
        || annotation(rs, MAX_REPLICAS) != Some(max.to_string().as_str())
}

/// `SetNewReplicaSetAnnotations`: copies the Deployment's annotations onto the new ReplicaSet, raises its
/// revision to `new_revision` (recording the one it had in the history), and for a ReplicaSet about to be
/// created sets the replica annotations. Whether anything changed; like upstream, false (with the copy
/// made) when the current revision is no integer.
pub fn set_new_replica_set_annotations(
    d: &Value,
    rs: &mut Value,
    new_revision: &str,
    exists: bool,
    limit: usize,
) -> bool {
    let mut changed = copy_deployment_annotations(d, rs);
    let old_revision = annotation(rs, REVISION).map(str::to_string);
    let old_int = match old_revision.as_deref() {
        None | Some("") => 0,
        Some(text) => match super::util::parse_go_int(text) {
            Some(v) => v,
            None => {
                tracing::info!(rs = meta(rs, "name"), "Updating replica set revision OldRevision not int");
                return false;
            }
        },
    };
    let Some(new_int) = super::util::parse_go_int(new_revision) else {
        tracing::info!(rs = meta(rs, "name"), "Updating replica set revision NewRevision not int");
        return false;
    };
    if old_int < new_int {
        annotations_mut(rs).insert(REVISION.into(), Value::from(new_revision));
        changed = true;
    }
    // A ReplicaSet renumbered from an earlier revision is one rolled back to: its old number is history.
    if let (Some(old), true) = (old_revision, old_int < new_int) {
        let history = annotation(rs, REVISION_HISTORY).unwrap_or("").to_string();
        let mut revisions: Vec<&str> = history.split(',').collect();
        if revisions[0].is_empty() {
            annotations_mut(rs).insert(REVISION_HISTORY.into(), Value::from(old));
        } else {
            // Drop the oldest entries until the new one fits under the limit.
            let mut total = history.len() + old.len() + 1;
            let mut start = 0;
            while total > limit && start < revisions.len() {
                total -= revisions[start].len() + 1;
                start += 1;
            }
            if total <= limit {
                let mut kept = revisions.split_off(start);
                kept.push(&old);
                let joined = kept.join(",");
                annotations_mut(rs).insert(REVISION_HISTORY.into(), Value::from(joined));
            } else {
                tracing::info!(limit, "Not appending revision due to revision history length limit reached");
            }
        }
    }
    if !exists {
        let desired = super::util::replicas(d);
        let max = desired.wrapping_add(super::util::max_surge(d));
        if set_replicas_annotations(rs, desired, max) {
            changed = true;
        }
    }
    changed
}

/// `SetDeploymentRevision`: whether it changed.
pub fn set_deployment_revision(d: &mut Value, revision: &str) -> bool {
    let target = annotations_mut(d);
    if target.get(REVISION).and_then(Value::as_str) == Some(revision) {
        return false;
    }
    target.insert(REVISION.into(), Value::from(revision));
    true
}

/// `SetDeploymentAnnotationsTo`: on a rollback, the Deployment takes the annotations of the ReplicaSet it
/// rolls back to, keeping only its own skipped ones.
pub fn set_deployment_annotations_to(d: &mut Value, rs: &Value) {
    let mut kept: Map<String, Value> = annotations(d).into_iter().filter(|(k, _)| skip_copy(k)).collect();
    for (key, value) in annotations(rs) {
        if !skip_copy(&key) {
            kept.insert(key, value);
        }
    }
    d["metadata"]["annotations"] = Value::Object(kept);
}

/// A pod template as Go holds it after decoding: nulls and empty lists are absent, and so are empty label
/// and annotation maps.
fn normalized(value: &Value, key: &str) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) => Some(Value::Array(items.iter().filter_map(|v| normalized(v, "")).collect())),
        Value::Object(map) => {
            let map: Map<String, Value> =
                map.iter().filter_map(|(k, v)| normalized(v, k).map(|v| (k.clone(), v))).collect();
            if map.is_empty() && matches!(key, "labels" | "annotations") {
                None
            } else {
                Some(Value::Object(map))
            }
        }
        other => Some(other.clone()),
    }
}

fn without_hash(template: Option<&Value>) -> Option<Value> {
    let mut template = template.cloned().unwrap_or(Value::Null);
    if let Some(labels) = template.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) {
        labels.remove(POD_TEMPLATE_HASH_LABEL);
    }
    normalized(&template, "")
}

/// `EqualIgnoreHash`: two pod templates are equal but for their `pod-template-hash` labels.
pub fn equal_ignore_hash(a: Option<&Value>, b: Option<&Value>) -> bool {
    without_hash(a) == without_hash(b)
}

/// `FindNewReplicaSet`: the oldest ReplicaSet whose template is the Deployment's.
pub fn find_new_replica_set(d: &Value, rss: &[Value]) -> Option<Value> {
    let mut sorted = rss.to_vec();
    sorted.sort_by(by_creation);
    let template = d.pointer("/spec/template");
    sorted.into_iter().find(|rs| equal_ignore_hash(rs.pointer("/spec/template"), template))
}

/// `FindOldReplicaSets`: `(those with replicas, all)` of the ReplicaSets but the new one, in `rss`'s order.
pub fn find_old_replica_sets(d: &Value, rss: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let new_uid = find_new_replica_set(d, rss).map(|rs| meta(&rs, "uid").to_string());
    let all: Vec<Value> = rss.iter().filter(|rs| new_uid.as_deref() != Some(meta(rs, "uid"))).cloned().collect();
    let required = all.iter().filter(|rs| super::util::replicas(rs) != 0).cloned().collect();
    (required, all)
}

/// `SetFromReplicaSetTemplate`: the Deployment's template becomes `template` less its hash label.
pub fn set_from_replica_set_template(d: &mut Value, template: &Value) {
    let mut template = template.clone();
    if let Some(labels) = template.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) {
        labels.remove(POD_TEMPLATE_HASH_LABEL);
    }
    d["spec"]["template"] = template;
}

/// `CloneAndAddLabel`: `labels` with `key=value` added (unchanged for an empty key).
pub fn clone_and_add_label(labels: Option<&Value>, key: &str, value: &str) -> Value {
    let mut labels = labels.and_then(Value::as_object).cloned().unwrap_or_default();
    if !key.is_empty() {
        labels.insert(key.into(), Value::from(value));
    }
    Value::Object(labels)
}

/// `CloneSelectorAndAddLabel`: the selector with `key=value` added to its `matchLabels`.
pub fn clone_selector_and_add_label(selector: Option<&Value>, key: &str, value: &str) -> Value {
    let mut selector = selector.cloned().filter(Value::is_object).unwrap_or_else(|| Value::Object(Map::new()));
    if !key.is_empty() {
        let labels = clone_and_add_label(selector.get("matchLabels"), key, value);
        selector["matchLabels"] = labels;
    }
    selector
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rs(name: &str, uid: &str, revision: Option<&str>, replicas: i32, image: &str) -> Value {
        let mut rs = json!({
            "metadata": {"name": name, "uid": uid, "creationTimestamp": "2023-11-14T22:13:20Z"},
            "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": uid}}, "spec": {"containers": [{"name": "c", "image": image}]}}},
        });
        if let Some(r) = revision {
            rs["metadata"]["annotations"] = json!({REVISION: r});
        }
        rs
    }

    fn deployment(image: &str) -> Value {
        json!({
            "metadata": {"name": "web", "annotations": {"team": "a", LAST_APPLIED: "{}", REVISION: "7"}},
            "spec": {"replicas": 4, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": {"metadata": {"labels": {"app": "web"}, "creationTimestamp": null}, "spec": {"containers": [{"name": "c", "image": image}]}}},
        })
    }

    #[test]
    fn revisions_read_and_order() {
        let rss = vec![
            rs("a", "1", Some("3"), 0, "x"),
            rs("b", "2", Some("1"), 0, "x"),
            rs("c", "3", Some("x"), 0, "x"),
            rs("d", "4", None, 0, "x"),
        ];
        assert_eq!(max_revision(&rss), 3);
        assert_eq!(last_revision(&rss), 1);
        assert_eq!(revision(&rss[2]), Err("strconv.ParseInt: parsing \"x\": invalid syntax".to_string()));
        assert_eq!(revision(&rss[3]), Ok(0));
        assert_eq!(last_revision(&[rs("a", "1", Some("2"), 0, "x"), rs("b", "2", Some("2"), 0, "x")]), 2);
        let mut sorted = rss.clone();
        sorted.sort_by(by_revision);
        // "c" (unreadable) counts as revision 0, as "d" (none) does; the names then order them.
        let names: Vec<&str> = sorted.iter().map(|r| meta(r, "name")).collect();
        assert_eq!(names, ["c", "d", "b", "a"]);
    }

    #[test]
    fn new_replica_set_annotations() {
        // (existing annotations, new revision, exists, want changed, want annotations) after upstream's
        // TestAnnotationUtils and TestSetNewReplicaSetAnnotations.
        let d = deployment("nginx");
        let cases = [
            (
                json!({}),
                "1",
                false,
                true,
                json!({"team": "a", REVISION: "1", DESIRED_REPLICAS: "4", MAX_REPLICAS: "5"}),
            ),
            (json!({"team": "a", REVISION: "1"}), "1", true, false, json!({"team": "a", REVISION: "1"})),
            (
                json!({"team": "a", REVISION: "1"}),
                "4",
                true,
                true,
                json!({"team": "a", REVISION: "4", REVISION_HISTORY: "1"}),
            ),
            (
                json!({"team": "a", REVISION: "4", REVISION_HISTORY: "1,2"}),
                "6",
                true,
                true,
                json!({"team": "a", REVISION: "6", REVISION_HISTORY: "1,2,4"}),
            ),
            (json!({"team": "a", REVISION: "9"}), "6", true, false, json!({"team": "a", REVISION: "9"})),
            (json!({"team": "b", REVISION: "x"}), "6", true, false, json!({"team": "a", REVISION: "x"})),
        ];
        for (existing, new_revision, exists, want_changed, want) in cases {
            let mut target = json!({"metadata": {"name": "rs", "annotations": existing.clone()}});
            let changed =
                set_new_replica_set_annotations(&d, &mut target, new_revision, exists, MAX_REV_HISTORY_LENGTH_IN_CHARS);
            assert_eq!(
                (changed, &target["metadata"]["annotations"]),
                (want_changed, &want),
                "{existing} -> {new_revision}"
            );
        }
        // The history is cut from the front to stay within the limit.
        let mut target = json!({"metadata": {"annotations": {REVISION: "10", REVISION_HISTORY: "1,2,3"}}});
        set_new_replica_set_annotations(&d, &mut target, "11", true, 7);
        assert_eq!(annotation(&target, REVISION_HISTORY), Some("2,3,10"));
        let mut target = json!({"metadata": {"annotations": {REVISION: "10", REVISION_HISTORY: "1"}}});
        set_new_replica_set_annotations(&d, &mut target, "11", true, 1);
        assert_eq!(annotation(&target, REVISION_HISTORY), Some("1"), "nothing fits: left as it was");
    }

    #[test]
    fn replica_and_deployment_annotations() {
        let mut target = json!({"metadata": {}});
        assert!(replicas_annotations_need_update(&target, 3, 4));
        assert!(set_replicas_annotations(&mut target, 3, 4));
        assert!(!replicas_annotations_need_update(&target, 3, 4));
        assert!(!set_replicas_annotations(&mut target, 3, 4));
        assert!(replicas_annotations_need_update(&target, 3, 5));

        let mut d = deployment("nginx");
        assert!(set_deployment_revision(&mut d, "8"));
        assert!(!set_deployment_revision(&mut d, "8"));
        let old =
            json!({"metadata": {"annotations": {"team": "old", "note": "n", REVISION: "2", DESIRED_REPLICAS: "1"}}});
        set_deployment_annotations_to(&mut d, &old);
        assert_eq!(
            d["metadata"]["annotations"],
            json!({"team": "old", "note": "n", LAST_APPLIED: "{}", REVISION: "8"})
        );
    }

    #[test]
    fn new_and_old_replica_sets() {
        let d = deployment("nginx:2");
        let cases = [
            // (replica sets, the new one's uid, the old ones with replicas, all old ones)
            (
                vec![rs("v1", "u1", Some("1"), 3, "nginx:1"), rs("v2", "u2", Some("2"), 1, "nginx:2")],
                Some("u2"),
                vec!["u1"],
                vec!["u1"],
            ),
            (vec![rs("v1", "u1", Some("1"), 0, "nginx:1")], None, vec![], vec!["u1"]),
            // Two with the Deployment's template: the older (here by name) is the new one.
            (
                vec![rs("b", "u3", None, 0, "nginx:2"), rs("a", "u4", None, 0, "nginx:2")],
                Some("u4"),
                vec![],
                vec!["u3"],
            ),
        ];
        for (rss, want_new, want_required, want_all) in cases {
            let found = find_new_replica_set(&d, &rss);
            assert_eq!(found.as_ref().map(|r| meta(r, "uid")), want_new);
            let (required, all) = find_old_replica_sets(&d, &rss);
            let uids = |v: &[Value]| v.iter().map(|r| meta(r, "uid").to_string()).collect::<Vec<_>>();
            assert_eq!(
                (uids(&required), uids(&all)),
                (
                    want_required.iter().map(|s| s.to_string()).collect(),
                    want_all.iter().map(|s| s.to_string()).collect()
                )
            );
        }
    }

    #[test]
    fn templates_compare_without_their_hash() {
        let a = json!({"metadata": {"labels": {"app": "web", "pod-template-hash": "abc"}, "creationTimestamp": null}, "spec": {"volumes": [], "containers": [{"name": "c"}]}});
        let b = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}});
        let c = json!({"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c"}]}});
        assert!(equal_ignore_hash(Some(&a), Some(&b)));
        assert!(!equal_ignore_hash(Some(&a), Some(&c)));

        let mut d = deployment("nginx");
        set_from_replica_set_template(&mut d, &a);
        assert_eq!(d["spec"]["template"]["metadata"]["labels"], json!({"app": "web"}));

        assert_eq!(clone_and_add_label(Some(&json!({"a": "b"})), "k", "v"), json!({"a": "b", "k": "v"}));
        assert_eq!(clone_and_add_label(None, "", "v"), json!({}));
        let selector = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "x", "operator": "Exists"}]});
        assert_eq!(
            clone_selector_and_add_label(Some(&selector), POD_TEMPLATE_HASH_LABEL, "h"),
            json!({"matchLabels": {"app": "web", "pod-template-hash": "h"}, "matchExpressions": [{"key": "x", "operator": "Exists"}]})
        );
    }
}
