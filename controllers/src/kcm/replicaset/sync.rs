//! One sync of one ReplicaSet, with its requests (kube-controller-manager 1.32,
//! `pkg/controller/replicaset/replica_set.go` `syncReplicaSet`, `claimPods`, `manageReplicas`,
//! `getIndirectlyRelatedPods`; `replica_set_utils.go` `updateReplicaSetStatus`; `controller_utils.go`
//! `RealPodControl`; `controller_ref_manager.go` `ClaimPods`, `AdoptPod`, `ReleasePod`,
//! `RecheckDeletionTimestamp`).
//!
//! The order is upstream's: the ReplicaSet's active pods are claimed (adopting selected orphans, releasing
//! owned pods no longer selected); if its expectations are met and it is not being deleted, pods are
//! created or deleted to reach `spec.replicas`; then the status is written through `/status` if it changed,
//! with one fresh read and retry should the write fail. A failed create or delete is reported in the
//! `ReplicaFailure` condition and makes the sync fail, so that it is retried with backoff.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::expectations::Expectations;
use super::manage::{self, Change};
use super::pods::{controller_ref, filter_active, is_deleting, object_key};
use super::ranking::pods_to_delete;
use super::refs::{self, Claim};
use super::selector::{label_selector_as_selector, Selector};
use super::status::{self, min_ready_seconds, spec_replicas, Status};
use crate::client::resource::builtin;
use crate::client::{Client, ClientError, STRATEGIC_MERGE_PATCH};
use crate::kcm::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::worker::Outcome;

/// `statusUpdateRetries`: one more write after a failed one.
const STATUS_UPDATE_RETRIES: usize = 1;

/// Go's `err.Error()` of a client error: a `Status`'s message alone (any other error as it prints).
pub fn error_text(err: &ClientError) -> String {
    match err {
        ClientError::Status { status, .. } => status.message.clone().unwrap_or_default(),
        other => other.to_string(),
    }
}

/// `utilerrors.NewAggregate(...).Error()`: one message as is, several (each once) bracketed.
fn aggregate(mut errors: Vec<String>) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    errors.retain(|e| seen.insert(e.clone()));
    match errors.len() {
        0 => None,
        1 => errors.pop(),
        _ => Some(format!("[{}]", errors.join(", "))),
    }
}

/// Go's `%v` of a `*metav1.Time` (`2023-11-14 22:13:20 +0000 UTC`), from its RFC 3339 form.
fn go_time(rfc3339: &str) -> String {
    match (rfc3339.get(0..10), rfc3339.get(11..19)) {
        (Some(date), Some(time)) if rfc3339.ends_with('Z') => format!("{date} {time} +0000 UTC"),
        _ => rfc3339.to_string(),
    }
}

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// The controller's state, shared by its handlers and workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub pods: Informer,
    pub replica_sets: Informer,
    pub expectations: Arc<Mutex<Expectations>>,
    /// The origin of the expectations' clock.
    pub origin: tokio::time::Instant,
    pub events: Recorder,
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    pub burst_replicas: usize,
    /// The switches on (`controller-ignores-expectations`).
    pub bugs: crate::bug::Bugs,
}

impl Controller {
    /// The expectations' clock: time since `origin` on tokio's (or madsim's) clock.
    pub fn since_origin(&self) -> Duration {
        self.origin.elapsed()
    }

    fn expectations(&self) -> std::sync::MutexGuard<'_, Expectations> {
        self.expectations.lock().expect("the expectations are never poisoned")
    }

    /// `syncReplicaSet` for `key` (`namespace/name`).
    pub async fn sync(&self, key: String) -> Result<Outcome, String> {
        let Some(rs) = self.replica_sets.get(&key) else {
            self.expectations().delete(&key);
            return Ok(Outcome::Done);
        };
        let needs_sync = self.expectations().may_manage(&key, self.since_origin(), &self.bugs);
        let selector = match label_selector_as_selector(rs.pointer("/spec/selector")) {
            Ok(selector) => selector,
            Err(err) => {
                // Retrying cannot help an invalid selector: the error is reported and the key dropped.
                tracing::error!(
                    "error converting pod selector to selector for rs {}/{}: {err}",
                    meta(&rs, "namespace"),
                    meta(&rs, "name")
                );
                return Ok(Outcome::Done);
            }
        };
        // The cache's pods, shared: this runs for every pod event, over every pod of the namespace.
        let active = filter_active(self.pods.list_namespace_shared(meta(&rs, "namespace")));
        let pods = self.claim_pods(&rs, &selector, active).await?;
        let manage_error =
            if needs_sync && !is_deleting(&rs) { self.manage_replicas(&key, &pods, &rs).await.err() } else { None };
        let now_us = (self.now_unix_us)();
        let new_status = status::calculate(&rs, &pods, manage_error.as_deref(), now_us);
        let updated = self.update_status(&rs, new_status).await.map_err(|e| error_text(&e))?;
        if let Some(err) = manage_error {
            return Err(err);
        }
        // Look again after minReadySeconds, should the pods that are ready not yet count as available.
        let replicas = spec_replicas(&updated);
        let min_ready = min_ready_seconds(&updated);
        let counts = Status::of(&updated);
        if min_ready > 0 && counts.ready_replicas == replicas && counts.available_replicas != replicas {
            return Ok(Outcome::RequeueAfter(Duration::from_secs(u64::try_from(min_ready).unwrap_or(0))));
        }
        Ok(Outcome::Done)
    }

    /// `claimPods`: the active pods this ReplicaSet keeps, after adopting and releasing as it must. Any
    /// failure fails the sync.
    async fn claim_pods(
        &self,
        rs: &Value,
        selector: &Selector,
        pods: Vec<Arc<Value>>,
    ) -> Result<Vec<Arc<Value>>, String> {
        let mut claimed = Vec::new();
        let mut errors = Vec::new();
        // `CanAdopt` asks the apiserver once per claim, and only if some pod is to be adopted.
        let mut can_adopt: Option<Result<(), String>> = None;
        for pod in pods {
            match refs::claim(rs, &pod, selector.matches(pod.pointer("/metadata/labels"))) {
                Claim::Owned => claimed.push(pod),
                Claim::Ignore => {}
                Claim::Adopt => {
                    if can_adopt.is_none() {
                        can_adopt = Some(self.recheck_deletion(rs).await);
                    }
                    if let Some(Err(err)) = &can_adopt {
                        errors.push(format!(
                            "can't adopt Pod {}/{} ({}): {err}",
                            meta(&pod, "namespace"),
                            meta(&pod, "name"),
                            meta(&pod, "uid")
                        ));
                        continue;
                    }
                    match self.patch_pod(&pod, &refs::adopt_patch(rs, &pod)).await {
                        Ok(_) => claimed.push(pod),
                        Err(err) if err.is_not_found() => {}
                        Err(err) => errors.push(error_text(&err)),
                    }
                }
                Claim::Release => match self.patch_pod(&pod, &refs::release_patch(rs, &pod)).await {
                    // Gone, or no longer carrying our reference (an invalid patch): released either way.
                    Err(err) if !err.is_not_found() && err.code() != Some(422) => errors.push(error_text(&err)),
                    _ => {}
                },
            }
        }
        aggregate(errors).map_or(Ok(claimed), Err)
    }

    /// `RecheckDeletionTimestamp` over a live read: the ReplicaSet may adopt unless it is gone, replaced,
    /// or being deleted.
    async fn recheck_deletion(&self, rs: &Value) -> Result<(), String> {
        let (ns, name) = (meta(rs, "namespace"), meta(rs, "name"));
        let fresh = self
            .client
            .get(&builtin::replica_sets().object_path(Some(ns), name))
            .await
            .map_err(|e| format!("can't recheck DeletionTimestamp: {}", error_text(&e)))?;
        if meta(&fresh, "uid") != meta(rs, "uid") {
            return Err(format!(
                "can't recheck DeletionTimestamp: original ReplicaSet {ns}/{name} is gone: got uid {}, wanted {}",
                meta(&fresh, "uid"),
                meta(rs, "uid")
            ));
        }
        if is_deleting(&fresh) {
            return Err(format!("{ns}/{name} has just been deleted at {}", go_time(meta(&fresh, "deletionTimestamp"))));
        }
        Ok(())
    }

    /// `PodControl.PatchPod`: a strategic merge patch.
    async fn patch_pod(&self, pod: &Value, patch: &Value) -> Result<Value, ClientError> {
        let path = builtin::pods().object_path(Some(meta(pod, "namespace")), meta(pod, "name"));
        self.client.patch(&path, patch, STRATEGIC_MERGE_PATCH).await
    }

    /// `manageReplicas`: creates or deletes pods toward `spec.replicas`, setting the expectations first.
    async fn manage_replicas(&self, key: &str, pods: &[Arc<Value>], rs: &Value) -> Result<(), String> {
        match manage::change(pods.len(), spec_replicas(rs), self.burst_replicas) {
            Change::None => Ok(()),
            Change::Create(count) => {
                self.expectations().expect_creations(key, count, self.since_origin());
                let (created, error) =
                    manage::slow_start_batch(count, manage::SLOW_START_INITIAL_BATCH_SIZE, || self.create_pod(rs))
                        .await;
                // The calls never made will never be observed: stop expecting them.
                let mut expectations = self.expectations();
                for _ in created..count {
                    expectations.creation_observed(key);
                }
                error.map_or(Ok(()), Err)
            }
            Change::Delete(count) => {
                let related = self.indirectly_related_pods(rs);
                let pods: Vec<Value> = pods.iter().map(|pod| Value::clone(pod)).collect();
                let doomed = pods_to_delete(&pods, &related, count, (self.now_unix_us)());
                let doomed_keys: Vec<String> = doomed.iter().map(object_key).collect();
                self.expectations().expect_deletions(key, &doomed_keys, self.since_origin());
                let results = futures::future::join_all(doomed.iter().map(|pod| self.delete_pod(rs, pod))).await;
                let mut first_error = None;
                for (pod, result) in doomed.iter().zip(results) {
                    if let Err(err) = result {
                        // A deletion that did not happen will never be observed.
                        self.expectations().deletion_observed(key, &object_key(pod));
                        if !err.is_not_found() && first_error.is_none() {
                            first_error = Some(format!("unable to delete pods: {}", error_text(&err)));
                        }
                    }
                }
                first_error.map_or(Ok(()), Err)
            }
        }
    }

    /// `RealPodControl.CreatePods`: one pod from the template, with its event.
    async fn create_pod(&self, rs: &Value) -> Result<(), String> {
        let pod = refs::pod_from_template(rs)?;
        let path = builtin::pods().collection_path(Some(meta(rs, "namespace")));
        match self.client.create(&path, &pod).await {
            Ok(created) => {
                let message = format!("Created pod: {}", meta(&created, "name"));
                self.events.record(rs, EventType::Normal, "SuccessfulCreate", &message).await;
                Ok(())
            }
            // Nothing can be created in a namespace being deleted: no event, and no failure either.
            Err(err) if has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => Ok(()),
            Err(err) => {
                let message = format!("Error creating: {}", error_text(&err));
                self.events.record(rs, EventType::Warning, status::FAILED_CREATE, &message).await;
                Err(error_text(&err))
            }
        }
    }

    /// `RealPodControl.DeletePod`, with its event (none for a pod already gone).
    async fn delete_pod(&self, rs: &Value, pod: &Value) -> Result<(), ClientError> {
        let name = meta(pod, "name");
        let path = builtin::pods().object_path(Some(meta(pod, "namespace")), name);
        match self.client.delete(&path, None).await {
            Ok(_) => {
                self.events.record(rs, EventType::Normal, "SuccessfulDelete", &format!("Deleted pod: {name}")).await;
                Ok(())
            }
            Err(err) if err.is_not_found() => Err(err),
            Err(err) => {
                let message = format!("Error deleting: {}", error_text(&err));
                self.events.record(rs, EventType::Warning, status::FAILED_DELETE, &message).await;
                Err(err)
            }
        }
    }

    /// `getIndirectlyRelatedPods`: the pods selected by every ReplicaSet with the same controller as `rs`
    /// (a Deployment's ReplicaSets), each once. A ReplicaSet without a controller has none.
    fn indirectly_related_pods(&self, rs: &Value) -> Vec<Value> {
        let Some(owner_uid) = controller_ref(rs).and_then(|r| r.get("uid")).and_then(Value::as_str) else {
            tracing::debug!(rs = %object_key(rs), "ReplicaSet has no controller");
            return Vec::new();
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut related = Vec::new();
        let siblings = self.replica_sets.list().into_iter().filter(|other| {
            controller_ref(other).and_then(|r| r.get("uid")).and_then(Value::as_str) == Some(owner_uid)
        });
        for sibling in siblings {
            // A sibling with an invalid selector selects nothing.
            let Ok(selector) = label_selector_as_selector(sibling.pointer("/spec/selector")) else { continue };
            for pod in self.pods.list_namespace(meta(&sibling, "namespace")) {
                if selector.matches(pod.pointer("/metadata/labels")) && seen.insert(meta(&pod, "uid").to_string()) {
                    related.push(pod);
                }
            }
        }
        related
    }

    /// `updateReplicaSetStatus`: writes `status` unless it is already there; after a failed write, reads
    /// the ReplicaSet afresh and writes once more. Returns the ReplicaSet as last written (or as given).
    async fn update_status(&self, rs: &Value, mut status: Status) -> Result<Value, ClientError> {
        if status::is_current(rs, &status) {
            return Ok(rs.clone());
        }
        // The generation this status answers to is the one the sync acted on, also after a fresh read.
        status.observed_generation = rs.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
        let (ns, name) = (meta(rs, "namespace"), meta(rs, "name"));
        let mut current = rs.clone();
        let mut attempt = 0;
        loop {
            let mut body = current.clone();
            status.write_into(&mut body);
            let path = builtin::replica_sets().subresource_path(Some(ns), name, "status");
            let err = match self.client.update(&path, &body).await {
                Ok(updated) => return Ok(updated),
                Err(err) => err,
            };
            if attempt >= STATUS_UPDATE_RETRIES {
                return Err(err);
            }
            attempt += 1;
            current = self.client.get(&builtin::replica_sets().object_path(Some(ns), name)).await?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_as_go_prints_them() {
        let cases = [
            (vec![], None),
            (vec!["a".to_string()], Some("a")),
            (vec!["a".to_string(), "b".to_string(), "a".to_string()], Some("[a, b]")),
            (vec!["a".to_string(), "a".to_string()], Some("a")),
        ];
        for (errors, want) in cases {
            assert_eq!(aggregate(errors.clone()).as_deref(), want, "{errors:?}");
        }
        assert_eq!(go_time("2023-11-14T22:13:20Z"), "2023-11-14 22:13:20 +0000 UTC");
        let status = ClientError::from_status(
            409,
            serde_json::json!({"kind": "Status", "status": "Failure", "message": "the object has been modified", "reason": "Conflict", "code": 409}),
        );
        assert_eq!(error_text(&status), "the object has been modified");
        assert_eq!(error_text(&ClientError::Transport("dial: refused".into())), "dial: refused");
    }
}
