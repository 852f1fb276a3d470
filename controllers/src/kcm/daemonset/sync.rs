//! One sync of one DaemonSet, with its requests (kube-controller-manager 1.32,
//! `pkg/controller/daemon/daemon_controller.go` `syncDaemonSet`, `getDaemonPods`, `getNodesToDaemonPods`,
//! `updateDaemonSet`, `manage`, `syncNodes`, `updateDaemonSetStatus`, `storeDaemonSetStatus`; `update.go`
//! `constructHistory`, `controlledHistories`, `snapshot`, `dedupCurHistories`, `cleanupHistory`,
//! `rollingUpdate`; `controller_utils.go` `RealPodControl`).
//!
//! The order is upstream's: the revisions are claimed and the current one found or made (its hash labels
//! new pods); with its expectations met, the DaemonSet's pods are created on the nodes that lack one and
//! deleted where they do not belong, a rolling update deletes old pods within its budget, surplus history
//! goes; the status counts are written in any case (the observed generation only after a full sync).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::eligibility::{node_should_run, pin_to_node, pod_template, target_node_name, HASH_LABEL};
use super::expectations::Expectations;
use super::history::{self, adopt_patch, revision_hash};
use super::plan::{self, allows_surge, Backoff, Counts, NodePods};
use crate::client::resource::builtin;
use crate::client::{Client, ClientError, MERGE_PATCH, STRATEGIC_MERGE_PATCH};
use crate::kcm::replicaset::manage::{slow_start_batch, SLOW_START_INITIAL_BATCH_SIZE};
use crate::kcm::replicaset::pods::is_deleting;
use crate::kcm::replicaset::refs::{claim, pods_prefix, release_patch, Claim};
use crate::kcm::replicaset::selector::{label_selector_as_selector, Selector};
use crate::kcm::replicaset::sync::error_text;
use crate::kcm::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use crate::kcm::statefulset::revision::number;
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::worker::Outcome;

/// `BurstReplicas`: the most pods one sync creates or deletes.
pub const BURST_REPLICAS: usize = 250;
/// `StatusUpdateRetries`.
const STATUS_UPDATE_RETRIES: usize = 1;
/// `SelectingAllReason`.
pub const SELECTING_ALL: &str = "SelectingAll";

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

fn first_error(errors: Vec<String>) -> Result<(), String> {
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.into_iter().next().unwrap_or_default()),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// The controller's state, shared by its handlers and workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub pods: Informer,
    pub daemon_sets: Informer,
    pub nodes: Informer,
    pub revisions: Informer,
    pub expectations: Arc<Mutex<Expectations>>,
    pub backoff: Mutex<Backoff>,
    /// The origin of the expectations' and the backoff's clock (tokio's, madsim's under simulation).
    pub origin: tokio::time::Instant,
    pub events: Recorder,
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    pub burst_replicas: usize,
}

impl Controller {
    fn since_origin(&self) -> Duration {
        self.origin.elapsed()
    }

    fn expectations(&self) -> std::sync::MutexGuard<'_, Expectations> {
        self.expectations.lock().expect("the expectations are never poisoned")
    }

    /// The nodes, by name, with `NodeShouldRunDaemonPod`'s answers for `ds`.
    fn nodes_for(&self, ds: &Value) -> Vec<(Value, (bool, bool))> {
        let mut nodes: Vec<Value> = self.nodes.list();
        nodes.sort_by(|a, b| meta(a, "name").cmp(meta(b, "name")));
        nodes
            .into_iter()
            .map(|n| {
                let should = node_should_run(&n, ds);
                (n, should)
            })
            .collect()
    }

    /// `syncDaemonSet` for `key` (`namespace/name`).
    pub async fn sync(&self, key: String) -> Result<Outcome, String> {
        let Some(ds) = self.daemon_sets.get(&key) else {
            self.expectations().delete(&key);
            return Ok(Outcome::Done);
        };
        let nodes = self.nodes_for(&ds);
        let selector = ds.pointer("/spec/selector");
        // Only a selector given as `{}` selects everything; a missing one (invalid anyway) selects nothing.
        if selector.is_some_and(|s| s.as_object().is_some_and(|m| m.is_empty())) {
            let message = "This daemon set is selecting all pods. A non-empty selector is required.";
            self.events.record(&ds, EventType::Warning, SELECTING_ALL, message).await;
            return Ok(Outcome::Done);
        }
        if is_deleting(&ds) {
            // Its history may already be gone or orphaned: no status can be trusted.
            return Ok(Outcome::Done);
        }
        let (current, old) = self
            .construct_history(&ds)
            .await
            .map_err(|e| format!("failed to construct revisions of DaemonSet: {e}"))?;
        let hash = revision_hash(&current).to_string();
        if !self.expectations().satisfied(&key, self.since_origin()) {
            return self.update_status(&ds, &nodes, &hash, false).await;
        }
        let (result, mut requeue) = match self.update_daemon_set(&ds, &nodes, &hash, &key, &old).await {
            Ok(requeue) => (Ok(()), requeue),
            Err(err) => (Err(err), None),
        };
        let status = self.update_status(&ds, &nodes, &hash, true).await;
        result?;
        if let Outcome::RequeueAfter(d) = status? {
            requeue = Some(requeue.map_or(d, |r: Duration| r.min(d)));
        }
        Ok(requeue.map_or(Outcome::Done, Outcome::RequeueAfter))
    }

    /// `getNodesToDaemonPods`: the claimed pods by target node (pods without one are left out).
    async fn node_pods(&self, ds: &Value) -> Result<NodePods, String> {
        let selector = label_selector_as_selector(ds.pointer("/spec/selector"))?;
        let pods = self.pods.list_namespace(meta(ds, "namespace"));
        let claimed = self.claim(ds, &selector, pods, &builtin::pods()).await?;
        let mut map = NodePods::new();
        for pod in claimed {
            if let Some(node) = target_node_name(&pod) {
                map.entry(node).or_default().push(pod);
            }
        }
        Ok(map)
    }

    /// `ClaimPods` / `ClaimControllerRevisions`: the objects this DaemonSet keeps, adopting selected
    /// orphans and releasing owned objects no longer selected.
    async fn claim(
        &self,
        ds: &Value,
        selector: &Selector,
        objects: Vec<Value>,
        resource: &crate::client::resource::ApiResource,
    ) -> Result<Vec<Value>, String> {
        let (mut claimed, mut errors) = (Vec::new(), Vec::new());
        let mut can_adopt: Option<Result<(), String>> = None;
        for obj in objects {
            let path = resource.object_path(Some(meta(&obj, "namespace")), meta(&obj, "name"));
            match claim(ds, &obj, selector.matches(obj.pointer("/metadata/labels"))) {
                Claim::Owned => claimed.push(obj),
                Claim::Ignore => {}
                Claim::Adopt => {
                    if can_adopt.is_none() {
                        can_adopt = Some(self.recheck_deletion(ds).await);
                    }
                    if let Some(Err(err)) = &can_adopt {
                        errors.push(format!(
                            "can't adopt {} {}/{} ({}): {err}",
                            resource.kind,
                            meta(&obj, "namespace"),
                            meta(&obj, "name"),
                            meta(&obj, "uid")
                        ));
                        continue;
                    }
                    match self.client.patch(&path, &adopt_patch(ds, &obj), STRATEGIC_MERGE_PATCH).await {
                        Ok(adopted) => claimed.push(adopted),
                        Err(err) if err.is_not_found() => {}
                        Err(err) => errors.push(error_text(&err)),
                    }
                }
                Claim::Release => match self.client.patch(&path, &release_patch(ds, &obj), STRATEGIC_MERGE_PATCH).await
                {
                    Err(err) if !err.is_not_found() && err.code() != Some(422) => errors.push(error_text(&err)),
                    _ => {}
                },
            }
        }
        first_error(errors).map(|()| claimed)
    }

    /// `RecheckDeletionTimestamp` over a live read.
    async fn recheck_deletion(&self, ds: &Value) -> Result<(), String> {
        let (ns, name) = (meta(ds, "namespace"), meta(ds, "name"));
        let fresh = self
            .client
            .get(&builtin::daemon_sets().object_path(Some(ns), name))
            .await
            .map_err(|e| format!("can't recheck DeletionTimestamp: {}", error_text(&e)))?;
        if meta(&fresh, "uid") != meta(ds, "uid") {
            return Err(format!(
                "can't recheck DeletionTimestamp: original DaemonSet {ns}/{name} is gone: got uid {}, wanted {}",
                meta(&fresh, "uid"),
                meta(ds, "uid")
            ));
        }
        if is_deleting(&fresh) {
            return Err(format!("{ns}/{name} has just been deleted at {}", meta(&fresh, "deletionTimestamp")));
        }
        Ok(())
    }

    /// `constructHistory`: the current revision (found, deduplicated, renumbered, or made) and the old ones.
    async fn construct_history(&self, ds: &Value) -> Result<(Value, Vec<Value>), String> {
        let ns = meta(ds, "namespace");
        let selector = label_selector_as_selector(ds.pointer("/spec/selector"))?;
        let histories =
            self.claim(ds, &selector, self.revisions.list_namespace(ns), &builtin::controller_revisions()).await?;
        let (mut current, mut old) = (Vec::new(), Vec::new());
        for mut revision in histories {
            if revision_hash(&revision).is_empty() {
                // Older revisions are labelled with their name rather than rehashed.
                let name = meta(&revision, "name").to_string();
                revision["metadata"]["labels"][HASH_LABEL] = json!(name);
                let path = builtin::controller_revisions().object_path(Some(ns), &name);
                revision = self.client.update(&path, &revision).await.map_err(|e| error_text(&e))?;
            }
            if history::matches(ds, &revision) {
                current.push(revision);
            } else {
                old.push(revision);
            }
        }
        let next = history::max_revision(&old) + 1;
        let current = match history::keeper(&current).cloned() {
            None => self.snapshot(ds, next).await?,
            Some(keep) => {
                self.dedup(ds, &keep, &current).await?;
                if number(&keep) < next {
                    let mut renumbered = keep.clone();
                    renumbered["revision"] = json!(next);
                    let path = builtin::controller_revisions().object_path(Some(ns), meta(&keep, "name"));
                    self.client.update(&path, &renumbered).await.map_err(|e| error_text(&e))?;
                }
                keep
            }
        };
        Ok((current, old))
    }

    /// `dedupCurHistories`: pods of the duplicates move to the keeper's hash, the duplicates go.
    async fn dedup(&self, ds: &Value, keep: &Value, current: &[Value]) -> Result<(), String> {
        let ns = meta(ds, "namespace");
        for dup in current.iter().filter(|r| meta(r, "name") != meta(keep, "name")) {
            for pods in self.node_pods(ds).await?.values() {
                for pod in pods.iter().filter(|p| {
                    p.pointer("/metadata/labels").and_then(|l| l.get(HASH_LABEL)).and_then(Value::as_str)
                        != Some(revision_hash(keep))
                }) {
                    let patch = json!({"metadata": {"labels": {HASH_LABEL: revision_hash(keep)}}});
                    let path = builtin::pods().object_path(Some(ns), meta(pod, "name"));
                    self.client.patch(&path, &patch, MERGE_PATCH).await.map_err(|e| error_text(&e))?;
                }
            }
            let path = builtin::controller_revisions().object_path(Some(ns), meta(dup, "name"));
            self.client.delete(&path, None).await.map_err(|e| error_text(&e))?;
        }
        Ok(())
    }

    /// `snapshot`: creates the revision; a name taken by other data bumps `status.collisionCount` and fails
    /// the sync, so that the next one hashes anew.
    async fn snapshot(&self, ds: &Value, number: i64) -> Result<Value, String> {
        let ns = meta(ds, "namespace");
        let revision = history::snapshot(ds, number);
        let err = match self.client.create(&builtin::controller_revisions().collection_path(Some(ns)), &revision).await
        {
            Ok(created) => return Ok(created),
            Err(err) if err.is_already_exists() => err,
            Err(err) => return Err(error_text(&err)),
        };
        let name = meta(&revision, "name");
        let existing = self
            .client
            .get(&builtin::controller_revisions().object_path(Some(ns), name))
            .await
            .map_err(|e| error_text(&e))?;
        if history::matches(ds, &existing) {
            return Ok(existing);
        }
        let ds_path = builtin::daemon_sets().object_path(Some(ns), meta(ds, "name"));
        let mut fresh = self.client.get(&ds_path).await.map_err(|e| error_text(&e))?;
        let count = history::collision_count(&fresh).unwrap_or(0) + 1;
        fresh["status"]["collisionCount"] = json!(count);
        let status_path = builtin::daemon_sets().subresource_path(Some(ns), meta(ds, "name"), "status");
        self.client.update(&status_path, &fresh).await.map_err(|e| error_text(&e))?;
        tracing::info!(daemonset = %meta(ds, "name"), count, "found a hash collision for DaemonSet, bumping collisionCount");
        Err(error_text(&err))
    }

    /// `updateDaemonSet`: manage, roll, clean up history. Returns a delay to look again after (a failed pod
    /// held back by its backoff).
    async fn update_daemon_set(
        &self,
        ds: &Value,
        nodes: &[(Value, (bool, bool))],
        hash: &str,
        key: &str,
        old: &[Value],
    ) -> Result<Option<Duration>, String> {
        let requeue = self.manage(ds, nodes, hash, key).await?;
        if self.expectations().satisfied(key, self.since_origin())
            && ds.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("RollingUpdate")
        {
            let node_pods = self.node_pods(ds).await?;
            let runs: Vec<(String, bool)> = nodes.iter().map(|(n, s)| (meta(n, "name").to_string(), s.0)).collect();
            let rollout = plan::rolling_update(ds, &runs, &node_pods, hash, (self.now_unix_us)())?;
            self.sync_nodes(ds, key, &rollout.delete, &rollout.create, hash).await?;
        }
        self.cleanup_history(ds, old).await.map_err(|e| format!("failed to clean up revisions of DaemonSet: {e}"))?;
        Ok(requeue)
    }

    /// `manage`: one pod on each node that should run one, none elsewhere.
    async fn manage(
        &self,
        ds: &Value,
        nodes: &[(Value, (bool, bool))],
        hash: &str,
        key: &str,
    ) -> Result<Option<Duration>, String> {
        let node_pods = self.node_pods(ds).await.map_err(|e| {
            format!("couldn't get node to daemon pod mapping for daemon set {:?}: {e}", meta(ds, "name"))
        })?;
        let (mut create, mut delete, mut requeue) = (Vec::new(), Vec::new(), None::<Duration>);
        let surges = allows_surge(ds);
        let now_us = (self.now_unix_us)();
        for (node, should) in nodes {
            let name = meta(node, "name");
            let decision = {
                let mut backoff = self.backoff.lock().expect("the backoff is never poisoned");
                let pods = node_pods.get(name).map(Vec::as_slice);
                plan::pods_should_be_on_node(
                    ds,
                    name,
                    *should,
                    pods,
                    hash,
                    surges,
                    &mut backoff,
                    self.since_origin(),
                    now_us,
                )
            };
            for event in &decision.events {
                let kind = if event.warning { EventType::Warning } else { EventType::Normal };
                self.events.record(ds, kind, event.reason, &event.message).await;
            }
            if decision.create {
                create.push(name.to_string());
            }
            delete.extend(decision.delete);
            if let Some(d) = decision.requeue_after {
                requeue = Some(requeue.map_or(d, |r| r.min(d)));
            }
        }
        let names: Vec<String> = nodes.iter().map(|(n, _)| meta(n, "name").to_string()).collect();
        delete.extend(plan::unscheduled_pods_without_node(&names, &node_pods));
        self.sync_nodes(ds, key, &delete, &create, hash).await?;
        Ok(requeue)
    }

    /// `syncNodes`: deletes `delete` and creates a pod pinned to each of `create`, expecting both first.
    async fn sync_nodes(
        &self,
        ds: &Value,
        key: &str,
        delete: &[String],
        create: &[String],
        hash: &str,
    ) -> Result<(), String> {
        let create_diff = create.len().min(self.burst_replicas);
        let delete_diff = delete.len().min(self.burst_replicas);
        self.expectations().set(key, create_diff, delete_diff, self.since_origin());
        let mut errors = Vec::new();
        let template = pod_template(ds, hash);
        let next = AtomicUsize::new(0);
        let (created, error) = slow_start_batch(create_diff, SLOW_START_INITIAL_BATCH_SIZE, || {
            let node = create[next.fetch_add(1, Ordering::SeqCst)].clone();
            let template = &template;
            async move { self.create_pod(ds, template, &node).await }
        })
        .await;
        // Failed and never-made creations will never be observed.
        self.expectations().lower(key, create_diff - created, 0);
        errors.extend(error);
        let results =
            futures::future::join_all(delete[..delete_diff].iter().map(|name| self.delete_pod(ds, name))).await;
        for result in results {
            if let Err(err) = result {
                self.expectations().deletion_observed(key);
                if !err.is_not_found() {
                    errors.push(error_text(&err));
                }
            }
        }
        first_error(errors)
    }

    /// `RealPodControl.CreatePods` of the template pinned to `node`, with its event.
    async fn create_pod(&self, ds: &Value, template: &Value, node: &str) -> Result<(), String> {
        let mut spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
        pin_to_node(&mut spec, node);
        let mut metadata =
            json!({"generateName": pods_prefix(meta(ds, "name")), "ownerReferences": [history::controller_ref(ds)]});
        for field in ["labels", "annotations", "finalizers"] {
            if let Some(v) = template
                .pointer(&format!("/metadata/{field}"))
                .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()) || v.as_array().is_some_and(|a| !a.is_empty()))
            {
                metadata[field] = v.clone();
            }
        }
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec});
        match self.client.create(&builtin::pods().collection_path(Some(meta(ds, "namespace"))), &pod).await {
            Ok(created) => {
                let message = format!("Created pod: {}", meta(&created, "name"));
                self.events.record(ds, EventType::Normal, "SuccessfulCreate", &message).await;
                Ok(())
            }
            // Nothing can be created in a namespace being deleted: no event, and no failure either.
            Err(err) if has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => Ok(()),
            Err(err) => {
                let message = format!("Error creating: {}", error_text(&err));
                self.events.record(ds, EventType::Warning, "FailedCreate", &message).await;
                Err(error_text(&err))
            }
        }
    }

    /// `RealPodControl.DeletePod`, with its event (none for a pod already gone).
    async fn delete_pod(&self, ds: &Value, name: &str) -> Result<(), ClientError> {
        let path = builtin::pods().object_path(Some(meta(ds, "namespace")), name);
        match self.client.delete(&path, None).await {
            Ok(_) => {
                self.events.record(ds, EventType::Normal, "SuccessfulDelete", &format!("Deleted pod: {name}")).await;
                Ok(())
            }
            Err(err) if err.is_not_found() => Err(err),
            Err(err) => {
                let message = format!("Error deleting: {}", error_text(&err));
                self.events.record(ds, EventType::Warning, "FailedDelete", &message).await;
                Err(err)
            }
        }
    }

    /// `cleanupHistory`: old revisions beyond the limit go, unless a pod still carries their hash.
    async fn cleanup_history(&self, ds: &Value, old: &[Value]) -> Result<(), String> {
        let node_pods = self.node_pods(ds).await?;
        let live: Vec<&str> = node_pods
            .values()
            .flatten()
            .filter_map(|p| p.pointer("/metadata/labels").and_then(|l| l.get(HASH_LABEL)).and_then(Value::as_str))
            .collect();
        for name in history::history_to_delete(ds, old, &live) {
            let path = builtin::controller_revisions().object_path(Some(meta(ds, "namespace")), &name);
            self.client.delete(&path, None).await.map_err(|e| error_text(&e))?;
        }
        Ok(())
    }

    /// `updateDaemonSetStatus` and `storeDaemonSetStatus`: the counts, written unless already there, with one
    /// fresh read and retry after a failed write; a look again after `minReadySeconds` while ready pods are
    /// not yet available.
    async fn update_status(
        &self,
        ds: &Value,
        nodes: &[(Value, (bool, bool))],
        hash: &str,
        observe_generation: bool,
    ) -> Result<Outcome, String> {
        let node_pods = self.node_pods(ds).await.map_err(|e| {
            format!("couldn't get node to daemon pod mapping for daemon set {:?}: {e}", meta(ds, "name"))
        })?;
        let runs: Vec<(String, bool)> = nodes.iter().map(|(n, s)| (meta(n, "name").to_string(), s.0)).collect();
        let counts = Counts::of(ds, &runs, &node_pods, hash, (self.now_unix_us)());
        if !counts.is_current(ds) {
            let (ns, name) = (meta(ds, "namespace"), meta(ds, "name"));
            let mut current = ds.clone();
            let mut attempt = 0;
            loop {
                if observe_generation {
                    current["status"]["observedGeneration"] =
                        ds.pointer("/metadata/generation").cloned().unwrap_or(json!(0));
                }
                counts.write_into(&mut current);
                let path = builtin::daemon_sets().subresource_path(Some(ns), name, "status");
                let err = match self.client.update(&path, &current).await {
                    Ok(_) => break,
                    Err(err) => err,
                };
                if attempt >= STATUS_UPDATE_RETRIES {
                    return Err(format!("error storing status for daemon set {ns}/{name}: {}", error_text(&err)));
                }
                attempt += 1;
                current = self
                    .client
                    .get(&builtin::daemon_sets().object_path(Some(ns), name))
                    .await
                    .map_err(|e| error_text(&e))?;
            }
        }
        let min_ready = plan::min_ready_seconds(ds);
        if min_ready > 0 && counts.number_ready != counts.number_available {
            return Ok(Outcome::RequeueAfter(Duration::from_secs(u64::try_from(min_ready).unwrap_or(0))));
        }
        Ok(Outcome::Done)
    }
}
