//! The namespace controller (`namespace-controller`, kube-controller-manager 1.32,
//! `pkg/controller/namespace/namespace_controller.go`, with `deletion/` in [`deleter`] and [`conditions`]):
//! a namespace being deleted is emptied of every namespaced object, then released by removing the
//! `kubernetes` finalizer, which lets the apiserver delete it.
//!
//! Namespaces come from the shared informer. An added or updated namespace with a `deletionTimestamp` is
//! queued 5 s later (`namespaceDeletionGracePeriod`, so that every apiserver has seen the deletion and
//! refuses new content before the controller looks), and every cached namespace is offered again each
//! `--namespace-sync-period` (5 min), as the informer's resync does upstream. Workers take a namespace
//! still in the cache and run one [`Deleter::delete`] pass over it. A pass that leaves content going away
//! is queued again after half its estimate plus a second; any other failure is retried with the
//! namespace queue's rate limiter (5 ms doubling to a minute per namespace, 10 qps overall). Ten workers
//! (`--concurrent-namespace-syncs`) run as futures of the controller's task, and none starts before the
//! informer has synced.
//!
//! Before anything, the controller learns from discovery which operations each resource supports;
//! upstream's controller manager exits when discovery finds nothing, and here the controller tries again
//! a second later instead.

pub mod conditions;
pub mod deleter;

use std::time::Duration;

use serde_json::Value;

use super::Context;
use crate::client::resource::builtin;
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::{object_key, Notice};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
pub use deleter::{DeleteError, Deleter};

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "namespace-controller", aliases: &["namespace"], disabled_by_default: false };

/// `v1.FinalizerKubernetes`: the finalizer this controller owns.
pub const FINALIZER: &str = "kubernetes";

/// `namespaceDeletionGracePeriod`.
pub const DELETION_GRACE_PERIOD: Duration = Duration::from_secs(5);
/// `--namespace-sync-period`'s default.
pub const SYNC_PERIOD: Duration = Duration::from_secs(300);
/// `--concurrent-namespace-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 10;
/// How long to wait before discovering again when the first discovery found no resource at all.
const DISCOVERY_RETRY: Duration = Duration::from_secs(1);

/// The controller's settings; [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub workers: usize,
    pub deletion_grace_period: Duration,
    pub sync_period: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options { workers: CONCURRENT_SYNCS, deletion_grace_period: DELETION_GRACE_PERIOD, sync_period: SYNC_PERIOD }
    }
}

/// When a pass that left content going away (`ResourcesRemainingError`) looks again: half the estimate
/// plus a second.
pub fn requeue_after(estimate_s: i64) -> Duration {
    Duration::from_secs(u64::try_from(estimate_s / 2 + 1).unwrap_or(1))
}

/// `enqueueNamespace`'s filter: only a namespace being deleted is worth a pass.
pub fn is_deleting(ns: &Value) -> bool {
    ns.pointer("/metadata/deletionTimestamp").and_then(Value::as_str).is_some_and(|t| !t.is_empty())
}

pub async fn run(ctx: Context) {
    run_with(ctx, Options::default()).await;
}

/// The controller with `options`, for as long as the future lives.
pub async fn run_with(ctx: Context, options: Options) {
    // `NewNamespacedResourcesDeleter` fills its operation cache before the controller is wired up.
    let deleter = loop {
        let (resources, failure) = deleter::discover_namespaced(&ctx.client).await;
        if let Some(failure) = failure {
            tracing::warn!(
                controller = DESCRIPTOR.name,
                "unable to get all supported resources from server: {failure}"
            );
        }
        if !resources.is_empty() {
            break Deleter::new(ctx.client.clone(), ctx.now_unix_us.clone(), FINALIZER, &resources)
                .with_bugs(ctx.bugs.clone());
        }
        tracing::error!(controller = DESCRIPTOR.name, "unable to get any supported resources from server");
        tokio::time::sleep(DISCOVERY_RETRY).await;
    };
    let namespaces = ctx.informers.get(&builtin::namespaces());
    let queue: WorkQueue<String> = WorkQueue::new(RateLimiter::namespace_controller());
    let mut deltas = namespaces.subscribe();
    let enqueue = |ns: &Value| {
        if is_deleting(ns) {
            queue.add_after(object_key(ns), options.deletion_grace_period);
        }
    };
    let feed = async {
        while let Some(delta) = deltas.recv().await {
            if matches!(delta.notice, Notice::Add | Notice::Update) {
                enqueue(&delta.object);
            }
        }
    };
    let resync = async {
        loop {
            tokio::time::sleep(options.sync_period).await;
            for ns in namespaces.list() {
                enqueue(&ns);
            }
        }
    };
    let work = async {
        namespaces.wait_synced().await;
        let workers = (0..options.workers.max(1)).map(|_| worker(&queue, &namespaces, &deleter));
        futures::future::join_all(workers).await;
    };
    futures::future::join3(feed, resync, work).await;
}

/// `worker`: takes namespaces until the queue shuts down. Upstream's own loop rather than the shared
/// runtime's, because a pass with content remaining is queued again without forgetting the namespace's
/// failures, so that its backoff keeps growing across such passes as upstream's does.
async fn worker(queue: &WorkQueue<String>, namespaces: &Informer, deleter: &Deleter) {
    while let Some(key) = queue.get().await {
        match sync_namespace_from_key(namespaces, deleter, &key).await {
            Ok(()) => queue.forget(&key),
            Err(DeleteError::ResourcesRemaining { estimate_s }) => {
                tracing::debug!(
                    controller = DESCRIPTOR.name,
                    namespace = key,
                    estimate_s,
                    "content remaining in namespace"
                );
                queue.add_after(key.clone(), requeue_after(estimate_s));
            }
            Err(err) => {
                tracing::info!(controller = DESCRIPTOR.name, "deletion of namespace {key} failed: {err}");
                queue.add_rate_limited(key.clone());
            }
        }
        queue.done(&key);
    }
}

/// `syncNamespaceFromKey`: a namespace the cache no longer has is done.
async fn sync_namespace_from_key(namespaces: &Informer, deleter: &Deleter, key: &str) -> Result<(), DeleteError> {
    if namespaces.get(key).is_none() {
        tracing::debug!(controller = DESCRIPTOR.name, namespace = key, "namespace has been deleted");
        return Ok(());
    }
    deleter.delete(key).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn content_remaining_is_looked_at_again_after_half_the_estimate_plus_a_second() {
        let cases = [(0, 1), (1, 1), (15, 8), (30, 16), (31, 16)];
        for (estimate_s, want_s) in cases {
            assert_eq!(requeue_after(estimate_s), Duration::from_secs(want_s), "{estimate_s} s");
        }
    }

    #[test]
    fn only_namespaces_being_deleted_are_queued() {
        let cases = [
            (json!({"metadata": {"name": "a"}}), false),
            (json!({"metadata": {"name": "a", "deletionTimestamp": ""}}), false),
            (json!({"metadata": {"name": "a", "deletionTimestamp": null}}), false),
            (json!({"metadata": {"name": "a", "deletionTimestamp": "2023-11-14T22:13:20Z"}}), true),
        ];
        for (ns, want) in cases {
            assert_eq!(is_deleting(&ns), want, "{ns}");
        }
    }

    #[test]
    fn the_descriptor_and_defaults_are_upstreams() {
        assert_eq!(
            DESCRIPTOR,
            Descriptor { name: "namespace-controller", aliases: &["namespace"], disabled_by_default: false }
        );
        assert_eq!(
            Options::default(),
            Options {
                workers: 10,
                deletion_grace_period: Duration::from_secs(5),
                sync_period: Duration::from_secs(300)
            }
        );
    }
}
