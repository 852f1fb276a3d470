//! The apiserver simulation: kubesim's apiserver (its HTTP server over the registry, over the etcd3 store with
//! or without the watch cache) on its own node, talking gRPC to a simulated 3-member fake-etcd cluster, with
//! clients on nodes of their own reaching it over HTTP through the simulated network, a nemesis of leader
//! partitions, member kills and compactions, and an etcd-side record of every change under `/registry/` to
//! check the clients' view against.
//!
//! Files: `record` (the history recorder and its error classes), `traffic` (the random and scripted
//! clients), `rest_client` (the clients' REST client), `reference` (the etcd-side record), `faults` (the
//! nemesis), `node` (the apiserver node and the client nodes).
//!
//! One [`simulate`] is one seed in one mode ([`ApiRunConfig::cache`]). Randomness comes from [`Seeds`]
//! streams named `apiserver/...` and from madsim's runtime seeded with the root seed; time is madsim's.

mod faults;
mod node;
pub mod record;
pub mod reference;
pub mod rest_client;
pub mod traffic;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::failpoint::{Arm, Failpoints, Point};
use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use madsim::runtime::{Handle, Runtime};
use rand::Rng;

use self::reference::Reference;
use crate::checker::apiserver::{self as checks, ApiViolation};
use crate::client::SharedHistory;
use crate::cluster::{Cluster, ClusterSpec, Seeds};
use crate::fault::{Fault, Injector};
use crate::history::apiserver::{ApiHistory, ApiOp};
use crate::trace::Trace;

/// One apiserver run.
#[derive(Clone, Debug)]
pub struct ApiRunConfig {
    pub seed: u64,
    /// Whether the registry's storage is the Cacher (watch cache) or the bare etcd3 store.
    pub cache: bool,
    /// Random clients, and requests per random client.
    pub clients: usize,
    pub ops_per_client: usize,
    /// Steps of the scripted client.
    pub script_steps: usize,
    /// Whether the nemesis runs.
    pub faults: bool,
    /// Apiserver failpoints armed before the clients start.
    pub failpoints: Vec<(Point, Arm)>,
    /// A request with no answer within this time is `Unknown`.
    pub request_timeout: Duration,
}

impl ApiRunConfig {
    /// The CI run: 3 random clients of 30 requests, a 30-step script, the nemesis, the watch cache on.
    pub fn standard(seed: u64) -> ApiRunConfig {
        ApiRunConfig {
            seed,
            cache: true,
            clients: 3,
            ops_per_client: 30,
            script_steps: 30,
            faults: true,
            failpoints: Vec::new(),
            request_timeout: Duration::from_secs(4),
        }
    }
}

/// What one run produced.
#[derive(Clone, Debug)]
pub struct ApiRun {
    pub seed: u64,
    pub trace: Vec<String>,
    pub history: ApiHistory,
}

impl ApiRun {
    /// The scripted client's steps, in order.
    pub fn script(&self) -> Vec<ApiOp> {
        self.history.ops.iter().filter(|op| op.client == traffic::SCRIPT_CLIENT).cloned().collect()
    }

    /// The verdicts of the checkers that read one run.
    pub fn check(&self) -> Vec<ApiViolation> {
        checks::check_run(&self.history)
    }
}

/// Runs `config` on a fresh madsim runtime seeded with its seed.
pub fn simulate(config: &ApiRunConfig) -> ApiRun {
    let mut runtime = Runtime::with_seed_and_config(config.seed, madsim::Config::default());
    runtime.set_time_limit(Duration::from_secs(600));
    let config = config.clone();
    runtime.block_on(async move { drive(&config).await })
}

async fn drive(config: &ApiRunConfig) -> ApiRun {
    let seeds = Seeds::new(config.seed);
    let trace = Trace::new();
    let mut spec = ClusterSpec::new(3, 1);
    // Frequent progress notifications let the reference record and the cache's freshness keep up.
    spec.progress_notify_interval_ms = 200;
    let cluster = Arc::new(Cluster::build(&spec, &trace, seeds));
    let mode = if config.cache { "cacher" } else { "etcd3" };
    trace.event("sim", format_args!("start seed={} apiserver storage={mode}", config.seed));
    crate::run::prepare(&cluster, &[], &trace, &SharedHistory::default());

    let reference = Reference::default();
    let watcher = cluster.control.spawn(reference.clone().run(cluster.endpoints(), record::REGISTRY_PREFIX.into()));
    let stop = Arc::new(AtomicBool::new(false));
    // The nemesis waits until the apiserver has set up its namespaces, so that every run gets going.
    let ready = Arc::new(AtomicBool::new(false));
    let injector = Injector::new(cluster.clone());
    let nemesis = config.faults.then(|| {
        let rng = seeds.rng("apiserver/nemesis");
        let run = faults::run(injector.clone(), reference.clone(), rng, ready.clone(), stop.clone());
        cluster.control.spawn(run)
    });

    let failpoints = Failpoints::new();
    let fp_trace = trace.clone();
    failpoints
        .set_observer(move |point, action| fp_trace.event("apiserver", format_args!("failpoint {point} {action}")));
    for (point, arm) in &config.failpoints {
        trace.event("apiserver", format_args!("arm {point} {}", arm.action));
        failpoints.arm(*point, arm.clone());
    }
    // The apiserver talks to one member, drawn from the seed, as a kube-apiserver with one etcd endpoint.
    let endpoints = cluster.endpoints();
    let endpoint = endpoints[seeds.rng("apiserver/endpoint").random_range(0..endpoints.len())].clone();
    // The apiserver starts once etcd has a leader, as an operator starts kube-apiserver against a healthy
    // etcd: its first requests would otherwise wait out etcd's request timeout.
    let c = cluster.clone();
    cluster
        .control
        .spawn(async move { crate::cluster::leader_elected(&c.endpoints(), Duration::MAX).await })
        .await
        .expect("waiting for a leader panicked");
    let node = Handle::current().create_node().name("apiserver").ip(node::APISERVER_ADDR.ip()).build();
    let up = Arc::new(AtomicBool::new(false));
    let _apiserver = node.spawn(node::run_apiserver(config.clone(), endpoint, failpoints.clone(), seeds, up.clone()));
    while !up.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let recorder = record::Recorder::new(trace.clone(), config.request_timeout);
    node::run_clients(config.clone(), recorder.clone(), seeds, ready).await;

    stop.store(true, Ordering::SeqCst);
    if let Some(n) = nemesis {
        n.await.expect("the nemesis panicked");
    }
    for &p in Point::ALL {
        failpoints.disarm(p);
    }
    injector.apply(&Fault::Heal);
    // The harness's own requests go from the control node (the runtime's main task has no address).
    let (c, r) = (cluster.clone(), reference.clone());
    let current = cluster.control.spawn(async move { catch_up(&c, &r).await }).await.expect("catch-up panicked");
    trace.event("sim", format_args!("reference through rev={} (etcd at rev={current})", reference.through()));
    watcher.abort();
    cluster.wait_for_restarts().await;
    trace.event("sim", "end");
    let mut history = recorder.take();
    (history.changes, history.changes_through) = reference.take();
    ApiRun { seed: config.seed, trace: trace.take(), history }
}

/// Waits (at most 20 simulated seconds) until the reference record reaches etcd's current revision, and
/// returns that revision (0 if no member answered).
pub(crate) async fn catch_up(cluster: &Cluster, reference: &Reference) -> u64 {
    let mut current = 0;
    for _ in 0..100 {
        for endpoint in cluster.endpoints() {
            let mut kv = KvClient::new(crate::client::channel(&endpoint));
            let request = pb::RangeRequest { key: b"/".to_vec(), count_only: true, ..pb::RangeRequest::default() };
            if let Ok(Ok(r)) = tokio::time::timeout(Duration::from_millis(500), kv.range(request)).await {
                current = r.into_inner().header.map_or(0, |h| h.revision as u64);
                if reference.through() >= current {
                    return current;
                }
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    current
}
