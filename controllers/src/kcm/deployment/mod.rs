//! The Deployment controller (`deployment-controller`, kube-controller-manager 1.32,
//! `pkg/controller/deployment/`: `deployment_controller.go`, `sync.go`, `rolling.go`, `recreate.go`,
//! `rollback.go`, `progress.go`, and `util/deployment_util.go`): every Deployment runs its pod template
//! through ReplicaSets it owns, one per template, rolling from the old ones to the new one by its strategy.
//!
//! This module is the shell: the Deployment, ReplicaSet and pod informers feed the [`handlers`], whose
//! keys go on the work queue; five workers (`--concurrent-deployment-syncs`) run [`sync::Controller::sync`]
//! once the three informers have synced, and retry a failed sync rate limited at most fifteen times
//! (`maxRetries`), never one that failed for its namespace being deleted. The rules are sans-IO in the
//! other files: `util` (surge, unavailability, proportions, orders), `revision` (revisions, annotations,
//! the new and old ReplicaSets), `hash` (the `pod-template-hash`), `status` and `progress` (the status and
//! its `Available` and `Progressing` conditions, the progress deadline), `rolling` and `scaling` (the
//! resizes of a rolling update, of a scaling event, of `Recreate`, and the history cleanup), `rollback`
//! (the deprecated rollback annotation). `sync` and `rollout` carry the plans out.
//!
//! Time: condition timestamps and the progress deadline come from the context's `now_unix_us`; the
//! queue's delays (a stuck rollout looked at when its deadline passes) run on tokio's clock, which is
//! madsim's simulated one under simulation.

pub mod handlers;
pub mod hash;
pub mod progress;
pub mod revision;
pub mod rollback;
pub mod rolling;
mod rollout;
pub mod scaling;
pub mod status;
pub mod sync;
pub mod util;

use serde_json::Value;

use super::Context;
use crate::client::resource::builtin;
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use handlers::Caches;
use sync::{Controller, Next};

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "deployment-controller", aliases: &["deployment"], disabled_by_default: false };

/// `--concurrent-deployment-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;

/// `maxRetries`: how often a failing Deployment is retried before it is dropped from the queue (until
/// its next change).
pub const MAX_RETRIES: u32 = 15;

/// The handlers read the shared informers' caches, as upstream's listers.
struct InformerCaches<'a> {
    deployments: &'a Informer,
    replica_sets: &'a Informer,
    pods: &'a Informer,
}

impl Caches for InformerCaches<'_> {
    fn deployment(&self, key: &str) -> Option<Value> {
        self.deployments.get(key)
    }
    fn deployments_in(&self, namespace: &str) -> Vec<Value> {
        self.deployments.list_namespace(namespace)
    }
    fn replica_set(&self, key: &str) -> Option<Value> {
        self.replica_sets.get(key)
    }
    fn replica_sets_in(&self, namespace: &str) -> Vec<Value> {
        self.replica_sets.list_namespace(namespace)
    }
    fn pods_in(&self, namespace: &str) -> Vec<Value> {
        self.pods.list_namespace(namespace)
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, CONCURRENT_SYNCS).await;
}

/// The controller with `workers` workers, for as long as the future lives.
pub async fn run_with(ctx: Context, workers: usize) {
    let controller = Controller {
        client: ctx.client.clone(),
        deployments: ctx.informers.get(&builtin::deployments()),
        replica_sets: ctx.informers.get(&builtin::replica_sets()),
        pods: ctx.informers.get(&builtin::pods()),
        events: ctx.events.for_component(DESCRIPTOR.name),
        now_unix_us: ctx.now_unix_us.clone(),
    };
    let queue: WorkQueue<String> = WorkQueue::new(RateLimiter::default_controller());
    let mut d_events = controller.deployments.subscribe();
    let mut rs_events = controller.replica_sets.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let caches = InformerCaches {
        deployments: &controller.deployments,
        replica_sets: &controller.replica_sets,
        pods: &controller.pods,
    };
    let feed = async {
        loop {
            let keys = tokio::select! {
                biased;
                Some(delta) = d_events.recv() => handlers::deployment_changed(&delta.object),
                Some(delta) = rs_events.recv() => match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::rs_added(&caches, &delta.object),
                    (Notice::Update, Some(old)) => handlers::rs_updated(&caches, old, &delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::rs_deleted(&caches, &delta.object),
                },
                Some(delta) = pod_events.recv() => match delta.notice {
                    Notice::Delete | Notice::DeleteTombstone => handlers::pod_deleted(&caches, &delta.object),
                    Notice::Add | Notice::Update => Vec::new(),
                },
                else => break,
            };
            for key in keys {
                queue.add(key);
            }
        }
    };
    let work = async {
        controller.deployments.wait_synced().await;
        controller.replica_sets.wait_synced().await;
        controller.pods.wait_synced().await;
        let worker = || async {
            while let Some(key) = queue.get().await {
                match controller.sync(&key).await {
                    Ok(Next::Done) => queue.forget(&key),
                    Ok(Next::After(delay)) => {
                        queue.add_after(key.clone(), delay);
                        queue.forget(&key);
                    }
                    Ok(Next::RateLimited) => {
                        queue.add_rate_limited(key.clone());
                        queue.forget(&key);
                    }
                    // Nothing can be made in a namespace being deleted: no point retrying.
                    Err(err) if err.namespace_terminating => queue.forget(&key),
                    Err(err) if queue.num_requeues(&key) < MAX_RETRIES => {
                        tracing::info!(controller = DESCRIPTOR.name, deployment = %key, "Error syncing deployment: {err}");
                        queue.add_rate_limited(key.clone());
                    }
                    Err(err) => {
                        tracing::info!(controller = DESCRIPTOR.name, deployment = %key, "Dropping deployment out of the queue: {err}");
                        queue.forget(&key);
                    }
                }
                queue.done(&key);
            }
        };
        futures::future::join_all((0..workers.max(1)).map(|_| worker())).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
