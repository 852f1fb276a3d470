//! The StatefulSet controller (`statefulset-controller`, alias `statefulset`, kube-controller-manager 1.32,
//! `pkg/controller/statefulset/` and `pkg/controller/history/controller_history.go`): every StatefulSet
//! has `spec.replicas` pods with stable names `<set>-<ordinal>`, stable storage (claims made from its
//! volume claim templates before each pod), ordered or parallel creation and deletion, and rolling updates
//! recorded as ControllerRevisions.
//!
//! This module is the shell: the pod and StatefulSet informers feed the [`handlers`], whose actions go to
//! the work queue; five workers (`--concurrent-statefulset-syncs`) run [`sync::Controller::sync`] once the
//! pod, set, claim and revision informers have synced. The rules are sans-IO in the other files:
//! `identity` (ordinals, names, a pod's identity and storage), `retention` (the claims' owners under
//! `persistentVolumeClaimRetentionPolicy`), `revision` (the revisions' patch, hash, name and history),
//! `control` (what one sync does, as a plan of requests), `status` (the counts and when to write them);
//! `pod_control` carries out a plan's requests, `sync` the rest of a sync's.
//!
//! Time: the availability of pods (`minReadySeconds`) is judged against the context's `now_unix_us`.

pub mod control;
pub mod handlers;
pub mod identity;
pub mod pod_control;
pub mod retention;
pub mod revision;
pub mod status;
pub mod sync;

use serde_json::Value;

use super::Context;
use crate::client::resource::builtin;
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker;
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use handlers::{Action, Sets};
use sync::Controller;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "statefulset-controller", aliases: &["statefulset"], disabled_by_default: false };

/// `--concurrent-statefulset-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;

/// The handlers read StatefulSets from the shared informer's cache, as upstream's lister.
impl Sets for Informer {
    fn get(&self, key: &str) -> Option<Value> {
        Informer::get(self, key)
    }

    fn in_namespace(&self, namespace: &str) -> Vec<Value> {
        self.list_namespace(namespace)
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, CONCURRENT_SYNCS).await;
}

/// The controller with `workers` workers, for as long as the future lives.
pub async fn run_with(ctx: Context, workers: usize) {
    let controller = Controller {
        client: ctx.client.clone(),
        pods: ctx.informers.get(&builtin::pods()),
        sets: ctx.informers.get(&builtin::stateful_sets()),
        claims: ctx.informers.get(&builtin::persistent_volume_claims()),
        revisions: ctx.informers.get(&builtin::controller_revisions()),
        events: ctx.events.clone(),
        now_unix_us: ctx.now_unix_us.clone(),
    };
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut set_events = controller.sets.subscribe();
    let mut pod_events = controller.pods.subscribe();
    let apply = |actions: Vec<Action>| {
        for action in actions {
            match action {
                Action::Enqueue(key) => queue.add(key),
                Action::EnqueueAfter(key, delay) => queue.add_after(key, delay),
            }
        }
    };
    let feed = async {
        let sets = &controller.sets;
        loop {
            tokio::select! {
                biased;
                Some(delta) = set_events.recv() => apply(handlers::set_changed(&delta.object)),
                Some(delta) = pod_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::pod_added(sets, &delta.object),
                    (Notice::Update, Some(old)) => handlers::pod_updated(sets, old, &delta.object),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::pod_deleted(sets, &delta.object),
                }),
                else => break,
            }
        }
    };
    let work = async {
        controller.pods.wait_synced().await;
        controller.sets.wait_synced().await;
        controller.claims.wait_synced().await;
        controller.revisions.wait_synced().await;
        worker::run(DESCRIPTOR.name, &queue, workers, |key| controller.sync(key)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
