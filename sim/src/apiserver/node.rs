//! The apiserver node: the registry's namespace and configmap stores over one etcd member, through the
//! watch cache or straight to etcd, and the clients that call them in-process. The registry draws names and
//! uids from the seed and timestamps from the simulated clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::failpoint::Failpoints;
use apiserver::registry::strategies::{configmaps, namespaces};
use apiserver::registry::{Clock, Resource, Store, Strategy, SystemFields};
use apiserver::storage::cacher::{Cacher, CacherConfig};
use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
use apiserver::storage::Storage;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::watch_client::WatchClient;
use serde_json::json;

use super::record::{Answer, Recorder};
use super::traffic::{self, SCRIPTED, SHARED};
use super::ApiRunConfig;
use crate::client::channel;
use crate::cluster::Seeds;
use crate::history::apiserver::{ApiCall, ApiOutcome, Refusal};

/// Simulated time as Unix seconds, from an arbitrary fixed epoch.
struct SimClock;

impl Clock for SimClock {
    fn now_unix_s(&self) -> i64 {
        1_750_000_000 + madsim::time::TimeHandle::current().elapsed().as_secs() as i64
    }
}

fn etcd3(endpoint: &str, resource: &Resource, failpoints: &Failpoints) -> Etcd3Store {
    let mut config = Etcd3Config::new("/registry/", resource.group_resource());
    config.failpoints = failpoints.clone();
    Etcd3Store::new(KvClient::new(channel(endpoint)), WatchClient::new(channel(endpoint)), config)
}

async fn cacher(endpoint: &str, resource: &Resource, failpoints: &Failpoints) -> Cacher {
    let mut config = CacherConfig::new(&format!("/{}", resource.etcd_prefix), resource.group_resource());
    config.failpoints = failpoints.clone();
    let cacher = Cacher::new(etcd3(endpoint, resource, failpoints), config);
    // A cache that is not ready answers 429, which clients see as unavailability; waiting here only keeps
    // the start of the run quiet.
    cacher.wait_ready(Duration::from_secs(10)).await;
    cacher
}

/// Builds the stores and runs every client to the end.
/// `ready` is set once the namespaces exist and the clients start.
pub async fn serve(
    config: ApiRunConfig,
    endpoint: String,
    failpoints: Failpoints,
    rec: Recorder,
    seeds: Seeds,
    ready: Arc<AtomicBool>,
) {
    let system = SystemFields::new(Box::new(seeds.rng("apiserver/system")), Arc::new(SimClock));
    let (ns, cm) = (namespaces::resource(), configmaps::resource());
    if config.cache {
        let ns_storage = cacher(&endpoint, &ns, &failpoints).await;
        let cm_storage = cacher(&endpoint, &cm, &failpoints).await;
        run_clients(config, system, ns_storage, cm_storage, rec, seeds, &ready).await;
    } else {
        let (ns_storage, cm_storage) = (etcd3(&endpoint, &ns, &failpoints), etcd3(&endpoint, &cm, &failpoints));
        run_clients(config, system, ns_storage, cm_storage, rec, seeds, &ready).await;
    }
}

async fn run_clients<S: Storage + Clone + 'static>(
    config: ApiRunConfig,
    system: SystemFields,
    ns_storage: S,
    cm_storage: S,
    rec: Recorder,
    seeds: Seeds,
    ready: &AtomicBool,
) {
    let build = |resource: Resource, strategy: Arc<dyn Strategy>, storage: S, ns: Option<S>| {
        Store::new(resource, strategy, storage, system.clone(), ns)
    };
    let namespaces = build(namespaces::resource(), Arc::new(namespaces::Namespaces), ns_storage.clone(), None);
    let cms = build(configmaps::resource(), Arc::new(configmaps::ConfigMaps), cm_storage, Some(ns_storage));
    for ns in [SHARED, SCRIPTED] {
        create_namespace(&namespaces, ns, &rec).await;
    }
    ready.store(true, Ordering::SeqCst);
    let mut tasks = Vec::new();
    for i in 1..=config.clients {
        let name = format!("c{i}");
        let rng = seeds.rng(&format!("apiserver/{name}"));
        tasks.push(tokio::spawn(traffic::random_client(name, cms.clone(), rec.clone(), rng, config.ops_per_client)));
    }
    let steps = traffic::script(&mut seeds.rng("apiserver/script"), config.script_steps);
    let pauses = seeds.rng("apiserver/script-pauses");
    tasks.push(tokio::spawn(traffic::scripted_client(cms.clone(), rec.clone(), steps, pauses)));
    for t in tasks {
        t.await.expect("a client panicked");
    }
}

/// Creates namespace `name`, retrying until it exists: the clients' creates need it.
async fn create_namespace<S: Storage + Clone + 'static>(namespaces: &Store<S>, name: &str, rec: &Recorder) {
    let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    loop {
        let create = async { namespaces.create("", obj.clone()).await.map(Answer::Object) };
        let key = format!("/registry/namespaces/{name}");
        match rec.call("setup", ApiCall::Create { key }, create).await {
            ApiOutcome::Written { .. } | ApiOutcome::Refused(Refusal::AlreadyExists) => return,
            _ => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}
