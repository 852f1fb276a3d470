//! Emptying a namespace that is being deleted, then releasing it (kube-controller-manager 1.32,
//! `pkg/controller/namespace/deletion/namespaced_resources_deleter.go`): the `Delete` of one namespace,
//! over the HTTP API.
//!
//! One pass: read the namespace live (gone, or not being deleted: nothing to do); make sure its phase is
//! `Terminating` (`PUT .../status`); stop if its `spec.finalizers` is already empty; otherwise, for every
//! namespaced resource discovery lists with the `delete` verb, estimate how long its objects may take
//! (pods: their longest grace period, unless the namespace has been deleting for longer), delete the
//! collection (or, where that is not supported, list and delete each object) and list what remains,
//! counting the finalizers it waits on. The pass's conditions are written to the status when they change.
//! Anything that failed fails the pass; anything still remaining makes it
//! [`DeleteError::ResourcesRemaining`] with the estimate; a clean pass removes the `kubernetes` finalizer
//! through `PUT .../finalize`, which deletes the namespace once no finalizer is left. Namespace writes that
//! conflict are retried at once on a fresh read, unless the namespace was replaced (its uid changed).
//!
//! As upstream, which operations each resource supports is learnt once, from the discovery made when the
//! controller starts; later discoveries only choose which resources to empty. Deletes ask for background
//! propagation, so that the garbage collector never holds an object for its dependents.
//!
//! The pure parts (the estimate, what a remaining list means, the `/finalize` body) are functions of
//! their inputs, tested below.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::conditions::{ConditionUpdater, ContentTotals, DiscoveryFailure};
use crate::bug::{Bug, Bugs};
use crate::client::discovery::{self, Discovered};
use crate::client::resource::builtin;
use crate::client::{ApiResource, Client, ClientError};
use crate::runtime::time::parse_time_us;

/// `finalizerEstimateSeconds`: how long objects held by finalizers are assumed to take.
pub const FINALIZER_ESTIMATE_S: i64 = 15;

/// Why a pass did not finish the namespace.
#[derive(Clone, Debug)]
pub enum DeleteError {
    /// `ResourcesRemainingError`: content is still going away; look again after about this long.
    ResourcesRemaining { estimate_s: i64 },
    /// A request about the namespace itself failed.
    Client(ClientError),
    /// A conflict's fresh read found another namespace under the same name.
    UidChanged,
    /// Discovery or the deletion of some resources' content failed (each failure's text).
    Content(Vec<String>),
}

impl fmt::Display for DeleteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeleteError::ResourcesRemaining { estimate_s } => {
                write!(f, "some content remains in the namespace, estimate {estimate_s} seconds before it is removed")
            }
            DeleteError::Client(err) => f.write_str(&error_text(err)),
            DeleteError::UidChanged => f.write_str("namespace uid has changed across retries"),
            // utilerrors' aggregate: one error as itself, several (without repeats) in brackets.
            DeleteError::Content(errs) => {
                let mut seen = BTreeSet::new();
                let unique: Vec<&str> = errs.iter().map(String::as_str).filter(|e| seen.insert(*e)).collect();
                match unique.as_slice() {
                    [one] => f.write_str(one),
                    many => write!(f, "[{}]", many.join(", ")),
                }
            }
        }
    }
}

impl From<ClientError> for DeleteError {
    fn from(err: ClientError) -> DeleteError {
        DeleteError::Client(err)
    }
}

/// An error's text as client-go prints it: a server's answer is its `Status` message.
pub fn error_text(err: &ClientError) -> String {
    match err {
        ClientError::Status { status, .. } => match status.message.as_deref() {
            Some(message) if !message.is_empty() => message.to_string(),
            _ => err.to_string(),
        },
        ClientError::Transport(text) => text.clone(),
        ClientError::Fenced => err.to_string(),
    }
}

/// `errors.IsMethodNotSupported`.
fn is_method_not_supported(err: &ClientError) -> bool {
    err.code() == Some(405)
}

/// A resource as `schema.GroupVersionResource` prints it (`apps/v1, Resource=deployments`).
pub fn gvr_text(r: &ApiResource) -> String {
    format!("{}/{}, Resource={}", r.group, r.version, r.resource)
}

/// `gvrDeletionMetadata`: what emptying one resource left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GvrDeletionMetadata {
    /// How much longer to wait; zero means no estimate was made, not that nothing remains.
    pub finalizer_estimate_s: i64,
    pub num_remaining: usize,
    /// Finalizer → how many remaining objects carry it.
    pub finalizers_to_num_remaining: BTreeMap<String, usize>,
}

/// `estimateGracefulTerminationForPods`: the longest `terminationGracePeriodSeconds` of the pods that have
/// not finished (neither `Succeeded` nor `Failed`), or 0.
pub fn pods_estimate_s(pods: &[Value]) -> i64 {
    pods.iter()
        .filter(|p| !matches!(p.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed")))
        .filter_map(|p| p.pointer("/spec/terminationGracePeriodSeconds").and_then(Value::as_i64))
        .fold(0, i64::max)
}

/// The end of `estimateGracefulTermination`: an estimate the namespace's deletion has already outlasted
/// (it was deleted at `deleted_at_us`, it is `now_us`) is dropped.
pub fn allowed_estimate_s(estimate_s: i64, deleted_at_us: i64, now_us: i64) -> i64 {
    if now_us.saturating_sub(deleted_at_us) >= estimate_s.saturating_mul(1_000_000) {
        0
    } else {
        estimate_s
    }
}

/// The end of `deleteAllContentForGroupVersionResource`: what the list of `resource` in `namespace` after
/// the deletes means. Nothing left is done; with an estimate, what remains is waited for; objects held by
/// finalizers are waited for `FINALIZER_ESTIMATE_S`; anything else left is unexpected, an error.
pub fn remaining_content(
    items: &[Value],
    estimate_s: i64,
    namespace: &str,
    resource: &ApiResource,
) -> (GvrDeletionMetadata, Option<String>) {
    if items.is_empty() {
        return (GvrDeletionMetadata::default(), None);
    }
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for item in items {
        for f in item.pointer("/metadata/finalizers").and_then(Value::as_array).into_iter().flatten() {
            if let Some(f) = f.as_str() {
                *finalizers.entry(f.to_string()).or_default() += 1;
            }
        }
    }
    let num_remaining = items.len();
    if estimate_s != 0 {
        let meta = GvrDeletionMetadata {
            finalizer_estimate_s: estimate_s,
            num_remaining,
            finalizers_to_num_remaining: finalizers,
        };
        return (meta, None);
    }
    if !finalizers.is_empty() {
        let meta = GvrDeletionMetadata {
            finalizer_estimate_s: FINALIZER_ESTIMATE_S,
            num_remaining,
            finalizers_to_num_remaining: finalizers,
        };
        return (meta, None);
    }
    let meta =
        GvrDeletionMetadata { finalizer_estimate_s: estimate_s, num_remaining, ..GvrDeletionMetadata::default() };
    (meta, Some(format!("unexpected items still remain in namespace: {namespace} for gvr: {}", gvr_text(resource))))
}

/// `finalizeNamespace`'s request body: the namespace's metadata and spec, its finalizers without `token`,
/// deduplicated and sorted (upstream builds them as a string set).
pub fn finalize_body(ns: &Value, token: &str) -> Value {
    let finalizers: BTreeSet<&str> = ns
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|f| *f != token)
        .collect();
    let mut spec = ns.get("spec").filter(|s| s.is_object()).cloned().unwrap_or_else(|| json!({}));
    spec["finalizers"] = json!(finalizers);
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": ns.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "spec": spec,
        "status": {},
    })
}

/// The namespace's `deletionTimestamp` in Unix microseconds, if it is being deleted.
pub fn deletion_timestamp_us(ns: &Value) -> Option<i64> {
    ns.pointer("/metadata/deletionTimestamp").and_then(Value::as_str).and_then(parse_time_us)
}

/// `finalized`: no finalizer is left in `spec.finalizers`.
fn finalized(ns: &Value) -> bool {
    ns.pointer("/spec/finalizers").and_then(Value::as_array).is_none_or(|f| f.is_empty())
}

fn uid(ns: &Value) -> &str {
    ns.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("")
}

fn name(ns: &Value) -> &str {
    ns.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
}

/// The operations whose support is learnt from discovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Operation {
    List,
    DeleteCollection,
}

impl Operation {
    fn verb(self) -> &'static str {
        match self {
            Operation::List => "list",
            Operation::DeleteCollection => "deletecollection",
        }
    }
}

/// A group version resource, the key of the operation cache.
type Gvr = (String, String, String);

fn gvr(r: &ApiResource) -> Gvr {
    (r.group.clone(), r.version.clone(), r.resource.clone())
}

/// The namespace update a conflict retry repeats.
#[derive(Clone, Copy, Debug)]
enum NamespaceUpdate {
    /// `updateNamespaceStatusFunc`: phase `Terminating`.
    Status,
    /// `finalizeNamespace`: the deleter's finalizer removed.
    Finalize,
}

/// Discovery as the namespace controller asks for it (`ServerPreferredNamespacedResources`): the
/// namespaced resources of every group's preferred version, and what failed.
pub async fn discover_namespaced(client: &Client) -> (Vec<Discovered>, Option<DiscoveryFailure>) {
    match discovery::preferred_resources(client).await {
        Ok(found) => {
            let failure = (!found.failed.is_empty()).then(|| {
                DiscoveryFailure::Groups(found.failed.iter().map(|(gv, err)| (gv.clone(), error_text(err))).collect())
            });
            let namespaced = found.resources.into_iter().filter(|d| d.resource.namespaced).collect();
            (namespaced, failure)
        }
        Err(err) => (Vec::new(), Some(DiscoveryFailure::Other(error_text(&err)))),
    }
}

/// The discovery failure a pass counts: every one, so that a namespace is released only once every group
/// was discovered and emptied; with `namespace-discovery-failure-ignored`, failing group versions are taken
/// as having no resources (kubernetes #58577: an unavailable aggregated API answered discovery with 404,
/// which discovery drops), and only a discovery that failed as a whole still counts.
pub fn counted_failure(failure: Option<DiscoveryFailure>, bugs: &Bugs) -> Option<DiscoveryFailure> {
    match failure {
        Some(DiscoveryFailure::Groups(_)) if bugs.has(Bug::DiscoveryFailureIgnored) => None,
        other => other,
    }
}

/// `namespacedResourcesDeleter`.
pub struct Deleter {
    client: Arc<Client>,
    now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// The finalizer this deleter removes (`kubernetes`).
    finalizer_token: String,
    /// `opCache`: operations discovery said a resource lacks. Workers share it; no lock is held across a
    /// request.
    not_supported: Mutex<BTreeSet<(Operation, Gvr)>>,
    /// The controller manager's bug switches (`namespace-discovery-failure-ignored`).
    bugs: Bugs,
}

impl Deleter {
    /// A deleter whose operation cache is filled from `discovered` (`initOpCache`).
    pub fn new(
        client: Arc<Client>,
        now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
        finalizer_token: &str,
        discovered: &[Discovered],
    ) -> Deleter {
        let mut not_supported = BTreeSet::new();
        for d in discovered {
            for op in [Operation::List, Operation::DeleteCollection] {
                if !d.supports(op.verb()) {
                    not_supported.insert((op, gvr(&d.resource)));
                }
            }
        }
        Deleter {
            client,
            now_unix_us,
            finalizer_token: finalizer_token.to_string(),
            not_supported: Mutex::new(not_supported),
            bugs: Bugs::default(),
        }
    }

    /// The same deleter with the controller manager's bug switches.
    pub fn with_bugs(mut self, bugs: Bugs) -> Deleter {
        self.bugs = bugs;
        self
    }

    fn is_supported(&self, op: Operation, resource: &ApiResource) -> bool {
        !self.not_supported.lock().expect("never poisoned").contains(&(op, gvr(resource)))
    }

    fn now(&self) -> String {
        apiserver::registry::system::rfc3339((self.now_unix_us)().div_euclid(1_000_000))
    }

    /// `Delete`: one pass over the namespace `ns_name`.
    pub async fn delete(&self, ns_name: &str) -> Result<(), DeleteError> {
        let namespaces = builtin::namespaces();
        let ns = match self.client.get(&namespaces.object_path(None, ns_name)).await {
            Ok(ns) => ns,
            Err(err) if err.is_not_found() => return Ok(()),
            Err(err) => return Err(err.into()),
        };
        if deletion_timestamp_us(&ns).is_none() {
            return Ok(());
        }
        let mut ns = match self.retry_on_conflict(ns, NamespaceUpdate::Status).await {
            Ok(ns) => ns,
            Err(DeleteError::Client(err)) if err.is_not_found() => return Ok(()),
            Err(err) => return Err(err),
        };
        // The latest view may say the namespace is no longer being deleted.
        if deletion_timestamp_us(&ns).is_none() || finalized(&ns) {
            return Ok(());
        }
        let estimate_s = self.delete_all_content(&mut ns).await?;
        if estimate_s > 0 {
            return Err(DeleteError::ResourcesRemaining { estimate_s });
        }
        // `ns` carries the conditions just written but not their new resourceVersion, as upstream's does, so
        // a pass that changed them finalizes on its first conflict's fresh read.
        match self.retry_on_conflict(ns, NamespaceUpdate::Finalize).await {
            Ok(_) => Ok(()),
            // Another controller sharing the finalizer may have finished the namespace already.
            Err(DeleteError::Client(err)) if err.is_not_found() => Ok(()),
            Err(err) => Err(err),
        }
    }

    /// `retryOnConflictError`: runs `update` until it does not conflict, each retry on a fresh read,
    /// refusing a namespace that was replaced meanwhile.
    async fn retry_on_conflict(&self, ns: Value, update: NamespaceUpdate) -> Result<Value, DeleteError> {
        let path = builtin::namespaces().object_path(None, name(&ns));
        let mut latest = ns;
        loop {
            let result = match update {
                NamespaceUpdate::Status => self.update_status_to_terminating(&latest).await,
                NamespaceUpdate::Finalize => self.finalize(&latest).await,
            };
            match result {
                Ok(ns) => return Ok(ns),
                Err(err) if err.is_conflict() => {}
                Err(err) => return Err(err.into()),
            }
            let fresh = self.client.get(&path).await?;
            if uid(&fresh) != uid(&latest) {
                return Err(DeleteError::UidChanged);
            }
            latest = fresh;
        }
    }

    /// `updateNamespaceStatusFunc`.
    async fn update_status_to_terminating(&self, ns: &Value) -> Result<Value, ClientError> {
        if deletion_timestamp_us(ns).is_none()
            || ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
        {
            return Ok(ns.clone());
        }
        let mut terminating = ns.clone();
        terminating["status"]["phase"] = json!("Terminating");
        let path = builtin::namespaces().subresource_path(None, name(ns), "status");
        self.client.update(&path, &terminating).await
    }

    /// `finalizeNamespace`: a namespace already gone is fine.
    async fn finalize(&self, ns: &Value) -> Result<Value, ClientError> {
        let path = builtin::namespaces().subresource_path(None, name(ns), "finalize");
        match self.client.update(&path, &finalize_body(ns, &self.finalizer_token)).await {
            Err(err) if err.is_not_found() => Ok(ns.clone()),
            other => other,
        }
    }

    /// `deleteAllContent`: empties every deletable namespaced resource, records the pass's conditions on
    /// `ns` (and writes them when they changed), and returns the longest estimate of what remains.
    async fn delete_all_content(&self, ns: &mut Value) -> Result<i64, DeleteError> {
        let namespace = name(ns).to_string();
        let deleted_at_us = deletion_timestamp_us(ns).unwrap_or_default();
        let mut errs = Vec::new();
        let mut updater = ConditionUpdater::default();
        // Discovery errors are not fatal: what was discovered is still emptied.
        let (resources, failure) = discover_namespaced(&self.client).await;
        if let Some(failure) = counted_failure(failure, &self.bugs) {
            errs.push(failure.to_string());
            updater.process_discover_resources_err(&failure);
        }
        let mut totals = ContentTotals::default();
        let mut estimate_s = 0;
        let mut seen = BTreeSet::new();
        for d in resources.iter().filter(|d| d.supports("delete")) {
            if !seen.insert(gvr(&d.resource)) {
                continue;
            }
            let (meta, err) = self.delete_all_content_for(&d.resource, &namespace, deleted_at_us).await;
            if let Some(err) = err {
                errs.push(err.clone());
                updater.process_delete_content_err(err);
            }
            estimate_s = estimate_s.max(meta.finalizer_estimate_s);
            if meta.num_remaining > 0 {
                totals.resources_remaining.insert(d.resource.clone(), meta.num_remaining);
                for (finalizer, n) in meta.finalizers_to_num_remaining.into_iter().filter(|(_, n)| *n != 0) {
                    *totals.finalizers_remaining.entry(finalizer).or_default() += n;
                }
            }
        }
        updater.process_content_totals(&totals);
        // Conditions are written whenever they changed, so that one that recovers says so; a failed write
        // is only logged, as the next pass writes them again.
        if updater.update(ns, &self.now()) {
            let path = builtin::namespaces().subresource_path(None, &namespace, "status");
            if let Err(err) = self.client.update(&path, ns).await {
                tracing::warn!(namespace, "couldn't update status condition for namespace: {}", error_text(&err));
            }
        }
        if errs.is_empty() {
            Ok(estimate_s)
        } else {
            Err(DeleteError::Content(errs))
        }
    }

    /// `deleteAllContentForGroupVersionResource`: what remains of `resource` in `namespace` once its
    /// objects were asked to go, and the failure, if any.
    async fn delete_all_content_for(
        &self,
        resource: &ApiResource,
        namespace: &str,
        deleted_at_us: i64,
    ) -> (GvrDeletionMetadata, Option<String>) {
        let estimate_s = match self.estimate_graceful_termination(resource, namespace, deleted_at_us).await {
            Ok(estimate_s) => estimate_s,
            Err(err) => return (GvrDeletionMetadata::default(), Some(error_text(&err))),
        };
        let with_estimate = GvrDeletionMetadata { finalizer_estimate_s: estimate_s, ..GvrDeletionMetadata::default() };
        match self.delete_collection(resource, namespace).await {
            Err(err) => return (with_estimate, Some(error_text(&err))),
            Ok(true) => {}
            Ok(false) => {
                if let Err(err) = self.delete_each_item(resource, namespace).await {
                    return (with_estimate, Some(error_text(&err)));
                }
            }
        }
        match self.list_collection(resource, namespace).await {
            Err(err) => (with_estimate, Some(error_text(&err))),
            Ok(None) => (with_estimate, None),
            Ok(Some(items)) => remaining_content(&items, estimate_s, namespace, resource),
        }
    }

    /// `estimateGracefulTermination`: only pods are waited for by grace period.
    async fn estimate_graceful_termination(
        &self,
        resource: &ApiResource,
        namespace: &str,
        deleted_at_us: i64,
    ) -> Result<i64, ClientError> {
        let estimate_s = if resource.group.is_empty() && resource.resource == "pods" {
            let list = self.client.get(&builtin::pods().collection_path(Some(namespace))).await?;
            pods_estimate_s(list.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default())
        } else {
            0
        };
        Ok(allowed_estimate_s(estimate_s, deleted_at_us, (self.now_unix_us)()))
    }

    /// `deleteCollection`: whether the server supports it; an error only when it does and failed.
    async fn delete_collection(&self, resource: &ApiResource, namespace: &str) -> Result<bool, ClientError> {
        if !self.is_supported(Operation::DeleteCollection, resource) {
            return Ok(false);
        }
        match self.client.delete(&resource.collection_path(Some(namespace)), Some(&background())).await {
            Ok(_) => Ok(true),
            // A resource discovery lists may still answer a collection request with 404 or 405.
            Err(err) if is_method_not_supported(&err) || err.is_not_found() => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// `listCollection`: the objects of `resource` in `namespace`, or `None` where listing is not supported.
    async fn list_collection(
        &self,
        resource: &ApiResource,
        namespace: &str,
    ) -> Result<Option<Vec<Value>>, ClientError> {
        if !self.is_supported(Operation::List, resource) {
            return Ok(None);
        }
        match self.client.get(&resource.collection_path(Some(namespace))).await {
            Ok(mut list) => Ok(Some(match list.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            })),
            Err(err) if is_method_not_supported(&err) || err.is_not_found() => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// `deleteEachItem`: lists, then deletes object by object; one already gone is fine.
    async fn delete_each_item(&self, resource: &ApiResource, namespace: &str) -> Result<(), ClientError> {
        let Some(items) = self.list_collection(resource, namespace).await? else { return Ok(()) };
        for item in &items {
            let path = resource.object_path(Some(namespace), name(item));
            match self.client.delete(&path, Some(&background())).await {
                Ok(_) => {}
                Err(err) if err.is_not_found() || is_method_not_supported(&err) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }
}

/// The `DeleteOptions` of every delete: background propagation, as the metadata client encodes them.
fn background() -> Value {
    json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(phase: &str, grace: Option<i64>) -> Value {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {}, "status": {"phase": phase}});
        if let Some(g) = grace {
            p["spec"]["terminationGracePeriodSeconds"] = json!(g);
        }
        p
    }

    #[test]
    fn the_pods_estimate_is_the_longest_grace_of_unfinished_pods() {
        let cases: Vec<(Vec<Value>, i64)> = vec![
            (vec![], 0),
            (vec![pod("Running", Some(30)), pod("Pending", Some(45)), pod("Running", None)], 45),
            (vec![pod("Succeeded", Some(90)), pod("Failed", Some(60)), pod("Running", Some(10))], 10),
            (vec![pod("Succeeded", Some(90))], 0),
            (vec![pod("", Some(5))], 5),
        ];
        for (pods, want) in cases {
            assert_eq!(pods_estimate_s(&pods), want, "{pods:?}");
        }
    }

    #[test]
    fn an_estimate_the_deletion_has_outlasted_is_dropped() {
        const S: i64 = 1_000_000;
        // (estimate, deleted at, now, allowed)
        let cases = [
            (30, 100 * S, 100 * S, 30),
            (30, 100 * S, 129 * S + S / 2, 30),
            (30, 100 * S, 130 * S, 0),
            (30, 100 * S, 200 * S, 0),
            (0, 100 * S, 90 * S, 0),
            (30, 100 * S, 90 * S, 30),
        ];
        for (estimate, deleted_at, now, want) in cases {
            assert_eq!(allowed_estimate_s(estimate, deleted_at, now), want, "{estimate} s, {deleted_at} → {now}");
        }
    }

    #[test]
    fn what_remains_after_the_deletes_decides_the_wait() {
        let cms = builtin::config_maps();
        let item = |finalizers: &[&str]| json!({"metadata": {"name": "x", "finalizers": finalizers}});
        let counts =
            |pairs: &[(&str, usize)]| pairs.iter().map(|(f, n)| (f.to_string(), *n)).collect::<BTreeMap<_, _>>();
        // (remaining items, the estimate, the estimate kept, remaining, by finalizer, an error)
        let cases: Vec<(Vec<Value>, i64, i64, usize, BTreeMap<String, usize>, bool)> = vec![
            (vec![], 30, 0, 0, counts(&[]), false),
            (vec![item(&[]), item(&[])], 30, 30, 2, counts(&[]), false),
            (vec![item(&["a"]), item(&["a", "b"])], 0, FINALIZER_ESTIMATE_S, 2, counts(&[("a", 2), ("b", 1)]), false),
            (vec![item(&["a"])], 40, 40, 1, counts(&[("a", 1)]), false),
            (vec![item(&[]), item(&[])], 0, 0, 2, counts(&[]), true),
        ];
        for (items, estimate, want_estimate, want_remaining, want_finalizers, want_err) in cases {
            let (meta, err) = remaining_content(&items, estimate, "ns", &cms);
            assert_eq!(
                (meta.finalizer_estimate_s, meta.num_remaining, &meta.finalizers_to_num_remaining),
                (want_estimate, want_remaining, &want_finalizers),
                "{items:?} with {estimate} s"
            );
            assert_eq!(err.is_some(), want_err, "{items:?} with {estimate} s");
        }
        let (_, err) = remaining_content(
            &[item(&[])],
            0,
            "ns",
            &ApiResource::new("apps", "v1", "deployments", "Deployment", true),
        );
        assert_eq!(
            err.as_deref(),
            Some("unexpected items still remain in namespace: ns for gvr: apps/v1, Resource=deployments")
        );
        let (_, err) = remaining_content(&[item(&[])], 0, "ns", &cms);
        assert_eq!(
            err.as_deref(),
            Some("unexpected items still remain in namespace: ns for gvr: /v1, Resource=configmaps")
        );
    }

    #[test]
    fn the_finalize_body_drops_the_token_and_sorts_the_rest() {
        let ns = |finalizers: Value| {
            json!({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": "ns", "uid": "u", "resourceVersion": "7", "deletionTimestamp": "2023-11-14T22:13:20Z"},
                   "spec": {"finalizers": finalizers}, "status": {"phase": "Terminating", "conditions": []}})
        };
        let cases = [
            (json!(["kubernetes"]), json!([])),
            (json!(["z.io/x", "kubernetes", "a.io/y", "z.io/x"]), json!(["a.io/y", "z.io/x"])),
            (json!([]), json!([])),
            (json!(null), json!([])),
        ];
        for (given, want) in cases {
            let body = finalize_body(&ns(given.clone()), "kubernetes");
            assert_eq!(body["spec"]["finalizers"], want, "{given}");
            assert_eq!(
                body["metadata"],
                ns(given)["metadata"],
                "the metadata, resourceVersion included, is sent as read"
            );
            assert_eq!(body["status"], json!({}), "no status is sent");
            assert_eq!((body["kind"].as_str(), body["apiVersion"].as_str()), (Some("Namespace"), Some("v1")));
        }
    }

    #[test]
    fn errors_print_as_upstreams() {
        let cases = [
            (
                DeleteError::ResourcesRemaining { estimate_s: 15 },
                "some content remains in the namespace, estimate 15 seconds before it is removed",
            ),
            (DeleteError::UidChanged, "namespace uid has changed across retries"),
            (DeleteError::Content(vec!["a".into()]), "a"),
            (DeleteError::Content(vec!["a".into(), "b".into(), "a".into()]), "[a, b]"),
            (DeleteError::Client(ClientError::Transport("dial: refused".into())), "dial: refused"),
        ];
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
        }
    }

    #[test]
    fn a_failed_group_keeps_the_namespace_unless_the_switch_ignores_it() {
        let groups = DiscoveryFailure::Groups(vec![("example.com/v1".into(), "the server is currently unable".into())]);
        let whole = DiscoveryFailure::Other("connection refused".into());
        let mut ignoring = Bugs::default();
        ignoring.insert(Bug::DiscoveryFailureIgnored);
        // (failure, switch on, counted)
        let cases = [
            (None, false, None),
            (None, true, None),
            (Some(groups.clone()), false, Some(groups.clone())),
            (Some(groups), true, None),
            (Some(whole.clone()), false, Some(whole.clone())),
            (Some(whole.clone()), true, Some(whole)),
        ];
        for (failure, on, want) in cases {
            let bugs = if on { ignoring.clone() } else { Bugs::default() };
            assert_eq!(counted_failure(failure.clone(), &bugs), want, "{failure:?}, switch on: {on}");
        }
    }

    #[test]
    fn deletion_timestamps_and_finalized() {
        let ns = json!({"metadata": {"deletionTimestamp": "2023-11-14T22:13:20Z"}, "spec": {"finalizers": []}});
        assert_eq!(deletion_timestamp_us(&ns), Some(1_700_000_000_000_000));
        assert!(finalized(&ns));
        assert_eq!(deletion_timestamp_us(&json!({"metadata": {}})), None);
        assert!(!finalized(&json!({"spec": {"finalizers": ["kubernetes"]}})));
    }
}
