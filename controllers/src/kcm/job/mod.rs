//! The Job controller (`job-controller`, kube-controller-manager 1.32, `pkg/controller/job/`:
//! `job_controller.go`, `indexed_job_utils.go`, `pod_failure_policy.go`, `tracking_utils.go`,
//! `backoff_utils.go`): every Job runs pods from its template until `completions` of them succeed
//! (`parallelism` at a time), or fails on its backoff limit, its pod failure policy or its deadline.
//!
//! This module is the shell: the pod and Job informers feed the [`handlers`], whose actions update the
//! expectations and the work queue; five workers (`--concurrent-job-syncs`) run [`sync::Controller::sync`]
//! once both informers have synced. The rules are sans-IO in the other files: `pods` (the pods made and
//! what their state means), `failure_policy`, `backoff` (the pod-creation backoff), `indexes` (Indexed
//! Jobs), `tracking` (two-phase counting and the conditions); `manage` and `sync` make the requests.
//!
//! Time: timestamps written and deadlines measured come from the context's `now_unix_us`; the
//! expectations' expiry runs on tokio's clock (madsim's under simulation). `ttlSecondsAfterFinished` is the
//! ttl-after-finished controller's business, not this one's.

pub mod backoff;
pub mod failure_policy;
pub mod handlers;
pub mod indexes;
pub mod manage;
pub mod pods;
pub mod sync;
pub mod tracking;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::Context;
use crate::client::resource::builtin;
use crate::kcm::replicaset::expectations::Expectations;
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker;
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use handlers::{Action, Jobs};
use sync::Controller;

pub const DESCRIPTOR: Descriptor = Descriptor { name: "job-controller", aliases: &["job"], disabled_by_default: false };

/// `--concurrent-job-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;
/// `DefaultJobApiBackOff` and `MaxJobApiBackOff`: the queue's backoff after a failed sync.
pub const DEFAULT_API_BACKOFF: Duration = Duration::from_secs(1);
pub const MAX_API_BACKOFF: Duration = Duration::from_secs(60);

/// The handlers read Jobs from the shared informer's cache, as upstream's lister.
impl Jobs for Informer {
    fn get(&self, key: &str) -> Option<Value> {
        Informer::get(self, key)
    }

    fn in_namespace(&self, namespace: &str) -> Vec<Value> {
        self.list_namespace(namespace)
    }
}

pub async fn run(ctx: Context) {
    let controller = Controller {
        client: ctx.client.clone(),
        pods: ctx.informers.get(&builtin::pods()),
        jobs: ctx.informers.get(&builtin::jobs()),
        expectations: Arc::new(Mutex::new(Expectations::default())),
        finalizer_expectations: Arc::new(Mutex::new(BTreeMap::new())),
        backoff: Mutex::new(BTreeMap::new()),
        origin: tokio::time::Instant::now(),
        events: ctx.events.clone(),
        now_unix_us: ctx.now_unix_us.clone(),
        bugs: ctx.bugs.clone(),
    };
    let queue = WorkQueue::new(RateLimiter::exponential(DEFAULT_API_BACKOFF, MAX_API_BACKOFF));
    let mut job_events = controller.jobs.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let apply = |actions: Vec<Action>| {
        for action in actions {
            match action {
                Action::CreationObserved(key) => {
                    controller.expectations.lock().expect("never poisoned").creation_observed(&key)
                }
                Action::DeletionObserved { job, pod } => {
                    controller.expectations.lock().expect("never poisoned").deletion_observed(&job, &pod)
                }
                Action::FinalizerRemovalObserved { job, uid } => {
                    let mut expected = controller.finalizer_expectations.lock().expect("never poisoned");
                    if let Some(uids) = expected.get_mut(&job) {
                        uids.remove(&uid);
                    }
                }
                Action::DeleteExpectations(key) => {
                    controller.expectations.lock().expect("never poisoned").delete(&key);
                    controller.finalizer_expectations.lock().expect("never poisoned").remove(&key);
                }
                Action::Enqueue(key) => queue.add(key),
                Action::EnqueueAfter(key, delay) => queue.add_after(key, delay),
            }
        }
    };
    let feed = async {
        let jobs = &controller.jobs;
        loop {
            tokio::select! {
                biased;
                Some(delta) = job_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::job_added(&delta.object),
                    (Notice::Update, Some(old)) => handlers::job_updated(old, &delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::job_deleted(&delta.object),
                }),
                Some(delta) = pod_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::pod_added(jobs, &delta.object),
                    (Notice::Update, Some(old)) => handlers::pod_updated(jobs, old, &delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::pod_deleted(jobs, &delta.object, true),
                }),
                else => break,
            }
        }
    };
    let work = async {
        controller.pods.wait_synced().await;
        controller.jobs.wait_synced().await;
        worker::run(DESCRIPTOR.name, &queue, CONCURRENT_SYNCS, |key| controller.sync(key)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
