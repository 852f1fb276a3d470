//! The apiserver node and its clients: the apiserver (`apiserver::server::build`, with or without the watch
//! cache, serving namespaces and configmaps) on its own node, serving HTTP on the simulated network, and
//! each client on a node of its own, reaching it through that network as kubectl or a controller would.
//! The registry draws names and uids from the seed and timestamps from the simulated clock.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::apis::Catalog;
use apiserver::endpoints::serve::serve;
use apiserver::failpoint::Failpoints;
use apiserver::registry::{Clock, SystemFields};
use apiserver::server::{self, ServerOptions};
use http::Method;
use madsim::runtime::Handle;
use serde_json::json;

use super::record::{Answer, Recorder};
use super::rest_client::KubeClient;
use super::traffic::{self, SCRIPTED, SHARED};
use super::ApiRunConfig;
use crate::client::channel;
use crate::cluster::Seeds;
use crate::history::apiserver::{ApiCall, ApiOutcome, Refusal};

/// The apiserver's address on the simulated network.
pub const APISERVER_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 2, 1)), 6443);

/// Simulated time as Unix seconds, from an arbitrary fixed epoch.
struct SimClock;

impl Clock for SimClock {
    fn now_unix_s(&self) -> i64 {
        1_750_000_000 + madsim::time::TimeHandle::current().elapsed().as_secs() as i64
    }
}

/// The resources the simulation's clients use; serving only these keeps every seed's work (and its watch
/// caches' event counts, which failpoints count) what the clients make it.
fn catalog() -> Catalog {
    let mut catalog = Catalog::builtin();
    catalog.retain(|info| {
        info.resource.group.is_empty() && ["namespaces", "configmaps"].contains(&info.resource.plural.as_str())
    });
    catalog
}

/// Builds the apiserver over the etcd member at `endpoint` and serves it until the node stops; `up` is set
/// once it is ready (`/readyz` would say ok: caches listed, system namespaces created).
pub async fn run_apiserver(
    config: ApiRunConfig,
    endpoint: String,
    failpoints: Failpoints,
    seeds: Seeds,
    up: Arc<AtomicBool>,
) {
    let system = SystemFields::new(Box::new(seeds.rng("apiserver/system")), Arc::new(SimClock));
    let options = ServerOptions { watch_cache: config.cache, failpoints, ..ServerOptions::default() };
    let server = server::build(catalog(), channel(&endpoint), options, system, Arc::new(SimClock));
    tokio::spawn(server::bootstrap(server.clone()));
    let listener =
        tokio::net::TcpListener::bind(("0.0.0.0", APISERVER_ADDR.port())).await.expect("the apiserver binds its port");
    let serving = tokio::spawn(serve(server.clone(), listener, std::future::pending()));
    while !server::wait_until_ready(&server, Duration::from_secs(10)).await {}
    up.store(true, Ordering::SeqCst);
    let _ = serving.await;
}

/// Runs every client, each on a node of its own, to the end. `ready` is set once the namespaces exist and
/// the clients start.
pub async fn run_clients(config: ApiRunConfig, rec: Recorder, seeds: Seeds, ready: Arc<AtomicBool>) {
    let client_node = |name: &str, last_octet: u8| {
        Handle::current().create_node().name(name).ip(IpAddr::V4(Ipv4Addr::new(10, 0, 3, last_octet))).build()
    };
    let setup = client_node("setup", 1);
    let rec2 = rec.clone();
    setup
        .spawn(async move {
            let client = KubeClient::new(APISERVER_ADDR);
            for ns in [SHARED, SCRIPTED] {
                create_namespace(&client, ns, &rec2).await;
            }
        })
        .await
        .expect("the setup client panicked");
    ready.store(true, Ordering::SeqCst);
    let mut tasks = Vec::new();
    for i in 1..=config.clients {
        let name = format!("c{i}");
        let rng = seeds.rng(&format!("apiserver/{name}"));
        let node = client_node(&name, 1 + i as u8);
        let (rec, ops) = (rec.clone(), config.ops_per_client);
        tasks.push(node.spawn(async move {
            let client = Arc::new(KubeClient::new(APISERVER_ADDR));
            traffic::random_client(name, client, rec, rng, ops).await;
        }));
    }
    let steps = traffic::script(&mut seeds.rng("apiserver/script"), config.script_steps);
    let pauses = seeds.rng("apiserver/script-pauses");
    let node = client_node(traffic::SCRIPT_CLIENT, 100);
    let rec = rec.clone();
    tasks.push(node.spawn(async move {
        traffic::scripted_client(Arc::new(KubeClient::new(APISERVER_ADDR)), rec, steps, pauses).await;
    }));
    for t in tasks {
        t.await.expect("a client panicked");
    }
}

/// Creates namespace `name`, retrying until it exists: the clients' creates need it.
async fn create_namespace(client: &KubeClient, name: &str, rec: &Recorder) {
    let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    loop {
        let create = async { client.send(Method::POST, "/api/v1/namespaces", Some(&obj)).await.map(Answer::Object) };
        let key = format!("/registry/namespaces/{name}");
        match rec.call("setup", ApiCall::Create { key }, create).await {
            ApiOutcome::Written { .. } | ApiOutcome::Refused(Refusal::AlreadyExists) => return,
            _ => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}
