//! The `disruption-controller` (kube-controller-manager 1.32, `pkg/controller/disruption/disruption.go`):
//! every PodDisruptionBudget's status says how many of its pods are expected, healthy and wanted healthy,
//! and so how many disruptions it allows now, which the apiserver's eviction subresource spends.
//!
//! The eviction handler (`apiserver/src/apis/policy/evictions.rs`) refuses with a 429 while
//! `status.observedGeneration` is behind `metadata.generation`, and otherwise reads `disruptionsAllowed`,
//! `currentHealthy`, `desiredHealthy` and `disruptedPods`; it writes the budget's status itself when it
//! spends a disruption (one fewer allowed, the pod recorded in `disruptedPods` with the time). This
//! controller keeps a recorded pod out of the healthy count until it is gone, or for two minutes
//! (`DeletionTimeout`), after which the record is dropped and a `NotDeleted` event is recorded on the pod.
//!
//! Shell: the pod and budget informers feed one work queue of budget keys (one worker, as upstream's);
//! a budget with pending disruptions is looked at again when the earliest of them falls due. A second
//! queue resets a `DisruptionTarget` condition that stood on a pod for two minutes without the pod being
//! deleted (`syncStalePodDisruption`). The ReplicationController, ReplicaSet, Deployment and StatefulSet
//! informers are read (never watched for changes, as upstream's listers) for the scale of a percentage or
//! `maxUnavailable` budget. The arithmetic is sans-IO in [`budget`].
//!
//! Left out: the generic scale-subresource finder for custom workloads (their pods are "found no
//! controllers"); the recheck goes straight into the work queue rather than through the rate limiter.

pub mod budget;

use std::time::Duration;

use serde_json::Value;

use super::replicaset::pods::object_key;
use super::replicaset::selector::label_selector_as_selector;
use super::Context;
use crate::client::resource::builtin;
use crate::client::{ApiResource, Client};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use budget::Counts;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "disruption-controller", aliases: &["disruption"], disabled_by_default: false };

fn replication_controllers() -> ApiResource {
    ApiResource::new("", "v1", "replicationcontrollers", "ReplicationController", true)
}

/// The controller's view of the cluster and its means to act.
struct Controller {
    client: std::sync::Arc<Client>,
    events: Recorder,
    now_unix_us: std::sync::Arc<dyn Fn() -> i64 + Send + Sync>,
    pods: Informer,
    budgets: Informer,
    rcs: Informer,
    rss: Informer,
    deployments: Informer,
    stss: Informer,
}

fn rfc3339_us(unix_us: i64) -> String {
    apiserver::registry::system::rfc3339(unix_us.div_euclid(1_000_000))
}

fn ns_name(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// Why a sync failed: a conflict is retried without the fail-safe, anything else writes it.
enum SyncError {
    Conflict(String),
    Other(String),
}

impl Controller {
    /// `getPdbForPod`: the budgets of the pod's namespace that select it (policy/v1: an empty selector
    /// selects everything), by name; upstream takes the first its lister returns.
    fn budgets_for_pod(&self, pod: &Value) -> Vec<Value> {
        if pod.pointer("/metadata/labels").and_then(Value::as_object).is_none_or(|l| l.is_empty()) {
            return Vec::new();
        }
        let ns = pod.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
        self.budgets
            .list_namespace(ns)
            .into_iter()
            .filter(|b| {
                label_selector_as_selector(b.pointer("/spec/selector"))
                    .is_ok_and(|s| s.matches(pod.pointer("/metadata/labels")))
            })
            .collect()
    }

    /// What a pod's add, update or delete enqueues: its budget, and (unless deleted) a stale-condition look.
    async fn pod_changed(&self, pod: &Value, deleted: bool, queue: &WorkQueue<String>, stale: &WorkQueue<String>) {
        let budgets = self.budgets_for_pod(pod);
        if let Some(first) = budgets.first() {
            if budgets.len() > 1 {
                let message = format!(
                    "Pod \"{}\"/\"{}\" matches multiple PodDisruptionBudgets.  Chose \"{}\" arbitrarily.",
                    pod.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or(""),
                    pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""),
                    first.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
                );
                self.events.record(pod, EventType::Warning, "MultiplePodDisruptionBudgets", &message).await;
            }
            queue.add(object_key(first));
        }
        if !deleted {
            if let Some(wait_us) = budget::stale_disruption_wait_us(pod, (self.now_unix_us)()) {
                stale.add_after(object_key(pod), Duration::from_micros(wait_us as u64));
            }
        }
    }

    fn lookup(&self, kind: &str, ns: &str, name: &str) -> Option<Value> {
        let informer = match kind {
            "ReplicationController" => &self.rcs,
            "ReplicaSet" => &self.rss,
            "Deployment" => &self.deployments,
            "StatefulSet" => &self.stss,
            _ => return None,
        };
        informer.get(&format!("{ns}/{name}"))
    }

    /// `sync`: one budget's status, or the fail-safe when it cannot be computed.
    async fn sync(&self, key: &str, queue: &WorkQueue<String>) -> Result<Outcome, String> {
        let Some(pdb) = self.budgets.get(key) else { return Ok(Outcome::Done) };
        match self.try_sync(&pdb, key, queue).await {
            Ok(()) => Ok(Outcome::Done),
            Err(SyncError::Conflict(e)) => Err(e),
            Err(SyncError::Other(e)) => {
                tracing::info!(controller = DESCRIPTOR.name, key, "failed to sync PDB: {e}");
                let safe = budget::fail_safe(&pdb, &e, &rfc3339_us((self.now_unix_us)()));
                self.write_status(&safe).await.map_err(|(SyncError::Conflict(w) | SyncError::Other(w))| w)?;
                Ok(Outcome::Done)
            }
        }
    }

    async fn try_sync(&self, pdb: &Value, key: &str, queue: &WorkQueue<String>) -> Result<(), SyncError> {
        let (ns, _) = ns_name(key);
        let selector = match label_selector_as_selector(pdb.pointer("/spec/selector")) {
            Ok(s) => s,
            Err(e) => {
                self.events.record(pdb, EventType::Warning, "NoPods", &format!("Failed to get pods: {e}")).await;
                return Err(SyncError::Other(e));
            }
        };
        let pods: Vec<Value> = self
            .pods
            .list_namespace(ns)
            .into_iter()
            .filter(|p| selector.matches(p.pointer("/metadata/labels")))
            .collect();
        if pods.is_empty() {
            self.events.record(pdb, EventType::Normal, "NoPods", "No matching pods found").await;
        }
        let lookup = |kind: &str, ns: &str, name: &str| self.lookup(kind, ns, name);
        let expected = match budget::expected_pod_count(pdb, &pods, &lookup) {
            Ok(e) => e,
            Err(e) => {
                let message = format!("Failed to calculate the number of expected pods: {e}");
                self.events.record(pdb, EventType::Warning, "CalculateExpectedPodCountFailed", &message).await;
                return Err(SyncError::Other(e));
            }
        };
        if !expected.unmanaged.is_empty() {
            let message = format!(
                "Pods selected by this PodDisruptionBudget (selector: {}) were found to be unmanaged. As a result, \
                 the status of the PDB cannot be calculated correctly, which may result in undefined behavior. \
                 To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.",
                budget::selector_string(pdb.pointer("/spec/selector"))
            );
            self.events.record(pdb, EventType::Warning, "UnmanagedPods", &message).await;
        }
        let now_us = (self.now_unix_us)();
        let disrupted = budget::disrupted_pods(pdb, &pods, now_us);
        let pdb_ns = pdb.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
        for name in &disrupted.overdue {
            if let Some(pod) = pods.iter().find(|p| p.pointer("/metadata/name").and_then(Value::as_str) == Some(name)) {
                // Upstream names the budget as namespace/namespace in this message; kept as it prints.
                let message = format!("Pod was expected by PDB {pdb_ns}/{pdb_ns} to be deleted but it wasn't");
                self.events.record(pod, EventType::Warning, "NotDeleted", &message).await;
            }
        }
        let counts = Counts {
            current_healthy: budget::healthy_pods(&pods, &disrupted.pods, now_us),
            desired_healthy: expected.desired_healthy,
            expected: expected.expected,
            disrupted: disrupted.pods,
        };
        if let Some(updated) = budget::next_status(pdb, &counts, &rfc3339_us(now_us)) {
            self.write_status(&updated).await?;
        }
        if let Some(at_us) = disrupted.recheck_at_us {
            queue.add_after(key.to_string(), Duration::from_micros((at_us - now_us).max(0) as u64));
        }
        Ok(())
    }

    /// `writePdbStatus`: an update of `/status`, not retried here.
    async fn write_status(&self, pdb: &Value) -> Result<(), SyncError> {
        let ns = pdb.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
        let name = pdb.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        let path = builtin::pod_disruption_budgets().subresource_path(Some(ns), name, "status");
        match self.client.update(&path, pdb).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_conflict() => Err(SyncError::Conflict(e.to_string())),
            Err(e) => Err(SyncError::Other(e.to_string())),
        }
    }

    /// `syncStalePodDisruption`.
    async fn sync_stale(&self, key: &str, stale: &WorkQueue<String>) -> Result<Outcome, String> {
        let Some(pod) = self.pods.get(key) else { return Ok(Outcome::Done) };
        let now_us = (self.now_unix_us)();
        match budget::stale_disruption_wait_us(&pod, now_us) {
            None => return Ok(Outcome::Done),
            Some(wait_us) if wait_us > 0 => {
                stale.add_after(key.to_string(), Duration::from_micros(wait_us as u64));
                return Ok(Outcome::Done);
            }
            Some(_) => {}
        }
        let Some(cleared) = budget::clear_disruption_condition(&pod, &rfc3339_us(now_us)) else {
            return Ok(Outcome::Done);
        };
        let (ns, name) = ns_name(key);
        let path = builtin::pods().subresource_path(Some(ns), name, "status");
        self.client.update(&path, &cleared).await.map_err(|e| e.to_string())?;
        Ok(Outcome::Done)
    }
}

pub async fn run(ctx: Context) {
    let informer = |r: ApiResource| ctx.informers.get(&r);
    let controller = Controller {
        client: ctx.client.clone(),
        events: ctx.events.clone(),
        now_unix_us: ctx.now_unix_us.clone(),
        pods: informer(builtin::pods()),
        budgets: informer(builtin::pod_disruption_budgets()),
        rcs: informer(replication_controllers()),
        rss: informer(builtin::replica_sets()),
        deployments: informer(builtin::deployments()),
        stss: informer(builtin::stateful_sets()),
    };
    let queue: WorkQueue<String> = WorkQueue::new(RateLimiter::default_controller());
    let stale: WorkQueue<String> = WorkQueue::new(RateLimiter::default_controller());
    let mut budget_events = controller.budgets.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let feed = async {
        loop {
            tokio::select! {
                biased;
                Some(delta) = budget_events.recv() => queue.add(object_key(&delta.object)),
                Some(delta) = pod_events.recv() => {
                    let deleted = matches!(delta.notice, Notice::Delete | Notice::DeleteTombstone);
                    controller.pod_changed(&delta.object, deleted, &queue, &stale).await;
                }
                else => break,
            }
        }
    };
    let work = async {
        for informer in [&controller.pods, &controller.budgets, &controller.rcs, &controller.rss] {
            informer.wait_synced().await;
        }
        controller.deployments.wait_synced().await;
        controller.stss.wait_synced().await;
        let budgets = worker::run(DESCRIPTOR.name, &queue, 1, |key: String| {
            let (controller, queue) = (&controller, &queue);
            async move { controller.sync(&key, queue).await }
        });
        let pods = worker::run(DESCRIPTOR.name, &stale, 1, |key: String| {
            let (controller, stale) = (&controller, &stale);
            async move { controller.sync_stale(&key, stale).await }
        });
        futures::future::join(budgets, pods).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
