//! The garbage collector's workers: they take uids from the attempt-to-delete and attempt-to-orphan
//! queues, ask [`decide`](super::decide) what to do, and do it through the client.
//!
//! Upstream: kube-controller-manager 1.32, `pkg/controller/garbagecollector/garbagecollector.go`
//! (`processAttemptToDeleteWorker`, `attemptToDeleteWorker`, `attemptToDeleteItem`, `isDangling`,
//! `processAttemptToOrphanWorker`, `attemptToOrphanWorker`, `orphanDependents`), `operations.go`
//! (`getObject`, `getMetadata`, `patchObject`, `deleteObject`, `removeFinalizer`) and `patch.go`
//! (`patch`: a strategic merge patch, and the JSON merge patch fallback when the apiserver answers 415).
//!
//! An attempt-to-delete GETs the item, then each owner the decision asks about, in order, stopping at the
//! first error as `classifyReferences` does, and carries out the decision. A virtual delete goes to the
//! feed, as upstream's `enqueueVirtualDeleteEvent` goes to `graphChanges`. The JSON merge patch fallback
//! is built from the object as the monitor's cache has it, or a GET when not cached (`getMetadata`).
//! `removeFinalizer` retries conflicts with `retry.DefaultBackoff` (4 attempts, 10 ms growing fivefold,
//! 10 % jitter from the collector's seeded generator). An attempt-to-orphan sends the dependents' patches
//! concurrently, as upstream's goroutines do, and removes the `orphan` finalizer once all went through
//! (a dependent already gone counts as through).
//!
//! The graph lock is taken for each step and released before any request.

use std::future::Future;
use std::time::Duration;

use rand::Rng;
use serde_json::Value;

use super::decide::{
    after_get, attempt_to_orphan, decide_with_owners, orphan_failure_message, settle, start_attempt_to_delete,
    Decision, DeleteItem, ItemLookup, OwnerCheckStep, OwnerLookup, OwnerRefPatch, QueueOutcome, RemoveFinalizer, Start,
    REMOVE_FINALIZER_ATTEMPTS, REMOVE_FINALIZER_BACKOFF_FACTOR, REMOVE_FINALIZER_BACKOFF_INITIAL_MS,
    REMOVE_FINALIZER_BACKOFF_JITTER,
};
use super::graph::{GraphEvent, ObjectRef, EVENT_COMPONENT};
use super::monitors::RestMapper;
use super::Shared;
use crate::client::{ClientError, MERGE_PATCH, STRATEGIC_MERGE_PATCH};
use crate::runtime::workqueue::WorkQueue;

/// Why a request of the collector failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum OpError {
    /// The kind has no REST mapping (upstream's `restMappingError`).
    #[error("{0}")]
    RestMapping(String),
    #[error("{0}")]
    Client(#[from] ClientError),
    /// A failure upstream wraps in a message of its own (which hides the cause's kind).
    #[error("{0}")]
    Wrapped(String),
}

impl OpError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, OpError::Client(err) if err.is_not_found())
    }
}

/// `retry.DefaultBackoff`'s wait before attempt `attempt + 1` of a finalizer removal (`attempt` from 1):
/// the step's duration plus up to 10 % of it, `unit` (in [0, 1)) drawing the jitter.
pub fn remove_finalizer_backoff(attempt: u32, unit: f64) -> Duration {
    let step_ms = REMOVE_FINALIZER_BACKOFF_INITIAL_MS * REMOVE_FINALIZER_BACKOFF_FACTOR.pow(attempt.saturating_sub(1));
    let step = Duration::from_millis(step_ms);
    step + step.mul_f64(unit * REMOVE_FINALIZER_BACKOFF_JITTER)
}

/// A request body the decisions wrote as JSON text.
fn body(text: &str) -> Value {
    serde_json::from_str(text).expect("the decisions write valid JSON")
}

/// Runs `workers` workers over `queue`: each takes a uid, processes it, forgets or requeues it rate
/// limited as the processing says, and marks it done (`processAttemptToDeleteWorker`).
async fn work<F, Fut>(queue: &WorkQueue<String>, workers: usize, process: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = QueueOutcome>,
{
    let worker = || async {
        while let Some(uid) = queue.get().await {
            match process(uid.clone()).await {
                QueueOutcome::Forget => queue.forget(&uid),
                QueueOutcome::Requeue => queue.add_rate_limited(uid.clone()),
            }
            queue.done(&uid);
        }
    };
    futures::future::join_all((0..workers.max(1)).map(|_| worker())).await;
}

/// The attempt-to-delete workers, until the queue shuts down.
pub(super) async fn run_attempt_to_delete(shared: &Shared, workers: usize) {
    work(&shared.attempt_to_delete, workers, |uid| attempt_to_delete_item(shared, uid)).await;
}

/// The attempt-to-orphan workers, until the queue shuts down.
pub(super) async fn run_attempt_to_orphan(shared: &Shared, workers: usize) {
    work(&shared.attempt_to_orphan, workers, |uid| attempt_to_orphan_item(shared, uid)).await;
}

/// `attemptToDeleteWorker` for one uid.
async fn attempt_to_delete_item(shared: &Shared, uid: String) -> QueueOutcome {
    let start = start_attempt_to_delete(&shared.lock_graph(), &uid);
    let identity = match start {
        Start::Forget => return QueueOutcome::Forget,
        Start::Nothing => return settle(&shared.lock_graph(), &uid, &Decision::Nothing, true),
        Start::Get(identity) => identity,
    };
    let mapper = shared.mapper();
    let lookup = match get_object(shared, &mapper, &identity).await {
        Ok(object) => ItemLookup::Found(object),
        Err(err) if err.is_not_found() => ItemLookup::NotFound,
        Err(err) => ItemLookup::Error(err.to_string()),
    };
    let mut decision = after_get(&mut shared.lock_graph(), &uid, &lookup, |v, k| mapper.namespaced(v, k));
    if let (Decision::CheckOwners(checks), ItemLookup::Found(latest)) = (&decision, &lookup) {
        let mut checks = checks.clone();
        for check in &mut checks {
            let OwnerCheckStep::Get { namespace } = &check.step else { continue };
            let owner = get_owner(shared, &mapper, check, namespace.as_deref()).await;
            let failed = matches!(owner, OwnerLookup::Error(_));
            check.lookup = Some(owner);
            if failed {
                break;
            }
        }
        decision = decide_with_owners(&mut shared.lock_graph(), &uid, latest, &checks);
    }
    let result = carry_out(shared, &mapper, &decision).await;
    match (&decision, &result) {
        (Decision::Retry(message), _) | (_, Err(message)) => {
            tracing::info!(controller = "garbagecollector", uid, "error syncing item: {message}");
        }
        _ => {}
    }
    settle(&shared.lock_graph(), &uid, &decision, result.is_ok())
}

/// `isDangling`'s GET of one owner.
async fn get_owner(
    shared: &Shared,
    mapper: &RestMapper,
    check: &super::decide::OwnerCheck,
    namespace: Option<&str>,
) -> OwnerLookup {
    let reference = &check.reference;
    let Some(resource) = mapper.resource_for(&reference.api_version, &reference.kind) else {
        return OwnerLookup::Error(format!(
            "unable to get REST mapping for {}/{}.",
            reference.api_version, reference.kind
        ));
    };
    match shared.client.get(&resource.object_path(namespace, &reference.name)).await {
        Ok(owner) => OwnerLookup::from_object(&owner),
        Err(err) if err.is_not_found() => OwnerLookup::NotFound,
        Err(err) => OwnerLookup::Error(err.to_string()),
    }
}

/// Does what `decision` says; `Err` carries the error upstream's `attemptToDeleteItem` would return.
async fn carry_out(shared: &Shared, mapper: &RestMapper, decision: &Decision) -> Result<(), String> {
    match decision {
        Decision::Nothing | Decision::ForgetInvalid | Decision::CheckOwners(_) | Decision::Retry(_) => Ok(()),
        Decision::VirtualDelete(identity) => {
            let _ = shared.virtual_events.send(GraphEvent::virtual_delete(identity));
            Ok(())
        }
        Decision::Enqueue(uids) => {
            for uid in uids {
                shared.attempt_to_delete.add(uid.clone());
            }
            Ok(())
        }
        Decision::PatchOwnerRefs(patch) => patch_owner_refs(shared, mapper, patch).await.map_err(|e| e.to_string()),
        Decision::Delete(delete) => delete_item(shared, mapper, delete).await.map_err(|e| e.to_string()),
        Decision::RemoveFinalizer(remove) => remove_finalizer(shared, mapper, remove).await.map_err(|e| e.to_string()),
    }
}

/// `getObject`: a live GET.
async fn get_object(shared: &Shared, mapper: &RestMapper, target: &ObjectRef) -> Result<Value, OpError> {
    let (_, path) = mapper.locate(target).map_err(OpError::RestMapping)?;
    Ok(shared.client.get(&path).await?)
}

/// `getMetadata`: the monitor's cached copy, else a live GET.
async fn get_metadata(shared: &Shared, mapper: &RestMapper, target: &ObjectRef) -> Result<Value, OpError> {
    let (resource, path) = mapper.locate(target).map_err(OpError::RestMapping)?;
    let key = match target.namespace.as_deref().filter(|_| resource.namespaced) {
        Some(namespace) => format!("{namespace}/{}", target.name),
        None => target.name.clone(),
    };
    if let Some(cached) = shared.cached(&resource, &key) {
        return Ok(cached);
    }
    Ok(shared.client.get(&path).await?)
}

/// `patch`: the strategic merge patch, or when the resource does not take one (415) the JSON merge patch
/// built from the object's current state.
async fn patch_owner_refs(shared: &Shared, mapper: &RestMapper, patch: &OwnerRefPatch) -> Result<(), OpError> {
    let (_, path) = mapper.locate(&patch.target).map_err(OpError::RestMapping)?;
    match shared.client.patch(&path, &body(&patch.body), STRATEGIC_MERGE_PATCH).await {
        Ok(_) => Ok(()),
        Err(err) if err.code() == Some(415) => {
            let current = get_metadata(shared, mapper, &patch.target).await?;
            let fallback = body(&patch.merge_fallback_body(&current));
            shared.client.patch(&path, &fallback, MERGE_PATCH).await?;
            Ok(())
        }
        Err(err) => Err(err.into()),
    }
}

/// `deleteObject`, after the unblocking patch when the decision carries one.
async fn delete_item(shared: &Shared, mapper: &RestMapper, delete: &DeleteItem) -> Result<(), OpError> {
    if let Some(unblock) = &delete.unblock_first {
        patch_owner_refs(shared, mapper, unblock).await?;
    }
    let (_, path) = mapper.locate(&delete.target).map_err(OpError::RestMapping)?;
    let deleted = shared.client.delete(&path, Some(&body(&delete.body()))).await?;
    // The simulation judges each of the collector's deletes against the owners as of its revision. An
    // immediate delete is answered with a `Status` (no owners, no revision): the owners are then the
    // graph's, as the decision saw them.
    if let Some(observer) = shared.client.observer() {
        let answer = if deleted.pointer("/metadata/ownerReferences").is_some() {
            deleted
        } else {
            let owners: Vec<Value> = shared
                .lock_graph()
                .node(&delete.target.uid)
                .map(|node| node.owners.iter().map(|o| serde_json::json!({ "uid": o.uid })).collect())
                .unwrap_or_default();
            serde_json::json!({ "metadata": { "uid": delete.target.uid, "ownerReferences": owners } })
        };
        observer.deleted(EVENT_COMPONENT, &path, &answer);
    }
    Ok(())
}

/// `removeFinalizer`: GET, patch the finalizer out, and on a conflict start over, at most
/// [`REMOVE_FINALIZER_ATTEMPTS`] times. An object already gone, or already without the finalizer, is done.
async fn remove_finalizer(shared: &Shared, mapper: &RestMapper, remove: &RemoveFinalizer) -> Result<(), OpError> {
    let target = &remove.target;
    for attempt in 1..=REMOVE_FINALIZER_ATTEMPTS {
        let current = match get_object(shared, mapper, target).await {
            Ok(current) => current,
            Err(err) if err.is_not_found() => return Ok(()),
            Err(err) => {
                return Err(OpError::Wrapped(format!(
                "cannot finalize owner {target}, because cannot get it: {err}. The garbage collector will retry later"
            )))
            }
        };
        let Some(patch) = remove.merge_patch(&current) else { return Ok(()) };
        let (_, path) = mapper.locate(target).map_err(OpError::RestMapping)?;
        match shared.client.patch(&path, &body(&patch), MERGE_PATCH).await {
            Ok(_) => return Ok(()),
            Err(err) if err.is_conflict() && attempt < REMOVE_FINALIZER_ATTEMPTS => {
                let unit: f64 = shared.rng.lock().expect("never poisoned").random();
                tokio::time::sleep(remove_finalizer_backoff(attempt, unit)).await;
            }
            Err(err) if err.is_conflict() => return Err(OpError::Wrapped(remove.conflicts_exhausted_message())),
            Err(err) => return Err(err.into()),
        }
    }
    Err(OpError::Wrapped(remove.conflicts_exhausted_message()))
}

/// `attemptToOrphanWorker` for one owner uid.
async fn attempt_to_orphan_item(shared: &Shared, uid: String) -> QueueOutcome {
    let Some(plan) = attempt_to_orphan(&shared.lock_graph(), &uid) else { return QueueOutcome::Forget };
    let mapper = shared.mapper();
    let sent = futures::future::join_all(plan.patches.iter().map(|p| patch_owner_refs(shared, &mapper, p))).await;
    // A strategic merge patch of a reference already gone is no error; a dependent already gone is none
    // either.
    let failures: Vec<(ObjectRef, String)> = plan
        .patches
        .iter()
        .zip(sent)
        .filter_map(|(patch, result)| match result {
            Err(err) if !err.is_not_found() => Some((patch.target.clone(), err.to_string())),
            _ => None,
        })
        .collect();
    if !failures.is_empty() {
        let message = orphan_failure_message(&plan.owner, &failures);
        tracing::info!(controller = "garbagecollector", "orphanDependents for {} failed with {message}", plan.owner);
        return QueueOutcome::Requeue;
    }
    if let Err(err) = remove_finalizer(shared, &mapper, &plan.remove_finalizer).await {
        tracing::info!(controller = "garbagecollector", "removeOrphanFinalizer for {} failed with {err}", plan.owner);
        return QueueOutcome::Requeue;
    }
    QueueOutcome::Forget
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn finalizer_removal_backs_off_like_default_backoff() {
        // (attempt that conflicted, jitter draw, wait before the next attempt)
        let cases = [
            (1, 0.0, Duration::from_millis(10)),
            (2, 0.0, Duration::from_millis(50)),
            (3, 0.0, Duration::from_millis(250)),
            (1, 0.5, Duration::from_micros(10_500)),
            (3, 0.999, Duration::from_micros(274_975)),
        ];
        for (attempt, unit, want) in cases {
            let got = remove_finalizer_backoff(attempt, unit);
            // Floating point may land a nanosecond either side.
            assert!(got.abs_diff(want) <= Duration::from_nanos(1), "attempt {attempt}, draw {unit}: {got:?}");
        }
    }

    #[test]
    fn not_found_is_told_apart() {
        let status = |code: u16| {
            OpError::Client(ClientError::Status {
                code,
                status: Box::new(k8s_openapi::apimachinery::pkg::apis::meta::v1::Status {
                    code: Some(i32::from(code)),
                    ..Default::default()
                }),
            })
        };
        assert!(status(404).is_not_found());
        assert!(!status(409).is_not_found());
        assert!(!OpError::RestMapping("unable to get REST mapping for v1/X.".into()).is_not_found());
        assert!(!OpError::Wrapped("cannot finalize owner".into()).is_not_found());
    }

    #[tokio::test]
    async fn workers_forget_or_requeue_as_told() {
        let queue: WorkQueue<String> = WorkQueue::default();
        queue.add("forget".into());
        queue.add("requeue".into());
        let calls = AtomicUsize::new(0);
        let process = |uid: String| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if uid == "requeue" && n < 2 {
                    QueueOutcome::Requeue
                } else {
                    QueueOutcome::Forget
                }
            }
        };
        let stop = async {
            // The requeued key comes back after its 5 ms backoff; then everything is done.
            while calls.load(Ordering::SeqCst) < 3 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            queue.shut_down();
        };
        futures::join!(work(&queue, 2, process), stop);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(queue.num_requeues(&"requeue".to_string()), 0, "forgotten once it went through");
        assert_eq!(queue.num_requeues(&"forget".to_string()), 0);
    }
}
