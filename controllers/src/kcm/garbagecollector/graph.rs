//! The garbage collector's ownership graph and the GraphBuilder that keeps it, without IO.
//!
//! Upstream: kube-controller-manager 1.32, `pkg/controller/garbagecollector/graph.go` (the node),
//! `graph_builder.go` (`processGraphChanges`, `addDependentToOwners`, `reportInvalidNamespaceOwnerRef`,
//! `referencesDiffs`, `processTransitions`, `partitionDependents`, `getAlternateOwnerIdentity`) and
//! `uid_cache.go` (the absent-owner LRU). The shell feeds informer events (and the virtual delete events the
//! decisions in `decide` ask for) into [`Graph::observe`], then does the follow-up work it returns: adds
//! uids to the attempt-to-delete / attempt-to-orphan work queues and records the warning events.
//!
//! Upstream's queues hold node pointers; here they hold uids and the worker reads the node from the graph
//! when it pops one. The one visible difference: a virtual node later observed under other coordinates is
//! skipped once upstream (its stale pointer is still virtual), while here it is processed as the observed
//! node, which upstream then does anyway through the dependents it enqueues.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

pub use super::absent_owners::AbsentOwnerCache;
pub use super::object_ref::ObjectRef;

/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";
/// Upstream builds the shared absent-owner cache with `NewReferenceCache(500)`.
pub const ABSENT_OWNER_CACHE_ENTRIES: usize = 500;
/// The event source component of the GraphBuilder's recorder.
pub const EVENT_COMPONENT: &str = "garbage-collector-controller";
/// The reason of the warning for an owner reference whose owner lives in another namespace.
pub const REASON_OWNER_REF_INVALID_NAMESPACE: &str = "OwnerRefInvalidNamespace";

/// One `metadata.ownerReferences` entry, as written on the object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnerReference {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub controller: Option<bool>,
    pub block_owner_deletion: Option<bool>,
}

impl OwnerReference {
    /// Reads one entry; missing fields read as Go's zero values.
    pub fn from_json(value: &Value) -> Self {
        let text = |field: &str| value.get(field).and_then(Value::as_str).unwrap_or("").to_string();
        let flag = |field: &str| value.get(field).and_then(Value::as_bool);
        OwnerReference {
            api_version: text("apiVersion"),
            kind: text("kind"),
            name: text("name"),
            uid: text("uid"),
            controller: flag("controller"),
            block_owner_deletion: flag("blockOwnerDeletion"),
        }
    }

    /// The entry as Go's `json.Marshal` writes a `metav1.OwnerReference` (field order, omitted nils).
    pub fn to_go_json(&self) -> String {
        let [api_version, kind, name, uid] =
            [&self.api_version, &self.kind, &self.name, &self.uid].map(|s| go_json_string(s));
        let controller = self.controller.map(|c| format!(",\"controller\":{c}")).unwrap_or_default();
        let block = self.block_owner_deletion.map(|b| format!(",\"blockOwnerDeletion\":{b}")).unwrap_or_default();
        format!("{{\"apiVersion\":{api_version},\"kind\":{kind},\"name\":{name},\"uid\":{uid}{controller}{block}}}")
    }

    /// Whether this reference blocks its owner's foreground deletion.
    pub fn is_blocking(&self) -> bool {
        self.block_owner_deletion == Some(true)
    }

    /// Upstream's `ownerReferenceMatchesCoordinates`: uid, name, kind and apiVersion agree.
    pub fn matches_coordinates(&self, identity: &ObjectRef) -> bool {
        (&self.uid, &self.name, &self.kind, &self.api_version)
            == (&identity.uid, &identity.name, &identity.kind, &identity.api_version)
    }

    /// The coordinates this reference names, placed in `namespace`.
    pub fn coordinates_in(&self, namespace: Option<String>) -> ObjectRef {
        ObjectRef {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace,
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }
}

/// Encodes a string as Go's `encoding/json` does, which also escapes `<`, `>`, `&`, U+2028 and U+2029.
pub fn go_json_string(text: &str) -> String {
    let encoded = Value::String(text.to_string()).to_string();
    encoded
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A `metadata` string field, empty when absent.
pub fn meta_str<'a>(object: &'a Value, field: &str) -> &'a str {
    object.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("")
}

/// The object's `metadata.ownerReferences`, in order.
pub fn owner_references(object: &Value) -> Vec<OwnerReference> {
    let refs = object.get("metadata").and_then(|m| m.get("ownerReferences")).and_then(Value::as_array);
    refs.map(|refs| refs.iter().map(OwnerReference::from_json).collect()).unwrap_or_default()
}

/// The object's `metadata.finalizers`, in order.
pub fn finalizers(object: &Value) -> Vec<String> {
    let list = object.get("metadata").and_then(|m| m.get("finalizers")).and_then(Value::as_array);
    list.map(|list| list.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
}

/// Whether the object carries `finalizer`.
pub fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    finalizers(object).iter().any(|f| f == finalizer)
}

/// Whether `metadata.deletionTimestamp` is set.
pub fn being_deleted(object: &Value) -> bool {
    object.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|t| !t.is_null())
}

/// Upstream's `deletionStartsWithFinalizer`: the new object is being deleted with `finalizer` and the old
/// one (if any) was not.
fn deletion_starts_with_finalizer(old: Option<&Value>, new: &Value, finalizer: &str) -> bool {
    if !being_deleted(new) || !has_finalizer(new, finalizer) {
        return false;
    }
    old.is_none_or(|old| !being_deleted(old) || !has_finalizer(old, finalizer))
}

/// One object in the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub identity: ObjectRef,
    /// The ownerReferences as last observed (empty for virtual nodes).
    pub owners: Vec<OwnerReference>,
    /// Uids of the nodes that name this one as an owner.
    pub dependents: BTreeSet<String>,
    /// `deletionTimestamp` is set (a one-way trip).
    pub being_deleted: bool,
    /// `deletionTimestamp` is set and the `foregroundDeletion` finalizer is present.
    pub deleting_dependents: bool,
    /// Known only as someone's owner, not yet observed by an informer (upstream's `virtual`).
    pub is_virtual: bool,
}

/// What kind of change an event reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Updated,
    Deleted,
}

/// One change to feed the graph: an informer event, or a virtual delete asked for by a decision.
#[derive(Clone, Debug)]
pub struct GraphEvent {
    pub event_type: EventType,
    /// The object as the apiserver returns it (`apiVersion`, `kind`, `metadata`).
    pub object: Value,
    /// The previous object of an update.
    pub old_object: Option<Value>,
    /// The resource's scope from discovery; a cluster-scoped object's namespace is ignored.
    pub namespaced: bool,
    /// Not from an informer (upstream's `event.virtual`).
    pub is_virtual: bool,
}

impl GraphEvent {
    pub fn added(object: Value, namespaced: bool) -> Self {
        GraphEvent { event_type: EventType::Added, object, old_object: None, namespaced, is_virtual: false }
    }

    pub fn updated(old_object: Value, object: Value, namespaced: bool) -> Self {
        let old_object = Some(old_object);
        GraphEvent { event_type: EventType::Updated, object, old_object, namespaced, is_virtual: false }
    }

    pub fn deleted(object: Value, namespaced: bool) -> Self {
        GraphEvent { event_type: EventType::Deleted, object, old_object: None, namespaced, is_virtual: false }
    }

    /// Upstream's `enqueueVirtualDeleteEvent`: the item was confirmed absent at the apiserver.
    pub fn virtual_delete(identity: &ObjectRef) -> Self {
        let namespace = identity.namespace.clone().unwrap_or_default();
        let metadata = serde_json::json!({"namespace": namespace, "name": identity.name, "uid": identity.uid});
        let object =
            serde_json::json!({"apiVersion": identity.api_version, "kind": identity.kind, "metadata": metadata});
        let namespaced = identity.namespace.is_some();
        GraphEvent { event_type: EventType::Deleted, object, old_object: None, namespaced, is_virtual: true }
    }

    /// Upstream's `identityFromEvent`.
    pub fn identity(&self) -> ObjectRef {
        let namespace = meta_str(&self.object, "namespace");
        let text = |field: &str| self.object.get(field).and_then(Value::as_str).unwrap_or("").to_string();
        ObjectRef {
            api_version: text("apiVersion"),
            kind: text("kind"),
            namespace: (self.namespaced && !namespace.is_empty()).then(|| namespace.to_string()),
            name: meta_str(&self.object, "name").to_string(),
            uid: meta_str(&self.object, "uid").to_string(),
        }
    }
}

/// A warning the shell records (reason [`REASON_OWNER_REF_INVALID_NAMESPACE`], source
/// [`EVENT_COMPONENT`]) on `involved_object`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarningEvent {
    pub involved_object: ObjectRef,
    pub reason: &'static str,
    pub message: String,
}

/// The follow-up work of one observed event, each list in upstream's order (the work queues dedupe).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphChanges {
    /// `attemptToDelete.Add`.
    pub attempt_to_delete: Vec<String>,
    /// `attemptToDelete.AddRateLimited` (a virtual node given another identity to verify).
    pub attempt_to_delete_rate_limited: Vec<String>,
    /// `attemptToOrphan.Add`.
    pub attempt_to_orphan: Vec<String>,
    pub events: Vec<WarningEvent>,
}

/// The ownership graph (upstream's `uidToNode`) plus the absent-owner cache it shares with the collector.
#[derive(Clone, Debug)]
pub struct Graph {
    nodes: BTreeMap<String, Node>,
    pub absent_owners: AbsentOwnerCache,
}

impl Default for Graph {
    fn default() -> Self {
        Graph { nodes: BTreeMap::new(), absent_owners: AbsentOwnerCache::new(ABSENT_OWNER_CACHE_ENTRIES) }
    }
}

/// Upstream's `referencesDiffs` result.
#[derive(Default)]
struct ReferenceDiff {
    added: Vec<OwnerReference>,
    removed: Vec<OwnerReference>,
    changed: Vec<(OwnerReference, OwnerReference)>,
}

/// Compares owner lists by uid: new uids are added, vanished ones removed, differing entries changed.
fn references_diffs(old: &[OwnerReference], new: &[OwnerReference]) -> ReferenceDiff {
    let mut diff = ReferenceDiff::default();
    // Upstream keys the old list by uid, so the last of duplicate entries wins.
    let old_by_uid: BTreeMap<&str, &OwnerReference> = old.iter().map(|r| (r.uid.as_str(), r)).collect();
    let mut unseen: BTreeSet<&str> = old_by_uid.keys().copied().collect();
    for reference in new {
        if unseen.remove(reference.uid.as_str()) {
            let previous = old_by_uid[reference.uid.as_str()];
            if previous != reference {
                diff.changed.push((previous.clone(), reference.clone()));
            }
        } else {
            diff.added.push(reference.clone());
        }
    }
    diff.removed = unseen.into_iter().map(|uid| old_by_uid[uid].clone()).collect();
    diff
}

/// Upstream's `referenceLessThan`: kind, apiVersion, namespace, name, uid.
fn reference_less(a: &ObjectRef, b: &ObjectRef) -> bool {
    (&a.kind, &a.api_version, &a.namespace, &a.name, &a.uid) < (&b.kind, &b.api_version, &b.namespace, &b.name, &b.uid)
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    /// Upstream's `blockingDependents`: dependents holding a `blockOwnerDeletion: true` reference to `uid`
    /// (once per such reference, as upstream lists them).
    pub fn blocking_dependents(&self, uid: &str) -> Vec<String> {
        let Some(node) = self.nodes.get(uid) else { return Vec::new() };
        let mut blocking = Vec::new();
        for dep_uid in &node.dependents {
            let Some(dep) = self.nodes.get(dep_uid) else { continue };
            for owner in &dep.owners {
                if owner.uid == uid && owner.is_blocking() {
                    blocking.push(dep_uid.clone());
                }
            }
        }
        blocking
    }

    fn dependents_of(&self, uid: &str) -> Vec<String> {
        self.nodes.get(uid).map(|n| n.dependents.iter().cloned().collect()).unwrap_or_default()
    }

    /// Upstream's `processGraphChanges` for one event.
    pub fn observe(&mut self, event: &GraphEvent) -> GraphChanges {
        let mut out = GraphChanges::default();
        let identity = event.identity();
        let uid = identity.uid.clone();
        let found = self.nodes.contains_key(&uid);
        if found && !event.is_virtual && self.nodes[&uid].is_virtual {
            self.mark_observed(&identity, &mut out);
        }
        match event.event_type {
            EventType::Added | EventType::Updated if !found => {
                let deleting = being_deleted(&event.object);
                let owners = owner_references(&event.object);
                let node = Node {
                    identity,
                    owners: owners.clone(),
                    dependents: BTreeSet::new(),
                    being_deleted: deleting,
                    deleting_dependents: deleting && has_finalizer(&event.object, FINALIZER_DELETE_DEPENDENTS),
                    is_virtual: false,
                };
                self.nodes.insert(uid.clone(), node);
                self.add_dependent_to_owners(&uid, &owners, &mut out);
                // The informer may fold a creation and a deletion into one event.
                self.process_transitions(event, &uid, &mut out);
            }
            EventType::Added | EventType::Updated => {
                let new_owners = owner_references(&event.object);
                let diff = references_diffs(&self.nodes[&uid].owners, &new_owners);
                if !diff.added.is_empty() || !diff.removed.is_empty() || !diff.changed.is_empty() {
                    self.add_unblocked_owners_to_delete_queue(&diff, &mut out);
                    if let Some(node) = self.nodes.get_mut(&uid) {
                        node.owners = new_owners;
                    }
                    self.add_dependent_to_owners(&uid, &diff.added, &mut out);
                    self.remove_dependent_from_owners(&uid, &diff.removed);
                }
                if being_deleted(&event.object) {
                    if let Some(node) = self.nodes.get_mut(&uid) {
                        node.being_deleted = true;
                    }
                }
                self.process_transitions(event, &uid, &mut out);
            }
            EventType::Deleted => {
                if found {
                    self.observe_delete(event, identity, &mut out);
                }
            }
        }
        out
    }

    /// A virtual node seen by an informer: adopt the observed coordinates, and send dependents whose
    /// references disagree with them to be verified.
    fn mark_observed(&mut self, observed: &ObjectRef, out: &mut GraphChanges) {
        let uid = &observed.uid;
        if self.nodes[uid].identity != *observed {
            let (_, nonmatching) = self.partition_dependents(&self.dependents_of(uid), observed);
            for dep in nonmatching {
                // A namespaced owner in another namespace than its dependent is certainly wrong.
                if observed.namespace.is_some() && self.nodes[&dep].identity.namespace != observed.namespace {
                    self.report_invalid_namespace_owner_ref(&dep, uid, out);
                }
                out.attempt_to_delete.push(dep);
            }
            if let Some(node) = self.nodes.get_mut(uid) {
                node.identity = observed.clone();
            }
        }
        if let Some(node) = self.nodes.get_mut(uid) {
            node.is_virtual = false;
        }
    }

    fn observe_delete(&mut self, event: &GraphEvent, deleted: ObjectRef, out: &mut GraphChanges) {
        let uid = deleted.uid.clone();
        let existing = self.nodes[&uid].clone();
        let mut remove_existing = true;
        if event.is_virtual {
            let (matching, nonmatching) = self.partition_dependents(&self.dependents_of(&uid), &deleted);
            if existing.is_virtual {
                // Unsure of a virtual node's coordinates: keep it while some dependent names it otherwise.
                if !nonmatching.is_empty() {
                    remove_existing = false;
                    if !matching.is_empty() {
                        self.absent_owners.add(deleted.clone());
                        out.attempt_to_delete.extend(matching);
                    }
                    if existing.identity == deleted {
                        if let Some(replacement) = self.alternate_owner_identity(&nonmatching, &deleted) {
                            if let Some(node) = self.nodes.get_mut(&uid) {
                                node.identity = replacement;
                            }
                            out.attempt_to_delete_rate_limited.push(uid.clone());
                        }
                    }
                }
            } else if existing.identity != deleted {
                // An observed node is never removed on a virtual event that disagrees with its coordinates.
                remove_existing = false;
                if !matching.is_empty() {
                    self.absent_owners.add(deleted.clone());
                    out.attempt_to_delete.extend(matching);
                }
            }
        }
        if !remove_existing {
            return;
        }
        self.nodes.remove(&uid);
        self.remove_dependent_from_owners(&uid, &existing.owners);
        if !existing.dependents.is_empty() {
            self.absent_owners.add(deleted);
        }
        out.attempt_to_delete.extend(existing.dependents.iter().cloned());
        for owner in &existing.owners {
            // An owner waiting for its dependents may now have none left.
            if self.nodes.get(&owner.uid).is_some_and(|n| n.deleting_dependents) {
                out.attempt_to_delete.push(owner.uid.clone());
            }
        }
    }

    /// Upstream's `processTransitions`.
    fn process_transitions(&mut self, event: &GraphEvent, uid: &str, out: &mut GraphChanges) {
        let old = event.old_object.as_ref();
        if deletion_starts_with_finalizer(old, &event.object, FINALIZER_ORPHAN_DEPENDENTS) {
            out.attempt_to_orphan.push(uid.to_string());
            return;
        }
        if deletion_starts_with_finalizer(old, &event.object, FINALIZER_DELETE_DEPENDENTS) {
            // A node first added as virtual never had this set, so set it here.
            if let Some(node) = self.nodes.get_mut(uid) {
                node.deleting_dependents = true;
                out.attempt_to_delete.extend(node.dependents.iter().cloned());
            }
            out.attempt_to_delete.push(uid.to_string());
        }
    }

    /// Upstream's `addDependentToOwners`: links `uid` under each owner, creating virtual owners (sent to be
    /// verified), and sends `uid` itself to be verified when a reference disagrees with an owner's known
    /// coordinates.
    fn add_dependent_to_owners(&mut self, uid: &str, owners: &[OwnerReference], out: &mut GraphChanges) {
        let dependent_namespace = self.nodes[uid].identity.namespace.clone();
        let mut potentially_invalid = false;
        for owner in owners {
            let found = self.nodes.contains_key(&owner.uid);
            if !found {
                let virtual_owner = Node {
                    identity: owner.coordinates_in(dependent_namespace.clone()),
                    owners: Vec::new(),
                    dependents: BTreeSet::new(),
                    being_deleted: false,
                    deleting_dependents: false,
                    is_virtual: true,
                };
                self.nodes.insert(owner.uid.clone(), virtual_owner);
            }
            let owner_node = self.nodes.get_mut(&owner.uid).expect("owner node was just ensured");
            owner_node.dependents.insert(uid.to_string());
            if !found {
                out.attempt_to_delete.push(owner.uid.clone());
                continue;
            }
            if potentially_invalid {
                continue;
            }
            let owner_identity = owner_node.identity.clone();
            let owner_observed = !owner_node.is_virtual;
            let owner_namespaced = owner_identity.namespace.is_some();
            if owner_namespaced && owner_identity.namespace != dependent_namespace {
                // Only cluster-scoped owners may be referenced across namespaces.
                if owner_observed {
                    self.report_invalid_namespace_owner_ref(uid, &owner.uid, out);
                }
                potentially_invalid = true;
            } else if !owner.matches_coordinates(&owner_identity) {
                potentially_invalid = true;
            } else if !owner_namespaced && owner_identity.namespace != dependent_namespace && !owner_observed {
                // A virtual cluster-scoped owner might be a namespaced object wrongly referenced by a
                // cluster-scoped dependent (kubernetes#98040).
                potentially_invalid = true;
            }
        }
        if potentially_invalid {
            out.attempt_to_delete.push(uid.to_string());
        }
    }

    /// Upstream's `reportInvalidNamespaceOwnerRef`.
    fn report_invalid_namespace_owner_ref(&self, dep_uid: &str, owner_uid: &str, out: &mut GraphChanges) {
        let Some(dep) = self.nodes.get(dep_uid) else { return };
        let Some(reference) = dep.owners.iter().find(|o| o.uid == owner_uid) else { return };
        let namespace = dep.identity.namespace.clone();
        let invalid = reference.coordinates_in(namespace.clone());
        let quoted = go_json_string(namespace.as_deref().unwrap_or(""));
        out.events.push(WarningEvent {
            involved_object: dep.identity.clone(),
            reason: REASON_OWNER_REF_INVALID_NAMESPACE,
            message: format!("ownerRef {invalid} does not exist in namespace {quoted}"),
        });
    }

    fn remove_dependent_from_owners(&mut self, uid: &str, owners: &[OwnerReference]) {
        for owner in owners {
            if let Some(node) = self.nodes.get_mut(&owner.uid) {
                node.dependents.remove(uid);
            }
        }
    }

    /// Upstream's `addUnblockedOwnersToDeleteQueue`: a blocking reference removed or set non-blocking may
    /// free an owner waiting for its dependents.
    fn add_unblocked_owners_to_delete_queue(&self, diff: &ReferenceDiff, out: &mut GraphChanges) {
        for reference in &diff.removed {
            if reference.is_blocking() && self.nodes.contains_key(&reference.uid) {
                out.attempt_to_delete.push(reference.uid.clone());
            }
        }
        for (old, new) in &diff.changed {
            if old.is_blocking() && !new.is_blocking() && self.nodes.contains_key(&new.uid) {
                out.attempt_to_delete.push(new.uid.clone());
            }
        }
    }

    /// Upstream's `partitionDependents`: dependents whose reference to `owner.uid` matches its coordinates,
    /// and those with one that does not (a dependent may be in both).
    fn partition_dependents(&self, dependents: &[String], owner: &ObjectRef) -> (Vec<String>, Vec<String>) {
        let (mut matching, mut nonmatching) = (Vec::new(), Vec::new());
        for dep_uid in dependents {
            let Some(dep) = self.nodes.get(dep_uid) else { continue };
            let (mut found_match, mut found_mismatch) = (false, false);
            if owner.namespace.is_some() && owner.namespace != dep.identity.namespace {
                found_mismatch = true;
            } else {
                for reference in dep.owners.iter().filter(|r| r.uid == owner.uid) {
                    if reference.matches_coordinates(owner) {
                        found_match = true;
                    } else {
                        found_mismatch = true;
                    }
                }
            }
            if found_match {
                matching.push(dep_uid.clone());
            }
            if found_mismatch {
                nonmatching.push(dep_uid.clone());
            }
        }
        (matching, nonmatching)
    }

    /// Upstream's `getAlternateOwnerIdentity`: among the other coordinates `deps` give `absent.uid`, the
    /// first following `absent` in `referenceLessThan` order, else the first overall.
    fn alternate_owner_identity(&self, deps: &[String], absent: &ObjectRef) -> Option<ObjectRef> {
        let absent_cluster_scoped = absent.namespace.is_none();
        let mut seen = BTreeSet::from([absent.clone()]);
        let (mut first, mut first_following): (Option<ObjectRef>, Option<ObjectRef>) = (None, None);
        for dep in deps.iter().filter_map(|uid| self.nodes.get(uid)) {
            for reference in dep.owners.iter().filter(|r| r.uid == absent.uid) {
                let same_namespace = absent_cluster_scoped || absent.namespace == dep.identity.namespace;
                if reference.matches_coordinates(absent) && same_namespace {
                    continue;
                }
                let mut candidate = reference.coordinates_in(dep.identity.namespace.clone());
                if absent_cluster_scoped && candidate.api_version == absent.api_version && candidate.kind == absent.kind
                {
                    // This apiVersion/kind is known to be cluster-scoped.
                    candidate.namespace = None;
                }
                if !seen.insert(candidate.clone()) {
                    continue;
                }
                if first.as_ref().is_none_or(|f| reference_less(&candidate, f)) {
                    first = Some(candidate.clone());
                }
                if reference_less(absent, &candidate)
                    && first_following.as_ref().is_none_or(|f| reference_less(&candidate, f))
                {
                    first_following = Some(candidate);
                }
            }
        }
        first_following.or(first)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// An apiserver-shaped object; `owners` are `(kind, name, uid, blockOwnerDeletion)` of `v1` owners.
    pub(crate) fn obj(
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        uid: &str,
        owners: &[(&str, &str, &str, bool)],
        finalizers: &[&str],
        deleting: bool,
    ) -> Value {
        let refs: Vec<Value> = owners
            .iter()
            .map(|(k, n, u, b)| json!({"apiVersion": "v1", "kind": k, "name": n, "uid": u, "blockOwnerDeletion": b}))
            .collect();
        let mut metadata = json!({"name": name, "uid": uid, "resourceVersion": "7", "ownerReferences": refs});
        if let Some(ns) = namespace {
            metadata["namespace"] = json!(ns);
        }
        if !finalizers.is_empty() {
            metadata["finalizers"] = json!(finalizers);
        }
        if deleting {
            metadata["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        }
        json!({"apiVersion": "v1", "kind": kind, "metadata": metadata})
    }

    pub(crate) fn add(graph: &mut Graph, object: Value) -> GraphChanges {
        let namespaced = object["metadata"].get("namespace").is_some();
        graph.observe(&GraphEvent::added(object, namespaced))
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn observe_enqueues_upstream_follow_up_work() {
        let owner = obj("ConfigMap", Some("ns"), "owner", "o1", &[], &[], false);
        let dep = obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "owner", "o1", true)], &[], false);
        let foreground = obj("ConfigMap", Some("ns"), "owner", "o1", &[], &["foregroundDeletion"], true);
        let orphaning = obj("ConfigMap", Some("ns"), "owner", "o1", &[], &["orphan"], true);
        let unblocked = obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "owner", "o1", false)], &[], false);
        let unowned = obj("Pod", Some("ns"), "dep", "d1", &[], &[], false);
        let elsewhere = obj("ConfigMap", Some("other"), "owner", "o1", &[], &[], false);
        let role = obj("ClusterRole", None, "r", "r1", &[("ConfigMap", "owner", "o1", false)], &[], false);
        let both = || vec![owner.clone(), dep.clone()];
        let added = |o: &Value| GraphEvent::added(o.clone(), true);
        let updated = |a: &Value, b: &Value| GraphEvent::updated(a.clone(), b.clone(), true);
        let role_added = GraphEvent::added(role.clone(), false);
        // (case, objects added first, event, attempt-to-delete uids, attempt-to-orphan uids, warnings)
        let cases: Vec<(&str, Vec<Value>, GraphEvent, &[&str], &[&str], usize)> = vec![
            ("unknown owner: virtual owner", vec![], added(&dep), &["o1"], &[], 0),
            ("owner deleted: dependents", both(), GraphEvent::deleted(owner.clone(), true), &["d1"], &[], 0),
            ("foreground: dependents then owner", both(), updated(&owner, &foreground), &["d1", "o1"], &[], 0),
            ("orphan finalizer", both(), updated(&owner, &orphaning), &[], &["o1"], 0),
            ("blocking to non-blocking: owner", both(), updated(&dep, &unblocked), &["o1"], &[], 0),
            ("blocking reference removed: owner", both(), updated(&dep, &unowned), &["o1"], &[], 0),
            ("owner seen first in another namespace", vec![elsewhere.clone()], added(&dep), &["d1"], &[], 1),
            ("dependent seen first, owner elsewhere", vec![dep.clone()], added(&elsewhere), &["d1"], &[], 1),
            ("virtual cluster-scoped owner, namespaced dependent", vec![role.clone()], added(&dep), &["d1"], &[], 0),
            ("cluster-scoped dependent, namespaced owner", vec![owner.clone()], role_added, &["r1"], &[], 1),
        ];
        for (name, setup, event, delete, orphan, events) in cases {
            let mut graph = Graph::new();
            for object in setup {
                add(&mut graph, object);
            }
            let changes = graph.observe(&event);
            assert_eq!(changes.attempt_to_delete, strings(delete), "{name}");
            assert_eq!(changes.attempt_to_orphan, strings(orphan), "{name}");
            assert_eq!(changes.events.len(), events, "{name}");
        }
    }

    #[test]
    fn cross_namespace_owner_reference_reports_upstream_message() {
        let mut graph = Graph::new();
        add(&mut graph, obj("ConfigMap", Some("b"), "owner", "o1", &[], &[], false));
        let changes =
            add(&mut graph, obj("Pod", Some("a"), "dep", "d1", &[("ConfigMap", "owner", "o1", true)], &[], false));
        let event = &changes.events[0];
        assert_eq!(event.reason, "OwnerRefInvalidNamespace");
        assert_eq!(event.involved_object.name, "dep");
        assert_eq!(
            event.message,
            "ownerRef [v1/ConfigMap, namespace: a, name: owner, uid: o1] does not exist in namespace \"a\""
        );
        assert_eq!(graph.node("o1").unwrap().dependents, BTreeSet::from(["d1".to_string()]));
    }

    #[test]
    fn virtual_owner_life_cycle() {
        let mut graph = Graph::new();
        add(&mut graph, obj("Pod", Some("ns"), "dep", "d1", &[("ConfigMap", "owner", "o1", false)], &[], false));
        let owner = graph.node("o1").unwrap();
        assert!(owner.is_virtual);
        assert_eq!(owner.identity.namespace.as_deref(), Some("ns"));
        // Confirmed absent: the virtual node goes, its dependent is verified and the owner cached absent.
        let identity = owner.identity.clone();
        let changes = graph.observe(&GraphEvent::virtual_delete(&identity));
        assert_eq!(changes.attempt_to_delete, strings(&["d1"]));
        assert!(graph.node("o1").is_none());
        assert!(graph.absent_owners.has(&identity));
        // A virtual node whose dependents disagree on its coordinates moves to the alternate identity.
        let mut graph = Graph::new();
        add(&mut graph, obj("Pod", Some("ns"), "a", "d1", &[("ConfigMap", "x", "o1", false)], &[], false));
        add(&mut graph, obj("Pod", Some("ns"), "b", "d2", &[("Secret", "y", "o1", false)], &[], false));
        let identity = graph.node("o1").unwrap().identity.clone();
        assert_eq!(identity.kind, "ConfigMap");
        let changes = graph.observe(&GraphEvent::virtual_delete(&identity));
        assert_eq!(changes.attempt_to_delete, strings(&["d1"]));
        assert_eq!(changes.attempt_to_delete_rate_limited, strings(&["o1"]));
        assert_eq!(graph.node("o1").unwrap().identity.kind, "Secret");
    }
}
