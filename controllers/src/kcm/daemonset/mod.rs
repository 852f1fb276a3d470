//! The DaemonSet controller (`daemonset-controller`, kube-controller-manager 1.32,
//! `pkg/controller/daemon/{daemon_controller.go,update.go,util/daemonset_util.go}` and the parts of
//! `pkg/controller/history` and `controller_utils.go` it uses): every node that a DaemonSet's pod fits gets
//! exactly one of its pods, pinned there by required node affinity `metadata.name In [node]` and bound by
//! the scheduler; template changes roll out through ControllerRevisions, one node's pod at a time within
//! `maxUnavailable` (or next to the old pod within `maxSurge`), or only as pods are deleted (`OnDelete`).
//!
//! This module is the shell: the DaemonSet, pod, node and ControllerRevision informers feed the
//! [`handlers`], whose actions update the [`expectations`] and the work queue; two workers
//! (`--concurrent-daemonset-syncs`) run [`sync::Controller::sync`] once the informers have synced. The
//! rules are sans-IO in the other files: `eligibility` (which nodes, which tolerations, the pod's
//! affinity), `plan` (per-node decisions, the rolling update, the status counts, the failed-pod backoff),
//! `history` (revisions).
//!
//! Time: availability and timestamps come from the context's `now_unix_us`; the expectations' expiry and
//! the failed-pod backoff run on tokio's clock (madsim's under simulation). Left out: the failed-pod
//! backoff's periodic garbage collection (entries are few and small), and the `includeDeletedTerminal`
//! refinement of history cleanup.

pub mod eligibility;
pub mod expectations;
pub mod handlers;
pub mod history;
pub mod plan;
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
use handlers::{Action, DaemonSets};
use plan::Backoff;
use sync::Controller;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "daemonset-controller", aliases: &["daemonset"], disabled_by_default: false };

/// `--concurrent-daemonset-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 2;

/// The controller's settings; [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub workers: usize,
    pub burst_replicas: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { workers: CONCURRENT_SYNCS, burst_replicas: sync::BURST_REPLICAS }
    }
}

/// The handlers read DaemonSets from the shared informer's cache.
impl DaemonSets for Informer {
    fn get(&self, key: &str) -> Option<Value> {
        Informer::get(self, key)
    }

    fn all(&self) -> Vec<Value> {
        self.list()
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
        daemon_sets: ctx.informers.get(&builtin::daemon_sets()),
        nodes: ctx.informers.get(&builtin::nodes()),
        revisions: ctx.informers.get(&builtin::controller_revisions()),
        expectations: Arc::new(Mutex::new(Expectations::default())),
        backoff: Mutex::new(Backoff::default()),
        origin: tokio::time::Instant::now(),
        events: ctx.events.clone(),
        now_unix_us: ctx.now_unix_us.clone(),
        burst_replicas: options.burst_replicas,
    };
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut ds_events = controller.daemon_sets.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let mut node_events = controller.nodes.subscribe();
    let mut revision_events = controller.revisions.subscribe();
    let apply = |actions: Vec<Action>| {
        for action in actions {
            let mut expectations = controller.expectations.lock().expect("never poisoned");
            match action {
                Action::CreationObserved(key) => expectations.creation_observed(&key),
                Action::DeletionObserved(key) => expectations.deletion_observed(&key),
                Action::DeleteExpectations(key) => expectations.delete(&key),
                Action::Enqueue(key) => queue.add(key),
                Action::EnqueueAfter(key, delay) => queue.add_after(key, delay),
            }
        }
    };
    let feed = async {
        let dss = &controller.daemon_sets;
        loop {
            tokio::select! {
                biased;
                Some(delta) = ds_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::ds_added(&delta.object),
                    (Notice::Update, Some(old)) => handlers::ds_updated(old, &delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::ds_deleted(&delta.object),
                }),
                Some(delta) = pod_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::pod_added(dss, &delta.object),
                    (Notice::Update, Some(old)) => handlers::pod_updated(dss, old, &delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::pod_deleted(dss, &delta.object),
                }),
                Some(delta) = node_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::node_added(dss, &delta.object),
                    (Notice::Update, Some(old)) => handlers::node_updated(dss, old, &delta.object),
                    // Upstream has no handler for a deleted node: its pods are the pod GC's.
                    (Notice::Delete | Notice::DeleteTombstone, _) => Vec::new(),
                }),
                Some(delta) = revision_events.recv() => apply(match delta.notice {
                    Notice::Delete | Notice::DeleteTombstone => handlers::history_changed(dss, &delta.object, true),
                    _ => handlers::history_changed(dss, &delta.object, false),
                }),
                else => break,
            }
        }
    };
    let work = async {
        for informer in [&controller.pods, &controller.daemon_sets, &controller.nodes, &controller.revisions] {
            informer.wait_synced().await;
        }
        worker::run(DESCRIPTOR.name, &queue, options.workers, |key| controller.sync(key)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
