//! `kind = "apiserver"` workloads: clients on nodes of their own sending HTTP requests through the
//! apiservers (the `j`th client of a workload, 0-based, to the `j mod N`th apiserver, as a round-robin
//! balancer spreads connections), each running the random client of `apiserver::traffic`: creates,
//! updates with the last resourceVersion seen as optimistic lock (409 when it is stale), deletes with and
//! without a resourceVersion precondition, consistent gets and lists, and watches from the last list's
//! resourceVersion or a little before it, on the ConfigMaps `a`..`d` of namespace `default`. With
//! `script_steps`, one more client (`<name>-script`) runs the scripted sequence on `s0` and `s1`, whose
//! outcomes `WriteOutcomesSameWithoutWatchCache` compares between a run and its twin without watch caches.
//!
//! Every request and watch goes into one [`ApiHistory`] for the run (`apiserver::record::Recorder`), and
//! the control node keeps the etcd-side record of the registry prefix the apiserver checkers compare them
//! with (`apiserver::reference`), a watch from revision 1. The scenario's `[nemesis]` and faults act on all
//! of it; the record survives them (it moves to another member when its stream breaks or goes quiet).

use std::sync::Arc;
use std::time::Duration;

use madsim::task::JoinHandle;

use crate::apiserver::record::{Recorder, REGISTRY_PREFIX};
use crate::apiserver::reference::Reference;
use crate::apiserver::rest_client::KubeClient;
use crate::apiserver::traffic;
use crate::cluster::{Cluster, Seeds};
use crate::history::apiserver::ApiHistory;
use crate::scenario::plan::{Scenario, WorkloadKind};
use crate::trace::Trace;

/// The namespace an apiserver workload's ConfigMaps live in: one every apiserver creates at its start,
/// where informers look by default.
pub const NAMESPACE: &str = "default";

/// The run's apiserver workloads: their shared recorder and the etcd-side record.
pub(super) struct ApiWorkloads {
    recorder: Recorder,
    reference: Reference,
    watcher: JoinHandle<()>,
}

impl ApiWorkloads {
    /// Starts the etcd-side record on the control node, if the scenario has an apiserver workload.
    pub(super) fn start(
        scenario: &Scenario,
        cluster: &Cluster,
        trace: &Trace,
        request_timeout: Duration,
    ) -> Option<ApiWorkloads> {
        if !scenario.workloads.iter().any(|w| w.kind == WorkloadKind::Apiserver) {
            return None;
        }
        let reference = Reference::default();
        let watcher = cluster.control.spawn(reference.clone().run(cluster.endpoints(), REGISTRY_PREFIX.into()));
        Some(ApiWorkloads { recorder: Recorder::new(trace.clone(), request_timeout), reference, watcher })
    }

    /// Client `j` (0-based) of an apiserver workload, on `node`: `ops` requests through the `j mod N`th
    /// apiserver.
    pub(super) fn spawn_client(
        &self,
        cluster: &Cluster,
        node: &madsim::runtime::NodeHandle,
        name: &str,
        j: usize,
        ops: usize,
        seeds: Seeds,
    ) -> JoinHandle<()> {
        let apiserver = &cluster.apiservers[j % cluster.apiservers.len()];
        let client = Arc::new(KubeClient::new(apiserver.addr));
        let rng = seeds.rng(&format!("workload/{name}"));
        let (rec, name) = (self.recorder.clone(), name.to_string());
        node.spawn(traffic::random_client_in(NAMESPACE, name, client, rec, rng, ops))
    }

    /// An apiserver workload's scripted client, on `node`: `steps` steps of the seeded sequence through
    /// the first apiserver, on ConfigMaps `s0` and `s1` that the random clients never touch.
    pub(super) fn spawn_script(
        &self,
        cluster: &Cluster,
        node: &madsim::runtime::NodeHandle,
        name: &str,
        steps: usize,
        seeds: Seeds,
    ) -> JoinHandle<()> {
        let client = Arc::new(KubeClient::new(cluster.apiservers[0].addr));
        let script = traffic::script(&mut seeds.rng(&format!("workload/{name}")), steps);
        let pauses = seeds.rng(&format!("workload/{name}/pauses"));
        let (rec, name) = (self.recorder.clone(), name.to_string());
        node.spawn(async move { traffic::scripted_client(NAMESPACE, name, client, rec, script, pauses).await })
    }

    /// The revision the nemesis's compactions must not pass: the record's, which a compaction beyond would
    /// end.
    pub(super) fn horizon(&self) -> crate::fault::nemesis::Horizon {
        let reference = self.reference.clone();
        Arc::new(move || reference.through())
    }

    /// Once the clients are done and the faults healed: waits (on the control node) until the record has
    /// caught up with etcd's revision, stops it, and hands back the history with it.
    pub(super) async fn finish(self, cluster: &Arc<Cluster>, trace: &Trace) -> ApiHistory {
        let (c, r) = (cluster.clone(), self.reference.clone());
        let current =
            cluster.control.spawn(async move { r.catch_up(&c).await }).await.expect("the record's catch-up panicked");
        trace.event(
            "sim",
            format_args!("apiserver record through rev={} (etcd at rev={current})", self.reference.through()),
        );
        self.watcher.abort();
        let mut history = self.recorder.take();
        (history.changes, history.changes_through) = self.reference.take();
        history
    }
}
