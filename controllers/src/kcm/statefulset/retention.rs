//! Who owns a StatefulSet pod's claims, per `persistentVolumeClaimRetentionPolicy` (kube-controller-manager
//! 1.32, feature `StatefulSetAutoDeletePVC`, GA and on: `pkg/controller/statefulset/stateful_set_utils.go`
//! `getPersistentVolumeClaimRetentionPolicy`, `matchesRef`, `hasUnexpectedController`,
//! `hasNonControllerOwner`, `removeRefs`, `isClaimOwnerUpToDate`, `updateClaimOwnerRefForSetAndPod`,
//! `hasOwnerRef`, `hasStaleOwnerRef`, `addControllerRef`). Sans-IO: claims in, decisions and new owner
//! references out.
//!
//! The garbage collector does the deleting: a claim the set should take with it when deleted
//! (`whenDeleted: Delete`) carries a controller reference to the set; a claim of a pod scaled away
//! (`whenScaled: Delete`, the pod's ordinal out of range) carries one to the pod instead. `Retain` wants
//! neither. A claim with a reference to a set or pod of the same name but another uid belongs to an
//! earlier incarnation and is left alone, as is one another controller manages.

use serde_json::{json, Value};

use super::identity::{controller_ref_to, in_ordinal_range, meta, API_VERSION, KIND};

/// One field of the retention policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retention {
    Retain,
    Delete,
    /// A value upstream does not know; treated as `Retain` (with an error logged).
    Unknown,
}

fn retention(value: Option<&Value>) -> Retention {
    match value.and_then(Value::as_str) {
        None | Some("Retain") => Retention::Retain,
        Some("Delete") => Retention::Delete,
        Some(_) => Retention::Unknown,
    }
}

/// `getPersistentVolumeClaimRetentionPolicy`: `(whenDeleted, whenScaled)`, both `Retain` without a policy.
pub fn policy(set: &Value) -> (Retention, Retention) {
    let p = set.pointer("/spec/persistentVolumeClaimRetentionPolicy");
    (retention(p.and_then(|p| p.get("whenDeleted"))), retention(p.and_then(|p| p.get("whenScaled"))))
}

fn owner_refs(claim: &Value) -> Vec<Value> {
    claim.pointer("/metadata/ownerReferences").and_then(Value::as_array).cloned().unwrap_or_default()
}

fn ref_str<'a>(r: &'a Value, field: &str) -> &'a str {
    r.get(field).and_then(Value::as_str).unwrap_or("")
}

/// What an owner reference may point at: the set, or one of its pods.
#[derive(Clone, Copy)]
enum Target {
    Set,
    Pod,
}

impl Target {
    fn group_version_kind(self) -> (&'static str, &'static str) {
        match self {
            Target::Set => (API_VERSION, KIND),
            Target::Pod => ("v1", "Pod"),
        }
    }
}

/// `matchesRef`: same group version, kind and name (the uid aside).
fn matches_ref(r: &Value, obj: &Value, target: Target) -> bool {
    let (api_version, kind) = target.group_version_kind();
    ref_str(r, "apiVersion") == api_version && ref_str(r, "kind") == kind && ref_str(r, "name") == meta(obj, "name")
}

/// `hasOwnerRef`: any reference with the owner's uid.
fn has_owner_ref(claim: &Value, owner: &Value) -> bool {
    owner_refs(claim).iter().any(|r| ref_str(r, "uid") == meta(owner, "uid"))
}

/// `hasStaleOwnerRef`: the first reference naming `obj` carries another uid.
fn has_stale_owner_ref(claim: &Value, obj: &Value, target: Target) -> bool {
    owner_refs(claim)
        .iter()
        .find(|r| matches_ref(r, obj, target))
        .is_some_and(|r| ref_str(r, "uid") != meta(obj, "uid"))
}

fn is_controller(r: &Value) -> bool {
    r.get("controller").and_then(Value::as_bool) == Some(true)
}

/// `hasUnexpectedController`: under a policy that deletes anything, a controller other than the set or
/// the pod, or a reference to either with another uid.
pub fn has_unexpected_controller(claim: &Value, set: &Value, pod: &Value) -> bool {
    if policy(set) == (Retention::Retain, Retention::Retain) {
        return false;
    }
    for r in owner_refs(claim) {
        if matches_ref(&r, set, Target::Set) {
            if ref_str(&r, "uid") != meta(set, "uid") {
                return true;
            }
            continue;
        }
        if matches_ref(&r, pod, Target::Pod) {
            if ref_str(&r, "uid") != meta(pod, "uid") {
                return true;
            }
            continue;
        }
        if is_controller(&r) {
            return true;
        }
    }
    false
}

/// `hasNonControllerOwner`: the set or the pod owns the claim without being its controller.
fn has_non_controller_owner(claim: &Value, set: &Value, pod: &Value) -> bool {
    owner_refs(claim).iter().any(|r| {
        let uid = ref_str(r, "uid");
        (uid == meta(set, "uid") || uid == meta(pod, "uid")) && !is_controller(r)
    })
}

/// `isClaimOwnerUpToDate`: whether the claim's references are what the policy wants (a claim in a state
/// this controller does not own counts as up to date, so that it is not touched).
pub fn is_claim_owner_up_to_date(claim: &Value, set: &Value, pod: &Value) -> bool {
    if has_stale_owner_ref(claim, set, Target::Set) || has_stale_owner_ref(claim, pod, Target::Pod) {
        return true;
    }
    if has_unexpected_controller(claim, set, pod) {
        // Our own references must go; otherwise no controller is added on top of the other one.
        return !(has_owner_ref(claim, set) || has_owner_ref(claim, pod));
    }
    if has_non_controller_owner(claim, set, pod) {
        return false;
    }
    let (set_ref, pod_ref) = (has_owner_ref(claim, set), has_owner_ref(claim, pod));
    let scaled_down = !in_ordinal_range(pod, set);
    match policy(set) {
        (Retention::Delete, Retention::Retain) => set_ref && !pod_ref,
        (Retention::Retain, Retention::Delete) => !set_ref && scaled_down == pod_ref,
        (Retention::Delete, Retention::Delete) => scaled_down != set_ref && scaled_down == pod_ref,
        // Retain on both, or a value upstream treats as Retain.
        _ => !set_ref && !pod_ref,
    }
}

/// `metav1.NewControllerRef(pod, v1 Pod)`.
fn controller_ref_to_pod(pod: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "name": meta(pod, "name"), "uid": meta(pod, "uid"), "controller": true, "blockOwnerDeletion": true})
}

/// `addControllerRef`: `owner` as a controller unless a reference with its uid is there.
fn add_controller_ref(refs: &mut Vec<Value>, owner: &Value, new_ref: Value) {
    if !refs.iter().any(|r| ref_str(r, "uid") == meta(owner, "uid")) {
        refs.push(new_ref);
    }
}

/// `updateClaimOwnerRefForSetAndPod`: the claim's owner references, ours scrubbed and set again as the
/// policy wants (none when another controller manages the claim).
pub fn updated_owner_refs(claim: &Value, set: &Value, pod: &Value) -> Vec<Value> {
    let unexpected = has_unexpected_controller(claim, set, pod);
    let mut refs: Vec<Value> = owner_refs(claim)
        .into_iter()
        .filter(|r| !(matches_ref(r, set, Target::Set) || matches_ref(r, pod, Target::Pod)))
        .collect();
    if unexpected {
        return refs;
    }
    let scaled_down = !in_ordinal_range(pod, set);
    match policy(set) {
        (Retention::Delete, Retention::Retain) => add_controller_ref(&mut refs, set, controller_ref_to(set)),
        (Retention::Retain, Retention::Delete) if scaled_down => {
            add_controller_ref(&mut refs, pod, controller_ref_to_pod(pod))
        }
        (Retention::Delete, Retention::Delete) if scaled_down => {
            add_controller_ref(&mut refs, pod, controller_ref_to_pod(pod))
        }
        (Retention::Delete, Retention::Delete) => add_controller_ref(&mut refs, set, controller_ref_to(set)),
        // Retain on both, Retain on scaling with the pod in range, or a value upstream treats as Retain.
        _ => {}
    }
    refs
}

/// The claim with [`updated_owner_refs`] in place.
pub fn with_updated_owner_refs(claim: &Value, set: &Value, pod: &Value) -> Value {
    let mut claim = claim.clone();
    claim["metadata"]["ownerReferences"] = Value::Array(updated_owner_refs(&claim, set, pod));
    claim
}

/// `PodClaimIsStale`'s test of one existing claim: under `whenScaled: Delete`, a claim naming a pod of
/// this name with another uid (any uid, for a pod not yet created) belongs to a pod that is gone, and
/// blocks the new pod until the garbage collector removes it.
pub fn claim_is_stale(set: &Value, claim: &Value, pod: &Value) -> bool {
    policy(set).1 != Retention::Retain && has_stale_owner_ref(claim, pod, Target::Pod)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(when_deleted: &str, when_scaled: &str) -> Value {
        json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid"},
            "spec": {"replicas": 2, "persistentVolumeClaimRetentionPolicy": {"whenDeleted": when_deleted, "whenScaled": when_scaled}},
        })
    }

    fn pod(ordinal: i64) -> Value {
        json!({"metadata": {"name": format!("web-{ordinal}"), "namespace": "ns", "uid": format!("pod-{ordinal}")}})
    }

    fn claim(refs: Value) -> Value {
        json!({"metadata": {"name": "data-web-0", "namespace": "ns", "ownerReferences": refs}})
    }

    fn set_ref(uid: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": uid, "controller": true, "blockOwnerDeletion": true})
    }

    fn pod_ref(ordinal: i64, uid: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "name": format!("web-{ordinal}"), "uid": uid, "controller": true, "blockOwnerDeletion": true})
    }

    fn uids(refs: &[Value]) -> Vec<&str> {
        refs.iter().map(|r| ref_str(r, "uid")).collect()
    }

    #[test]
    fn owner_references_follow_the_policy() {
        // (whenDeleted, whenScaled, pod ordinal (1 in range, 5 scaled down), the owners wanted)
        let cases: &[(&str, &str, i64, &[&str])] = &[
            ("Retain", "Retain", 1, &[]),
            ("Retain", "Retain", 5, &[]),
            ("Delete", "Retain", 1, &["set-uid"]),
            ("Delete", "Retain", 5, &["set-uid"]),
            ("Retain", "Delete", 1, &[]),
            ("Retain", "Delete", 5, &["pod-5"]),
            ("Delete", "Delete", 1, &["set-uid"]),
            ("Delete", "Delete", 5, &["pod-5"]),
        ];
        for &(deleted, scaled, ord, want) in cases {
            let (s, p) = (set(deleted, scaled), pod(ord));
            let bare = claim(json!([]));
            let refs = updated_owner_refs(&bare, &s, &p);
            assert_eq!(uids(&refs), want, "{deleted}/{scaled} pod {ord}");
            let fixed = with_updated_owner_refs(&bare, &s, &p);
            assert!(is_claim_owner_up_to_date(&fixed, &s, &p), "{deleted}/{scaled} pod {ord}: fixed");
            assert_eq!(is_claim_owner_up_to_date(&bare, &s, &p), want.is_empty(), "{deleted}/{scaled} pod {ord}: bare");
        }
    }

    #[test]
    fn refs_are_moved_when_the_pod_is_scaled_away() {
        let s = set("Delete", "Delete");
        let owned_by_set = claim(json!([set_ref("set-uid")]));
        assert!(is_claim_owner_up_to_date(&owned_by_set, &s, &pod(1)));
        assert!(!is_claim_owner_up_to_date(&owned_by_set, &s, &pod(5)));
        assert_eq!(uids(&updated_owner_refs(&owned_by_set, &s, &pod(5))), ["pod-5"]);
    }

    #[test]
    fn claims_of_others_or_of_earlier_incarnations_are_left_alone() {
        let s = set("Delete", "Delete");
        let other = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "x", "controller": true});
        // A reference to a set of our name with another uid: up to date (not ours to touch).
        assert!(is_claim_owner_up_to_date(&claim(json!([set_ref("old-uid")])), &s, &pod(1)));
        // Another controller: up to date while we hold no reference, our references scrubbed otherwise.
        assert!(has_unexpected_controller(&claim(json!([other.clone()])), &s, &pod(1)));
        assert!(is_claim_owner_up_to_date(&claim(json!([other.clone()])), &s, &pod(1)));
        let both = claim(json!([other.clone(), set_ref("set-uid")]));
        assert!(!is_claim_owner_up_to_date(&both, &s, &pod(1)));
        assert_eq!(uids(&updated_owner_refs(&both, &s, &pod(1))), ["x"]);
        // Under Retain on both, another controller is nobody's concern.
        assert!(!has_unexpected_controller(&claim(json!([other])), &set("Retain", "Retain"), &pod(1)));
        // Our reference without `controller` needs fixing.
        let mut weak = set_ref("set-uid");
        weak["controller"] = json!(false);
        assert!(!is_claim_owner_up_to_date(&claim(json!([weak])), &s, &pod(1)));
    }

    #[test]
    fn stale_claims_block_a_new_pod_only_under_when_scaled_delete() {
        let new_pod = json!({"metadata": {"name": "web-0", "namespace": "ns"}});
        let old = claim(json!([pod_ref(0, "gone")]));
        assert!(claim_is_stale(&set("Retain", "Delete"), &old, &new_pod));
        assert!(!claim_is_stale(&set("Delete", "Retain"), &old, &new_pod));
        assert!(!claim_is_stale(&set("Retain", "Delete"), &claim(json!([])), &new_pod));
        let live = json!({"metadata": {"name": "web-0", "namespace": "ns", "uid": "gone"}});
        assert!(!claim_is_stale(&set("Retain", "Delete"), &old, &live));
        assert_eq!(policy(&json!({"spec": {}})), (Retention::Retain, Retention::Retain));
        assert_eq!(policy(&set("Delete", "Bogus")), (Retention::Delete, Retention::Unknown));
    }
}
