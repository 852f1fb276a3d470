//! The ReplicaSet controller (`replicaset-controller`, kube-controller-manager 1.32,
//! `pkg/controller/replicaset/replica_set.go` and `replica_set_utils.go`, with the parts of
//! `pkg/controller/controller_utils.go` and `controller_ref_manager.go` it uses): every ReplicaSet has
//! `spec.replicas` active pods made from its template and owned through a controller reference.
//!
//! This module is the shell: the pod and ReplicaSet informers feed the [`handlers`], whose actions update
//! the [`expectations`] and the work queue; five workers (`--concurrent-replicaset-syncs`) run
//! [`sync::Controller::sync`] once both informers have synced. The rules are sans-IO in the other files:
//! `selector` (label selectors), `pods` (what a pod's state means), `refs` (pods from the template,
//! adoption and release), `ranking` (which pods go first), `manage` (how many, in what batches), `status`
//! (the status and its `ReplicaFailure` condition).
//!
//! Time: timestamps written (a condition's `lastTransitionTime`) and ages compared (availability, the
//! deletion ranking) come from the context's `now_unix_us`; the expectations' five-minute expiry runs on
//! tokio's clock, which is madsim's simulated one under simulation.

pub mod expectations;
pub mod handlers;
pub mod manage;
pub mod pods;
pub mod ranking;
pub mod refs;
pub mod selector;
pub mod status;
pub mod sync;

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::Context;
use crate::client::resource::builtin;
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker;
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use expectations::Expectations;
use handlers::{Action, ReplicaSets};
use sync::Controller;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "replicaset-controller", aliases: &["replicaset"], disabled_by_default: false };

/// `--concurrent-replicaset-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;

/// The controller's settings; [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub workers: usize,
    pub burst_replicas: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { workers: CONCURRENT_SYNCS, burst_replicas: manage::BURST_REPLICAS }
    }
}

/// The handlers read ReplicaSets from the shared informer's cache, as upstream's lister.
impl ReplicaSets for Informer {
    fn get(&self, key: &str) -> Option<Value> {
        Informer::get(self, key)
    }

    fn in_namespace(&self, namespace: &str) -> Vec<Value> {
        self.list_namespace(namespace)
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, Options::default()).await;
}

/// The controller with `options`, for as long as the future lives.
pub async fn run_with(ctx: Context, options: Options) {
    let controller = Controller {
        client: ctx.client.clone(),
        pods: ctx.informers.get(&builtin::pods()),
        replica_sets: ctx.informers.get(&builtin::replica_sets()),
        expectations: Arc::new(Mutex::new(Expectations::default())),
        origin: tokio::time::Instant::now(),
        events: ctx.events.clone(),
        now_unix_us: ctx.now_unix_us.clone(),
        burst_replicas: options.burst_replicas,
        bugs: ctx.bugs.clone(),
    };
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut rs_events = controller.replica_sets.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let apply = |actions: Vec<Action>| {
        for action in actions {
            match action {
                Action::CreationObserved(key) => {
                    controller.expectations.lock().expect("never poisoned").creation_observed(&key)
                }
                Action::DeletionObserved { rs, pod } => {
                    controller.expectations.lock().expect("never poisoned").deletion_observed(&rs, &pod)
                }
                Action::DeleteExpectations(key) => controller.expectations.lock().expect("never poisoned").delete(&key),
                Action::Enqueue(key) => queue.add(key),
                Action::EnqueueAfter(key, delay) => queue.add_after(key, delay),
            }
        }
    };
    let feed = async {
        let rss = &controller.replica_sets;
        loop {
            tokio::select! {
                biased;
                Some(delta) = rs_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) => handlers::rs_added(&delta.object),
                    (Notice::Update, Some(old)) => handlers::rs_updated(old, &delta.object),
                    (Notice::Update, None) => handlers::rs_added(&delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::rs_deleted(&delta.object),
                }),
                Some(delta) = pod_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) => handlers::pod_added(rss, &delta.object),
                    (Notice::Update, Some(old)) => handlers::pod_updated(rss, old, &delta.object),
                    (Notice::Update, None) => handlers::pod_added(rss, &delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::pod_deleted(rss, &delta.object),
                }),
                else => break,
            }
        }
    };
    let work = async {
        controller.pods.wait_synced().await;
        controller.replica_sets.wait_synced().await;
        worker::run(DESCRIPTOR.name, &queue, options.workers, |key| controller.sync(key)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
