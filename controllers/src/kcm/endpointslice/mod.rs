//! The EndpointSlice controller (`endpointslice-controller`, kube-controller-manager 1.32,
//! `pkg/controller/endpointslice/endpointslice_controller.go` over `staging/src/k8s.io/endpointslice`):
//! every Service with a selector has EndpointSlices, named `<service>-<random>` and owned by it, listing
//! the pods it selects, at most 100 to a slice, one set of slices per address type and port set.
//!
//! This module is the shell: the Service, pod and EndpointSlice informers feed the work queue (a Service's
//! key on any change to it; the Services a pod is or was in when it changes in a way that matters; a
//! managed slice's Service, a second later, when the slice changed in a way this controller did not make),
//! and five workers (`--concurrent-service-endpoint-syncs`) run [`sync::Controller::sync`] once the
//! informers (nodes too, for zones) have synced. The queue backs off from 1 s to 1000 s per key under an
//! overall 10 qps bucket, and a key that keeps failing is dropped after 15 retries, as upstream's.
//!
//! The rules are sans-IO: `util` (pods and Services, shared with the Endpoints controller), `endpoint`
//! (one endpoint, ports, labels, new slices), `reconciler` (the plan), `tracker` (the generations written).
//!
//! Left out: topology hints and the node-topology queue behind them, `trafficDistribution`,
//! `--endpoint-updates-batch-period` (its default, 0, is what runs), and the metrics.

pub mod endpoint;
pub mod reconciler;
pub mod sync;
pub mod tracker;
pub mod util;

use std::sync::Mutex;
use std::time::Duration;

use super::Context;
use crate::client::resource::builtin;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use sync::{managed_by_controller, service_key, Controller};
use util::{pod_service_memberships, services_to_update_on_pod_change};

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "endpointslice-controller", aliases: &["endpointslice"], disabled_by_default: false };

/// `--concurrent-service-endpoint-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;
/// `--max-endpoints-per-slice`'s default.
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
/// `maxRetries`.
pub const MAX_RETRIES: u32 = 15;
/// `endpointSliceChangeMinSyncDelay`: how long after a slice changed its Service is synced.
pub const SLICE_CHANGE_MIN_SYNC_DELAY: Duration = Duration::from_secs(1);
/// `defaultSyncBackOff` and `maxSyncBackOff`.
pub const SYNC_BACKOFF: Duration = Duration::from_secs(1);
pub const MAX_SYNC_BACKOFF: Duration = Duration::from_secs(1000);
/// The event source upstream's recorder uses.
pub const EVENT_COMPONENT: &str = "endpoint-slice-controller";

/// The controller's settings; [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub workers: usize,
    pub max_endpoints_per_slice: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { workers: CONCURRENT_SYNCS, max_endpoints_per_slice: MAX_ENDPOINTS_PER_SLICE }
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, Options::default()).await;
}

/// The controller with `options`, for as long as the future lives.
pub async fn run_with(ctx: Context, options: Options) {
    let controller = Controller {
        client: ctx.client.clone(),
        services: ctx.informers.get(&builtin::services()),
        pods: ctx.informers.get(&builtin::pods()),
        nodes: ctx.informers.get(&builtin::nodes()),
        slices: ctx.informers.get(&builtin::endpoint_slices()),
        events: ctx.events.for_component(EVENT_COMPONENT),
        max_endpoints_per_slice: options.max_endpoints_per_slice,
        tracker: Mutex::default(),
        trigger_times: Mutex::default(),
        bugs: ctx.bugs.clone(),
    };
    let queue = WorkQueue::new(RateLimiter::exponential_with_bucket(SYNC_BACKOFF, MAX_SYNC_BACKOFF, 10.0, 100));
    let mut service_events = controller.services.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let mut slice_events = controller.slices.subscribe();
    let queue_for_slice = |slice: &serde_json::Value| match service_key(slice) {
        Some(key) => queue.add_after(key, SLICE_CHANGE_MIN_SYNC_DELAY),
        None => {
            tracing::info!(slice = %crate::runtime::store::object_key(slice), "EndpointSlice without a service name")
        }
    };
    let feed = async {
        loop {
            tokio::select! {
                biased;
                Some(delta) = service_events.recv() => queue.add(delta.key),
                Some(delta) = pod_events.recv() => {
                    let services = controller.services.list();
                    let keys = match (&delta.notice, &delta.old) {
                        (Notice::Update, Some(old)) => services_to_update_on_pod_change(&services, old, &delta.object),
                        _ => pod_service_memberships(&services, &delta.object),
                    };
                    for key in keys {
                        queue.add(key);
                    }
                }
                Some(delta) = slice_events.recv() => {
                    let slice = &delta.object;
                    match (&delta.notice, &delta.old) {
                        (Notice::Delete | Notice::DeleteTombstone, _) => {
                            let ours = managed_by_controller(slice) && controller.tracker.lock().expect("never poisoned").has(slice);
                            // A deletion this controller did not make is resynced.
                            if ours && !controller.tracker.lock().expect("never poisoned").handle_deletion(slice) {
                                queue_for_slice(slice);
                            }
                        }
                        (Notice::Update, Some(old)) => {
                            if service_key(old) != service_key(slice) {
                                queue_for_slice(slice);
                                queue_for_slice(old);
                            } else if managed_by_controller(old) != managed_by_controller(slice)
                                || (managed_by_controller(slice) && controller.tracker.lock().expect("never poisoned").should_sync(slice))
                            {
                                queue_for_slice(slice);
                            }
                        }
                        _ => {
                            if managed_by_controller(slice) && controller.tracker.lock().expect("never poisoned").should_sync(slice) {
                                queue_for_slice(slice);
                            }
                        }
                    }
                }
                else => break,
            }
        }
    };
    let work = async {
        controller.pods.wait_synced().await;
        controller.services.wait_synced().await;
        controller.slices.wait_synced().await;
        controller.nodes.wait_synced().await;
        worker::run(DESCRIPTOR.name, &queue, options.workers, |key: String| {
            let controller = &controller;
            let queue = &queue;
            async move {
                match controller.sync(key.clone()).await {
                    Err(err) if queue.num_requeues(&key) >= MAX_RETRIES => {
                        tracing::info!(service = %key, "retry budget exceeded, dropping service out of the queue: {err}");
                        Ok(Outcome::Done)
                    }
                    other => other,
                }
            }
        })
        .await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
