//! One sync of one StatefulSet, with its requests (kube-controller-manager 1.32,
//! `pkg/controller/statefulset/stateful_set.go` `sync`, `adoptOrphanRevisions`, `getPodsForStatefulSet`,
//! `canAdoptFunc`, `syncStatefulSet`; `stateful_set_control.go` `UpdateStatefulSet`, `performUpdate`,
//! `getStatefulSetRevisions`, `truncateHistory`, `updateStatefulSetStatus`;
//! `stateful_set_status_updater.go`; `pkg/controller/history/controller_history.go` `realHistory`).
//!
//! The order is upstream's: orphaned revisions the selector picks are adopted; the pods owned by the set
//! or by nobody are claimed (adopting selected members, releasing owned pods no longer selected, where
//! "selected" also needs the pod's name to say it is the set's); the current and update revisions are
//! found or made (a template seen before rolls back to its revision, renumbered; a new one is created,
//! its name's collision count raised while another revision holds the name); the [`plan`] is carried out;
//! the status is written when it changed (retried on conflict); and revisions beyond
//! `revisionHistoryLimit` that neither the status nor a pod uses are deleted.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::control::{plan, Inputs};
use super::identity::{controller_ref_to, is_member_of, meta, min_ready_seconds, spec_replicas};
use super::pod_control::{aggregate, PodControl};
use super::revision::{
    apply_revision, data_bytes, equal_revision, history_to_delete, new_revision, next_revision, renamed, sort_revisions,
};
use super::status::Status;
use crate::client::resource::builtin;
use crate::client::{Client, STRATEGIC_MERGE_PATCH};
use crate::kcm::replicaset::pods::{controller_ref, is_deleting};
use crate::kcm::replicaset::refs::{self, Claim};
use crate::kcm::replicaset::selector::{label_selector_as_selector, Selector};
use crate::kcm::replicaset::sync::error_text;
use crate::runtime::events::Recorder;
use crate::runtime::informer::Informer;
use crate::runtime::worker::Outcome;

/// `retry.DefaultRetry`: five attempts, 10 ms apart (its jitter left out).
const STATUS_RETRY_STEPS: usize = 5;
const STATUS_RETRY_WAIT: Duration = Duration::from_millis(10);

/// The controller's state, shared by its workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub pods: Informer,
    pub sets: Informer,
    pub claims: Informer,
    pub revisions: Informer,
    pub events: Recorder,
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
}

fn owner_uid(obj: &Value) -> Option<&str> {
    controller_ref(obj).and_then(|r| r.get("uid")).and_then(Value::as_str)
}

impl Controller {
    fn pod_control(&self) -> PodControl<'_> {
        PodControl { client: &self.client, pods: &self.pods, claims: &self.claims, events: &self.events }
    }

    /// `sync` of `key` (`namespace/name`).
    pub async fn sync(&self, key: String) -> Result<Outcome, String> {
        let Some(set) = self.sets.get(&key) else {
            tracing::debug!(key, "StatefulSet has been deleted");
            return Ok(Outcome::Done);
        };
        let selector = match label_selector_as_selector(set.pointer("/spec/selector")) {
            Ok(selector) => selector,
            Err(err) => {
                // Not transient: reported, never retried.
                tracing::error!("error converting StatefulSet {key} selector: {err}");
                return Ok(Outcome::Done);
            }
        };
        self.adopt_orphan_revisions(&set, &selector).await?;
        let pods = self.pods_for_set(&set, &selector).await?;
        let status = self.update_stateful_set(&set, &selector, &pods).await?;
        let replicas = spec_replicas(&set);
        let min_ready = min_ready_seconds(&set);
        if min_ready > 0 && status.is_some_and(|s| s.available_replicas != replicas) {
            // One more sync for the pods that are ready but not yet available.
            return Ok(Outcome::RequeueAfter(Duration::from_secs(u64::try_from(min_ready).unwrap_or(0))));
        }
        Ok(Outcome::Done)
    }

    /// `ListRevisions`: the cached revisions of the set's namespace its selector picks, owned by it or by
    /// nobody.
    fn list_revisions(&self, set: &Value, selector: &Selector) -> Vec<Value> {
        self.revisions
            .list_namespace(meta(set, "namespace"))
            .into_iter()
            .filter(|r| selector.matches(r.pointer("/metadata/labels")))
            .filter(|r| owner_uid(r).is_none_or(|uid| uid == meta(set, "uid")))
            .collect()
    }

    /// `RecheckDeletionTimestamp` over a live read: the set may adopt unless it is gone, replaced, or
    /// being deleted.
    async fn can_adopt(&self, set: &Value) -> Result<(), String> {
        let (ns, name) = (meta(set, "namespace"), meta(set, "name"));
        let fresh =
            self.client.get(&builtin::stateful_sets().object_path(Some(ns), name)).await.map_err(|e| error_text(&e))?;
        if meta(&fresh, "uid") != meta(set, "uid") {
            return Err(format!(
                "original StatefulSet {ns}/{name} is gone: got uid {}, wanted {}",
                meta(&fresh, "uid"),
                meta(set, "uid")
            ));
        }
        if is_deleting(&fresh) {
            return Err(format!("{ns}/{name} has just been deleted at {}", meta(&fresh, "deletionTimestamp")));
        }
        Ok(())
    }

    /// `adoptOrphanRevisions`.
    async fn adopt_orphan_revisions(&self, set: &Value, selector: &Selector) -> Result<(), String> {
        let orphans: Vec<Value> =
            self.list_revisions(set, selector).into_iter().filter(|r| controller_ref(r).is_none()).collect();
        if orphans.is_empty() {
            return Ok(());
        }
        self.can_adopt(set).await.map_err(|e| format!("can't adopt ControllerRevisions: {e}"))?;
        for revision in orphans {
            let patch =
                json!({"metadata": {"ownerReferences": [controller_ref_to(set)], "uid": meta(&revision, "uid")}});
            let path =
                builtin::controller_revisions().object_path(Some(meta(set, "namespace")), meta(&revision, "name"));
            self.client.patch(&path, &patch, STRATEGIC_MERGE_PATCH).await.map_err(|e| error_text(&e))?;
        }
        Ok(())
    }

    /// `getPodsForStatefulSet`: the pods owned by the set or by nobody (`FilterPodsByOwner`), claimed.
    async fn pods_for_set(&self, set: &Value, selector: &Selector) -> Result<Vec<Value>, String> {
        let candidates = self
            .pods
            .list_namespace(meta(set, "namespace"))
            .into_iter()
            .filter(|p| owner_uid(p).is_none_or(|uid| uid == meta(set, "uid")));
        let mut claimed = Vec::new();
        let mut errors = Vec::new();
        let mut can_adopt: Option<Result<(), String>> = None;
        for pod in candidates {
            let selected = selector.matches(pod.pointer("/metadata/labels")) && is_member_of(set, &pod);
            let path = builtin::pods().object_path(Some(meta(&pod, "namespace")), meta(&pod, "name"));
            match refs::claim(set, &pod, selected) {
                Claim::Owned => claimed.push(pod),
                Claim::Ignore => {}
                Claim::Adopt => {
                    if can_adopt.is_none() {
                        can_adopt = Some(self.can_adopt(set).await);
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
                    let patch =
                        json!({"metadata": {"ownerReferences": [controller_ref_to(set)], "uid": meta(&pod, "uid")}});
                    match self.client.patch(&path, &patch, STRATEGIC_MERGE_PATCH).await {
                        Ok(_) => claimed.push(pod),
                        Err(err) if err.is_not_found() => {}
                        Err(err) => errors.push(error_text(&err)),
                    }
                }
                Claim::Release => {
                    let patch = json!({"metadata": {"uid": meta(&pod, "uid"), "ownerReferences": [{"$patch": "delete", "uid": meta(set, "uid")}]}});
                    match self.client.patch(&path, &patch, STRATEGIC_MERGE_PATCH).await {
                        // Gone, or no longer ours (an invalid patch): released either way.
                        Err(err) if !err.is_not_found() && err.code() != Some(422) => errors.push(error_text(&err)),
                        _ => {}
                    }
                }
            }
        }
        aggregate(errors).map(|()| claimed)
    }

    /// `CreateControllerRevision`: created under the name of the current collision count, which goes up
    /// while another revision with other data holds the name.
    async fn create_revision(&self, set: &Value, revision: &Value, collision_count: &mut i32) -> Result<Value, String> {
        let ns = meta(set, "namespace");
        loop {
            let mut body = revision.clone();
            let name = renamed(set, revision, *collision_count);
            body["metadata"]["name"] = json!(name);
            match self.client.create(&builtin::controller_revisions().collection_path(Some(ns)), &body).await {
                Ok(created) => return Ok(created),
                Err(err) if err.is_already_exists() => {
                    let path = builtin::controller_revisions().object_path(Some(ns), &name);
                    let exists = self.client.get(&path).await.map_err(|e| error_text(&e))?;
                    if data_bytes(&exists) == data_bytes(&body) {
                        return Ok(exists);
                    }
                    *collision_count += 1;
                }
                Err(err) => return Err(error_text(&err)),
            }
        }
    }

    /// `UpdateControllerRevision`: the revision renumbered (retried on conflict from the cache).
    async fn renumber_revision(&self, revision: &Value, number: i64) -> Result<Value, String> {
        let mut clone = revision.clone();
        let mut attempts = 0;
        loop {
            if clone.get("revision").and_then(Value::as_i64) == Some(number) {
                return Ok(clone);
            }
            clone["revision"] = json!(number);
            let path =
                builtin::controller_revisions().object_path(Some(meta(&clone, "namespace")), meta(&clone, "name"));
            let err = match self.client.update(&path, &clone).await {
                Ok(updated) => return Ok(updated),
                Err(err) => err,
            };
            if let Some(cached) = self.revisions.get(&format!("{}/{}", meta(&clone, "namespace"), meta(&clone, "name")))
            {
                clone = cached;
            }
            attempts += 1;
            if !err.is_conflict() || attempts >= 4 {
                return Err(error_text(&err));
            }
        }
    }

    /// `getStatefulSetRevisions`: the current and update revisions, and the collision count.
    async fn revisions_of(&self, set: &Value, sorted: &[Value]) -> Result<(Value, Value, i32), String> {
        let mut collision_count = set
            .pointer("/status/collisionCount")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(0);
        let candidate = new_revision(set, next_revision(sorted), collision_count);
        let equal: Vec<&Value> = sorted.iter().filter(|r| equal_revision(r, &candidate)).collect();
        let update = match (equal.last(), sorted.last()) {
            // The template has not changed since the latest revision.
            (Some(eq), Some(latest)) if equal_revision(latest, eq) => latest.clone(),
            // A template seen before: its revision becomes the latest again.
            (Some(eq), _) => self.renumber_revision(eq, next_revision(sorted)).await?,
            _ => self.create_revision(set, &candidate, &mut collision_count).await?,
        };
        let current_name = set.pointer("/status/currentRevision").and_then(Value::as_str).unwrap_or("");
        let current =
            sorted.iter().find(|r| meta(r, "name") == current_name).cloned().unwrap_or_else(|| update.clone());
        Ok((current, update, collision_count))
    }

    /// `UpdateStatefulSet`: revisions, pods, status, then the history trimmed. Returns the status the
    /// sync computed, if it got that far.
    async fn update_stateful_set(
        &self,
        set: &Value,
        selector: &Selector,
        pods: &[Value],
    ) -> Result<Option<Status>, String> {
        let mut sorted = self.list_revisions(set, selector);
        sort_revisions(&mut sorted);
        let (revisions, result) = match self.revisions_of(set, &sorted).await {
            Ok((current, update, collision_count)) => {
                let result = self.perform_update(set, pods, &current, &update, collision_count).await;
                (Some((current, update)), result)
            }
            Err(err) => (None, Err(err)),
        };
        let names = revisions.as_ref().map(|(c, u)| (meta(c, "name").to_string(), meta(u, "name").to_string()));
        let trimmed = self.truncate_history(set, pods, &sorted, names.as_ref()).await;
        match (result, trimmed) {
            (Ok(status), Ok(())) => Ok(Some(status)),
            (Ok(_), Err(err)) => Err(err),
            (Err(err), trimmed) => Err(aggregate(std::iter::once(err).chain(trimmed.err()).collect()).unwrap_err()),
        }
    }

    /// `performUpdate`: the plan carried out, then the status written (also after a failed plan).
    async fn perform_update(
        &self,
        set: &Value,
        pods: &[Value],
        current: &Value,
        update: &Value,
        collision_count: i32,
    ) -> Result<Status, String> {
        let current_set = apply_revision(set, current);
        let update_set = apply_revision(set, update);
        let claims_ns = meta(set, "namespace").to_string();
        let claims = |name: &str| self.claims.get(&format!("{claims_ns}/{name}"));
        let the_plan = plan(&Inputs {
            set,
            current_set: &current_set,
            update_set: &update_set,
            current_revision: meta(current, "name"),
            update_revision: meta(update, "name"),
            collision_count,
            pods,
            claims: &claims,
            now_us: (self.now_unix_us)(),
        });
        let (result, rolled) = self.pod_control().run(set, &update_set, &the_plan.phases).await;
        let mut status = the_plan.status;
        status.current_replicas -= rolled;
        let written = self.update_status(set, &mut status).await;
        match (result, written) {
            (Err(err), Err(status_err)) => {
                tracing::error!(set = %meta(set, "name"), "could not update status: {status_err}");
                Err(err)
            }
            (Err(err), _) | (Ok(()), Err(err)) => Err(err),
            (Ok(()), Ok(())) => Ok(status),
        }
    }

    /// `updateStatefulSetStatus` with the status updater: a finished rolling update completed, the status
    /// written through `/status` if it differs, retried on conflict from the cached set.
    async fn update_status(&self, set: &Value, status: &mut Status) -> Result<(), String> {
        status.complete_rolling_update(set);
        if !status.differs_from(set) {
            return Ok(());
        }
        let (ns, name) = (meta(set, "namespace"), meta(set, "name"));
        let path = builtin::stateful_sets().subresource_path(Some(ns), name, "status");
        let mut current = set.clone();
        for attempt in 0..STATUS_RETRY_STEPS {
            current["status"] = status.to_json();
            let err = match self.client.update(&path, &current).await {
                Ok(_) => return Ok(()),
                Err(err) => err,
            };
            if let Some(cached) = self.sets.get(&format!("{ns}/{name}")) {
                current = cached;
            }
            if !err.is_conflict() || attempt + 1 == STATUS_RETRY_STEPS {
                return Err(error_text(&err));
            }
            tokio::time::sleep(STATUS_RETRY_WAIT).await;
        }
        Ok(())
    }

    /// `truncateHistory`.
    async fn truncate_history(
        &self,
        set: &Value,
        pods: &[Value],
        sorted: &[Value],
        names: Option<&(String, String)>,
    ) -> Result<(), String> {
        let (current, update) = match names {
            Some((c, u)) => (Some(c.as_str()), Some(u.as_str())),
            None => (None, None),
        };
        for revision in history_to_delete(set, pods, sorted, current, update) {
            let path = builtin::controller_revisions()
                .object_path(Some(meta(&revision, "namespace")), meta(&revision, "name"));
            match self.client.delete(&path, None).await {
                Ok(_) => {}
                Err(err) => return Err(error_text(&err)),
            }
        }
        Ok(())
    }
}
