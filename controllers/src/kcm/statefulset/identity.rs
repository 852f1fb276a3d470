//! A StatefulSet pod's identity and storage (kube-controller-manager 1.32,
//! `pkg/controller/statefulset/stateful_set_utils.go`: `getParentNameAndOrdinal`, `getStartOrdinal`,
//! `podInOrdinalRange`, `identityMatches`, `storageMatches`, `getPersistentVolumeClaims`, `updateStorage`,
//! `initIdentity`, `updateIdentity`, `newStatefulSetPod`, `newVersionedStatefulSetPod`, the pod state
//! predicates; with `controller_utils.go` `GetPodFromTemplate`). Sans-IO: JSON in, JSON and facts out.
//!
//! A pod is named `<set>-<ordinal>`, carries the labels `statefulset.kubernetes.io/pod-name`,
//! `apps.kubernetes.io/pod-index` (feature `PodIndexLabel`, on in 1.32) and `controller-revision-hash`,
//! has its name as hostname and the set's `serviceName` as subdomain, and mounts one claim per volume
//! claim template, named `<template>-<set>-<ordinal>`.
//!
//! One deliberate difference: upstream builds the claim volumes by iterating a Go map, so their order in
//! a new pod's `volumes` is random; here they come in the templates' name order, so that runs replay.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::kcm::replicaset::pods::{is_available, is_deleting, is_ready};
use crate::kcm::replicaset::refs::pods_prefix;

/// `apps.StatefulSetPodNameLabel`.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// `apps.PodIndexLabel`.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// `apps.StatefulSetRevisionLabel` (`apps.ControllerRevisionHashLabelKey`).
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// The kind the controller owns pods, claims and revisions as, and its group version.
pub const KIND: &str = "StatefulSet";
pub const API_VERSION: &str = "apps/v1";

pub(crate) fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// `spec.replicas` (defaulted to 1 by the apiserver).
pub fn spec_replicas(set: &Value) -> i64 {
    set.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)
}

/// `spec.minReadySeconds`.
pub fn min_ready_seconds(set: &Value) -> i64 {
    set.pointer("/spec/minReadySeconds").and_then(Value::as_i64).unwrap_or(0)
}

/// `getParentNameAndOrdinal`: the pod name's parent and ordinal as `(.*)-([0-9]+)$` reads them; an
/// ordinal that does not fit an `int32` is -1 with the parent still read, a name without the pattern is
/// `("", -1)`.
pub fn parent_and_ordinal(pod_name: &str) -> (&str, i64) {
    // The greedy `(.*)` takes everything up to the last dash, so only the text after it must be digits.
    match pod_name.rsplit_once('-') {
        Some((parent, digits)) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            let ordinal = digits.parse::<i32>().map(i64::from).unwrap_or(-1);
            (parent, ordinal)
        }
        _ => ("", -1),
    }
}

/// `getOrdinal` of a pod.
pub fn ordinal(pod: &Value) -> i64 {
    parent_and_ordinal(meta(pod, "name")).1
}

/// `getStartOrdinal`: `spec.ordinals.start`, 0 without `spec.ordinals`.
pub fn start_ordinal(set: &Value) -> i64 {
    set.pointer("/spec/ordinals/start").and_then(Value::as_i64).unwrap_or(0)
}

/// `getEndOrdinal`: the last ordinal in range, inclusive.
pub fn end_ordinal(set: &Value) -> i64 {
    start_ordinal(set) + spec_replicas(set) - 1
}

/// `podInOrdinalRange`.
pub fn in_ordinal_range(pod: &Value, set: &Value) -> bool {
    let ord = ordinal(pod);
    ord >= start_ordinal(set) && ord <= end_ordinal(set)
}

/// `getPodName`.
pub fn pod_name(set: &Value, ordinal: i64) -> String {
    format!("{}-{ordinal}", meta(set, "name"))
}

/// `getPersistentVolumeClaimName`.
pub fn claim_name(set: &Value, template_name: &str, ordinal: i64) -> String {
    format!("{template_name}-{}-{ordinal}", meta(set, "name"))
}

/// `isMemberOf`: the pod's name says it belongs to the set.
pub fn is_member_of(set: &Value, pod: &Value) -> bool {
    parent_and_ordinal(meta(pod, "name")).0 == meta(set, "name")
}

fn label<'a>(pod: &'a Value, key: &str) -> &'a str {
    pod.pointer("/metadata/labels").and_then(|l| l.get(key)).and_then(Value::as_str).unwrap_or("")
}

/// `identityMatches`: name, namespace and pod-name label are the set's for the pod's ordinal.
pub fn identity_matches(set: &Value, pod: &Value) -> bool {
    let name = meta(pod, "name");
    let (parent, ord) = parent_and_ordinal(name);
    ord >= 0
        && meta(set, "name") == parent
        && name == pod_name(set, ord)
        && meta(pod, "namespace") == meta(set, "namespace")
        && label(pod, POD_NAME_LABEL) == name
}

fn claim_templates(set: &Value) -> Vec<Value> {
    set.pointer("/spec/volumeClaimTemplates").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// `storageMatches`: every claim template has a volume of its name bound to the pod's claim.
pub fn storage_matches(set: &Value, pod: &Value) -> bool {
    let ord = ordinal(pod);
    if ord < 0 {
        return false;
    }
    let volumes: BTreeMap<&str, &Value> = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .map(|vs| vs.iter().map(|v| (v.get("name").and_then(Value::as_str).unwrap_or(""), v)).collect())
        .unwrap_or_default();
    claim_templates(set).iter().all(|template| {
        let name = meta(template, "name");
        volumes.get(name).and_then(|v| v.pointer("/persistentVolumeClaim/claimName")).and_then(Value::as_str)
            == Some(claim_name(set, name, ord).as_str())
    })
}

/// `getPersistentVolumeClaims`: the pod's claims by template name, each the template named for the pod,
/// in the set's namespace, with the selector's `matchLabels` over the template's labels.
pub fn claims_for(set: &Value, pod: &Value) -> BTreeMap<String, Value> {
    let ord = ordinal(pod);
    let match_labels =
        set.pointer("/spec/selector/matchLabels").and_then(Value::as_object).cloned().unwrap_or_default();
    claim_templates(set)
        .into_iter()
        .map(|template| {
            let template_name = meta(&template, "name").to_string();
            let mut claim = template;
            claim["metadata"]["name"] = json!(claim_name(set, &template_name, ord));
            claim["metadata"]["namespace"] = json!(meta(set, "namespace"));
            let mut labels = claim.pointer("/metadata/labels").and_then(Value::as_object).cloned().unwrap_or_default();
            labels.extend(match_labels.clone());
            claim["metadata"]["labels"] = Value::Object(labels);
            (template_name, claim)
        })
        .collect()
}

/// `updateStorage`: the claims' volumes first, then the pod's other volumes (those of a template's name
/// are replaced).
pub fn update_storage(set: &Value, pod: &mut Value) {
    let claims = claims_for(set, pod);
    let mut volumes: Vec<Value> = claims
        .iter()
        .map(|(name, claim)| json!({"name": name, "persistentVolumeClaim": {"claimName": meta(claim, "name")}}))
        .collect();
    let current = pod.pointer("/spec/volumes").and_then(Value::as_array).cloned().unwrap_or_default();
    volumes.extend(
        current.into_iter().filter(|v| !claims.contains_key(v.get("name").and_then(Value::as_str).unwrap_or(""))),
    );
    pod["spec"]["volumes"] = Value::Array(volumes);
}

/// `updateIdentity`: name, namespace and the pod-name and pod-index labels.
pub fn update_identity(set: &Value, pod: &mut Value) {
    let ord = ordinal(pod);
    let name = pod_name(set, ord);
    pod["metadata"]["name"] = json!(name);
    pod["metadata"]["namespace"] = json!(meta(set, "namespace"));
    if !pod.pointer("/metadata/labels").is_some_and(Value::is_object) {
        pod["metadata"]["labels"] = json!({});
    }
    pod["metadata"]["labels"][POD_NAME_LABEL] = json!(name);
    pod["metadata"]["labels"][POD_INDEX_LABEL] = json!(ord.to_string());
}

/// `initIdentity`: the identity, and the hostname and subdomain, which are set only at creation.
fn init_identity(set: &Value, pod: &mut Value) {
    update_identity(set, pod);
    let name = meta(pod, "name").to_string();
    pod["spec"]["hostname"] = json!(name);
    match set.pointer("/spec/serviceName").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        Some(service) => pod["spec"]["subdomain"] = json!(service),
        // Go's `omitempty` leaves an empty subdomain out.
        None => {
            pod["spec"].as_object_mut().map(|s| s.remove("subdomain"));
        }
    }
}

/// `metav1.NewControllerRef(set, apps/v1 StatefulSet)`.
pub fn controller_ref_to(set: &Value) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": meta(set, "name"),
        "uid": meta(set, "uid"),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// `newStatefulSetPod`: `GetPodFromTemplate` with the set's controller reference, then the identity and
/// storage of `ordinal`.
pub fn new_pod(set: &Value, ordinal: i64) -> Value {
    let template = set.pointer("/spec/template").cloned().unwrap_or(Value::Null);
    let mut metadata = Map::new();
    // Empty maps and lists are left out, as Go's `omitempty` leaves them.
    for field in ["labels", "annotations", "finalizers"] {
        match template.pointer(&format!("/metadata/{field}")) {
            Some(Value::Object(m)) if !m.is_empty() => metadata.insert(field.into(), Value::Object(m.clone())),
            Some(Value::Array(a)) if !a.is_empty() => metadata.insert(field.into(), Value::Array(a.clone())),
            _ => None,
        };
    }
    metadata.insert("generateName".into(), json!(pods_prefix(meta(set, "name"))));
    metadata.insert("ownerReferences".into(), json!([controller_ref_to(set)]));
    metadata.insert("name".into(), json!(pod_name(set, ordinal)));
    let spec = template.get("spec").cloned().filter(Value::is_object).unwrap_or_else(|| json!({}));
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec});
    init_identity(set, &mut pod);
    update_storage(set, &mut pod);
    pod
}

/// `newVersionedStatefulSetPod`: the pod of `ordinal` at the current revision when the update strategy
/// keeps it there (below the partition), at the update revision otherwise. Upstream's condition groups as
/// `(RollingUpdate && rollingUpdate == nil && ordinal < start + status.currentReplicas) || (rollingUpdate
/// != nil && ordinal < start + partition)`, which this keeps.
pub fn new_versioned_pod(
    current_set: &Value,
    update_set: &Value,
    current_revision: &str,
    update_revision: &str,
    ordinal: i64,
) -> Value {
    let start = start_ordinal(current_set);
    let strategy = current_set.pointer("/spec/updateStrategy");
    let rolling = strategy.and_then(|s| s.get("rollingUpdate")).filter(|r| !r.is_null());
    let is_rolling_type = strategy.and_then(|s| s.get("type")).and_then(Value::as_str) == Some("RollingUpdate");
    let current_replicas = current_set.pointer("/status/currentReplicas").and_then(Value::as_i64).unwrap_or(0);
    let at_current = match rolling {
        None => is_rolling_type && ordinal < start + current_replicas,
        Some(r) => ordinal < start + r.get("partition").and_then(Value::as_i64).unwrap_or(0),
    };
    let (set, revision) = if at_current { (current_set, current_revision) } else { (update_set, update_revision) };
    let mut pod = new_pod(set, ordinal);
    pod["metadata"]["labels"][REVISION_LABEL] = json!(revision);
    pod
}

/// `getPodRevision`: the `controller-revision-hash` label, "" without one.
pub fn pod_revision(pod: &Value) -> &str {
    label(pod, REVISION_LABEL)
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("")
}

/// `isCreated`: the pod has a phase, so the apiserver holds it (a pod this sync built has none).
pub fn is_created(pod: &Value) -> bool {
    !phase(pod).is_empty()
}

/// `isPending`.
pub fn is_pending(pod: &Value) -> bool {
    phase(pod) == "Pending"
}

/// `isFailed`.
pub fn is_failed(pod: &Value) -> bool {
    phase(pod) == "Failed"
}

/// `isSucceeded`.
pub fn is_succeeded(pod: &Value) -> bool {
    phase(pod) == "Succeeded"
}

/// `isTerminating`.
pub fn is_terminating(pod: &Value) -> bool {
    is_deleting(pod)
}

/// `isRunningAndReady`.
pub fn is_running_and_ready(pod: &Value) -> bool {
    phase(pod) == "Running" && is_ready(pod)
}

/// `isRunningAndAvailable` (upstream's is `IsPodAvailable` alone, without the phase).
pub fn is_running_and_available(pod: &Value, min_ready_seconds: i64, now_us: i64) -> bool {
    is_available(pod, min_ready_seconds, now_us)
}

/// `isHealthy`: running, ready and not terminating.
pub fn is_healthy(pod: &Value) -> bool {
    is_running_and_ready(pod) && !is_terminating(pod)
}

/// `allowsBurst`: the `Parallel` pod management policy.
pub fn allows_burst(set: &Value) -> bool {
    set.pointer("/spec/podManagementPolicy").and_then(Value::as_str) == Some("Parallel")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> Value {
        json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid"},
            "spec": {
                "replicas": 3,
                "serviceName": "nginx",
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}, "annotations": {}}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}], "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "emptyDir": {}}]}},
                "volumeClaimTemplates": [
                    {"metadata": {"name": "data", "labels": {"tier": "db"}}, "spec": {"accessModes": ["ReadWriteOnce"]}},
                    {"metadata": {"name": "logs"}, "spec": {}},
                ],
            },
        })
    }

    #[test]
    fn ordinals_parse_as_the_regex_reads_them() {
        let cases = [
            ("web-0", ("web", 0)),
            ("web-12", ("web", 12)),
            ("my-web-3", ("my-web", 3)),
            ("web-1-2", ("web-1", 2)),
            ("web-01", ("web", 1)),
            ("web-", ("", -1)),
            ("web", ("", -1)),
            ("web-x", ("", -1)),
            ("web-2147483647", ("web", 2_147_483_647)),
            ("web-2147483648", ("web", -1)),
            ("-5", ("", 5)),
        ];
        for (name, want) in cases {
            assert_eq!(parent_and_ordinal(name), want, "{name}");
        }
    }

    #[test]
    fn ordinal_ranges_honour_the_start() {
        let mut s = set();
        let pod = |name: &str| json!({"metadata": {"name": name}});
        assert!(in_ordinal_range(&pod("web-0"), &s));
        assert!(in_ordinal_range(&pod("web-2"), &s));
        assert!(!in_ordinal_range(&pod("web-3"), &s));
        s["spec"]["ordinals"] = json!({"start": 5});
        assert_eq!((start_ordinal(&s), end_ordinal(&s)), (5, 7));
        assert!(!in_ordinal_range(&pod("web-0"), &s));
        assert!(in_ordinal_range(&pod("web-7"), &s));
        assert!(!in_ordinal_range(&pod("web-x"), &s));
    }

    #[test]
    fn a_new_pod_has_its_identity_and_storage() {
        let pod = new_pod(&set(), 1);
        assert_eq!(pod["metadata"]["name"], "web-1");
        assert_eq!(pod["metadata"]["generateName"], "web-");
        assert_eq!(pod["metadata"]["namespace"], "ns");
        assert_eq!(pod["metadata"]["labels"], json!({"app": "web", POD_NAME_LABEL: "web-1", POD_INDEX_LABEL: "1"}));
        assert!(pod["metadata"].get("annotations").is_none(), "empty annotations are left out");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], "set-uid");
        assert_eq!(pod["spec"]["hostname"], "web-1");
        assert_eq!(pod["spec"]["subdomain"], "nginx");
        assert_eq!(
            pod["spec"]["volumes"],
            json!([
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
                {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-web-1"}},
                {"name": "cfg", "emptyDir": {}},
            ])
        );
        assert!(identity_matches(&set(), &pod));
        assert!(storage_matches(&set(), &pod));
    }

    #[test]
    fn identity_and_storage_checks() {
        let good = new_pod(&set(), 2);
        let mut relabelled = good.clone();
        relabelled["metadata"]["labels"][POD_NAME_LABEL] = json!("web-9");
        let mut moved = good.clone();
        moved["metadata"]["namespace"] = json!("other");
        let mut zero_padded = good.clone();
        zero_padded["metadata"]["name"] = json!("web-02");
        let mut unmounted = good.clone();
        unmounted["spec"]["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-2"}}]);
        let mut wrong_claim = good.clone();
        wrong_claim["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = json!("data-web-1");
        let cases = [
            ("good", &good, true, true),
            ("relabelled", &relabelled, false, true),
            ("moved", &moved, false, true),
            ("zero padded", &zero_padded, false, true),
            ("a claim unmounted", &unmounted, true, false),
            ("another pod's claim", &wrong_claim, true, false),
        ];
        for (name, pod, identity, storage) in cases {
            assert_eq!(identity_matches(&set(), pod), identity, "{name}: identity");
            assert_eq!(storage_matches(&set(), pod), storage, "{name}: storage");
        }
        let mut fixed = relabelled.clone();
        update_identity(&set(), &mut fixed);
        assert!(identity_matches(&set(), &fixed));
        let mut fixed = unmounted.clone();
        update_storage(&set(), &mut fixed);
        assert!(storage_matches(&set(), &fixed));
    }

    #[test]
    fn claims_take_the_selector_labels() {
        let claims = claims_for(&set(), &json!({"metadata": {"name": "web-4"}}));
        assert_eq!(claims.keys().collect::<Vec<_>>(), ["data", "logs"]);
        assert_eq!(claims["data"]["metadata"]["name"], "data-web-4");
        assert_eq!(claims["data"]["metadata"]["namespace"], "ns");
        assert_eq!(claims["data"]["metadata"]["labels"], json!({"tier": "db", "app": "web"}));
        assert_eq!(claims["logs"]["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(claims["data"]["spec"]["accessModes"], json!(["ReadWriteOnce"]));
    }

    #[test]
    fn versioned_pods_follow_the_partition() {
        let mut current = set();
        current["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:0");
        let mut update = set();
        update["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
        // (strategy, status.currentReplicas, ordinal, at the current revision)
        let cases = [
            (json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}), 0, 1, true),
            (json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}), 0, 2, false),
            (json!({"type": "RollingUpdate"}), 2, 1, true),
            (json!({"type": "RollingUpdate"}), 2, 2, false),
            (json!({"type": "OnDelete"}), 3, 0, false),
        ];
        for (strategy, current_replicas, ord, want_current) in cases {
            current["spec"]["updateStrategy"] = strategy.clone();
            current["status"] = json!({"currentReplicas": current_replicas});
            let pod = new_versioned_pod(&current, &update, "web-a", "web-b", ord);
            let (image, rev) = if want_current { ("nginx:0", "web-a") } else { ("nginx:2", "web-b") };
            assert_eq!(pod["spec"]["containers"][0]["image"], image, "{strategy} {ord}");
            assert_eq!(pod_revision(&pod), rev, "{strategy} {ord}");
        }
    }

    #[test]
    fn pod_state_predicates() {
        let pod = |phase: &str, ready: bool, deleting: bool| {
            let mut p = json!({"metadata": {"name": "web-0"}, "status": {"phase": phase}});
            if ready {
                p["status"]["conditions"] =
                    json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z"}]);
            }
            if deleting {
                p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
            }
            p
        };
        // (pod, created, running and ready, healthy)
        let cases = [
            (pod("", false, false), false, false, false),
            (pod("Pending", false, false), true, false, false),
            (pod("Running", false, false), true, false, false),
            (pod("Running", true, false), true, true, true),
            (pod("Running", true, true), true, true, false),
            (pod("Pending", true, false), true, false, false),
        ];
        for (p, created, rr, healthy) in cases {
            assert_eq!(is_created(&p), created, "{p}");
            assert_eq!(is_running_and_ready(&p), rr, "{p}");
            assert_eq!(is_healthy(&p), healthy, "{p}");
        }
        let t0 = 1_700_000_000_000_000;
        assert!(is_running_and_available(&pod("Running", true, false), 0, t0));
        assert!(!is_running_and_available(&pod("Running", true, false), 10, t0 + 10_000_000));
        assert!(is_running_and_available(&pod("Running", true, false), 10, t0 + 10_000_001));
        assert!(is_failed(&pod("Failed", false, false)) && is_succeeded(&pod("Succeeded", false, false)));
        assert!(is_pending(&pod("Pending", false, false)));
    }
}
