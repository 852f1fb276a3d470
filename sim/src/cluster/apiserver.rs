//! Apiserver nodes: kubesim's apiserver (`apiserver::server::build`, the same HTTP server the real binary
//! runs) on nodes of their own, `apiserver-1..N` at `10.0.2.i:6443`, each with its own watch cache (or
//! none) and its own etcd client over every member (or the one a scenario pins), whose first endpoint the
//! seed draws, so that HA apiservers' caches lag behind different members.
//!
//! A node's init builds the server and serves until the node is killed; a restart re-runs the init, so the
//! caches rebuild from a relist, as a restarted kube-apiserver's do. What must survive a restart lives here,
//! outside the node: the failpoint registry and the generator of names and uids (a continuing stream, so a
//! restarted apiserver never hands out a uid it gave before). Readiness is a named condition
//! ([`ApiserverNode::ready`]): caches listed, system namespaces created.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use apiserver::apis::Catalog;
use apiserver::endpoints::serve::serve;
use apiserver::failpoint::Failpoints;
use apiserver::registry::{Clock, SystemFields};
use apiserver::server::{self, ServerOptions};
use apiserver::storage::etcd3::EtcdClient;
use madsim::runtime::{Handle, NodeHandle};
use madsim::task::NodeId;
use rand::RngCore;
use rand_chacha::ChaCha8Rng;

use super::{ClusterSpec, Seeds, CLIENT_PORT};
use crate::trace::Trace;

/// The port every apiserver serves on.
pub const APISERVER_PORT: u16 = 6443;

/// One apiserver of a cluster description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiserverSpec {
    /// Whether reads and watches go through a watch cache (kube-apiserver's `--watch-cache`).
    pub watch_cache: bool,
    /// The members (1-based) its etcd client uses, as kube-apiserver's `--etcd-servers`: every member
    /// unless a scenario pins one.
    pub members: Vec<usize>,
    /// The events each watch cache's history keeps (`--default-watch-cache-size`; upstream's 100 unset).
    pub watch_cache_size: Option<usize>,
}

/// The name of apiserver `i` (1-based).
pub fn apiserver_name(i: usize) -> String {
    format!("apiserver-{i}")
}

fn apiserver_ip(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 2, i as u8))
}

/// Simulated time as Unix seconds, from a fixed epoch: the registry's timestamps.
pub struct SimClock;

impl Clock for SimClock {
    fn now_unix_s(&self) -> i64 {
        1_750_000_000 + madsim::time::TimeHandle::current().elapsed().as_secs() as i64
    }
}

/// A generator whose stream continues across the node's restarts.
struct SharedRng(Arc<Mutex<ChaCha8Rng>>);

impl RngCore for SharedRng {
    fn next_u32(&mut self) -> u32 {
        self.0.lock().expect("the generator lock is never poisoned").next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        self.0.lock().expect("the generator lock is never poisoned").next_u64()
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.lock().expect("the generator lock is never poisoned").fill_bytes(dest)
    }
}

/// A running apiserver node.
pub struct ApiserverNode {
    pub name: String,
    pub id: NodeId,
    pub addr: SocketAddr,
    pub node: NodeHandle,
    /// Its failpoint registry, kept across restarts.
    pub failpoints: Failpoints,
    /// Set once the server is ready (caches listed, system namespaces created), cleared when it (re)starts.
    pub ready: Arc<AtomicBool>,
    /// Restarts the harness asked for and the node has not yet begun.
    expected_starts: Arc<AtomicUsize>,
}

impl ApiserverNode {
    /// Restarts the node (kill and re-run its init): the caches rebuild from a relist.
    pub fn restart(&self) {
        self.expected_starts.fetch_add(1, Ordering::SeqCst);
        super::restart_node(self.id);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// A function that restarts the node as the harness means to, for hooks that outlive a borrow of it.
    pub fn restarter(&self) -> Arc<dyn Fn() + Send + Sync> {
        let (id, expected) = (self.id, self.expected_starts.clone());
        Arc::new(move || {
            expected.fetch_add(1, Ordering::SeqCst);
            super::restart_node(id);
        })
    }
}

/// The catalog a cluster's apiservers serve: the built-in resources, or only namespaces and those listed
/// (`configmaps`, `deployments.apps`), so that a scenario pays only for the caches it uses.
pub fn catalog(spec: &ClusterSpec) -> Catalog {
    let mut catalog = Catalog::builtin();
    if !spec.api_resources.is_empty() {
        catalog.retain(|info| {
            let r = &info.resource;
            let qualified = if r.group.is_empty() { r.plural.clone() } else { format!("{}.{}", r.plural, r.group) };
            r.plural == "namespaces" && r.group.is_empty() || spec.api_resources.contains(&qualified)
        });
    }
    catalog
}

/// Builds apiserver `i` of `spec` (1-based).
pub fn build_apiserver(
    handle: &Handle,
    spec: &ClusterSpec,
    i: usize,
    trace: &Trace,
    seeds: Seeds,
    panics: &Arc<Mutex<Vec<String>>>,
) -> ApiserverNode {
    let name = apiserver_name(i);
    let ip = apiserver_ip(i);
    let addr = SocketAddr::new(ip, APISERVER_PORT);
    let api = spec.apiservers[i - 1].clone();
    let endpoints: Vec<String> =
        api.members.iter().map(|&m| format!("http://{}:{CLIENT_PORT}", super::member_ip(m))).collect();
    // The client's first endpoint is drawn from the seed, as a real one's is from chance.
    let etcd_seeds = Arc::new(Mutex::new(seeds.rng(&format!("{name}/etcd-client"))));
    let failpoints = Failpoints::new();
    let (fp_trace, fp_name) = (trace.clone(), name.clone());
    failpoints.set_observer(move |point, action| fp_trace.event(&fp_name, format_args!("failpoint {point} {action}")));
    let rng = Arc::new(Mutex::new(seeds.rng(&format!("{name}/system"))));
    let catalog = catalog(spec);
    let bugs = spec.bugs.apiserver.clone();
    // Who the apiservers know and what they let each do: the scenario's users by their tokens (and the
    // harness's own, which creates the webhooks' configurations), under the scenario's authorization mode.
    let authentication = super::access::authentication(&spec.users, spec.harness_acts(), spec.controller_managers > 0);
    let authorization =
        apiserver::registry::authorizer::Modes::parse(&spec.authorization_mode).expect("validated before the run");
    let ready = Arc::new(AtomicBool::new(false));
    let expected_starts = Arc::new(AtomicUsize::new(0));
    let lives = super::Lives::new(expected_starts.clone(), panics);
    let (trace, node_name, init_failpoints, init_ready) =
        (trace.clone(), name.clone(), failpoints.clone(), ready.clone());
    let node = handle
        .create_node()
        .name(name.clone())
        .ip(ip)
        .restart_on_panic()
        .init(move || {
            let first = lives.begin(&trace, &node_name);
            init_ready.store(false, Ordering::SeqCst);
            let mut options = ServerOptions {
                watch_cache: api.watch_cache,
                watch_cache_size: api.watch_cache_size,
                failpoints: init_failpoints.clone(),
                bugs: bugs.clone(),
                ..ServerOptions::default()
            };
            // Every life gets a fresh configuration (its admission plugins keep state), as before users
            // existed; only who is known and what they may do come from the scenario.
            options.config.authentication = authentication.clone();
            options.config.authorization = authorization.clone();
            let system = SystemFields::new(Box::new(SharedRng(rng.clone())), Arc::new(SimClock));
            let (catalog, endpoints, trace, node_name, ready) =
                (catalog.clone(), endpoints.clone(), trace.clone(), node_name.clone(), init_ready.clone());
            let client_seed = etcd_seeds.lock().expect("the generator lock is never poisoned").next_u64();
            async move {
                // The first start waits for its member to be healthy (a linearizable read answered), as a
                // control-plane bootstrap (kubeadm) starts kube-apiserver against a healthy etcd; otherwise its
                // first reads could wait out etcd's request timeout. A restart does not wait: a kube-apiserver
                // restarted during an etcd outage comes up and stays unready.
                if first {
                    super::member_healthy(&endpoints[0]).await;
                }
                let client = EtcdClient::new(&endpoints, client_seed).expect("the harness builds valid endpoint URLs");
                let server = server::build(catalog, client, options, system, Arc::new(SimClock));
                tokio::spawn(server::bootstrap(server.clone()));
                let listener = match tokio::net::TcpListener::bind(("0.0.0.0", APISERVER_PORT)).await {
                    Ok(listener) => listener,
                    Err(e) => {
                        trace.event(&node_name, format_args!("bind failed: {e}"));
                        return;
                    }
                };
                let serving = tokio::spawn(serve(server.clone(), listener, std::future::pending()));
                while !server::wait_until_ready(&server, Duration::from_secs(10)).await {}
                ready.store(true, Ordering::SeqCst);
                trace.event(&node_name, "ready");
                let _ = serving.await;
            }
        })
        .build();
    ApiserverNode { name, id: node.id(), addr, node, failpoints, ready, expected_starts }
}
