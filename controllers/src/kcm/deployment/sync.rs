//! One sync of one Deployment, with its requests (kube-controller-manager 1.32,
//! `pkg/controller/deployment/deployment_controller.go` `syncDeployment`, `getReplicaSetsForDeployment`,
//! `getPodMapForDeployment`; `sync.go` `syncStatusOnly`, `checkPausedConditions`,
//! `scaleReplicaSetAndRecordEvent`, `scaleReplicaSet`, `cleanupDeployment`, `syncDeploymentStatus`;
//! `progress.go` `syncRolloutStatus`; `controller_ref_manager.go` `ClaimReplicaSets`;
//! `controller_utils.go` `RecheckDeletionTimestamp`). The rollouts themselves are in `rollout`.
//!
//! The order is upstream's: an empty selector is refused with an event; the Deployment's ReplicaSets are
//! claimed (adopting selected orphans, releasing owned ones no longer selected); a Deployment being
//! deleted only has its status synced; the paused condition is kept; then, in this order of precedence,
//! a paused Deployment is scaled, a rollback is carried out, a scaling event is scaled, or the strategy
//! rolls out. As upstream, the Deployment is one copy that the sync's writes change in memory, its
//! `resourceVersion` staying the one read: a second write in one sync conflicts and the sync is retried.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::handlers::adopt_patch;
use super::progress::{paused_conditions, recheck_stuck, rollout_status, Recheck};
use super::revision::{replicas_annotations_need_update, set_replicas_annotations};
use super::rollback::rollback_to;
use super::scaling::{self, Resize};
use super::status::{calculate, Status};
use super::util::{max_surge, meta, replicas, strategy_type, RECREATE, ROLLING_UPDATE};
use crate::client::resource::builtin;
use crate::client::{Client, ClientError, STRATEGIC_MERGE_PATCH};
use crate::kcm::replicaset::pods::{controller_ref, is_deleting};
use crate::kcm::replicaset::refs::{self, Claim};
use crate::kcm::replicaset::selector::label_selector_as_selector;
use crate::kcm::replicaset::sync::error_text;
use crate::kcm::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;

/// What a successful sync asks of the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    Done,
    /// Look again after this long (a rollout that may be stuck).
    After(Duration),
    /// Look again soon, rate limited (a deadline about to pass).
    RateLimited,
}

/// A failed sync: its message, and whether it failed for a namespace being deleted (which is not retried).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncError {
    pub message: String,
    pub namespace_terminating: bool,
}

impl From<ClientError> for SyncError {
    fn from(err: ClientError) -> SyncError {
        SyncError { message: error_text(&err), namespace_terminating: has_cause(&err, NAMESPACE_TERMINATING_CAUSE) }
    }
}

impl From<String> for SyncError {
    fn from(message: String) -> SyncError {
        SyncError { message, namespace_terminating: false }
    }
}

impl std::fmt::Display for SyncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type SyncResult<T> = Result<T, SyncError>;

/// The controller's state, shared by its handlers and workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub deployments: Informer,
    pub replica_sets: Informer,
    pub pods: Informer,
    pub events: Recorder,
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
}

/// Go's `%v` of a `*metav1.Time`, from its RFC 3339 form.
fn go_time(rfc3339: &str) -> String {
    match (rfc3339.get(0..10), rfc3339.get(11..19)) {
        (Some(date), Some(time)) if rfc3339.ends_with('Z') => format!("{date} {time} +0000 UTC"),
        _ => rfc3339.to_string(),
    }
}

/// Whether the selector is `&metav1.LabelSelector{}` (as Go decodes it: empty lists and maps are none).
fn selects_everything(d: &Value) -> bool {
    let Some(selector) = d.pointer("/spec/selector").and_then(Value::as_object) else { return false };
    selector.values().all(|v| match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    })
}

impl Controller {
    pub fn now_us(&self) -> i64 {
        (self.now_unix_us)()
    }

    fn deployment_path(d: &Value) -> String {
        builtin::deployments().object_path(Some(meta(d, "namespace")), meta(d, "name"))
    }

    fn rs_path(rs: &Value) -> String {
        builtin::replica_sets().object_path(Some(meta(rs, "namespace")), meta(rs, "name"))
    }

    /// `syncDeployment` for `key` (`namespace/name`).
    pub async fn sync(&self, key: &str) -> SyncResult<Next> {
        let Some(cached) = self.deployments.get(key) else {
            tracing::debug!(deployment = key, "Deployment has been deleted");
            return Ok(Next::Done);
        };
        let mut d = cached;
        if selects_everything(&d) {
            let message = "This deployment is selecting all pods. A non-empty selector is required.";
            self.events.record(&d, EventType::Warning, "SelectingAll", message).await;
            let generation = d.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
            if Status::of(&d).observed_generation < generation {
                d["status"]["observedGeneration"] = Value::from(generation);
                // Upstream does not look at this write's outcome.
                let _ = self.write_status(&d).await;
            }
            return Ok(Next::Done);
        }
        let rs_list = self.claim_replica_sets(&d).await?;
        let pod_map = self.pod_map(&d, &rs_list)?;
        if is_deleting(&d) {
            let (new_rs, old_rss) = self.get_all_replica_sets_and_sync_revision(&mut d, &rs_list, false).await?;
            let all = all_of(&old_rss, new_rs.as_ref());
            return self.sync_deployment_status(&all, new_rs.as_ref(), &mut d).await;
        }
        // Pausing and resuming are recorded first, so that time spent paused never counts as no progress.
        if let Some(status) = paused_conditions(&d, self.now_us()) {
            d["status"] = status.to_json();
            self.write_status(&d).await?;
        }
        if d.pointer("/spec/paused").and_then(Value::as_bool).unwrap_or(false) {
            return self.sync_scale(&mut d, &rs_list).await;
        }
        // A rollback comes before anything else touches the ReplicaSets, for it is not re-entrant.
        if rollback_to(&d).is_some() {
            return self.rollback(&mut d, &rs_list).await;
        }
        let (new_rs, old_rss) = self.get_all_replica_sets_and_sync_revision(&mut d, &rs_list, false).await?;
        if scaling::is_scaling_event(&d, &all_of(&old_rss, new_rs.as_ref())) {
            return self.sync_scale(&mut d, &rs_list).await;
        }
        match strategy_type(&d) {
            RECREATE => self.rollout_recreate(&mut d, &rs_list, &pod_map).await,
            ROLLING_UPDATE => self.rollout_rolling(&mut d, &rs_list).await,
            other => Err(format!("unexpected deployment strategy type: {other}").into()),
        }
    }

    /// `getReplicaSetsForDeployment`: the ReplicaSets the Deployment keeps, after adopting and releasing
    /// as it must (`ClaimReplicaSets`).
    async fn claim_replica_sets(&self, d: &Value) -> SyncResult<Vec<Value>> {
        let (ns, name) = (meta(d, "namespace"), meta(d, "name"));
        let selector = label_selector_as_selector(d.pointer("/spec/selector"))
            .map_err(|err| format!("deployment {ns}/{name} has invalid label selector: {err}"))?;
        let mut claimed = Vec::new();
        let mut errors: Vec<String> = Vec::new();
        // `CanAdopt` reads the Deployment afresh once per claim, and only if something is to be adopted.
        let mut can_adopt: Option<Result<(), String>> = None;
        for rs in self.replica_sets.list_namespace(ns) {
            match refs::claim(d, &rs, selector.matches(rs.pointer("/metadata/labels"))) {
                Claim::Owned => claimed.push(rs),
                Claim::Ignore => {}
                Claim::Adopt => {
                    if can_adopt.is_none() {
                        can_adopt = Some(self.recheck_deletion(d).await);
                    }
                    if let Some(Err(err)) = &can_adopt {
                        errors.push(format!(
                            "can't adopt ReplicaSet {ns}/{} ({}): {err}",
                            meta(&rs, "name"),
                            meta(&rs, "uid")
                        ));
                        continue;
                    }
                    match self.client.patch(&Self::rs_path(&rs), &adopt_patch(d, &rs), STRATEGIC_MERGE_PATCH).await {
                        Ok(_) => claimed.push(rs),
                        Err(err) if err.is_not_found() => {}
                        Err(err) => errors.push(error_text(&err)),
                    }
                }
                Claim::Release => {
                    match self
                        .client
                        .patch(&Self::rs_path(&rs), &refs::release_patch(d, &rs), STRATEGIC_MERGE_PATCH)
                        .await
                    {
                        // Gone, or no longer carrying our reference: released either way.
                        Err(err) if !err.is_not_found() && err.code() != Some(422) => errors.push(error_text(&err)),
                        _ => {}
                    }
                }
            }
        }
        errors.dedup();
        match errors.len() {
            0 => Ok(claimed),
            1 => Err(errors.remove(0).into()),
            _ => Err(format!("[{}]", errors.join(", ")).into()),
        }
    }

    /// `RecheckDeletionTimestamp` over a live read: the Deployment may adopt unless it is gone, replaced,
    /// or being deleted.
    async fn recheck_deletion(&self, d: &Value) -> Result<(), String> {
        let (ns, name) = (meta(d, "namespace"), meta(d, "name"));
        let fresh = self.client.get(&Self::deployment_path(d)).await.map_err(|e| error_text(&e))?;
        if meta(&fresh, "uid") != meta(d, "uid") {
            return Err(format!(
                "original Deployment {ns}/{name} is gone: got uid {}, wanted {}",
                meta(&fresh, "uid"),
                meta(d, "uid")
            ));
        }
        if is_deleting(&fresh) {
            return Err(format!("{ns}/{name} has just been deleted at {}", go_time(meta(&fresh, "deletionTimestamp"))));
        }
        Ok(())
    }

    /// `getPodMapForDeployment`: the pods the selector picks, by the uid of their controlling ReplicaSet
    /// among `rs_list` (every ReplicaSet of the list has an entry). Finished pods count too: `Recreate`
    /// must know that no old pod runs. The pods are the cache's, shared: this runs on every sync.
    fn pod_map(&self, d: &Value, rs_list: &[Value]) -> SyncResult<BTreeMap<String, Vec<Arc<Value>>>> {
        let selector = label_selector_as_selector(d.pointer("/spec/selector"))?;
        let mut map: BTreeMap<String, Vec<Arc<Value>>> =
            rs_list.iter().map(|rs| (meta(rs, "uid").to_string(), Vec::new())).collect();
        for pod in self.pods.list_namespace_shared(meta(d, "namespace")) {
            if !selector.matches(pod.pointer("/metadata/labels")) {
                continue;
            }
            let uid = controller_ref(&pod).and_then(|r| r.get("uid")).and_then(Value::as_str).unwrap_or("");
            if let Some(pods) = map.get_mut(uid) {
                pods.push(pod);
            }
        }
        Ok(map)
    }

    /// `UpdateStatus` of `d` as it stands in memory.
    pub(super) async fn write_status(&self, d: &Value) -> Result<Value, ClientError> {
        let path = builtin::deployments().subresource_path(Some(meta(d, "namespace")), meta(d, "name"), "status");
        self.client.update(&path, d).await
    }

    /// `syncDeploymentStatus`: writes the computed status unless it is already there.
    pub(super) async fn sync_deployment_status(
        &self,
        all: &[Value],
        new_rs: Option<&Value>,
        d: &mut Value,
    ) -> SyncResult<Next> {
        let status = calculate(all, new_rs, d, self.now_us());
        if status == Status::of(d) {
            return Ok(Next::Done);
        }
        d["status"] = status.to_json();
        self.write_status(d).await?;
        Ok(Next::Done)
    }

    /// `syncRolloutStatus`: writes the rollout's status, or, when nothing changed, says when to look again
    /// for a deadline.
    pub(super) async fn sync_rollout_status(
        &self,
        all: &[Value],
        new_rs: Option<&Value>,
        d: &mut Value,
    ) -> SyncResult<Next> {
        let now = self.now_us();
        let status = rollout_status(d, all, new_rs, now);
        if status == Status::of(d) {
            return Ok(match recheck_stuck(d, &status, now) {
                Recheck::Never => Next::Done,
                Recheck::NowRateLimited => Next::RateLimited,
                Recheck::After(delay) => Next::After(delay),
            });
        }
        d["status"] = status.to_json();
        self.write_status(d).await?;
        Ok(Next::Done)
    }

    /// `scaleReplicaSet`: sets the size and the replica annotations (when either differs), with a
    /// `ScalingReplicaSet` event for a resize. Whether it resized, and the ReplicaSet as now written.
    pub(super) async fn scale_replica_set(
        &self,
        rs: &Value,
        to: i32,
        d: &Value,
        direction: &str,
    ) -> SyncResult<(bool, Value)> {
        let desired = replicas(d);
        let max = desired.wrapping_add(max_surge(d));
        let resize = replicas(rs) != to;
        if !resize && !replicas_annotations_need_update(rs, desired, max) {
            return Ok((false, rs.clone()));
        }
        let from = replicas(rs);
        let mut copy = rs.clone();
        copy["spec"]["replicas"] = Value::from(to);
        set_replicas_annotations(&mut copy, desired, max);
        let updated = self.client.update(&Self::rs_path(rs), &copy).await?;
        if resize {
            let message = format!("Scaled {direction} replica set {} to {to} from {from}", meta(&updated, "name"));
            self.events.record(d, EventType::Normal, "ScalingReplicaSet", &message).await;
        }
        Ok((resize, updated))
    }

    /// `scaleReplicaSetAndRecordEvent`: nothing when already of that size.
    pub(super) async fn scale_checked(&self, rs: &Value, to: i32, d: &Value) -> SyncResult<(bool, Value)> {
        match replicas(rs).cmp(&to) {
            std::cmp::Ordering::Equal => Ok((false, rs.clone())),
            std::cmp::Ordering::Less => self.scale_replica_set(rs, to, d, "up").await,
            std::cmp::Ordering::Greater => self.scale_replica_set(rs, to, d, "down").await,
        }
    }

    /// Carries out one planned resize of a ReplicaSet among `rss`.
    pub(super) async fn resize(&self, rss: &[Value], resize: &Resize, d: &Value) -> SyncResult<(bool, Value)> {
        let Some(rs) = rss.iter().find(|rs| meta(rs, "name") == resize.name) else {
            return Err(format!("replica set {} is not among the deployment's", resize.name).into());
        };
        match resize.direction {
            None => self.scale_checked(rs, resize.to, d).await,
            Some(direction) => self.scale_replica_set(rs, resize.to, d, direction).await,
        }
    }

    /// `cleanupDeployment`: deletes the old ReplicaSets beyond the history limit; the first failure stops it.
    pub(super) async fn cleanup_deployment(&self, old_rss: &[Value], d: &Value) -> SyncResult<()> {
        for name in scaling::cleanup(d, old_rss) {
            tracing::debug!(deployment = meta(d, "name"), rs = name, "Trying to cleanup replica set for deployment");
            let path = builtin::replica_sets().object_path(Some(meta(d, "namespace")), &name);
            match self.client.delete(&path, None).await {
                Ok(_) => {}
                Err(err) if err.is_not_found() => {}
                Err(err) => return Err(err.into()),
            }
        }
        Ok(())
    }
}

/// The old ReplicaSets and the new one (if any), as upstream's `append(oldRSs, newRS)`.
pub(super) fn all_of(old_rss: &[Value], new_rs: Option<&Value>) -> Vec<Value> {
    let mut all = old_rss.to_vec();
    all.extend(new_rs.cloned());
    all
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_empty_selector_selects_everything() {
        let cases = [
            (json!({"spec": {"selector": {}}}), true),
            (json!({"spec": {"selector": {"matchLabels": {}, "matchExpressions": []}}}), true),
            (json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}}), false),
            (json!({"spec": {}}), false),
        ];
        for (d, want) in cases {
            assert_eq!(selects_everything(&d), want, "{d}");
        }
        assert_eq!(go_time("2023-11-14T22:13:20Z"), "2023-11-14 22:13:20 +0000 UTC");
        let err = SyncError::from(ClientError::from_status(
            403,
            json!({"kind": "Status", "message": "forbidden: namespace ns is being terminated", "reason": "Forbidden", "code": 403,
                   "details": {"causes": [{"reason": "NamespaceTerminating", "message": "namespace ns is being terminated"}]}}),
        ));
        assert!(err.namespace_terminating);
        assert_eq!(err.message, "forbidden: namespace ns is being terminated");
    }
}
