//! One sync of one Job, with its requests (kube-controller-manager 1.32, `pkg/controller/job/job_controller.go`:
//! `syncJob`, `getPodsForJob`, `manageJob`, `deleteActivePods`, `deleteJobPods`,
//! `trackJobStatusAndRemoveFinalizers`, `flushUncountedAndRemoveFinalizers`, `removeTrackingFinalizerFromPods`,
//! `recordJobFinished`, `handleOrphanPod`).
//!
//! The order is upstream's: claim the pods; count the finished ones; decide whether the Job is failing
//! (pod failure policy, backoff limit, deadline) or done; delete the active pods of a finishing Job, or
//! else create or delete pods toward the wanted number (after the failure backoff, only once the
//! expectations are met); then record new results as uncounted, remove their finalizers, count them, and
//! set the terminal condition once nothing is left uncounted. A Job that is gone or finished only gets the
//! tracking finalizers off its remaining pods.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use super::backoff::{self, Record};
use super::indexes;
use super::pods::{self as jpods, is_terminating, JOB_TRACKING_FINALIZER};
use super::tracking::{self, Condition};
use crate::client::resource::builtin;
use crate::client::{Client, ClientError, STRATEGIC_MERGE_PATCH};
use crate::kcm::replicaset::expectations::Expectations;
use crate::kcm::replicaset::pods::{controller_ref, filter_active, is_deleting, is_ready, object_key};
use crate::kcm::replicaset::refs::{claim, Claim};
use crate::kcm::replicaset::selector::label_selector_as_selector;
use crate::kcm::replicaset::sync::error_text;
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::worker::Outcome;
use apiserver::registry::system::rfc3339;

/// `MaxPodCreateDeletePerSync`.
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// The controller's state, shared by its handlers and workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub pods: Informer,
    pub jobs: Informer,
    pub expectations: Arc<Mutex<Expectations>>,
    /// The uids whose finalizer removal each Job still waits to see (`uidTrackingExpectations`).
    pub finalizer_expectations: Arc<Mutex<BTreeMap<String, BTreeSet<String>>>>,
    /// Each Job's pod failure backoff (`backoffStore`).
    pub backoff: Mutex<BTreeMap<String, Record>>,
    pub origin: tokio::time::Instant,
    pub events: Recorder,
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// The switches on (`controller-ignores-expectations`).
    pub bugs: crate::bug::Bugs,
}

/// What one sync counts as it goes (`syncJobCtx`).
pub(super) struct Counts {
    pub(super) active: i64,
    pub(super) ready: i64,
    pub(super) terminating: i64,
    pub(super) succeeded: i64,
}

impl Controller {
    pub(super) fn since_origin(&self) -> Duration {
        self.origin.elapsed()
    }

    pub(super) fn expectations(&self) -> MutexGuard<'_, Expectations> {
        self.expectations.lock().expect("never poisoned")
    }

    fn expected_removals(&self, key: &str) -> BTreeSet<String> {
        self.finalizer_expectations.lock().expect("never poisoned").get(key).cloned().unwrap_or_default()
    }

    /// `syncJob` for `key` (`namespace/name`).
    pub async fn sync(&self, key: String) -> Result<Outcome, String> {
        let Some(shared) = self.jobs.get(&key) else {
            self.expectations().delete(&key);
            self.finalizer_expectations.lock().expect("never poisoned").remove(&key);
            self.backoff.lock().expect("never poisoned").remove(&key);
            return self.release_finalizers(&key, None).await.map(|_| Outcome::Done);
        };
        if tracking::is_finished(&shared) {
            return self.release_finalizers(&key, Some(&shared)).await.map(|_| Outcome::Done);
        }
        let mut job = shared.clone();
        if !job["status"].is_object() {
            job["status"] = json!({});
        }
        if !job["status"]["uncountedTerminatedPods"].is_object() {
            job["status"]["uncountedTerminatedPods"] = json!({});
        }
        let now_us = (self.now_unix_us)();
        // Expectations are checked before the pods are listed, so that a pod created meanwhile defers
        // the decision instead of being missed.
        let satisfied = self.expectations().may_manage(&key, self.since_origin(), &self.bugs);
        let pods = self.claim_pods(&job).await?;
        let active_pods = filter_active(pods.clone());
        let expected_rm = self.expected_removals(&key);
        let mut counts = Counts {
            active: active_pods.len() as i64,
            ready: active_pods.iter().filter(|p| is_ready(p)).count() as i64,
            terminating: pods.iter().filter(|p| is_terminating(p)).count() as i64,
            succeeded: 0,
        };
        let (new_ok, new_failed) = tracking::new_finished_pods(&job, &pods, &expected_rm);
        counts.succeeded = tracking::status_count(&job, "succeeded")
            + new_ok.len() as i64
            + tracking::uncounted(&job, "succeeded").len() as i64;
        let failed = tracking::status_count(&job, "failed")
            + tracking::non_ignored_failed_count(&job, &new_failed)
            + tracking::uncounted(&job, "failed").len() as i64;
        if job.pointer("/status/startTime").is_none_or(Value::is_null) && !tracking::is_suspended(&job) {
            job["status"]["startTime"] = json!(rfc3339(now_us.div_euclid(1_000_000)));
        }
        let previous_backoff = self.backoff.lock().expect("never poisoned").get(&key).copied().unwrap_or_default();
        let new_backoff = backoff::new_record(previous_backoff, &new_ok, &new_failed);
        let (mut finished, mut requeue_after) = tracking::finishing_condition(&job, &pods, failed, now_us);
        let completions = tracking::completions(&job).unwrap_or(0);
        let mut succeeded_indexes = (BTreeSet::new(), BTreeSet::new());
        if tracking::is_indexed(&job) {
            succeeded_indexes = indexes::succeeded_indexes(&job, &pods, completions);
            counts.succeeded = succeeded_indexes.1.len() as i64;
        }
        let mut suspend_changed = false;
        let mut manage_error = None;
        if finished.is_some() {
            let (deleted_ready, deleted, error) = self.delete_active_pods(&job, &active_pods).await;
            if deleted != counts.active || !satisfied {
                // Pods may remain, or be on their way into the cache: not finished yet.
                finished = None;
            }
            counts.active -= deleted;
            counts.terminating += deleted;
            counts.ready -= deleted_ready;
            manage_error = error;
        } else {
            let mut manage_called = false;
            if satisfied && !is_deleting(&job) {
                let result = self
                    .manage_job(
                        &key,
                        &job,
                        &pods,
                        &active_pods,
                        &succeeded_indexes.1,
                        &new_backoff,
                        &mut counts,
                        now_us,
                    )
                    .await;
                match result {
                    Ok(Some(delay)) => requeue_after = Some(requeue_after.map_or(delay, |d| d.min(delay))),
                    Ok(None) => {}
                    Err(err) => manage_error = Some(err),
                }
                manage_called = true;
            }
            let complete = match tracking::completions(&job) {
                None => counts.succeeded > 0 && counts.active == 0,
                Some(c) => counts.succeeded >= c && counts.active == 0,
            };
            if complete {
                finished = Some(Condition::new(
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                ));
            } else if manage_called {
                suspend_changed = self.update_suspension(&mut job, now_us).await;
            }
        }
        let status_int = |job: &Value, f: &str| job.pointer(&format!("/status/{f}")).and_then(Value::as_i64);
        let needs_update = suspend_changed
            || status_int(&job, "active").unwrap_or(0) != counts.active
            || status_int(&job, "ready") != Some(counts.ready)
            || status_int(&job, "terminating") != Some(counts.terminating);
        job["status"]["active"] = json!(counts.active);
        job["status"]["ready"] = json!(counts.ready);
        job["status"]["terminating"] = json!(counts.terminating);
        let indexes = (&succeeded_indexes.0, &succeeded_indexes.1);
        self.track_and_remove_finalizers(
            &key,
            job,
            &pods,
            finished,
            indexes,
            &new_backoff,
            counts.terminating,
            needs_update,
        )
        .await
        .map_err(|e| format!("tracking status: {e}"))?;
        if let Some(err) = manage_error {
            return Err(err);
        }
        Ok(requeue_after.map_or(Outcome::Done, Outcome::RequeueAfter))
    }

    /// The `Suspended` condition after `manageJob`, with its event; resuming restarts the deadline clock.
    async fn update_suspension(&self, job: &mut Value, now_us: i64) -> bool {
        if tracking::is_suspended(job) {
            let changed = tracking::ensure_condition(job, "Suspended", "True", "JobSuspended", "Job suspended", now_us);
            if changed {
                self.events.record(job, EventType::Normal, "Suspended", "Job suspended").await;
            }
            return changed;
        }
        let changed = tracking::ensure_condition(job, "Suspended", "False", "JobResumed", "Job resumed", now_us);
        if changed {
            self.events.record(job, EventType::Normal, "Resumed", "Job resumed").await;
            job["status"]["startTime"] = json!(rfc3339(now_us.div_euclid(1_000_000)));
        }
        changed
    }

    /// `getPodsForJob`: every pod of the namespace the Job owns, adopting selected orphans (with the
    /// tracking finalizer) and releasing owned pods it no longer selects.
    async fn claim_pods(&self, job: &Value) -> Result<Vec<Value>, String> {
        let selector = match label_selector_as_selector(job.pointer("/spec/selector")) {
            Ok(selector) => selector,
            Err(err) => return Err(format!("couldn't get selector for job {}: {err}", object_key(job))),
        };
        let mut claimed = Vec::new();
        let mut errors = Vec::new();
        for pod in self.pods.list_namespace(meta(job, "namespace")) {
            let decision = claim(job, &pod, selector.matches(pod.pointer("/metadata/labels")));
            let patch = match decision {
                Claim::Owned => {
                    claimed.push(pod);
                    continue;
                }
                Claim::Ignore => continue,
                Claim::Adopt => json!({"metadata": {
                    "uid": meta(&pod, "uid"),
                    "ownerReferences": [jpods::controller_ref_to(job)],
                    "finalizers": [JOB_TRACKING_FINALIZER],
                }}),
                Claim::Release => json!({"metadata": {
                    "uid": meta(&pod, "uid"),
                    "ownerReferences": [{"$patch": "delete", "uid": meta(job, "uid")}],
                    "$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER],
                }}),
            };
            match (self.patch_pod(&pod, &patch).await, decision) {
                (Ok(adopted), Claim::Adopt) => claimed.push(adopted),
                (Err(err), _) if !err.is_not_found() && err.code() != Some(422) => errors.push(error_text(&err)),
                _ => {}
            }
        }
        match errors.first() {
            Some(err) => Err(err.clone()),
            None => Ok(claimed),
        }
    }

    pub(super) async fn patch_pod(&self, pod: &Value, patch: &Value) -> Result<Value, ClientError> {
        let path = builtin::pods().object_path(Some(meta(pod, "namespace")), meta(pod, "name"));
        self.client.patch(&path, patch, STRATEGIC_MERGE_PATCH).await
    }

    /// `handleOrphanPod` for the pods of a Job that is gone (`job` of `None`) or finished: their tracking
    /// finalizers go, so that they can be deleted.
    async fn release_finalizers(&self, key: &str, job: Option<&Value>) -> Result<(), String> {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let mut first_error = None;
        for pod in self.pods.list_namespace(namespace) {
            let Some(owner) = controller_ref(&pod) else { continue };
            let field = |f: &str| owner.get(f).and_then(Value::as_str).unwrap_or("").to_string();
            let ours = field("kind") == jpods::KIND
                && field("name") == name
                && job.is_none_or(|j| field("uid") == meta(j, "uid"));
            let Some(patch) = jpods::remove_finalizer_patch(&pod).filter(|_| ours) else { continue };
            if let Err(err) = self.patch_pod(&pod, &patch).await {
                if !err.is_not_found() && first_error.is_none() {
                    first_error = Some(error_text(&err));
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// `deleteActivePods`: deletes them all; returns the ready and all pods deleted, and the first error.
    async fn delete_active_pods(&self, job: &Value, pods: &[Value]) -> (i64, i64, Option<String>) {
        let results = futures::future::join_all(pods.iter().map(|p| self.delete_pod(job, p))).await;
        let mut deleted = pods.len() as i64;
        let mut first_error = None;
        for result in results {
            if let Err(err) = result.filter_not_found() {
                deleted -= 1;
                first_error.get_or_insert(err);
            }
        }
        (pods.iter().filter(|p| is_ready(p)).count() as i64, deleted, first_error)
    }

    /// `RealPodControl.DeletePod`, with its event.
    pub(super) async fn delete_pod(&self, job: &Value, pod: &Value) -> Result<(), ClientError> {
        let name = meta(pod, "name");
        let path = builtin::pods().object_path(Some(meta(pod, "namespace")), name);
        match self.client.delete(&path, None).await {
            Ok(_) => {
                self.events.record(job, EventType::Normal, "SuccessfulDelete", &format!("Deleted pod: {name}")).await;
                Ok(())
            }
            Err(err) if err.is_not_found() => Err(err),
            Err(err) => {
                let message = format!("Error deleting: {}", error_text(&err));
                self.events.record(job, EventType::Warning, "FailedDelete", &message).await;
                Err(err)
            }
        }
    }

    /// `deleteJobPods`: each surplus pod loses its finalizer first (so that it is not counted as failed),
    /// then is deleted. Returns the ready and all pods deleted, and the first error.
    pub(super) async fn delete_job_pods(&self, key: &str, job: &Value, pods: &[Value]) -> (i64, i64, Option<String>) {
        let one = |pod: &Value| {
            let pod = pod.clone();
            async move {
                // Not found counts as deleted; any failure means the informer will never see a deletion.
                let result = match jpods::remove_finalizer_patch(&pod) {
                    Some(patch) => self.patch_pod(&pod, &patch).await.map(|_| ()),
                    None => Ok(()),
                };
                let result = match result {
                    Ok(()) => self.delete_pod(job, &pod).await,
                    Err(err) => Err(err),
                };
                if result.is_err() {
                    self.expectations().deletion_observed(key, &object_key(&pod));
                }
                result.filter_not_found().map(|_| ())
            }
        };
        let results = futures::future::join_all(pods.iter().map(one)).await;
        let (mut ready, mut deleted, mut first_error) = (0, 0, None);
        for (pod, result) in pods.iter().zip(results) {
            match result {
                Ok(()) => {
                    deleted += 1;
                    ready += i64::from(is_ready(pod));
                }
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
        (ready, deleted, first_error)
    }
}

/// A NotFound error is no failure for deletions and finalizer removals.
trait FilterNotFound<T> {
    fn filter_not_found(self) -> Result<Option<T>, String>;
}

impl<T> FilterNotFound<T> for Result<T, ClientError> {
    fn filter_not_found(self) -> Result<Option<T>, String> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(error_text(&err)),
        }
    }
}
