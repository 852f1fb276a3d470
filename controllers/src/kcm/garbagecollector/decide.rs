//! The garbage collector's decisions, without IO: what to do with an item popped from the
//! attempt-to-delete or attempt-to-orphan queue, and the exact request bodies upstream sends.
//!
//! Upstream: kube-controller-manager 1.32, `pkg/controller/garbagecollector/garbagecollector.go`
//! (`attemptToDeleteWorker`, `attemptToDeleteItem`, `isDangling`, `classifyReferences`,
//! `processDeletingDependentsItem`, `orphanDependents`, `attemptToOrphanWorker`), `operations.go`
//! (`deleteObject`, `removeFinalizer`), `patch.go` (the JSON merge patch fallbacks and
//! `unblockOwnerReferencesStrategicMergePatch`) and `pkg/controller/controller_ref_manager.go`
//! (`GenerateDeleteOwnerRefStrategicMergeBytes`).
//!
//! An attempt-to-delete runs in steps, the shell doing each GET in between: [`start_attempt_to_delete`]
//! (whether to GET the item), [`after_get`] (with the GET's answer; may ask for owner lookups), then
//! [`decide_with_owners`] (with the owners' lookups). The shell carries out the [`Decision`] and asks
//! [`settle`] whether to forget the queue item or requeue it rate limited. 1.32 deletes with a UID
//! precondition only (the resourceVersion precondition came in 1.34) and treats a NotFound answer to the
//! DELETE as an ordinary error.

use serde_json::Value;

use super::graph::{
    being_deleted, finalizers, go_json_string, has_finalizer, meta_str, owner_references, Graph, ObjectRef,
    OwnerReference, FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS,
};

/// `types.StrategicMergePatchType`: what upstream tries first for every owner-reference patch.
pub const CONTENT_TYPE_STRATEGIC_MERGE_PATCH: &str = "application/strategic-merge-patch+json";
/// `types.MergePatchType`: the fallback when the apiserver answers 415 (custom resources), and the type of
/// the finalizer-removal patch.
pub const CONTENT_TYPE_MERGE_PATCH: &str = "application/merge-patch+json";
/// The content type of the DELETE body (client-go's metadata client).
pub const CONTENT_TYPE_JSON: &str = "application/json";
/// `retry.DefaultBackoff`, which `removeFinalizer` retries conflicts with: 4 attempts, 10ms growing by 5x,
/// 10% jitter.
pub const REMOVE_FINALIZER_ATTEMPTS: u32 = 4;
pub const REMOVE_FINALIZER_BACKOFF_INITIAL_MS: u64 = 10;
pub const REMOVE_FINALIZER_BACKOFF_FACTOR: u64 = 5;
pub const REMOVE_FINALIZER_BACKOFF_JITTER: f64 = 0.1;

/// `metav1.DeletionPropagation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    Orphan,
    Background,
    Foreground,
}

impl Propagation {
    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Orphan => "Orphan",
            Propagation::Background => "Background",
            Propagation::Foreground => "Foreground",
        }
    }
}

/// The first step of an attempt-to-delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// The uid is no longer in the graph: forget the queue item.
    Forget,
    /// Being deleted without waiting for dependents: the final deletion will be observed; call [`settle`]
    /// with [`Decision::Nothing`].
    Nothing,
    /// GET this object (without the namespace if its kind is cluster-scoped), then call [`after_get`].
    Get(ObjectRef),
}

/// The shell's answer to a GET of the item.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemLookup {
    Found(Value),
    NotFound,
    Error(String),
}

/// The shell's answer to a GET of an owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerLookup {
    /// `deleting_dependents`: `deletionTimestamp` set and the `foregroundDeletion` finalizer present.
    Found {
        uid: String,
        being_deleted: bool,
        deleting_dependents: bool,
    },
    NotFound,
    Error(String),
}

impl OwnerLookup {
    /// Builds a `Found` from the owner as the apiserver returned it.
    pub fn from_object(object: &Value) -> Self {
        let deleting = being_deleted(object);
        OwnerLookup::Found {
            uid: meta_str(object, "uid").to_string(),
            being_deleted: deleting,
            deleting_dependents: deleting && has_finalizer(object, FINALIZER_DELETE_DEPENDENTS),
        }
    }
}

/// What upstream's `isDangling` does for one owner reference before talking to the apiserver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerCheckStep {
    /// The absent-owner cache knows the owner is gone: dangling, no GET.
    KnownAbsent,
    /// GET `reference.name` of `reference.api_version`/`kind`, in `namespace` (`None`: cluster-scoped).
    Get { namespace: Option<String> },
    /// The owner's kind has no REST mapping (upstream's `restMappingError`); the shell stops here.
    RestMappingError,
    /// A cluster-scoped item names a namespaced owner, which never resolves; the shell stops here.
    NamespacedOwnerOfClusterScopedItem,
}

/// One owner reference to classify. The shell fills `lookup` for `Get` steps, in order, and may stop at
/// the first `OwnerLookup::Error` as upstream does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerCheck {
    pub reference: OwnerReference,
    pub step: OwnerCheckStep,
    pub lookup: Option<OwnerLookup>,
}

/// A patch of an object's owner references: strategic merge first, JSON merge when that answers 415.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRefPatch {
    pub target: ObjectRef,
    /// Sent with [`CONTENT_TYPE_STRATEGIC_MERGE_PATCH`].
    pub body: String,
    pub fallback: MergeFallback,
}

/// How to build the JSON merge patch fallback from the object's current state (informer cache or GET).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergeFallback {
    /// `deleteOwnerRefJSONMergePatch`: the current references without these owner uids.
    RemoveOwnerRefs(Vec<String>),
    /// `unblockOwnerReferencesJSONMergePatch`: these (the graph's) references, all set non-blocking.
    UnblockOwnerRefs(Vec<OwnerReference>),
}

impl OwnerRefPatch {
    /// The fallback body, sent with [`CONTENT_TYPE_MERGE_PATCH`].
    pub fn merge_fallback_body(&self, current: &Value) -> String {
        let refs: Vec<OwnerReference> = match &self.fallback {
            MergeFallback::RemoveOwnerRefs(uids) => {
                owner_references(current).into_iter().filter(|r| !uids.contains(&r.uid)).collect()
            }
            MergeFallback::UnblockOwnerRefs(owners) => {
                owners.iter().map(|o| OwnerReference { block_owner_deletion: Some(false), ..o.clone() }).collect()
            }
        };
        format!(
            "{{\"metadata\":{{\"resourceVersion\":{},\"ownerReferences\":{}}}}}",
            go_json_string(meta_str(current, "resourceVersion")),
            go_list(refs.iter().map(OwnerReference::to_go_json))
        )
    }
}

/// Removing a finalizer (`removeFinalizer`): GET the target (NotFound: done), build the patch, PATCH it;
/// on a conflict start over, at most [`REMOVE_FINALIZER_ATTEMPTS`] times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoveFinalizer {
    pub target: ObjectRef,
    pub finalizer: &'static str,
}

impl RemoveFinalizer {
    /// The merge patch ([`CONTENT_TYPE_MERGE_PATCH`]) for the object as just read; `None` when the
    /// finalizer is already gone, which counts as done.
    pub fn merge_patch(&self, current: &Value) -> Option<String> {
        let all = finalizers(current);
        if !all.iter().any(|f| f == self.finalizer) {
            return None;
        }
        let kept = all.iter().filter(|f| *f != self.finalizer).map(|f| go_json_string(f));
        Some(format!(
            "{{\"metadata\":{{\"resourceVersion\":{},\"finalizers\":{}}}}}",
            go_json_string(meta_str(current, "resourceVersion")),
            go_list(kept)
        ))
    }

    /// Upstream's error once every attempt met a conflict.
    pub fn conflicts_exhausted_message(&self) -> String {
        let target = &self.target;
        format!(
            "updateMaxRetries({REMOVE_FINALIZER_ATTEMPTS}) has reached. \
             The garbage collector will retry later for owner {target}"
        )
    }
}

/// A DELETE of the item with a UID precondition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeleteItem {
    pub target: ObjectRef,
    pub propagation: Propagation,
    /// Sent (and must succeed) first: the item's blocking references made non-blocking, to break a
    /// possible cycle of foreground deletions.
    pub unblock_first: Option<OwnerRefPatch>,
}

impl DeleteItem {
    /// The DeleteOptions body client-go's metadata client sends ([`CONTENT_TYPE_JSON`]).
    pub fn body(&self) -> String {
        // client-go's JSON encoder ends the document with a newline.
        let (uid, policy) = (go_json_string(&self.target.uid), self.propagation.as_str());
        format!(
            "{{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\
             \"preconditions\":{{\"uid\":{uid}}},\"propagationPolicy\":\"{policy}\"}}\n"
        )
    }
}

/// What to do for an item from the attempt-to-delete queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to send.
    Nothing,
    /// Upstream returns this error: requeue rate limited.
    Retry(String),
    /// The item is gone (NotFound, or another UID under its name): feed
    /// `GraphEvent::virtual_delete(&identity)` to the graph; forget.
    VirtualDelete(ObjectRef),
    /// A cluster-scoped item names a namespaced owner: forget without retrying.
    ForgetInvalid,
    /// GET the owners as each check says, then call [`decide_with_owners`].
    CheckOwners(Vec<OwnerCheck>),
    /// Waiting for dependents: add these blocking dependents to the attempt-to-delete queue.
    Enqueue(Vec<String>),
    /// Waiting for dependents and none blocks any more: remove `foregroundDeletion`.
    RemoveFinalizer(RemoveFinalizer),
    /// Solid owners remain: drop the dangling and waiting references.
    PatchOwnerRefs(OwnerRefPatch),
    Delete(DeleteItem),
}

/// What becomes of the queue item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueOutcome {
    Forget,
    /// `AddRateLimited`.
    Requeue,
}

/// Upstream's `attemptToDeleteWorker` start and the first lines of `attemptToDeleteItem`.
pub fn start_attempt_to_delete(graph: &Graph, uid: &str) -> Start {
    let Some(node) = graph.node(uid) else { return Start::Forget };
    // Being deleted is a one-way trip; the dependents are handled once the deletion is observed.
    if node.being_deleted && !node.deleting_dependents {
        return Start::Nothing;
    }
    Start::Get(node.identity.clone())
}

/// Continues `attemptToDeleteItem` with the item's GET. `owner_namespaced(api_version, kind)` is the REST
/// mapper's scope of a kind (`None`: unmapped).
pub fn after_get(
    graph: &mut Graph,
    uid: &str,
    latest: &ItemLookup,
    owner_namespaced: impl Fn(&str, &str) -> Option<bool>,
) -> Decision {
    let Some(node) = graph.node(uid).cloned() else { return Decision::Nothing };
    let latest = match latest {
        // The graph may hold a virtual node for an owner that never existed: drop it through a virtual
        // delete event.
        ItemLookup::NotFound => return Decision::VirtualDelete(node.identity),
        ItemLookup::Error(message) => return Decision::Retry(message.clone()),
        ItemLookup::Found(latest) => latest,
    };
    if meta_str(latest, "uid") != node.identity.uid {
        return Decision::VirtualDelete(node.identity);
    }
    if node.deleting_dependents {
        return process_deleting_dependents_item(graph, uid);
    }
    let references = owner_references(latest);
    if references.is_empty() {
        return Decision::Nothing;
    }
    let item_namespace = node.identity.namespace.clone();
    let mut checks = Vec::new();
    for reference in references {
        let step = if graph.absent_owners.has(&reference.coordinates_in(None))
            || graph.absent_owners.has(&reference.coordinates_in(item_namespace.clone()))
        {
            OwnerCheckStep::KnownAbsent
        } else {
            match owner_namespaced(&reference.api_version, &reference.kind) {
                None => OwnerCheckStep::RestMappingError,
                Some(true) if item_namespace.is_none() => OwnerCheckStep::NamespacedOwnerOfClusterScopedItem,
                Some(namespaced) => OwnerCheckStep::Get { namespace: item_namespace.clone().filter(|_| namespaced) },
            }
        };
        let stop =
            matches!(step, OwnerCheckStep::RestMappingError | OwnerCheckStep::NamespacedOwnerOfClusterScopedItem);
        checks.push(OwnerCheck { reference, step, lookup: None });
        if stop {
            break;
        }
    }
    Decision::CheckOwners(checks)
}

/// Finishes `attemptToDeleteItem`: classifies the references (`classifyReferences`) and picks the action.
pub fn decide_with_owners(graph: &mut Graph, uid: &str, latest: &Value, checks: &[OwnerCheck]) -> Decision {
    let Some(node) = graph.node(uid).cloned() else { return Decision::Nothing };
    let (mut solid, mut dangling, mut waiting) = (Vec::new(), Vec::new(), Vec::new());
    for check in checks {
        let reference = &check.reference;
        let namespace = match &check.step {
            OwnerCheckStep::KnownAbsent => {
                dangling.push(reference.uid.clone());
                continue;
            }
            OwnerCheckStep::RestMappingError => {
                let message = format!("unable to get REST mapping for {}/{}.", reference.api_version, reference.kind);
                return Decision::Retry(message);
            }
            OwnerCheckStep::NamespacedOwnerOfClusterScopedItem => return Decision::ForgetInvalid,
            OwnerCheckStep::Get { namespace } => namespace,
        };
        match &check.lookup {
            None => return Decision::Retry(format!("owner {} was not looked up", reference.uid)),
            Some(OwnerLookup::Error(message)) => return Decision::Retry(message.clone()),
            // An owner under the same name with another UID is a different object: dangling, as upstream
            // verifies by UID.
            Some(OwnerLookup::Found { uid, .. }) if *uid != reference.uid => {
                graph.absent_owners.add(reference.coordinates_in(namespace.clone()));
                dangling.push(reference.uid.clone());
            }
            Some(OwnerLookup::NotFound) => {
                graph.absent_owners.add(reference.coordinates_in(namespace.clone()));
                dangling.push(reference.uid.clone());
            }
            Some(OwnerLookup::Found { deleting_dependents: true, .. }) => waiting.push(reference.uid.clone()),
            Some(OwnerLookup::Found { .. }) => solid.push(reference.uid.clone()),
        }
    }
    if !solid.is_empty() {
        if dangling.is_empty() && waiting.is_empty() {
            return Decision::Nothing;
        }
        // Waiting references must go too, or those owners would wait on this item forever.
        let owner_uids: Vec<String> = dangling.into_iter().chain(waiting).collect();
        return Decision::PatchOwnerRefs(delete_owner_refs_patch(&node.identity, owner_uids));
    }
    if !waiting.is_empty() && !node.dependents.is_empty() {
        // A dependent also deleting its dependents may be part of a cycle: unblock first (upstream's
        // detection has false positives, which only cost a patch).
        let cycle = node.dependents.iter().any(|d| graph.node(d).is_some_and(|d| d.deleting_dependents));
        let unblock_first = cycle.then(|| unblock_owner_refs_patch(&node.identity, &node.owners));
        let target = node.identity;
        return Decision::Delete(DeleteItem { target, propagation: Propagation::Foreground, unblock_first });
    }
    // No solid owner and nobody waits: collect it, honouring a deletion policy already on the object.
    let propagation = if has_finalizer(latest, FINALIZER_ORPHAN_DEPENDENTS) {
        Propagation::Orphan
    } else if has_finalizer(latest, FINALIZER_DELETE_DEPENDENTS) {
        Propagation::Foreground
    } else {
        Propagation::Background
    };
    Decision::Delete(DeleteItem { target: node.identity, propagation, unblock_first: None })
}

/// Upstream's `processDeletingDependentsItem`.
fn process_deleting_dependents_item(graph: &Graph, uid: &str) -> Decision {
    let Some(node) = graph.node(uid) else { return Decision::Nothing };
    let blocking = graph.blocking_dependents(uid);
    if blocking.is_empty() {
        let target = node.identity.clone();
        return Decision::RemoveFinalizer(RemoveFinalizer { target, finalizer: FINALIZER_DELETE_DEPENDENTS });
    }
    let waiting_on = blocking.into_iter().filter(|d| graph.node(d).is_some_and(|d| !d.deleting_dependents));
    Decision::Enqueue(waiting_on.collect())
}

/// The end of `attemptToDeleteWorker`: `succeeded` says whether carrying out `decision` met no error.
pub fn settle(graph: &Graph, uid: &str, decision: &Decision, succeeded: bool) -> QueueOutcome {
    match decision {
        Decision::VirtualDelete(_) | Decision::ForgetInvalid => QueueOutcome::Forget,
        Decision::Retry(_) => QueueOutcome::Requeue,
        _ if !succeeded => QueueOutcome::Requeue,
        // A virtual node is polled until an informer observes it (kubernetes#56121).
        _ if graph.node(uid).is_some_and(|n| n.is_virtual) => QueueOutcome::Requeue,
        _ => QueueOutcome::Forget,
    }
}

/// The work for an owner from the attempt-to-orphan queue (`attemptToOrphanWorker`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrphanPlan {
    pub owner: ObjectRef,
    /// One per dependent: NotFound answers are ignored; any other error fails the whole item (requeue).
    pub patches: Vec<OwnerRefPatch>,
    /// Carried out after every patch succeeded; failure requeues.
    pub remove_finalizer: RemoveFinalizer,
}

/// `None` when the owner is no longer in the graph (forget).
pub fn attempt_to_orphan(graph: &Graph, uid: &str) -> Option<OrphanPlan> {
    let owner = graph.node(uid)?;
    let patches = owner
        .dependents
        .iter()
        .filter_map(|d| graph.node(d))
        .map(|dep| delete_owner_refs_patch(&dep.identity, vec![owner.identity.uid.clone()]))
        .collect();
    let remove_finalizer = RemoveFinalizer { target: owner.identity.clone(), finalizer: FINALIZER_ORPHAN_DEPENDENTS };
    Some(OrphanPlan { owner: owner.identity.clone(), patches, remove_finalizer })
}

/// Upstream's error when some dependents could not be orphaned; `failures` are (dependent, error) pairs.
pub fn orphan_failure_message(owner: &ObjectRef, failures: &[(ObjectRef, String)]) -> String {
    let each: Vec<String> = failures.iter().map(|(dep, err)| format!("orphaning {dep} failed, {err}")).collect();
    // utilerrors.NewAggregate prints one error bare and several in brackets.
    let aggregate = if each.len() == 1 { each[0].clone() } else { format!("[{}]", each.join(", ")) };
    format!("failed to orphan dependents of owner {owner}, got errors: {aggregate}")
}

/// `GenerateDeleteOwnerRefStrategicMergeBytes(target.uid, owner_uids)`; the uid doubles as a precondition.
pub fn delete_owner_refs_patch(target: &ObjectRef, owner_uids: Vec<String>) -> OwnerRefPatch {
    let deletes = owner_uids.iter().map(|u| format!("{{\"$patch\":\"delete\",\"uid\":{}}}", go_json_string(u)));
    let body = format!(
        "{{\"metadata\":{{\"uid\":{},\"ownerReferences\":{}}}}}",
        go_json_string(&target.uid),
        go_list(deletes)
    );
    OwnerRefPatch { target: target.clone(), body, fallback: MergeFallback::RemoveOwnerRefs(owner_uids) }
}

/// `unblockOwnerReferencesStrategicMergePatch`: a metadata-only object with the blocking references set
/// non-blocking; its zero `creationTimestamp` marshals as `null`.
pub fn unblock_owner_refs_patch(target: &ObjectRef, owners: &[OwnerReference]) -> OwnerRefPatch {
    let blocking: Vec<String> = owners
        .iter()
        .filter(|o| o.is_blocking())
        .map(|o| OwnerReference { block_owner_deletion: Some(false), ..o.clone() }.to_go_json())
        .collect();
    let refs =
        if blocking.is_empty() { String::new() } else { format!(",\"ownerReferences\":[{}]", blocking.join(",")) };
    let body = format!("{{\"metadata\":{{\"uid\":{},\"creationTimestamp\":null{refs}}}}}", go_json_string(&target.uid));
    OwnerRefPatch { target: target.clone(), body, fallback: MergeFallback::UnblockOwnerRefs(owners.to_vec()) }
}

/// A Go slice as `json.Marshal` writes it: `null` when empty (upstream's slices start nil).
fn go_list(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    if items.is_empty() {
        "null".to_string()
    } else {
        format!("[{}]", items.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::super::graph::tests::{add, obj};
    use super::super::graph::GraphEvent;
    use super::*;

    /// Only ConfigMaps and Pods are namespaced in these tests.
    fn scope(_: &str, kind: &str) -> Option<bool> {
        match kind {
            "ConfigMap" | "Pod" => Some(true),
            "ClusterRole" | "Namespace" => Some(false),
            _ => None,
        }
    }

    /// Runs the three steps for `uid` against `item` (the GET's answer), answering owner GETs with
    /// `owners` by uid (missing: NotFound).
    fn run(graph: &mut Graph, uid: &str, item: &Value, owners: &[(&str, OwnerLookup)]) -> Decision {
        assert!(matches!(start_attempt_to_delete(graph, uid), Start::Get(_)));
        match after_get(graph, uid, &ItemLookup::Found(item.clone()), scope) {
            Decision::CheckOwners(mut checks) => {
                for check in &mut checks {
                    let answer = owners.iter().find(|(u, _)| *u == check.reference.uid).map(|(_, l)| l.clone());
                    check.lookup = Some(answer.unwrap_or(OwnerLookup::NotFound));
                }
                decide_with_owners(graph, uid, item, &checks)
            }
            other => other,
        }
    }

    fn graph_with(object: &Value) -> Graph {
        let mut graph = Graph::new();
        add(&mut graph, object.clone());
        graph
    }

    fn found(uid: &str, deleting_dependents: bool) -> OwnerLookup {
        OwnerLookup::Found { uid: uid.to_string(), being_deleted: deleting_dependents, deleting_dependents }
    }

    fn delete_of(decision: &Decision) -> (Propagation, Option<String>) {
        match decision {
            Decision::Delete(d) => (d.propagation, d.unblock_first.as_ref().map(|p| p.body.clone())),
            other => panic!("expected a delete, got {other:?}"),
        }
    }

    #[test]
    fn attempt_to_delete_classifies_owners_like_upstream() {
        let dep = obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "a", "o1", false)], &[], false);
        let two = obj(
            "Pod",
            Some("ns"),
            "dep",
            "d1",
            &[("ConfigMap", "a", "o1", false), ("ConfigMap", "b", "o2", true)],
            &[],
            false,
        );
        let orphaning = obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "a", "o1", false)], &["orphan"], false);
        let cases: Vec<(&str, Value, Vec<(&str, OwnerLookup)>, Decision)> = vec![
            ("solid owner: nothing", dep.clone(), vec![("o1", found("o1", false))], Decision::Nothing),
            (
                "owner error: retry",
                dep.clone(),
                vec![("o1", OwnerLookup::Error("boom".into()))],
                Decision::Retry("boom".into()),
            ),
            (
                "orphan finalizer honoured",
                orphaning,
                vec![],
                Decision::Delete(DeleteItem {
                    target: ObjectRef {
                        api_version: "v1".into(),
                        kind: "Pod".into(),
                        namespace: Some("ns".into()),
                        name: "dep".into(),
                        uid: "d1".into(),
                    },
                    propagation: Propagation::Orphan,
                    unblock_first: None,
                }),
            ),
            (
                "solid and dangling: patch out the dangling one",
                two.clone(),
                vec![("o1", found("o1", false))],
                Decision::PatchOwnerRefs(OwnerRefPatch {
                    target: ObjectRef {
                        api_version: "v1".into(),
                        kind: "Pod".into(),
                        namespace: Some("ns".into()),
                        name: "dep".into(),
                        uid: "d1".into(),
                    },
                    body: r#"{"metadata":{"uid":"d1","ownerReferences":[{"$patch":"delete","uid":"o2"}]}}"#.into(),
                    fallback: MergeFallback::RemoveOwnerRefs(vec!["o2".into()]),
                }),
            ),
        ];
        for (name, item, owners, want) in cases {
            let mut graph = Graph::new();
            add(&mut graph, item.clone());
            assert_eq!(run(&mut graph, "d1", &item, &owners), want, "{name}");
        }
        // The merge fallback keeps the remaining references as Go writes them.
        let Decision::PatchOwnerRefs(patch) = run(&mut graph_with(&two), "d1", &two, &[("o1", found("o1", false))])
        else {
            panic!("expected a patch")
        };
        assert_eq!(
            patch.merge_fallback_body(&two),
            r#"{"metadata":{"resourceVersion":"7","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"o1","blockOwnerDeletion":false}]}}"#
        );
    }

    #[test]
    fn background_cascade_and_uid_mismatch() {
        // (observe the owner's deletion first, how the owner GET answers)
        let cases = [
            ("owner deletion observed", true, None),
            ("owner recreated under a new uid", false, Some(found("o9", false))),
        ];
        for (name, observe_deletion, owner_answer) in cases {
            let mut graph = Graph::new();
            let owner = obj("ConfigMap", Some("ns"), "a", "o1", &[], &[], false);
            let dep = obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "a", "o1", false)], &[], false);
            add(&mut graph, owner.clone());
            add(&mut graph, dep.clone());
            if observe_deletion {
                let changes = graph.observe(&GraphEvent::deleted(owner, true));
                assert_eq!(changes.attempt_to_delete, vec!["d1".to_string()], "{name}");
            }
            let answers: Vec<(&str, OwnerLookup)> = owner_answer.into_iter().map(|a| ("o1", a)).collect();
            let decision = run(&mut graph, "d1", &dep, &answers);
            assert_eq!(delete_of(&decision), (Propagation::Background, None), "{name}");
            let Decision::Delete(delete) = &decision else { unreachable!() };
            assert_eq!(
                delete.body(),
                "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":\"d1\"},\"propagationPolicy\":\"Background\"}\n"
            );
            assert_eq!(settle(&graph, "d1", &decision, true), QueueOutcome::Forget, "{name}");
            // Either way the owner is now known absent in the dependent's namespace.
            let key = ObjectRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: Some("ns".into()),
                name: "a".into(),
                uid: "o1".into(),
            };
            assert!(graph.absent_owners.has(&key), "{name}");
        }
    }

    #[test]
    fn foreground_deletion_walks_blocking_dependents() {
        // (dependent has a dependent of its own, that grandchild is itself deleting dependents)
        let cases = [
            (false, false, Propagation::Background, false),
            (true, false, Propagation::Foreground, false),
            (true, true, Propagation::Foreground, true),
        ];
        for (has_child, child_deleting, want, want_unblock) in cases {
            let mut graph = Graph::new();
            let owner = obj("ConfigMap", Some("ns"), "a", "o1", &[], &[], false);
            let dep = obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "a", "o1", true)], &[], false);
            add(&mut graph, owner.clone());
            add(&mut graph, dep.clone());
            if has_child {
                add(
                    &mut graph,
                    obj(
                        "Pod",
                        Some("ns"),
                        "g",
                        "g1",
                        &[("Pod", "dep", "d1", true)],
                        &["foregroundDeletion"],
                        child_deleting,
                    ),
                );
            }
            let deleting = obj("ConfigMap", Some("ns"), "a", "o1", &[], &["foregroundDeletion"], true);
            let changes = graph.observe(&GraphEvent::updated(owner, deleting.clone(), true));
            assert_eq!(changes.attempt_to_delete, vec!["d1".to_string(), "o1".to_string()]);
            // The owner waits on its blocking dependent.
            assert_eq!(run(&mut graph, "o1", &deleting, &[]), Decision::Enqueue(vec!["d1".into()]));
            let decision = run(&mut graph, "d1", &dep, &[("o1", found("o1", true))]);
            let (propagation, unblock) = delete_of(&decision);
            assert_eq!(propagation, want, "child {has_child} deleting {child_deleting}");
            let expected_unblock = r#"{"metadata":{"uid":"d1","creationTimestamp":null,"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"o1","blockOwnerDeletion":false}]}}"#;
            assert_eq!(unblock.as_deref(), want_unblock.then_some(expected_unblock));
            // Once the dependent is gone the owner is retried and its finalizer removed.
            let changes = graph.observe(&GraphEvent::deleted(dep, true));
            assert!(changes.attempt_to_delete.contains(&"o1".to_string()));
            let Decision::RemoveFinalizer(remove) = run(&mut graph, "o1", &deleting, &[]) else {
                panic!("expected finalizer removal")
            };
            assert_eq!(remove.finalizer, "foregroundDeletion");
            assert_eq!(
                remove.merge_patch(&deleting).unwrap(),
                r#"{"metadata":{"resourceVersion":"7","finalizers":null}}"#
            );
            let two = obj("ConfigMap", Some("ns"), "a", "o1", &[], &["x/keep", "foregroundDeletion"], true);
            assert_eq!(
                remove.merge_patch(&two).unwrap(),
                r#"{"metadata":{"resourceVersion":"7","finalizers":["x/keep"]}}"#
            );
            assert_eq!(remove.merge_patch(&obj("ConfigMap", Some("ns"), "a", "o1", &[], &[], true)), None);
        }
    }

    #[test]
    fn orphan_patches_dependents_then_removes_finalizer() {
        let mut graph = Graph::new();
        let owner = obj("ConfigMap", Some("ns"), "a", "o1", &[], &[], false);
        add(&mut graph, owner.clone());
        for (name, uid) in [("x", "d1"), ("y", "d2")] {
            add(&mut graph, obj("Pod", Some("ns"), name, uid, &[("ConfigMap", "a", "o1", true)], &[], false));
        }
        let orphaning = obj("ConfigMap", Some("ns"), "a", "o1", &[], &["orphan"], true);
        let changes = graph.observe(&GraphEvent::updated(owner, orphaning.clone(), true));
        assert_eq!(changes.attempt_to_orphan, vec!["o1".to_string()]);
        let plan = attempt_to_orphan(&graph, "o1").unwrap();
        let bodies: Vec<(&str, &str)> = plan.patches.iter().map(|p| (p.target.uid.as_str(), p.body.as_str())).collect();
        assert_eq!(
            bodies,
            vec![
                ("d1", r#"{"metadata":{"uid":"d1","ownerReferences":[{"$patch":"delete","uid":"o1"}]}}"#),
                ("d2", r#"{"metadata":{"uid":"d2","ownerReferences":[{"$patch":"delete","uid":"o1"}]}}"#),
            ]
        );
        assert_eq!(plan.remove_finalizer.finalizer, "orphan");
        assert_eq!(
            plan.remove_finalizer.merge_patch(&orphaning).unwrap(),
            r#"{"metadata":{"resourceVersion":"7","finalizers":null}}"#
        );
    }

    #[test]
    fn invalid_and_virtual_items() {
        // A cluster-scoped item naming a namespaced owner is forgotten without retrying.
        let role = obj("ClusterRole", None, "r", "r1", &[("ConfigMap", "a", "o1", false)], &[], false);
        let mut graph = Graph::new();
        graph.observe(&GraphEvent::added(role.clone(), false));
        let decision = run(&mut graph, "r1", &role, &[]);
        assert_eq!(decision, Decision::ForgetInvalid);
        assert_eq!(settle(&graph, "r1", &decision, true), QueueOutcome::Forget);
        // A virtual owner the apiserver does not know becomes a virtual delete, which verifies its dependents.
        let mut graph = Graph::new();
        add(&mut graph, obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "a", "o1", false)], &[], false));
        let Start::Get(identity) = start_attempt_to_delete(&graph, "o1") else { panic!("expected a GET") };
        let decision = after_get(&mut graph, "o1", &ItemLookup::NotFound, scope);
        assert_eq!(decision, Decision::VirtualDelete(identity.clone()));
        let changes = graph.observe(&GraphEvent::virtual_delete(&identity));
        assert_eq!(changes.attempt_to_delete, vec!["d1".to_string()]);
        // A virtual owner that exists is polled until an informer observes it.
        let mut graph = Graph::new();
        add(&mut graph, obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "a", "o1", false)], &[], false));
        let live = obj("ConfigMap", Some("ns"), "a", "o1", &[], &[], false);
        let decision = after_get(&mut graph, "o1", &ItemLookup::Found(live), scope);
        assert_eq!(decision, Decision::Nothing);
        assert_eq!(settle(&graph, "o1", &decision, true), QueueOutcome::Requeue);
        // An unmapped owner kind is retried with upstream's message.
        let odd = obj("Pod", Some("ns"), "dep", "d2", &[("Widget", "w", "w1", false)], &[], false);
        let mut graph = graph_with(&odd);
        assert_eq!(
            run(&mut graph, "d2", &odd, &[]),
            Decision::Retry("unable to get REST mapping for v1/Widget.".into())
        );
    }
}
