//! The Deployment controller's rollouts, with their requests (kube-controller-manager 1.32,
//! `pkg/controller/deployment/sync.go` `sync`, `getAllReplicaSetsAndSyncRevision`, `getNewReplicaSet`;
//! `rolling.go` `rolloutRolling`; `recreate.go` `rolloutRecreate`; `rollback.go` `rollback`). The rules are
//! sans-IO in `rolling`, `scaling`, `rollback` and `revision`; this carries their plans out.
//!
//! The new ReplicaSet is named `<deployment>-<pod-template-hash>`, labelled and selected by that hash,
//! owned through a controller reference, and numbered one past the highest old revision. Creating it
//! when a ReplicaSet of that name but another template exists is a hash collision: the Deployment's
//! `collisionCount` goes up, which changes the hash, and the sync is retried.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::handlers::{new_controller_ref, API_VERSION};
use super::hash::compute_hash;
use super::progress::{deployment_complete, has_progress_deadline, FAILED_RS_CREATE, FOUND_NEW_RS, NEW_REPLICA_SET};
use super::revision::{
    annotation, clone_and_add_label, clone_selector_and_add_label, equal_ignore_hash, find_new_replica_set,
    find_old_replica_sets, max_revision, set_deployment_revision, set_new_replica_set_annotations,
    MAX_REV_HISTORY_LENGTH_IN_CHARS, REVISION,
};
use super::rollback;
use super::rolling::{reconcile_new_replica_set, reconcile_old_replica_sets};
use super::scaling::{old_pods_running, scale, scale_down_for_recreate};
use super::status::{Condition, Status, PROGRESSING};
use super::sync::{all_of, Controller, Next, SyncResult};
use super::util::{filter_active, meta, new_rs_new_replicas, replicas, POD_TEMPLATE_HASH_LABEL};
use crate::client::resource::builtin;
use crate::kcm::replicaset::pods::controller_ref;
use crate::kcm::replicaset::sync::error_text;
use crate::kcm::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use crate::runtime::events::EventType;

fn min_ready_seconds(obj: &Value) -> i64 {
    obj.pointer("/spec/minReadySeconds").and_then(Value::as_i64).unwrap_or(0)
}

/// Sets `spec.minReadySeconds` as Go writes it (left out when 0).
fn set_min_ready_seconds(rs: &mut Value, seconds: i64) {
    match rs["spec"].as_object_mut() {
        Some(spec) if seconds == 0 => {
            spec.remove("minReadySeconds");
        }
        Some(spec) => {
            spec.insert("minReadySeconds".into(), Value::from(seconds));
        }
        None => {}
    }
}

/// Adds a `Progressing` condition to `d`'s status in memory.
fn set_progressing(d: &mut Value, status: &str, reason: &str, message: &str, now_us: i64) {
    let mut current = Status::of(d);
    current.set_condition(Condition::new(PROGRESSING, status, reason, message, now_us));
    d["status"] = current.to_json();
}

impl Controller {
    /// `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (made if `create` and missing) and every old
    /// one, the new one's and the Deployment's revision brought up to date.
    pub(super) async fn get_all_replica_sets_and_sync_revision(
        &self,
        d: &mut Value,
        rs_list: &[Value],
        create: bool,
    ) -> SyncResult<(Option<Value>, Vec<Value>)> {
        let (_, old_rss) = find_old_replica_sets(d, rs_list);
        let new_rs = self.get_new_replica_set(d, rs_list, &old_rss, create).await?;
        Ok((new_rs, old_rss))
    }

    /// `getNewReplicaSet`.
    async fn get_new_replica_set(
        &self,
        d: &mut Value,
        rs_list: &[Value],
        old_rss: &[Value],
        create: bool,
    ) -> SyncResult<Option<Value>> {
        let new_revision = (max_revision(old_rss) + 1).to_string();
        if let Some(existing) = find_new_replica_set(d, rs_list) {
            let mut copy = existing.clone();
            let annotations_updated =
                set_new_replica_set_annotations(d, &mut copy, &new_revision, true, MAX_REV_HISTORY_LENGTH_IN_CHARS);
            if annotations_updated || min_ready_seconds(&copy) != min_ready_seconds(d) {
                set_min_ready_seconds(&mut copy, min_ready_seconds(d));
                let path = builtin::replica_sets().object_path(Some(meta(&copy, "namespace")), meta(&copy, "name"));
                return Ok(Some(self.client.update(&path, &copy).await?));
            }
            // The revision the ReplicaSet carries is the one to show: it was set before.
            let mut needs_update = set_deployment_revision(d, annotation(&copy, REVISION).unwrap_or(""));
            // A Deployment given a deadline late starts its estimate from noticing its new ReplicaSet.
            if has_progress_deadline(d) && Status::of(d).condition(PROGRESSING).is_none() {
                let message = format!("Found new replica set \"{}\"", meta(&copy, "name"));
                set_progressing(d, "True", FOUND_NEW_RS, &message, self.now_us());
                needs_update = true;
            }
            if needs_update {
                self.write_status(d).await?;
            }
            return Ok(Some(copy));
        }
        if !create {
            return Ok(None);
        }
        let template = d.pointer("/spec/template").cloned().unwrap_or(Value::Null);
        let collision_count = Status::of(d).collision_count;
        let hash = compute_hash(Some(&template), collision_count);
        let mut new_template = template.clone();
        new_template["metadata"]["labels"] =
            clone_and_add_label(template.pointer("/metadata/labels"), POD_TEMPLATE_HASH_LABEL, &hash);
        let selector = clone_selector_and_add_label(d.pointer("/spec/selector"), POD_TEMPLATE_HASH_LABEL, &hash);
        // A name made from the hash makes creation idempotent.
        let name = format!("{}-{hash}", meta(d, "name"));
        let mut new_rs = json!({
            "apiVersion": API_VERSION,
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta(d, "namespace"),
                "ownerReferences": [new_controller_ref(d)],
                "labels": new_template["metadata"]["labels"].clone(),
            },
            "spec": {"replicas": 0, "selector": selector, "template": new_template},
        });
        set_min_ready_seconds(&mut new_rs, min_ready_seconds(d));
        let count = new_rs_new_replicas(d, &all_of(old_rss, Some(&new_rs)), &new_rs)?;
        new_rs["spec"]["replicas"] = Value::from(count);
        set_new_replica_set_annotations(d, &mut new_rs, &new_revision, false, MAX_REV_HISTORY_LENGTH_IN_CHARS);
        let ns = meta(d, "namespace").to_string();
        let (created, already_exists) =
            match self.client.create(&builtin::replica_sets().collection_path(Some(&ns)), &new_rs).await {
                Ok(created) => (created, false),
                // A slow cache, or a quick resync: the ReplicaSet may be ours already.
                Err(err) if err.is_already_exists() => {
                    let Some(rs) = self.replica_sets.get(&format!("{ns}/{name}")) else {
                        return Err(format!("replicaset.apps \"{name}\" not found").into());
                    };
                    let ours =
                        controller_ref(&rs).and_then(|r| r.get("uid")).and_then(Value::as_str) == Some(meta(d, "uid"));
                    if ours && equal_ignore_hash(d.pointer("/spec/template"), rs.pointer("/spec/template")) {
                        (rs, true)
                    } else {
                        // A hash collision: a new count gives a new hash on the retry.
                        let before = collision_count.unwrap_or(0);
                        d["status"]["collisionCount"] = Value::from(before.wrapping_add(1));
                        if self.write_status(d).await.is_ok() {
                            tracing::info!(
                                deployment = meta(d, "name"),
                                before,
                                "Found a hash collision for deployment - bumping collisionCount to resolve it"
                            );
                        }
                        return Err(err.into());
                    }
                }
                Err(err) if has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => return Err(err.into()),
                Err(err) => {
                    let message = format!("Failed to create new replica set \"{name}\": {}", error_text(&err));
                    if has_progress_deadline(d) {
                        set_progressing(d, "False", FAILED_RS_CREATE, &message, self.now_us());
                        // The failure to create is the bigger news; this write's outcome does not matter.
                        let _ = self.write_status(d).await;
                    }
                    self.events.record(d, EventType::Warning, FAILED_RS_CREATE, &message).await;
                    return Err(err.into());
                }
            };
        if !already_exists && count > 0 {
            let message = format!("Scaled up replica set {} to {count}", meta(&created, "name"));
            self.events.record(d, EventType::Normal, "ScalingReplicaSet", &message).await;
        }
        let mut needs_update = set_deployment_revision(d, &new_revision);
        if !already_exists && has_progress_deadline(d) {
            let message = format!("Created new replica set \"{}\"", meta(&created, "name"));
            set_progressing(d, "True", NEW_REPLICA_SET, &message, self.now_us());
            needs_update = true;
        }
        if needs_update {
            self.write_status(d).await?;
        }
        Ok(Some(created))
    }

    /// `sync`: scales a paused Deployment or one whose size changed, cleans up after a paused one, and
    /// writes the status.
    pub(super) async fn sync_scale(&self, d: &mut Value, rs_list: &[Value]) -> SyncResult<Next> {
        let (new_rs, old_rss) = self.get_all_replica_sets_and_sync_revision(d, rs_list, false).await?;
        let all = all_of(&old_rss, new_rs.as_ref());
        for step in scale(d, new_rs.as_ref(), &old_rss) {
            self.resize(&all, &step, d).await?;
        }
        let paused = d.pointer("/spec/paused").and_then(Value::as_bool).unwrap_or(false);
        if paused && rollback::rollback_to(d).is_none() {
            self.cleanup_deployment(&old_rss, d).await?;
        }
        // As upstream, the status is computed from the ReplicaSets as they were read.
        self.sync_deployment_status(&all, new_rs.as_ref(), d).await
    }

    /// `rolloutRolling`.
    pub(super) async fn rollout_rolling(&self, d: &mut Value, rs_list: &[Value]) -> SyncResult<Next> {
        let (new_rs, old_rss) = self.get_all_replica_sets_and_sync_revision(d, rs_list, true).await?;
        let Some(new_rs) = new_rs else { return Err("the new replica set could not be made".to_string().into()) };
        let all = all_of(&old_rss, Some(&new_rs));
        let target = reconcile_new_replica_set(&all, &new_rs, d)?;
        let (scaled_up, _) = self.scale_checked(&new_rs, target, d).await?;
        if scaled_up {
            return self.sync_rollout_status(&all, Some(&new_rs), d).await;
        }
        // Upstream swallows a failure here: the rollout just did not move this time.
        let mut scaled_down = false;
        for step in reconcile_old_replica_sets(&all, &filter_active(&old_rss), &new_rs, d) {
            match step {
                Ok(resize) => match self.resize(&all, &resize, d).await {
                    Ok((resized, _)) => scaled_down |= resized,
                    Err(err) => {
                        tracing::debug!(deployment = meta(d, "name"), "scaling down old replica sets failed: {err}");
                        scaled_down = false;
                        break;
                    }
                },
                Err(err) => {
                    tracing::debug!(deployment = meta(d, "name"), "scaling down old replica sets refused: {err}");
                    scaled_down = false;
                    break;
                }
            }
        }
        if scaled_down {
            return self.sync_rollout_status(&all, Some(&new_rs), d).await;
        }
        if deployment_complete(d, &Status::of(d)) {
            self.cleanup_deployment(&old_rss, d).await?;
        }
        self.sync_rollout_status(&all, Some(&new_rs), d).await
    }

    /// `rolloutRecreate`: every old pod gone before the new ReplicaSet is made and scaled up.
    pub(super) async fn rollout_recreate(
        &self,
        d: &mut Value,
        rs_list: &[Value],
        pod_map: &BTreeMap<String, Vec<std::sync::Arc<Value>>>,
    ) -> SyncResult<Next> {
        // Not made yet, so that nothing scales up before the old ReplicaSets are down.
        let (mut new_rs, mut old_rss) = self.get_all_replica_sets_and_sync_revision(d, rs_list, false).await?;
        let mut all = all_of(&old_rss, new_rs.as_ref());
        let mut scaled_down = false;
        for step in scale_down_for_recreate(&filter_active(&old_rss)) {
            scaled_down |= self.resize(&all, &step, d).await?.0;
        }
        if scaled_down || old_pods_running(new_rs.as_ref(), &old_rss, pod_map) {
            return self.sync_rollout_status(&all, new_rs.as_ref(), d).await;
        }
        if new_rs.is_none() {
            (new_rs, old_rss) = self.get_all_replica_sets_and_sync_revision(d, rs_list, true).await?;
            all = all_of(&old_rss, new_rs.as_ref());
        }
        if let Some(rs) = &new_rs {
            self.scale_checked(rs, replicas(d), d).await?;
        }
        if deployment_complete(d, &Status::of(d)) {
            self.cleanup_deployment(&old_rss, d).await?;
        }
        self.sync_rollout_status(&all, new_rs.as_ref(), d).await
    }

    /// `rollback`: the Deployment takes the template of the revision asked for; the request is cleared.
    pub(super) async fn rollback(&self, d: &mut Value, rs_list: &[Value]) -> SyncResult<Next> {
        let (new_rs, old_rss) = self.get_all_replica_sets_and_sync_revision(d, rs_list, true).await?;
        let plan = rollback::plan(d, &all_of(&old_rss, new_rs.as_ref()));
        if let Some((reason, message)) = &plan.warning {
            self.events.record(d, EventType::Warning, reason, message).await;
        }
        self.client
            .update(&builtin::deployments().object_path(Some(meta(d, "namespace")), meta(d, "name")), &plan.deployment)
            .await?;
        if let Some(message) = &plan.done {
            self.events.record(d, EventType::Normal, rollback::DONE, message).await;
        }
        Ok(Next::Done)
    }
}
