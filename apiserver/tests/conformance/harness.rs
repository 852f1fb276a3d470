//! Starting servers (a fake-etcd member in-process, or a real etcd process killed on drop), giving each case
//! a store under its own key prefix (the etcd3 store, or a Cacher in front of one), and running every case
//! with a time limit, collecting all failures.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use apiserver::storage::cacher::{Cacher, CacherConfig};
use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
use apiserver::storage::{GroupResource, WatchEvent, Watcher};
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::{CompactionRequest, RangeRequest};
use serde_json::{json, Value};
use tonic::transport::Channel;

pub use crate::etcd_server::Server;

/// The storage backend a suite runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Etcd3,
    Cacher,
}

/// What a case gets: a store under its own prefix, a raw etcd client (to compact or to look at stored
/// bytes), the endpoint (to make more stores), and which server and backend it runs on.
#[derive(Clone)]
pub struct Ctx {
    pub store: super::store::Store,
    pub kv: KvClient<Channel>,
    pub endpoint: String,
    pub prefix: String,
    pub server: Server,
    pub backend: Backend,
}

impl Ctx {
    /// Whether the case runs against the Cacher.
    pub fn cached(&self) -> bool {
        self.backend == Backend::Cacher
    }

    /// Whether consistent lists (resourceVersion "") come from the cache: the Cacher with etcd progress
    /// notifications trusted (fake-etcd; kube-apiserver does not trust etcd 3.4.23's).
    pub fn consistent_reads_from_cache(&self) -> bool {
        self.cached() && matches!(self.server, Server::FakeEtcd)
    }

    /// The Retry-After of a "Too large resource version" from a read the cache serves (1 s) or etcd (none).
    pub fn too_large_retry_after_s(&self) -> i32 {
        if self.cached() {
            1
        } else {
            0
        }
    }

    /// A store under this case's prefix at `endpoint`.
    pub async fn etcd3_store(&self, endpoint: &str) -> Etcd3Store {
        let config = Etcd3Config::new(&self.prefix, GroupResource::new("", "configmaps"));
        Etcd3Store::connect(endpoint, config).await.unwrap()
    }

    /// A ready Cacher of `/configmaps` under this case's prefix, set up by `adjust`.
    pub async fn cacher(&self, adjust: impl FnOnce(&mut CacherConfig)) -> Cacher {
        let store = self.etcd3_store(&self.endpoint).await;
        new_cacher(store, self.server, adjust).await
    }
}

/// A ready Cacher of `/configmaps` over `store`, with the features kube-apiserver 1.33 enables for `server`,
/// then `adjust`ed: it trusts etcd's `RequestWatchProgress` only on etcd 3.4.31+, so not on real etcd 3.4.23.
pub async fn new_cacher(store: Etcd3Store, server: Server, adjust: impl FnOnce(&mut CacherConfig)) -> Cacher {
    let mut config = CacherConfig::new("/configmaps", GroupResource::new("", "configmaps"));
    config.request_watch_progress = matches!(server, Server::FakeEtcd);
    adjust(&mut config);
    let cacher = Cacher::new(store, config);
    assert!(cacher.wait_ready(Duration::from_secs(10)).await, "the cacher never became ready");
    cacher
}

pub type CaseFn = fn(Ctx) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// A named case.
pub struct Case {
    pub name: &'static str,
    pub run: CaseFn,
}

/// Every case of the suite for `backend`: the shared ones, where both backends must behave alike, and each
/// backend's own (where kube-apiserver's cached and uncached paths differ).
fn all_cases(backend: Backend) -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(super::crud::cases());
    cases.extend(super::list::cases());
    cases.extend(super::watch::cases());
    match backend {
        Backend::Etcd3 => cases.extend(super::watch::etcd3_cases()),
        Backend::Cacher => cases.extend(super::cacher::cases()),
    }
    cases
}

/// Runs every case against `backend` on `server` and fails with the list of failed cases.
pub fn run_all(server: Server, backend: Backend) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let running = crate::etcd_server::start(server, "conformance").await;
        let endpoint = running.endpoint.clone();
        let kv = KvClient::connect(endpoint.clone()).await.unwrap();
        let cases = all_cases(backend);
        let mut failures = Vec::new();
        for case in &cases {
            let prefix = format!("/registry-{}/", case.name);
            let config = Etcd3Config::new(&prefix, GroupResource::new("", "configmaps"));
            let etcd3 = Etcd3Store::connect(&endpoint, config).await.unwrap();
            let store = match backend {
                Backend::Etcd3 => super::store::Store::Etcd3(Box::new(etcd3)),
                Backend::Cacher => super::store::Store::Cacher(new_cacher(etcd3, server, |_| {}).await),
            };
            let ctx = Ctx { store, kv: kv.clone(), endpoint: endpoint.clone(), prefix, server, backend };
            failures.extend(crate::cases::run_case(case.name, (case.run)(ctx)).await);
        }
        crate::cases::assert_all_passed(&format!("{backend:?} on {server:?}"), cases.len(), &failures);
        drop(running);
    });
}

// ---- helpers for cases ----

/// A ConfigMap named `name` in namespace "ns" with one data entry.
pub fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")}, "data": {"k": value}})
}

/// The key of a ConfigMap `name` in "ns".
pub fn key(name: &str) -> String {
    format!("/configmaps/ns/{name}")
}

/// The object's `metadata.resourceVersion` as a number.
pub fn rv_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
}

/// The store's current revision, read from etcd.
pub async fn current_revision(ctx: &Ctx) -> u64 {
    let r = ctx.kv.clone().range(RangeRequest { key: b"probe".to_vec(), ..RangeRequest::default() }).await.unwrap();
    r.into_inner().header.unwrap().revision as u64
}

/// Compacts etcd's history up to `revision` and waits for it to take effect.
pub async fn compact(ctx: &Ctx, revision: u64) {
    ctx.kv.clone().compact(CompactionRequest { revision: revision as i64, physical: true }).await.unwrap();
}

/// The next watch event, failing the case if none comes within 5 s.
pub async fn next_event(w: &mut Watcher) -> WatchEvent {
    match tokio::time::timeout(Duration::from_secs(5), w.next()).await {
        Ok(Some(e)) => e,
        Ok(None) => panic!("the watch ended while an event was expected"),
        Err(_) => panic!("no watch event within 5 s"),
    }
}

/// Asserts no event arrives within a short while.
pub async fn expect_quiet(w: &mut Watcher) {
    if let Ok(e) = tokio::time::timeout(Duration::from_millis(300), w.next()).await {
        panic!("expected no watch event, got {e:?}");
    }
}

/// The object's data value "k".
pub fn data_of(obj: &Value) -> &str {
    obj["data"]["k"].as_str().unwrap_or("")
}
