//! Assembling a server: for every resource of the catalog an etcd3 store over one etcd connection, a watch
//! cache in front of it when the watch cache is on (`--watch-cache`), and the generic registry store with
//! the resource's strategy; then the [`ApiServer`] over them, with health checks that ask etcd and the
//! caches, and the means to make the same for the resources of CRDs, which [`bootstrap`] starts the CRD
//! controller with. The same assembly runs in the real binary and on a simulated node.

use std::collections::BTreeMap;
use std::sync::Arc;

use etcd_proto::etcdserverpb::RangeRequest;

use crate::apis::StoreFactory;
use crate::apis::{Catalog, ResourceInfo};
use crate::bug::Bugs;
use crate::endpoints::{ApiServer, HealthCheck, ServerConfig};
use crate::failpoint::Failpoints;
use crate::registry::rest::{BoxFuture, Rest};
use crate::registry::review::ReviewRest;
use crate::registry::services::allocator::{Range, RangeAllocator};
use crate::registry::services::{self, ServiceRest};
use crate::registry::{Clock, Resource, Store, SystemFields};
use crate::storage::cacher::{Cacher, CacherConfig};
use crate::storage::conversion::{Conversion, Converting};
use crate::storage::etcd3::{Etcd3Config, Etcd3Store, EtcdClient, LeaseManager, Ttl};
use crate::storage::status::GroupResource;
use crate::storage::Storage;

/// How a server is assembled.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// `--etcd-prefix`: the etcd key prefix of every object (kube-apiserver's `/registry`).
    pub etcd_prefix: String,
    /// `--watch-cache`: serve reads and watches from a watch cache per resource.
    pub watch_cache: bool,
    /// `--default-watch-cache-size`: the events each watch cache's history keeps (upstream's default, 100,
    /// when unset).
    pub watch_cache_size: Option<usize>,
    /// Whether the caches may rely on etcd's progress requests (true for fake-etcd and etcd 3.4.31+; false
    /// for older etcd, as kube-apiserver decides from etcd's version).
    pub request_watch_progress: bool,
    pub config: ServerConfig,
    /// The apiserver's failpoint registry (nothing armed unless a harness arms it).
    pub failpoints: Failpoints,
    /// `--event-ttl`: how long events live after their last write, in seconds.
    pub event_ttl_s: i64,
    /// `--service-cluster-ip-range`: where services' cluster IPs come from.
    pub service_cluster_ip_range: Range,
    /// The bug switches on, for a simulation that reproduces a historical bug (none in a real server).
    pub bugs: Bugs,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            etcd_prefix: "/registry".into(),
            watch_cache: true,
            watch_cache_size: None,
            request_watch_progress: true,
            config: ServerConfig::default(),
            failpoints: Failpoints::new(),
            event_ttl_s: 3600,
            service_cluster_ip_range: Range::parse_cidr(DEFAULT_SERVICE_CLUSTER_IP_RANGE)
                .expect("the default range parses"),
            bugs: Bugs::none(),
        }
    }
}

/// kube-apiserver's default `--service-cluster-ip-range`.
pub(crate) const DEFAULT_SERVICE_CLUSTER_IP_RANGE: &str = "10.0.0.0/24";

/// The storage of one resource: its watch cache, or etcd directly.
#[derive(Clone)]
enum Backend {
    Cached(Cacher),
    /// Boxed: the store is some 600 bytes, the cache's handle 16.
    Direct(Box<Etcd3Store>),
}

/// Builds the server for `catalog` over the etcd `client` reaches. Names, uids and timestamps come from
/// `system`; the Age of table rows from `clock`.
pub fn build(
    catalog: Catalog,
    client: EtcdClient,
    options: ServerOptions,
    system: SystemFields,
    clock: Arc<dyn Clock>,
) -> Arc<ApiServer> {
    let prefix = format!("{}/", options.etcd_prefix.trim_end_matches('/'));
    let leases = LeaseManager::new(client.clone());
    let backend_of = |resource: &Resource, expires: bool| -> Backend {
        backend(&client, &prefix, &options, &leases, resource, expires)
    };
    let mut backends: BTreeMap<String, Backend> = BTreeMap::new();
    for info in catalog.all().filter(|info| info.review.is_none()) {
        let expires = info.strategy.expires();
        backends.entry(info.resource.etcd_prefix.clone()).or_insert_with(|| backend_of(&info.resource, expires));
    }
    let namespaces = backends.get("namespaces").cloned();
    let mut registry: BTreeMap<(String, String, String), Arc<dyn Rest>> = BTreeMap::new();
    for info in catalog.all().filter(|info| info.review.is_none()) {
        let backend = backends[&info.resource.etcd_prefix].clone();
        let ns = if info.namespaced { namespaces.clone() } else { None };
        if let Some(conversion) = info.conversion.clone() {
            // Stored in another group's shape: the store sees its own shape through a converting storage.
            let ns = ns.map(|ns| Converting::new(ns, Conversion::identity()));
            let backend = Converting::new(backend, conversion);
            let store = Store::new(info.resource.clone(), info.strategy.clone(), backend, system.clone(), ns)
                .with_bugs(options.bugs.clone());
            let key = (info.resource.group.clone(), info.resource.version.clone(), info.resource.plural.clone());
            registry.insert(key, Arc::new(store));
            continue;
        }
        let store = Store::new(info.resource.clone(), info.strategy.clone(), backend, system.clone(), ns)
            .with_bugs(options.bugs.clone());
        let rest: Arc<dyn Rest> = if info.resource == services::resource() {
            // Allocations are read and written in etcd directly: every apiserver must see every other's.
            let direct = |key: &str| {
                let config = Etcd3Config::new(&prefix, GroupResource::new("", key));
                Backend::Direct(Box::new(Etcd3Store::new(client.clone(), config)))
            };
            let ips = RangeAllocator::new(
                direct("serviceipallocations"),
                services::SERVICE_IPS_KEY,
                options.service_cluster_ip_range.clone(),
            );
            let ports = RangeAllocator::new(
                direct("servicenodeportallocations"),
                services::NODE_PORTS_KEY,
                services::NODE_PORT_RANGE,
            );
            Arc::new(ServiceRest::new(store, ips, ports))
        } else {
            Arc::new(store)
        };
        let key = (info.resource.group.clone(), info.resource.version.clone(), info.resource.plural.clone());
        registry.insert(key, rest);
    }
    // The review kinds store nothing; they see the stores (a token review looks its account up).
    let stores = Arc::new(registry.clone());
    let static_tokens = Arc::new(options.config.authentication.tokens.clone());
    for info in catalog.all() {
        if let Some(review) = info.review.clone() {
            let rest = ReviewRest::new(
                review,
                info.strategy.clone(),
                options.config.service_account_tokens.clone(),
                stores.clone(),
                clock.clone(),
                options.config.authorization.clone(),
            )
            .with_static_tokens(static_tokens.clone());
            let key = (info.resource.group.clone(), info.resource.version.clone(), info.resource.plural.clone());
            registry.insert(key, Arc::new(rest));
        }
    }
    let cachers: Vec<Cacher> = backends
        .values()
        .filter_map(|b| match b {
            Backend::Cached(c) => Some(c.clone()),
            Backend::Direct(_) => None,
        })
        .collect();
    let health = Arc::new(Health { client: client.clone(), key: format!("{prefix}health").into_bytes(), cachers });
    let failpoints = options.failpoints.clone();
    let factory = custom_resource_stores(client, prefix, options.clone(), leases, system, namespaces);
    let server = ApiServer::new(catalog, registry, options.config, clock, health).with_failpoints(failpoints);
    Arc::new(server.with_custom_resources(factory))
}

/// The storage of one resource: a watch cache over an etcd3 store when the watch cache is on.
fn backend(
    client: &EtcdClient,
    prefix: &str,
    options: &ServerOptions,
    leases: &LeaseManager,
    resource: &Resource,
    expires: bool,
) -> Backend {
    let mut config = Etcd3Config::new(prefix, resource.group_resource());
    config.failpoints = options.failpoints.clone();
    config.bugs = options.bugs.clone();
    if expires {
        config.ttl = Some(Ttl { ttl_s: options.event_ttl_s, leases: leases.clone() });
    }
    let store = Etcd3Store::new(client.clone(), config);
    if !options.watch_cache {
        return Backend::Direct(Box::new(store));
    }
    let mut cacher_config = CacherConfig::new(&format!("/{}", resource.etcd_prefix), resource.group_resource());
    cacher_config.failpoints = options.failpoints.clone();
    cacher_config.bugs = options.bugs.clone();
    cacher_config.request_watch_progress = options.request_watch_progress;
    if let Some(size) = options.watch_cache_size {
        cacher_config.history_capacity = size;
    }
    Backend::Cached(Cacher::new(store, cacher_config))
}

/// The registries of a CRD's versions, as the CRD controller asks for them: one storage under the CRD's
/// etcd prefix (`/registry/<group>/<plural>/`), with a watch cache when the server has them, and a store per
/// served version, which stores objects as the storage version and serves them as its own (the `None`
/// conversion: only `apiVersion` changes).
fn custom_resource_stores(
    client: EtcdClient,
    prefix: String,
    options: ServerOptions,
    leases: LeaseManager,
    system: SystemFields,
    namespaces: Option<Backend>,
) -> StoreFactory {
    Arc::new(move |infos: &[ResourceInfo], storage_version: &str| {
        let Some(first) = infos.first() else { return Vec::new() };
        let storage = backend(&client, &prefix, &options, &leases, &first.resource, false);
        infos
            .iter()
            .map(|info| {
                let r = &info.resource;
                let stored_as = format!("{}/{storage_version}", r.group);
                let conversion = Conversion::api_version(stored_as, r.api_version());
                let ns = namespaces
                    .clone()
                    .filter(|_| info.namespaced)
                    .map(|ns| Converting::new(ns, Conversion::identity()));
                let served = Converting::new(storage.clone(), conversion);
                let store = Store::new(r.clone(), info.strategy.clone(), served, system.clone(), ns)
                    .with_bugs(options.bugs.clone());
                Arc::new(store) as Arc<dyn Rest>
            })
            .collect()
    })
}

/// The etcd and cache checks.
struct Health {
    client: EtcdClient,
    /// The key the etcd check reads (`<prefix>/health`, which no object uses).
    key: Vec<u8>,
    cachers: Vec<Cacher>,
}

impl HealthCheck for Health {
    fn etcd(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let request = RangeRequest { key: self.key.clone(), count_only: true, ..RangeRequest::default() };
            match tokio::time::timeout(std::time::Duration::from_secs(2), self.client.range(request)).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(status)) => Err(status.message().to_string()),
                Err(_) => Err("etcd did not answer within 2s".into()),
            }
        })
    }

    fn caches_synced(&self) -> bool {
        self.cachers.iter().all(Cacher::ready)
    }
}

/// The namespaces kube-apiserver creates at start: `default` (the bootstrap controller) and `kube-system`,
/// `kube-public`, `kube-node-lease` (the system namespaces controller).
pub(crate) const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates the system namespaces that do not exist yet, retrying until each does, then the `kubernetes`
/// service in `default`, then marks the server's post-start hook done. The four namespaces are made
/// together: one after the other they cost four rounds of a read and a write through Raft before the
/// server could say it is ready.
pub async fn bootstrap(server: Arc<ApiServer>) {
    let Some(namespaces) = server.rest("", "v1", "namespaces") else { return };
    let ensure = |name: &'static str| {
        let namespaces = namespaces.clone();
        async move {
            loop {
                if namespaces.get("", name, &crate::storage::GetOptions::default()).await.is_ok() {
                    return;
                }
                let obj = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
                match namespaces.create("", obj, &crate::registry::CreateOptions::default()).await {
                    Ok(_) => return,
                    Err(err) if err.to_status().code == Some(409) => return,
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
                }
            }
        }
    };
    // Only a server that serves CRDs runs their controller (a simulation serves only what its clients
    // use, and a task spawned for nothing would still move the scheduler's draws).
    let serves_crds = server
        .rest(crate::registry::strategies::customresourcedefinitions::GROUP, "v1", "customresourcedefinitions")
        .is_some();
    if let (Some(factory), true) = (server.custom_resources.clone(), serves_crds) {
        tokio::spawn(crate::apiextensions::controller::run(server.clone(), factory));
    }
    futures::future::join_all(SYSTEM_NAMESPACES.map(ensure)).await;
    bootstrap_kubernetes_service(&server).await;
    server.mark_system_namespaces_ready();
    bootstrap_objects(&server).await;
    bootstrap_local_apiservices(&server).await;
}

/// The local APIServices of the served built-in group versions (`apis::apiregistration::local`), each
/// created unless it exists and marked available unless it says so already, as kube-apiserver's
/// autoregister and availability controllers keep them.
async fn bootstrap_local_apiservices(server: &ApiServer) {
    let Some(rest) = server.rest("apiregistration.k8s.io", "v1", "apiservices") else { return };
    let served: Vec<(String, String)> = {
        let catalog = &server.served().catalog;
        let mut gvs: Vec<(String, String)> =
            catalog.all().map(|i| (i.resource.group.clone(), i.resource.version.clone())).collect();
        gvs.dedup();
        gvs
    };
    let get = crate::storage::GetOptions::default();
    for (obj, status) in crate::apis::apiregistration::local::apiservices(&served) {
        let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
        // Retried while the store is not ready (etcd still electing), as the controllers retry.
        let current = loop {
            if let Ok(current) = rest.get("", &name, &get).await {
                break current;
            }
            match rest.create("", obj.clone(), &crate::registry::CreateOptions::default()).await {
                Ok(created) => break created,
                Err(err) if err.to_status().code == Some(409) => continue,
                Err(err) if err.to_status().code == Some(422) => panic!("local APIService {name} is invalid: {err}"),
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            }
        };
        if current.pointer("/status/conditions").and_then(serde_json::Value::as_array).is_some_and(|c| !c.is_empty()) {
            continue;
        }
        let mut marked = current;
        let mut status = status;
        status["conditions"][0]["lastTransitionTime"] =
            crate::registry::system::rfc3339(server.clock.now_unix_s()).into();
        marked["status"] = status;
        // A conflict means another apiserver marked it first.
        let opts = crate::registry::options::UpdateOptions::default();
        let _ = rest.update_subresource("", &name, crate::registry::Subresource::Status, marked, &opts).await;
    }
}

/// The objects the catalog's kinds ask for at start (`ResourceInfo::bootstrap`: the system priority
/// classes, ...), each created unless it exists, as kube-apiserver's post-start hooks ensure them. An
/// object a user changed since is left as it is.
async fn bootstrap_objects(server: &ApiServer) {
    let served = server.served();
    for info in served.catalog.all() {
        let objects = (info.bootstrap)();
        if objects.is_empty() {
            continue;
        }
        let Some(rest) = server.rest(&info.resource.group, &info.resource.version, &info.resource.plural) else {
            continue;
        };
        for obj in objects {
            let name = obj.pointer("/metadata/name").and_then(serde_json::Value::as_str).unwrap_or("").to_string();
            let namespace =
                obj.pointer("/metadata/namespace").and_then(serde_json::Value::as_str).unwrap_or("").to_string();
            // Retried while the store is not ready (etcd still electing), as the hooks retry.
            loop {
                if rest.get(&namespace, &name, &crate::storage::GetOptions::default()).await.is_ok() {
                    break;
                }
                match rest.create(&namespace, obj.clone(), &crate::registry::CreateOptions::default()).await {
                    Ok(_) => break,
                    Err(err) if err.to_status().code == Some(409) => break,
                    Err(err) if err.to_status().code == Some(422) => {
                        panic!("bootstrap object {name} of {:?} is invalid: {err}", info.resource)
                    }
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
                }
            }
        }
    }
}

/// The `default/kubernetes` service that points clients inside a cluster at the apiserver, on the first IP
/// of the service range, as kube-apiserver's bootstrap controller creates it. (Its endpoints, which that
/// controller keeps pointing at the live apiservers, are not written.)
async fn bootstrap_kubernetes_service(server: &ApiServer) {
    let Some(services) = server.rest("", "v1", "services") else { return };
    let obj = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}], "type": "ClusterIP"},
    });
    loop {
        if services.get("default", "kubernetes", &crate::storage::GetOptions::default()).await.is_ok() {
            return;
        }
        match services.create("default", obj.clone(), &crate::registry::CreateOptions::default()).await {
            Ok(_) => return,
            Err(err) if err.to_status().code == Some(409) => return,
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
}

/// Waits until every watch cache of a server built with the watch cache on has listed, or `limit` passes.
pub async fn wait_until_ready(server: &ApiServer, limit: std::time::Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let namespaces = server.system_namespaces.load(std::sync::atomic::Ordering::SeqCst);
        if namespaces && server.health.caches_synced() && server.health.etcd().await.is_ok() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

impl Storage for Backend {
    async fn create(
        &self,
        key: &str,
        obj: serde_json::Value,
    ) -> Result<serde_json::Value, crate::storage::StorageError> {
        match self {
            Backend::Cached(c) => c.create(key, obj).await,
            Backend::Direct(d) => d.create(key, obj).await,
        }
    }

    async fn get(
        &self,
        key: &str,
        opts: &crate::storage::GetOptions,
    ) -> Result<serde_json::Value, crate::storage::StorageError> {
        match self {
            Backend::Cached(c) => c.get(key, opts).await,
            Backend::Direct(d) => d.get(key, opts).await,
        }
    }

    async fn get_list(
        &self,
        key: &str,
        opts: &crate::storage::ListOptions,
    ) -> Result<crate::storage::ObjectList, crate::storage::StorageError> {
        match self {
            Backend::Cached(c) => c.get_list(key, opts).await,
            Backend::Direct(d) => d.get_list(key, opts).await,
        }
    }

    async fn guaranteed_update<F>(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: Option<&crate::storage::Preconditions>,
        update: F,
        cached: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, crate::storage::StorageError>
    where
        F: FnMut(
                serde_json::Value,
                crate::storage::ResponseMeta,
            ) -> Result<serde_json::Value, crate::storage::StorageError>
            + Send,
    {
        match self {
            Backend::Cached(c) => c.guaranteed_update(key, ignore_not_found, preconditions, update, cached).await,
            Backend::Direct(d) => d.guaranteed_update(key, ignore_not_found, preconditions, update, cached).await,
        }
    }

    async fn delete<V>(
        &self,
        key: &str,
        preconditions: Option<&crate::storage::Preconditions>,
        validate: V,
        cached: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, crate::storage::StorageError>
    where
        V: FnMut(&serde_json::Value) -> Result<(), crate::storage::StorageError> + Send,
    {
        match self {
            Backend::Cached(c) => c.delete(key, preconditions, validate, cached).await,
            Backend::Direct(d) => d.delete(key, preconditions, validate, cached).await,
        }
    }

    async fn watch(
        &self,
        key: &str,
        opts: &crate::storage::ListOptions,
    ) -> Result<crate::storage::Watcher, crate::storage::StorageError> {
        match self {
            Backend::Cached(c) => c.watch(key, opts).await,
            Backend::Direct(d) => d.watch(key, opts).await,
        }
    }

    async fn count(&self, key: &str) -> Result<i64, crate::storage::StorageError> {
        match self {
            Backend::Cached(c) => c.count(key).await,
            Backend::Direct(d) => d.count(key).await,
        }
    }

    async fn current_resource_version(&self) -> Result<crate::storage::ResourceVersion, crate::storage::StorageError> {
        match self {
            Backend::Cached(c) => c.current_resource_version().await,
            Backend::Direct(d) => d.current_resource_version().await,
        }
    }
}
