//! The garbage collector (`garbage-collector-controller`, kube-controller-manager 1.32,
//! `pkg/controller/garbagecollector/garbagecollector.go` and `graph_builder.go`): deletes objects whose
//! owners are gone, deletes an owner's dependents first when it is deleted in the foreground, and orphans
//! them when it is deleted with the Orphan policy.
//!
//! The decisions are sans IO, in [`graph`] (the ownership graph the informer events build, and the work
//! each event queues, with the absent-owner cache of [`absent_owners`]) and [`decide`] (what to do with a queued object, and the exact request bodies). This
//! is their shell, which owns the IO:
//!
//! - [`monitors`]: discovery every 30 s (the resources supporting `delete`, `list` and `watch`, Events
//!   left out), one subscription to the manager's shared informer per resource, and the single ordered
//!   feed of graph changes (upstream's `graphChanges`) that one future applies to the graph (upstream's
//!   `processGraphChanges`), queueing the follow-up work and recording the warnings it reports.
//! - [`workers`]: the attempt-to-delete and attempt-to-orphan workers, which GET, PATCH and DELETE
//!   through the client as upstream's metadata client does.
//!
//! The graph is shared by the feed and the workers in one `std::sync::Mutex`, never held across an
//! `.await`: each step locks it, computes, and lets go before any request. Upstream's queues hold node
//! pointers; these hold uids (see [`graph`]).
//!
//! As upstream's `Run` (1.31 and later), the workers start once every monitor has synced, or after 30 s
//! anyway, so that a resource that cannot be listed does not stop collection. Upstream starts
//! `--concurrent-gc-syncs` (20) workers on each of the two queues, here 20 futures each, all in the
//! controller's task. Warnings are recorded by a future of their own, in order, so that a slow Event
//! write never holds up the graph.

pub mod absent_owners;
pub mod decide;
pub mod graph;
pub mod monitors;
pub mod object_ref;
pub mod workers;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::Context;
use crate::bug::Bug;
use crate::client::{ApiResource, Client};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use graph::{Graph, GraphChanges, GraphEvent, WarningEvent, EVENT_COMPONENT};
use monitors::{GraphFeed, RestMapper, SYNC_PERIOD};

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "garbage-collector-controller", aliases: &["garbagecollector"], disabled_by_default: false };

/// `--concurrent-gc-syncs`'s default: workers per queue.
pub const CONCURRENT_GC_SYNCS: usize = 20;
/// How long `Run` waits for every monitor to sync before its workers start anyway.
pub const INITIAL_SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// The collector's settings; [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Workers on each of the attempt-to-delete and attempt-to-orphan queues.
    pub workers: usize,
    /// The discovery period, which is also how long each discovery round waits for new monitors to sync.
    pub sync_period: Duration,
    /// How long the workers wait for the first monitors to sync.
    pub initial_sync_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options { workers: CONCURRENT_GC_SYNCS, sync_period: SYNC_PERIOD, initial_sync_timeout: INITIAL_SYNC_TIMEOUT }
    }
}

/// What the feed, the discovery loop and the workers share.
pub(crate) struct Shared {
    client: Arc<Client>,
    /// The ownership graph and its absent-owner cache (upstream's `uidToNode` and `absentOwnerCache`).
    graph: Mutex<Graph>,
    /// The latest REST mapper; workers take a snapshot per item.
    mapper: Mutex<Arc<RestMapper>>,
    /// The running monitors, by resource (their informers serve `getMetadata`'s cache reads).
    monitors: Mutex<BTreeMap<ApiResource, Informer>>,
    attempt_to_delete: WorkQueue<String>,
    attempt_to_orphan: WorkQueue<String>,
    /// Virtual delete events for the feed (`enqueueVirtualDeleteEvent`).
    virtual_events: UnboundedSender<GraphEvent>,
    /// The jitter of the finalizer removal's conflict backoff.
    rng: Mutex<ChaCha8Rng>,
}

impl Shared {
    fn mapper(&self) -> Arc<RestMapper> {
        self.mapper.lock().expect("never poisoned").clone()
    }

    fn lock_graph(&self) -> std::sync::MutexGuard<'_, Graph> {
        self.graph.lock().expect("never poisoned")
    }

    /// `IsSynced`: there are monitors and every one has synced.
    fn is_synced(&self) -> bool {
        let monitors = self.monitors.lock().expect("never poisoned");
        !monitors.is_empty() && monitors.values().all(Informer::has_synced)
    }

    /// `IsResourceSynced`.
    fn is_resource_synced(&self, resource: &ApiResource) -> bool {
        self.monitors.lock().expect("never poisoned").get(resource).is_some_and(Informer::has_synced)
    }

    /// The cache of `resource`'s monitor, if there is one.
    fn cached(&self, resource: &ApiResource, key: &str) -> Option<Value> {
        let informer = self.monitors.lock().expect("never poisoned").get(resource).cloned();
        informer.and_then(|informer| informer.get(key))
    }

    /// Queues the follow-up work of one graph change and hands its warnings to the recorder.
    fn dispatch(&self, changes: GraphChanges, warnings: &UnboundedSender<WarningEvent>) {
        for uid in changes.attempt_to_delete {
            self.attempt_to_delete.add(uid);
        }
        for uid in changes.attempt_to_delete_rate_limited {
            self.attempt_to_delete.add_rate_limited(uid);
        }
        for uid in changes.attempt_to_orphan {
            self.attempt_to_orphan.add(uid);
        }
        for warning in changes.events {
            let _ = warnings.send(warning);
        }
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, Options::default()).await;
}

/// The collector with `options`, for as long as the future lives.
pub async fn run_with(ctx: Context, options: Options) {
    let (virtual_tx, virtual_rx) = unbounded_channel();
    let (monitor_tx, monitor_rx) = unbounded_channel();
    let (warning_tx, warning_rx) = unbounded_channel();
    let mut graph = Graph::new();
    if ctx.bugs.has(Bug::AbsentOwnerByUid) {
        graph.absent_owners.match_by_uid_only();
    }
    let shared = Shared {
        client: ctx.client.clone(),
        graph: Mutex::new(graph),
        mapper: Mutex::new(Arc::new(RestMapper::default())),
        monitors: Mutex::new(BTreeMap::new()),
        attempt_to_delete: WorkQueue::new(RateLimiter::default_controller()),
        attempt_to_orphan: WorkQueue::new(RateLimiter::default_controller()),
        virtual_events: virtual_tx,
        rng: Mutex::new(ChaCha8Rng::seed_from_u64(ctx.seed)),
    };
    let recorder = ctx.events.for_component(EVENT_COMPONENT);
    let graph_builder = process_graph_changes(&shared, GraphFeed::new(virtual_rx, monitor_rx), &warning_tx);
    let discovery = monitors::sync(&shared, &ctx.informers, &monitor_tx, options.sync_period);
    let work = async {
        let synced = tokio::time::timeout(options.initial_sync_timeout, monitors::wait_synced(&shared)).await;
        if synced.is_ok() {
            tracing::info!(controller = "garbagecollector", "all resource monitors have synced");
        } else {
            tracing::info!(
                controller = "garbagecollector",
                "not all resource monitors could be synced, proceeding anyways"
            );
        }
        tracing::info!(controller = "garbagecollector", "Proceeding to collect garbage");
        futures::join!(
            workers::run_attempt_to_delete(&shared, options.workers),
            workers::run_attempt_to_orphan(&shared, options.workers),
        );
    };
    futures::join!(graph_builder, discovery, record_warnings(recorder, warning_rx), work);
}

/// Upstream's `runProcessGraphChanges`: applies each change to the graph, in the feed's order.
async fn process_graph_changes(shared: &Shared, mut feed: GraphFeed, warnings: &UnboundedSender<WarningEvent>) {
    loop {
        let event = feed.next().await;
        let changes = shared.lock_graph().observe(&event);
        shared.dispatch(changes, warnings);
    }
}

/// The object reference an Event about `warning` names.
fn involved_object(warning: &WarningEvent) -> Value {
    let who = &warning.involved_object;
    let mut reference = json!({"kind": who.kind, "apiVersion": who.api_version, "name": who.name, "uid": who.uid});
    if let Some(namespace) = &who.namespace {
        reference["namespace"] = json!(namespace);
    }
    reference
}

/// Records each warning as a `Warning` Event from `garbage-collector-controller`, best effort.
async fn record_warnings(recorder: Recorder, mut warnings: UnboundedReceiver<WarningEvent>) {
    while let Some(warning) = warnings.recv().await {
        recorder.record(&involved_object(&warning), EventType::Warning, warning.reason, &warning.message).await;
    }
}

#[cfg(test)]
mod tests {
    use super::graph::{ObjectRef, REASON_OWNER_REF_INVALID_NAMESPACE};
    use super::*;
    use crate::client::Transport;

    fn shared() -> (Shared, UnboundedReceiver<GraphEvent>) {
        let (virtual_tx, virtual_rx) = unbounded_channel();
        let client = Arc::new(Client::new(Transport::Http("127.0.0.1:1".parse().unwrap()), None, "test"));
        let shared = Shared {
            client,
            graph: Mutex::new(Graph::new()),
            mapper: Mutex::new(Arc::new(RestMapper::default())),
            monitors: Mutex::new(BTreeMap::new()),
            attempt_to_delete: WorkQueue::default(),
            attempt_to_orphan: WorkQueue::default(),
            virtual_events: virtual_tx,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(1)),
        };
        (shared, virtual_rx)
    }

    #[tokio::test]
    async fn graph_changes_fill_the_queues_and_the_recorder() {
        let (shared, _virtual) = shared();
        let (tx, mut rx) = unbounded_channel();
        let dep = ObjectRef {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: Some("a".into()),
            name: "p".into(),
            uid: "d1".into(),
        };
        let warning =
            WarningEvent { involved_object: dep, reason: REASON_OWNER_REF_INVALID_NAMESPACE, message: "m".into() };
        let changes = GraphChanges {
            attempt_to_delete: vec!["d1".into(), "o1".into(), "d1".into()],
            attempt_to_delete_rate_limited: vec![],
            attempt_to_orphan: vec!["o2".into()],
            events: vec![warning.clone()],
        };
        shared.dispatch(changes, &tx);
        // The queue dedupes, as upstream's does.
        assert_eq!(shared.attempt_to_delete.len(), 2);
        assert_eq!(shared.attempt_to_delete.get().await.as_deref(), Some("d1"));
        assert_eq!(shared.attempt_to_orphan.get().await.as_deref(), Some("o2"));
        assert_eq!(rx.recv().await, Some(warning.clone()));
        let reference = involved_object(&warning);
        assert_eq!(reference, json!({"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "d1", "namespace": "a"}));
    }

    #[test]
    fn synced_needs_at_least_one_monitor() {
        let (shared, _virtual) = shared();
        assert!(!shared.is_synced(), "no monitors: not synced, as upstream's IsSynced");
        let cm = ApiResource::new("", "v1", "configmaps", "ConfigMap", true);
        shared.monitors.lock().unwrap().insert(cm.clone(), Informer::new(cm.clone()));
        assert!(!shared.is_synced() && !shared.is_resource_synced(&cm));
    }
}
