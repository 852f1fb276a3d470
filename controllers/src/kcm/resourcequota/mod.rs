//! The `resourcequota-controller` (kube-controller-manager 1.32,
//! `pkg/controller/resourcequota/resource_quota_controller.go` and `resource_quota_monitor.go`): every
//! ResourceQuota's `status.hard` is its `spec.hard`, and its `status.used` what the namespace's objects
//! use of those resources, counted in full from the shared informers' caches.
//!
//! The apiserver's ResourceQuota admission plugin (`apiserver/src/admission/plugins/resource_quota.rs`)
//! charges every admitted create to `status.used` and releases a deleted object's usage, and counts a quota
//! whose status lags its spec when a request first needs it. This controller is the full count upstream
//! relies on: it fills a new quota's status at once, picks up what the plugin never sees (a pod turning
//! terminal, a service changing type, a write that failed after it was charged), and recounts every quota
//! every five minutes. Both write quantities canonically (`Quantity.String()`), so their figures agree.
//!
//! Shell: a quota whose `spec.hard` is not yet its `status.hard`, or which limits a resource with no usage
//! recorded, goes to the priority queue (`missingUsageQueue`), any other added or re-specified quota to the
//! normal one; five workers serve each. The quota monitor watches (lazily, as quotas name them) each counted
//! resource and, on a delete or an update that changes what the object uses, requeues the quotas of its
//! namespace that limit something the resource counts. Which resource a `count/<resource>.<group>` names is
//! found through discovery; one nothing serves is not counted (its usage, if any, is kept), as upstream's
//! registry has no evaluator for it. The counting is sans-IO in [`usage`], quantities in the apiserver's [`apiserver::quantity`], which its quota admission plugin counts with too.

pub mod usage;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::replicaset::pods::object_key;
use super::Context;
use crate::client::discovery::preferred_resources;
use crate::client::resource::builtin;
use crate::client::{ApiResource, Client};
use crate::runtime::informer::{Delta, Informer, Informers};
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use usage::Evaluator;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "resourcequota-controller", aliases: &["resourcequota"], disabled_by_default: false };

/// `--concurrent-resource-quota-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;
/// `--resource-quota-sync-period`'s default: every quota is recounted this often.
pub const RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);
/// How long a sync waits for a counted resource's informer to list before it fails (and is retried).
const SYNC_WAIT: Duration = Duration::from_secs(30);

/// The quota monitor: one informer per counted resource, each forwarding its changes to the controller.
struct Monitors {
    informers: Arc<Informers>,
    client: Arc<Client>,
    /// Discovered resources by `(group, resource)`, refreshed when a quota names one not yet known.
    discovered: Mutex<BTreeMap<(String, String), ApiResource>>,
    running: Mutex<BTreeMap<ApiResource, tokio::task::JoinHandle<()>>>,
    changes: UnboundedSender<(Evaluator, Delta)>,
}

impl Drop for Monitors {
    fn drop(&mut self) {
        for (_, task) in std::mem::take(&mut *self.running.lock().expect("never poisoned")) {
            task.abort();
        }
    }
}

impl Monitors {
    /// The served resource an evaluator counts, asking discovery again when it is not known yet.
    async fn resolve(&self, evaluator: &Evaluator) -> Option<ApiResource> {
        let key = evaluator.group_resource();
        if let Some(found) = self.discovered.lock().expect("never poisoned").get(&key) {
            return Some(found.clone());
        }
        let discovery = preferred_resources(&self.client).await.ok()?;
        let mut known = self.discovered.lock().expect("never poisoned");
        for d in discovery.resources.into_iter().filter(|d| d.supports("list") && d.supports("watch")) {
            known.insert((d.resource.group.clone(), d.resource.resource.clone()), d.resource);
        }
        known.get(&key).cloned()
    }

    /// The informer of `resource`, its changes forwarded (once) as `evaluator`'s.
    fn monitor(&self, resource: &ApiResource, evaluator: &Evaluator) -> Informer {
        let informer = self.informers.get(resource);
        let mut running = self.running.lock().expect("never poisoned");
        if !running.contains_key(resource) {
            let mut events = informer.subscribe();
            let (changes, evaluator) = (self.changes.clone(), evaluator.clone());
            let task = tokio::spawn(async move {
                while let Some(delta) = events.recv().await {
                    if changes.send((evaluator.clone(), delta)).is_err() {
                        break;
                    }
                }
            });
            running.insert(resource.clone(), task);
        }
        informer
    }
}

struct Controller {
    client: Arc<Client>,
    quotas: Informer,
    monitors: Monitors,
    now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
}

impl Controller {
    /// `syncResourceQuota`: count what the quota limits and write its status if it changed.
    async fn sync(&self, key: &str) -> Result<Outcome, String> {
        let Some(quota) = self.quotas.get(key) else { return Ok(Outcome::Done) };
        let ns = quota.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("").to_string();
        let now_us = (self.now_unix_us)();
        let mut counted = usage::Usage::new();
        for evaluator in usage::evaluators_for(&quota) {
            let Some(resource) = self.monitors.resolve(&evaluator).await else { continue };
            let informer = self.monitors.monitor(&resource, &evaluator);
            tokio::select! {
                biased;
                _ = informer.wait_synced() => {}
                _ = tokio::time::sleep(SYNC_WAIT) => {
                    return Err(format!("timed out waiting for {} to sync", resource.group_resource()));
                }
            }
            let objects = informer.list_namespace(&ns);
            counted = usage::add(&counted, &usage::calculate(&quota, &evaluator, &objects, Some(now_us)));
        }
        let Some(updated) = usage::new_status(&quota, &counted) else { return Ok(Outcome::Done) };
        let name = quota.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        let path = builtin::resource_quotas().subresource_path(Some(&ns), name, "status");
        self.client.update(&path, &updated).await.map_err(|e| e.to_string())?;
        Ok(Outcome::Done)
    }
}

/// `addQuota`: whether a quota needs counting first (its limits not yet in its status, or a limited
/// resource some evaluator counts without a usage).
pub fn needs_priority(quota: &Value) -> bool {
    let hard = usage::list_at(quota, "/spec/hard");
    if hard != usage::list_at(quota, "/status/hard") || quota.pointer("/status/hard").is_none_or(Value::is_null) {
        return true;
    }
    let used = usage::list_at(quota, "/status/used");
    usage::list_at(quota, "/status/hard")
        .keys()
        .any(|name| !used.contains_key(name) && Evaluator::for_name(name).is_some())
}

/// The quotas of `quotas` that a change of an object `evaluator` counts can affect (`replenishQuota`):
/// those limiting one of its resources.
pub fn affected_quotas(quotas: &[Value], evaluator: &Evaluator) -> Vec<String> {
    quotas
        .iter()
        .filter(|q| usage::list_at(q, "/status/hard").keys().any(|name| evaluator.counts(name)))
        .map(object_key)
        .collect()
}

pub async fn run(ctx: Context) {
    let (changes, mut changed) = unbounded_channel();
    let controller = Controller {
        client: ctx.client.clone(),
        quotas: ctx.informers.get(&builtin::resource_quotas()),
        monitors: Monitors {
            informers: ctx.informers.clone(),
            client: ctx.client.clone(),
            discovered: Mutex::new(BTreeMap::new()),
            running: Mutex::new(BTreeMap::new()),
            changes,
        },
        now_unix_us: ctx.now_unix_us.clone(),
    };
    let queue: WorkQueue<String> = WorkQueue::new(RateLimiter::default_controller());
    let missing: WorkQueue<String> = WorkQueue::new(RateLimiter::default_controller());
    let mut quota_events = controller.quotas.subscribe();
    let add_quota = |quota: &Value| {
        if needs_priority(quota) {
            missing.add(object_key(quota));
        } else {
            queue.add(object_key(quota));
        }
    };
    let feed = async {
        loop {
            tokio::select! {
                biased;
                Some(delta) = quota_events.recv() => match (delta.notice, &delta.old) {
                    (Notice::Update, Some(old)) => {
                        // Status writes (this controller's and the plugin's) are not worth a recount.
                        if usage::list_at(old, "/spec/hard") != usage::list_at(&delta.object, "/spec/hard") {
                            add_quota(&delta.object);
                        }
                    }
                    (Notice::Add | Notice::Update, _) => add_quota(&delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => queue.add(object_key(&delta.object)),
                },
                Some((evaluator, delta)) = changed.recv() => {
                    let now_us = (controller.now_unix_us)();
                    let replenish = match (&delta.notice, &delta.old) {
                        (Notice::Delete | Notice::DeleteTombstone, _) => true,
                        (Notice::Update, Some(old)) => usage::update_replenishes(&evaluator, old, &delta.object, now_us),
                        _ => false,
                    };
                    if replenish {
                        let ns = delta.object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
                        for key in affected_quotas(&controller.quotas.list_namespace(ns), &evaluator) {
                            queue.add(key);
                        }
                    }
                }
                else => break,
            }
        }
    };
    let resync = async {
        loop {
            tokio::time::sleep(RESYNC_PERIOD).await;
            for quota in controller.quotas.list() {
                queue.add(object_key(&quota));
            }
        }
    };
    let work = async {
        controller.quotas.wait_synced().await;
        let sync = |key: String| {
            let controller = &controller;
            async move { controller.sync(&key).await }
        };
        futures::future::join(
            worker::run(DESCRIPTOR.name, &queue, CONCURRENT_SYNCS, sync),
            worker::run(DESCRIPTOR.name, &missing, CONCURRENT_SYNCS, sync),
        )
        .await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = resync => {}
        _ = work => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn which_quotas_go_first() {
        let cases = [
            (json!({"spec": {"hard": {"pods": "2"}}}), true),
            (json!({"spec": {"hard": {"pods": "2"}}, "status": {"hard": {"pods": "3"}, "used": {"pods": "0"}}}), true),
            (json!({"spec": {"hard": {"pods": "2"}}, "status": {"hard": {"pods": "2"}}}), true),
            (json!({"spec": {"hard": {"pods": "2"}}, "status": {"hard": {"pods": "2"}, "used": {"pods": "1"}}}), false),
            // A limit nothing counts needs no usage.
            (json!({"spec": {"hard": {"bogus": "2"}}, "status": {"hard": {"bogus": "2"}, "used": {}}}), false),
        ];
        for (quota, want) in cases {
            assert_eq!(needs_priority(&quota), want, "{quota}");
        }
    }

    #[test]
    fn a_change_requeues_the_quotas_limiting_its_resources() {
        let q = |name: &str, hard: serde_json::Value| json!({"metadata": {"name": name, "namespace": "ns"}, "status": {"hard": hard}});
        let quotas = vec![
            q("compute", json!({"requests.cpu": "1"})),
            q("objects", json!({"configmaps": "3", "count/pods": "4"})),
            q("none", json!({})),
        ];
        assert_eq!(
            affected_quotas(&quotas, &Evaluator::Pods),
            vec!["ns/compute".to_string(), "ns/objects".to_string()]
        );
        let configmaps = Evaluator::for_name("configmaps").unwrap();
        assert_eq!(affected_quotas(&quotas, &configmaps), vec!["ns/objects".to_string()]);
        assert!(affected_quotas(&quotas, &Evaluator::Services).is_empty());
    }
}
