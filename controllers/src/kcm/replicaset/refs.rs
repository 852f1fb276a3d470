//! Owning pods (kube-controller-manager 1.32): the pods a ReplicaSet creates (`pkg/controller/controller_utils.go`
//! `GetPodFromTemplate`, `getPodsPrefix`, `validateControllerRef`, with apimachinery's `metav1.NewControllerRef`)
//! and the pods it claims (`pkg/controller/controller_ref_manager.go`: `ClaimObject`'s decision, and the
//! strategic merge patches of `AdoptPod` and `ReleasePod`). Sans-IO: JSON in, JSON and decisions out.
//!
//! A created pod takes the template's labels, annotations, finalizers and spec, the name prefix
//! `<replicaset>-` (the bare name when the dash would make it too long), and a controller reference to the
//! ReplicaSet that blocks the owner's deletion in the foreground. A pod is adopted by adding such a
//! reference with a patch, released by a patch deleting it; both patches carry the pod's uid, so that they
//! fail on a pod of the same name created since.

use serde_json::{json, Value};

use super::pods::{controller_ref, is_deleting};
use super::selector::is_dns1123_subdomain;

/// The kind the ReplicaSet controller owns pods as, and its group version.
pub const KIND: &str = "ReplicaSet";
pub const API_VERSION: &str = "apps/v1";

/// `validation.DNS1123SubdomainMaxLength`.
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// `metav1.NewControllerRef(rs, apps/v1 ReplicaSet)`.
pub fn new_controller_ref(rs: &Value) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": meta(rs, "name"),
        "uid": meta(rs, "uid"),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// Whether `name` passes `NameIsDNSSubdomain(name, prefix=true)`: a trailing dash is masked (as a name
/// generated from it will not end in one), then the name must be a lowercase RFC 1123 subdomain.
fn is_valid_prefix(name: &str) -> bool {
    let masked = match name.strip_suffix('-') {
        Some(rest) if !rest.is_empty() => format!("{rest}a"),
        _ => name.to_string(),
    };
    masked.len() <= DNS1123_SUBDOMAIN_MAX_LENGTH && is_dns1123_subdomain(&masked)
}

/// `getPodsPrefix`: `<name>-`, or the bare name when that is not a valid prefix.
pub fn pods_prefix(controller_name: &str) -> String {
    let prefix = format!("{controller_name}-");
    if is_valid_prefix(&prefix) {
        prefix
    } else {
        controller_name.to_string()
    }
}

/// `GetPodFromTemplate` with the ReplicaSet's controller reference, refused as `createPods` refuses a pod
/// without labels.
pub fn pod_from_template(rs: &Value) -> Result<Value, String> {
    let template = rs.pointer("/spec/template").cloned().unwrap_or(Value::Null);
    let mut metadata = json!({
        "generateName": pods_prefix(meta(rs, "name")),
        "ownerReferences": [new_controller_ref(rs)],
    });
    // Empty maps and lists are left out, as Go's `omitempty` leaves them.
    for field in ["labels", "annotations", "finalizers"] {
        let value = template.pointer(&format!("/metadata/{field}")).cloned().unwrap_or(Value::Null);
        let empty = match &value {
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => true,
        };
        if !empty {
            metadata[field] = value;
        }
    }
    if metadata.get("labels").is_none() {
        return Err("unable to create pods, no labels".to_string());
    }
    let spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
    Ok(json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}))
}

/// What `ClaimObject` does with one pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Already ours and selected: claimed with no request.
    Owned,
    /// Someone else's, or not ours to take: not claimed.
    Ignore,
    /// Ours but no longer selected: release it (not claimed).
    Release,
    /// An orphan the selector picks: adopt it (claimed if the patch succeeds).
    Adopt,
}

/// `BaseControllerRefManager.ClaimObject`'s decision for `pod`, given whether the ReplicaSet's selector
/// `selected` it.
pub fn claim(rs: &Value, pod: &Value, selected: bool) -> Claim {
    let rs_deleting = is_deleting(rs);
    if let Some(owner) = controller_ref(pod) {
        if owner.get("uid").and_then(Value::as_str).unwrap_or("") != meta(rs, "uid") {
            return Claim::Ignore;
        }
        if selected {
            // Claiming what is already ours takes no action, so it is allowed even while being deleted.
            return Claim::Owned;
        }
        return if rs_deleting { Claim::Ignore } else { Claim::Release };
    }
    if rs_deleting || !selected || is_deleting(pod) {
        return Claim::Ignore;
    }
    let ns = meta(rs, "namespace");
    if !ns.is_empty() && ns != meta(pod, "namespace") {
        return Claim::Ignore;
    }
    Claim::Adopt
}

/// `ownerRefControllerPatch`: the strategic merge patch adopting `pod` (the owner references merge by uid).
pub fn adopt_patch(rs: &Value, pod: &Value) -> Value {
    json!({"metadata": {"ownerReferences": [new_controller_ref(rs)], "uid": meta(pod, "uid")}})
}

/// `GenerateDeleteOwnerRefStrategicMergeBytes`: the strategic merge patch releasing `pod`.
pub fn release_patch(rs: &Value, pod: &Value) -> Value {
    json!({"metadata": {"uid": meta(pod, "uid"), "ownerReferences": [{"$patch": "delete", "uid": meta(rs, "uid")}]}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(deleting: bool) -> Value {
        let mut rs = json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "rs-uid"},
            "spec": {"template": {
                "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}, "finalizers": [], "name": "ignored"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }},
        });
        if deleting {
            rs["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        }
        rs
    }

    fn pod(owner_uid: Option<&str>, deleting: bool, namespace: &str) -> Value {
        let mut pod = json!({"metadata": {"name": "p", "namespace": namespace, "uid": "pod-uid"}});
        if let Some(uid) = owner_uid {
            pod["metadata"]["ownerReferences"] =
                json!([{"kind": "ReplicaSet", "name": "x", "uid": uid, "controller": true}]);
        }
        if deleting {
            pod["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        }
        pod
    }

    #[test]
    fn a_pod_from_the_template() {
        let pod = pod_from_template(&rs(false)).unwrap();
        assert_eq!(
            pod,
            json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "generateName": "web-",
                    "labels": {"app": "web"},
                    "annotations": {"a": "b"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true}],
                },
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            })
        );
        let mut unlabeled = rs(false);
        unlabeled["spec"]["template"]["metadata"]["labels"] = json!({});
        assert_eq!(pod_from_template(&unlabeled).unwrap_err(), "unable to create pods, no labels");
    }

    #[test]
    fn the_name_prefix() {
        let long = "a".repeat(253);
        let cases = [("web", "web-".to_string()), ("a.b", "a.b-".to_string()), (long.as_str(), long.clone())];
        for (name, want) in cases {
            assert_eq!(pods_prefix(name), want, "{name}");
        }
        assert_eq!(pods_prefix(&"a".repeat(252)), format!("{}-", "a".repeat(252)));
    }

    #[test]
    fn claim_decisions() {
        let cases = [
            ("ours and selected", rs(false), pod(Some("rs-uid"), false, "ns"), true, Claim::Owned),
            ("ours and selected while deleting", rs(true), pod(Some("rs-uid"), false, "ns"), true, Claim::Owned),
            ("ours, no longer selected", rs(false), pod(Some("rs-uid"), false, "ns"), false, Claim::Release),
            ("ours, not selected, while deleting", rs(true), pod(Some("rs-uid"), false, "ns"), false, Claim::Ignore),
            ("another controller's", rs(false), pod(Some("other"), false, "ns"), true, Claim::Ignore),
            ("a selected orphan", rs(false), pod(None, false, "ns"), true, Claim::Adopt),
            ("an orphan not selected", rs(false), pod(None, false, "ns"), false, Claim::Ignore),
            ("an orphan being deleted", rs(false), pod(None, true, "ns"), true, Claim::Ignore),
            ("an orphan while we are deleted", rs(true), pod(None, false, "ns"), true, Claim::Ignore),
            ("an orphan in another namespace", rs(false), pod(None, false, "other"), true, Claim::Ignore),
        ];
        for (name, rs, pod, selected, want) in cases {
            assert_eq!(claim(&rs, &pod, selected), want, "{name}");
        }
    }

    #[test]
    fn adoption_and_release_patches() {
        let p = pod(None, false, "ns");
        assert_eq!(
            adopt_patch(&rs(false), &p),
            json!({"metadata": {"uid": "pod-uid", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true}]}})
        );
        assert_eq!(
            release_patch(&rs(false), &p),
            json!({"metadata": {"uid": "pod-uid", "ownerReferences": [{"$patch": "delete", "uid": "rs-uid"}]}})
        );
    }
}
