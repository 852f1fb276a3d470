//! Starting a server (fake-etcd in-process, or a real etcd process killed on drop), building a fresh set of
//! registries (namespaces, configmaps, pods) under each case's own key prefix over the chosen backend, with
//! a seeded generator and a fixed clock, and running every case with a time limit.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use apiserver::registry::strategies::{configmaps, namespaces, pods};
use apiserver::registry::{FixedClock, RegistryError, Resource, Store, Strategy, SystemFields};
use apiserver::storage::cacher::{Cacher, CacherConfig};
use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::RangeRequest;
use rand::SeedableRng;
use serde_json::{json, Value};
use tonic::transport::Channel;

use crate::backend::Store as Backing;

pub use crate::etcd_server::Server;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Etcd3,
    Cacher,
}

/// The instant the fixed clock shows: 2023-11-14T22:13:20Z.
pub const NOW_UNIX_S: i64 = 1_700_000_000;
pub const NOW: &str = "2023-11-14T22:13:20Z";
/// The seed of every case's generator.
pub const SEED: u64 = 7;

/// What a case gets: the registries, a raw etcd client, and how to build more registries.
#[derive(Clone)]
pub struct Ctx {
    pub namespaces: Store<Backing>,
    pub configmaps: Store<Backing>,
    pub pods: Store<Backing>,
    pub kv: KvClient<Channel>,
    pub endpoint: String,
    pub prefix: String,
    pub server: Server,
    pub backend: Backend,
}

impl Ctx {
    /// Creates namespace `name` and returns it.
    pub async fn namespace(&self, name: &str) -> Value {
        self.namespaces
            .create("", json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
            .await
            .unwrap()
    }

    /// A fresh set of registries under `prefix` with a generator seeded by `seed`.
    pub async fn registries(&self, prefix: &str, seed: u64) -> (Store<Backing>, Store<Backing>, Store<Backing>) {
        registries(&self.endpoint, prefix, self.server, self.backend, seed).await
    }
}

async fn backing(endpoint: &str, prefix: &str, resource: &Resource, server: Server, backend: Backend) -> Backing {
    let config = Etcd3Config::new(prefix, resource.group_resource());
    let etcd3 = Etcd3Store::connect(endpoint, config).await.unwrap();
    match backend {
        Backend::Etcd3 => Backing::Etcd3(Box::new(etcd3)),
        Backend::Cacher => {
            let mut config = CacherConfig::new(&format!("/{}", resource.etcd_prefix), resource.group_resource());
            config.request_watch_progress = matches!(server, Server::FakeEtcd);
            let cacher = Cacher::new(etcd3, config);
            assert!(cacher.wait_ready(Duration::from_secs(10)).await, "the cacher never became ready");
            Backing::Cacher(cacher)
        }
    }
}

/// The registries of namespaces, configmaps and pods under `prefix`.
pub async fn registries(
    endpoint: &str,
    prefix: &str,
    server: Server,
    backend: Backend,
    seed: u64,
) -> (Store<Backing>, Store<Backing>, Store<Backing>) {
    let rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let system = SystemFields::new(Box::new(rng), Arc::new(FixedClock(NOW_UNIX_S)));
    let ns_store = backing(endpoint, prefix, &namespaces::resource(), server, backend).await;
    let build = |resource: Resource, strategy: Arc<dyn Strategy>, storage: Backing, ns: Option<Backing>| {
        Store::new(resource, strategy, storage, system.clone(), ns)
    };
    let namespaces_reg = build(namespaces::resource(), Arc::new(namespaces::Namespaces), ns_store.clone(), None);
    let cm_store = backing(endpoint, prefix, &configmaps::resource(), server, backend).await;
    let configmaps_reg =
        build(configmaps::resource(), Arc::new(configmaps::ConfigMaps), cm_store, Some(ns_store.clone()));
    let pod_store = backing(endpoint, prefix, &pods::resource(), server, backend).await;
    let pods_reg = build(pods::resource(), Arc::new(pods::Pods), pod_store, Some(ns_store));
    (namespaces_reg, configmaps_reg, pods_reg)
}

/// A registry of another resource (a custom resource) under the case's prefix, sharing the case's
/// namespaces for admission.
pub async fn custom_store(ctx: &Ctx, resource: Resource, strategy: Arc<dyn Strategy>) -> Store<Backing> {
    let rng = rand_chacha::ChaCha8Rng::seed_from_u64(SEED);
    let system = SystemFields::new(Box::new(rng), Arc::new(FixedClock(NOW_UNIX_S)));
    let ns_store = backing(&ctx.endpoint, &ctx.prefix, &namespaces::resource(), ctx.server, ctx.backend).await;
    let storage = backing(&ctx.endpoint, &ctx.prefix, &resource, ctx.server, ctx.backend).await;
    Store::new(resource, strategy, storage, system, Some(ns_store))
}

pub type CaseFn = fn(Ctx) -> Pin<Box<dyn Future<Output = ()> + Send>>;

pub struct Case {
    pub name: &'static str,
    pub run: CaseFn,
}

fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(super::crud::cases());
    cases.extend(super::lifecycle::cases());
    cases.extend(super::pods::cases());
    cases.extend(super::watch::cases());
    cases.extend(super::dry_run::cases());
    cases.extend(super::admission::cases());
    cases.extend(super::graceful::cases());
    cases.extend(super::subresources::cases());
    cases.extend(super::finalizers::cases());
    cases.extend(super::bad_input::cases());
    cases.extend(super::custom::cases());
    cases
}

/// Runs every case against the registry over `backend` on `server`; fails with the list of failed cases.
pub fn run_all(server: Server, backend: Backend) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let running = crate::etcd_server::start(server, "registry").await;
        let endpoint = running.endpoint.clone();
        let kv = KvClient::connect(endpoint.clone()).await.unwrap();
        let cases = all_cases();
        let mut failures = Vec::new();
        for case in &cases {
            let prefix = format!("/registry-{}/", case.name);
            let (namespaces, configmaps, pods) = registries(&endpoint, &prefix, server, backend, SEED).await;
            let ctx = Ctx {
                namespaces,
                configmaps,
                pods,
                kv: kv.clone(),
                endpoint: endpoint.clone(),
                prefix,
                server,
                backend,
            };
            failures.extend(crate::cases::run_case(case.name, (case.run)(ctx)).await);
        }
        crate::cases::assert_all_passed(&format!("registry over {backend:?} on {server:?}"), cases.len(), &failures);
        drop(running);
    });
}

/// The `Status` of a failed registry call as JSON, as a client would receive it.
pub fn status_json(err: &RegistryError) -> Value {
    serde_json::to_value(err.to_status()).unwrap()
}

/// The error of a call expected to fail.
pub fn expect_err<T: std::fmt::Debug>(r: Result<T, RegistryError>) -> Value {
    status_json(&r.expect_err("expected the call to fail"))
}

/// The raw stored value of an etcd key, parsed.
pub async fn raw(ctx: &Ctx, key: &str) -> Option<Value> {
    let r =
        ctx.kv.clone().range(RangeRequest { key: key.as_bytes().to_vec(), ..RangeRequest::default() }).await.unwrap();
    r.into_inner().kvs.first().map(|kv| serde_json::from_slice(&kv.value).unwrap())
}
