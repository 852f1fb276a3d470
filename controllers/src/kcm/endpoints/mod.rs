//! The Endpoints controller (`endpoints-controller`, kube-controller-manager 1.32,
//! `pkg/controller/endpoint/endpoints_controller.go`): every Service with a selector has an Endpoints
//! object of its name listing the addresses of the pods it selects.
//!
//! This module is the shell: the Service, pod and Endpoints informers feed the work queue (a Service's
//! key on any change to it; the keys of the Services a pod is or was in when it changes in a way that
//! matters, as `k8s.io/endpointslice/util` decides; an Endpoints object's key when it is deleted), and
//! five workers (`--concurrent-endpoint-syncs`) run [`sync::Controller::sync`] once the three informers
//! have synced. Once synced, every existing Endpoints object is queued once, so that those whose Service
//! went while no controller ran are deleted (leader-election records excepted). A key that keeps failing
//! is dropped after 15 retries, as upstream's. The rules are sans-IO in `subsets` (packing, comparison,
//! truncation) and `sync` (`desired_subsets`, `plan`); the pod and Service rules are shared with the
//! EndpointSlice controller (`crate::kcm::endpointslice::util`).
//!
//! Left out: `--endpoint-updates-batch-period` (its default, 0, is what runs) and the metrics.

pub mod subsets;
pub mod sync;

use std::sync::Mutex;

use serde_json::Value;

use super::Context;
use crate::client::resource::builtin;
use crate::kcm::endpointslice::util::{pod_service_memberships, services_to_update_on_pod_change};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::{object_key, Notice};
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use sync::Controller;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "endpoints-controller", aliases: &["endpoint"], disabled_by_default: false };

/// `--concurrent-endpoint-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;
/// `maxRetries`: a Service whose sync failed this often is dropped from the queue.
pub const MAX_RETRIES: u32 = 15;
/// The event source upstream's recorder uses.
pub const EVENT_COMPONENT: &str = "endpoint-controller";
/// `resourcelock.LeaderElectionRecordAnnotationKey`: Endpoints carrying it are leader-election records.
pub const LEADER_ELECTION_ANNOTATION: &str = "control-plane.alpha.kubernetes.io/leader";

/// The controller's settings; [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub workers: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { workers: CONCURRENT_SYNCS }
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, Options::default()).await;
}

/// The Service keys to sync after a pod event.
fn pod_keys(services: &Informer, notice: &Notice, old: Option<&Value>, pod: &Value) -> Vec<String> {
    let all = services.list();
    let keys = match (notice, old) {
        (Notice::Update, Some(old)) => services_to_update_on_pod_change(&all, old, pod),
        _ => pod_service_memberships(&all, pod),
    };
    keys.into_iter().collect()
}

/// The controller with `options`, for as long as the future lives.
pub async fn run_with(ctx: Context, options: Options) {
    let controller = Controller {
        client: ctx.client.clone(),
        services: ctx.informers.get(&builtin::services()),
        pods: ctx.informers.get(&builtin::pods()),
        endpoints: ctx.informers.get(&builtin::endpoints()),
        events: ctx.events.for_component(EVENT_COMPONENT),
        trigger_times: Mutex::default(),
        stale: Mutex::default(),
    };
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut service_events = controller.services.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let mut endpoints_events = controller.endpoints.subscribe();
    let feed = async {
        loop {
            tokio::select! {
                biased;
                Some(delta) = service_events.recv() => queue.add(delta.key),
                Some(delta) = pod_events.recv() => {
                    for key in pod_keys(&controller.services, &delta.notice, delta.old.as_ref(), &delta.object) {
                        queue.add(key);
                    }
                }
                Some(delta) = endpoints_events.recv() => {
                    if matches!(delta.notice, Notice::Delete | Notice::DeleteTombstone) {
                        queue.add(delta.key);
                    }
                }
                else => break,
            }
        }
    };
    let work = async {
        controller.pods.wait_synced().await;
        controller.services.wait_synced().await;
        controller.endpoints.wait_synced().await;
        // `checkLeftoverEndpoints`: Endpoints whose Service went while no controller watched.
        for endpoints in controller.endpoints.list() {
            let leader_record =
                endpoints.pointer("/metadata/annotations").and_then(|a| a.get(LEADER_ELECTION_ANNOTATION));
            if leader_record.is_none() {
                queue.add(object_key(&endpoints));
            }
        }
        worker::run(DESCRIPTOR.name, &queue, options.workers, |key: String| {
            let controller = &controller;
            let queue = &queue;
            async move {
                match controller.sync(key.clone()).await {
                    Err(err) if queue.num_requeues(&key) >= MAX_RETRIES => {
                        tracing::info!(service = %key, "dropping service out of the queue: {err}");
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
