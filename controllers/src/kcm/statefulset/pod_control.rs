//! The requests a StatefulSet sync makes about its pods and their claims, with their events
//! (kube-controller-manager 1.32, `pkg/controller/statefulset/stateful_pod_control.go`: `CreateStatefulPod`,
//! `UpdateStatefulPod`, `DeleteStatefulPod`, `UpdatePodClaimForRetentionPolicy`,
//! `createMissingPersistentVolumeClaims`, `createPersistentVolumeClaims`, `recordPodEvent`,
//! `recordClaimEvent`), and the carrying out of a [`Plan`] (`runForAll`, `slowStartBatch`).
//!
//! Reads are the informers' caches, as upstream's listers: a claim just created may not be cached yet,
//! in which case the next sync finds it (a second create answers AlreadyExists, which is not reported).
//! Events are upstream's texts: `SuccessfulCreate` "create Pod web-0 in StatefulSet web successful",
//! `FailedCreate` "create Pod web-0 in StatefulSet web failed error: ...", and for claims
//! "create Claim data-web-0 Pod web-0 in StatefulSet web success".

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::control::{claims_match_retention_policy, Phase, Step};
use super::identity::{
    claim_name, claims_for, identity_matches, meta, ordinal, storage_matches, update_identity, update_storage,
};
use super::retention::{has_unexpected_controller, is_claim_owner_up_to_date, with_updated_owner_refs};
use crate::client::resource::builtin;
use crate::client::{Client, ClientError};
use crate::kcm::replicaset::sync::error_text;
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;

/// `MaxBatchSize`: the most requests in flight in parallel mode.
pub const MAX_BATCH_SIZE: usize = 500;
/// `retry.DefaultBackoff`'s waits (10 ms, growing five times), without its jitter.
const CONFLICT_BACKOFF_MS: [u64; 4] = [10, 50, 250, 1250];

/// `utilerrors.NewAggregate(errs).Error()`: one message as is, several bracketed.
pub fn aggregate(errors: Vec<String>) -> Result<(), String> {
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.into_iter().next().unwrap_or_default()),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// `strings.Title` of a one-word verb.
fn title(verb: &str) -> String {
    let mut chars = verb.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The pod and claim requests of one set's sync.
pub struct PodControl<'a> {
    pub client: &'a Arc<Client>,
    pub pods: &'a Informer,
    pub claims: &'a Informer,
    pub events: &'a Recorder,
}

impl PodControl<'_> {
    fn cached_claim(&self, namespace: &str, name: &str) -> Option<Value> {
        self.claims.get(&format!("{namespace}/{name}"))
    }

    /// `recordPodEvent`.
    async fn record_pod_event(&self, verb: &str, set: &Value, pod: &Value, err: Option<&str>) {
        let (pod_name, set_name) = (meta(pod, "name"), meta(set, "name"));
        match err {
            None => {
                let message = format!("{verb} Pod {pod_name} in StatefulSet {set_name} successful");
                self.events.record(set, EventType::Normal, &format!("Successful{}", title(verb)), &message).await;
            }
            Some(err) => {
                let message = format!("{verb} Pod {pod_name} in StatefulSet {set_name} failed error: {err}");
                self.events.record(set, EventType::Warning, &format!("Failed{}", title(verb)), &message).await;
            }
        }
    }

    /// `recordClaimEvent`.
    async fn record_claim_event(&self, verb: &str, set: &Value, pod: &Value, claim: &str, err: Option<&str>) {
        let (pod_name, set_name) = (meta(pod, "name"), meta(set, "name"));
        match err {
            None => {
                let message = format!("{verb} Claim {claim} Pod {pod_name} in StatefulSet {set_name} success");
                self.events.record(set, EventType::Normal, &format!("Successful{}", title(verb)), &message).await;
            }
            Some(err) => {
                let message =
                    format!("{verb} Claim {claim} for Pod {pod_name} in StatefulSet {set_name} failed error: {err}");
                self.events.record(set, EventType::Warning, &format!("Failed{}", title(verb)), &message).await;
            }
        }
    }

    /// `createPersistentVolumeClaims`: every claim of the pod that is not cached is created.
    async fn create_claims(&self, set: &Value, pod: &Value) -> Result<(), String> {
        let mut errors = Vec::new();
        for claim in claims_for(set, pod).into_values() {
            let (ns, name) = (meta(&claim, "namespace").to_string(), meta(&claim, "name").to_string());
            match self.cached_claim(&ns, &name) {
                None => {
                    let mut body = claim.clone();
                    body["apiVersion"] = "v1".into();
                    body["kind"] = "PersistentVolumeClaim".into();
                    let path = builtin::persistent_volume_claims().collection_path(Some(&ns));
                    match self.client.create(&path, &body).await {
                        Ok(_) => self.record_claim_event("create", set, pod, &name, None).await,
                        Err(err) => {
                            errors.push(format!("failed to create PVC {name}: {}", error_text(&err)));
                            if !err.is_already_exists() {
                                self.record_claim_event("create", set, pod, &name, Some(&error_text(&err))).await;
                            }
                        }
                    }
                }
                Some(existing) if existing.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) => {
                    errors.push(format!("pvc {name} is being deleted"));
                }
                Some(_) => {}
            }
        }
        aggregate(errors)
    }

    /// `UpdatePodClaimForRetentionPolicy`: each cached claim of the pod gets the owners `set`'s policy
    /// wants.
    async fn update_claims_for_retention(&self, set: &Value, pod: &Value) -> Result<(), String> {
        let ord = ordinal(pod);
        let templates =
            set.pointer("/spec/volumeClaimTemplates").and_then(Value::as_array).cloned().unwrap_or_default();
        for template in templates {
            let name = claim_name(set, meta(&template, "name"), ord);
            let Some(claim) = self.cached_claim(meta(set, "namespace"), &name) else { continue };
            if has_unexpected_controller(&claim, set, pod) {
                // The upstream text, typo included.
                let message = format!("PersistentVolumeClaim {name} has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim");
                self.events.record(set, EventType::Warning, "ConflictingController", &message).await;
            }
            if !is_claim_owner_up_to_date(&claim, set, pod) {
                let updated = with_updated_owner_refs(&claim, set, pod);
                let path = builtin::persistent_volume_claims().object_path(Some(meta(&claim, "namespace")), &name);
                if let Err(err) = self.client.update(&path, &updated).await {
                    return Err(format!(
                        "could not update claim {name} for delete policy ownerRefs: {}",
                        error_text(&err)
                    ));
                }
            }
        }
        Ok(())
    }

    /// `CreateStatefulPod`: the claims first, then the pod, then the claims' owners.
    async fn create_pod(&self, set: &Value, pod: &Value) -> Result<(), String> {
        if let Err(err) = self.create_claims(set, pod).await {
            self.record_pod_event("create", set, pod, Some(&err)).await;
            return Err(err);
        }
        let path = builtin::pods().collection_path(Some(meta(pod, "namespace")));
        let result = self.client.create(&path, pod).await;
        if let Err(err) = &result {
            if err.is_already_exists() {
                // Not reported: the cache is behind, and the next sync sees the pod.
                return Err(error_text(err));
            }
        }
        if let Err(err) = self.update_claims_for_retention(set, pod).await {
            self.record_pod_event("update", set, pod, Some(&err)).await;
            return Err(err);
        }
        let err = result.err().map(|e| error_text(&e));
        self.record_pod_event("create", set, pod, err.as_deref()).await;
        err.map_or(Ok(()), Err)
    }

    /// `createMissingPersistentVolumeClaims`.
    async fn create_missing_claims(&self, set: &Value, pod: &Value) -> Result<(), String> {
        self.create_claims(set, pod).await?;
        if let Err(err) = self.update_claims_for_retention(set, pod).await {
            self.record_pod_event("update", set, pod, Some(&err)).await;
            return Err(err);
        }
        Ok(())
    }

    /// `UpdateStatefulPod`: identity and storage put right and the claims' owners set, the pod written
    /// (retried on conflict from the cached pod).
    async fn update_pod(&self, set: &Value, pod: &Value) -> Result<(), String> {
        let mut pod = pod.clone();
        let mut attempted = false;
        let mut attempt = 0;
        let result = loop {
            let mut consistent = true;
            if !identity_matches(set, &pod) {
                update_identity(set, &mut pod);
                consistent = false;
            }
            if !storage_matches(set, &pod) {
                update_storage(set, &mut pod);
                consistent = false;
                if let Err(err) = self.create_claims(set, &pod).await {
                    self.record_pod_event("update", set, &pod, Some(&err)).await;
                    return Err(err);
                }
            }
            let cached = |name: &str| self.cached_claim(meta(set, "namespace"), name);
            if !claims_match_retention_policy(set, &pod, &cached) {
                if let Err(err) = self.update_claims_for_retention(set, &pod).await {
                    self.record_pod_event("update", set, &pod, Some(&err)).await;
                    return Err(err);
                }
                consistent = false;
            }
            if consistent {
                break Ok(());
            }
            attempted = true;
            let path = builtin::pods().object_path(Some(meta(&pod, "namespace")), meta(&pod, "name"));
            let err = match self.client.update(&path, &pod).await {
                Ok(_) => break Ok(()),
                Err(err) => err,
            };
            if let Some(fresh) = self.pods.get(&format!("{}/{}", meta(set, "namespace"), meta(&pod, "name"))) {
                pod = fresh;
            }
            if !err.is_conflict() || attempt >= CONFLICT_BACKOFF_MS.len() {
                break Err(error_text(&err));
            }
            tokio::time::sleep(Duration::from_millis(CONFLICT_BACKOFF_MS[attempt])).await;
            attempt += 1;
        };
        if attempted {
            self.record_pod_event("update", set, &pod, result.as_ref().err().map(String::as_str)).await;
        }
        result
    }

    /// `DeleteStatefulPod`.
    async fn delete_pod(&self, set: &Value, pod: &Value) -> Result<(), ClientError> {
        let path = builtin::pods().object_path(Some(meta(pod, "namespace")), meta(pod, "name"));
        let result = self.client.delete(&path, None).await.map(|_| ());
        let err = result.as_ref().err().map(error_text);
        self.record_pod_event("delete", set, pod, err.as_deref()).await;
        result
    }

    /// One step. `set` is the set as synced, `update_set` the set at its update revision (for updates and
    /// claim owners, as upstream passes them). A rolling update's deletion returns whether it counts off a
    /// current replica.
    async fn run_step(&self, set: &Value, update_set: &Value, step: &Step) -> (Result<(), String>, bool) {
        match step {
            Step::Delete(pod) => (self.delete_pod(set, pod).await.map_err(|e| error_text(&e)), false),
            Step::DeleteForUpdate(pod) => match self.delete_pod(set, pod).await {
                Ok(()) => (Ok(()), true),
                // Upstream counts the pod off and still reports the NotFound.
                Err(err) if err.is_not_found() => (Err(error_text(&err)), true),
                Err(err) => (Err(error_text(&err)), false),
            },
            Step::Create(pod) => (self.create_pod(set, pod).await, false),
            Step::CreateMissingClaims(pod) => (self.create_missing_claims(set, pod).await, false),
            Step::Update(pod) => (self.update_pod(update_set, pod).await, false),
            Step::FixClaims(pod) => (self.update_claims_for_retention(update_set, pod).await, false),
        }
    }

    /// One unit: its steps in order, up to the first error. Returns how many current replicas went.
    async fn run_unit(&self, set: &Value, update_set: &Value, unit: &[Step]) -> (Result<(), String>, i64) {
        let mut counted = 0;
        for step in unit {
            let (result, counts) = self.run_step(set, update_set, step).await;
            counted += i64::from(counts);
            if result.is_err() {
                return (result, counted);
            }
        }
        (Ok(()), counted)
    }

    /// Carries out the plan's phases up to the first error (`runForAll`; `slowStartBatch` for parallel
    /// phases: batches of 1, 2, 4, ... up to [`MAX_BATCH_SIZE`], each finished before the next, none after
    /// a batch with an error). Returns the outcome and how many current replicas a rolling update took.
    pub async fn run(&self, set: &Value, update_set: &Value, phases: &[Phase]) -> (Result<(), String>, i64) {
        let mut counted = 0;
        for phase in phases {
            if !phase.parallel {
                for unit in &phase.units {
                    let (result, n) = self.run_unit(set, update_set, unit).await;
                    counted += n;
                    if result.is_err() {
                        return (result, counted);
                    }
                }
                continue;
            }
            let mut remaining = &phase.units[..];
            let mut batch = 1usize;
            while !remaining.is_empty() {
                let size = batch.min(remaining.len());
                let (now, later) = remaining.split_at(size);
                let results = futures::future::join_all(now.iter().map(|u| self.run_unit(set, update_set, u))).await;
                let mut errors = Vec::new();
                for (result, n) in results {
                    counted += n;
                    if let Err(err) = result {
                        errors.push(err);
                    }
                }
                if let Err(err) = aggregate(errors) {
                    return (Err(err), counted);
                }
                remaining = later;
                batch = (batch * 2).min(MAX_BATCH_SIZE);
            }
        }
        (Ok(()), counted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        assert_eq!(title("create"), "Create");
        assert_eq!(title(""), "");
        assert_eq!(aggregate(vec![]), Ok(()));
        assert_eq!(aggregate(vec!["a".into()]), Err("a".into()));
        assert_eq!(aggregate(vec!["a".into(), "b".into()]), Err("[a, b]".into()));
    }
}
