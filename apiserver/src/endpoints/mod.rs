//! The HTTP layer: kube-apiserver's REST API over the registry, as k8s.io/apiserver's `pkg/endpoints`
//! serves it, in both builds (real sockets, and madsim's simulated network).
//!
//! A request goes: [`request_info`] resolves what it is about (the router), [`negotiate`] chooses the
//! response format, [`handlers`] (one file per verb) read the [`query`] and the body ([`codec`]), call the
//! resource's registry ([`crate::registry::rest::Rest`]) and answer through [`response`], which converts to
//! [`table`] forms on request and gzips large answers. Every failure is an [`error::ApiError`], which
//! becomes a `Status` in one place. Around the resources: [`discovery`] (legacy and aggregated),
//! [`openapi`], [`system`] (`/version`, health, `/metrics`) and [`serve`], the accept loop and
//! connection handling on hyper.
//!
//! [`ApiServer`] is one server: what it serves ([`Served`]: the catalog of resources and their registries,
//! replaced whole when a CustomResourceDefinition is established or removed), and what the handlers share.
//! It draws nothing from the machine: time comes from the registry's [`Clock`] and tokio's timers
//! (madsim's under simulation), randomness (watch timeouts) from a seeded generator.

pub(crate) mod admit;
pub mod authn;
pub(crate) mod authz;
pub(crate) mod codec;
pub(crate) mod discovery;
pub(crate) mod error;
pub(crate) mod handlers;
pub(crate) mod metrics;
pub(crate) mod negotiate;
pub(crate) mod openapi;
#[cfg(not(madsim))]
pub mod protobuf;
pub(crate) mod query;
pub mod quiet_flush;
pub(crate) mod request_info;
pub(crate) mod response;
pub(crate) mod router;
pub mod serve;
pub(crate) mod strategic_merge;
pub(crate) mod system;
pub(crate) mod table;

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::Notify;

use crate::apis::Catalog;
use crate::registry::rest::{BoxFuture, Rest};
use crate::registry::Clock;

/// The body of every response.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// What `/version` reports. kubectl's dispatcher picks its client by `minor`, so kubesim reports 1.32.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionInfo {
    pub major: String,
    pub minor: String,
    pub git_version: String,
}

impl Default for VersionInfo {
    fn default() -> VersionInfo {
        VersionInfo { major: "1".into(), minor: "32".into(), git_version: "v1.32.4-kubesim".into() }
    }
}

/// The server's settings (kube-apiserver's flags where one exists).
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub version: VersionInfo,
    /// The `WatchList` feature gate (on in 1.32): watches with `sendInitialEvents`, and legacy watches
    /// from "" or "0" streaming their initial state the same way.
    pub watch_list: bool,
    /// `--min-request-timeout`: a watch without `timeoutSeconds` lasts between this and twice this.
    pub min_request_timeout: Duration,
    /// `--request-timeout`: how long any other request may take before a 504.
    pub request_timeout: Duration,
    /// The address discovery advertises in `serverAddressByClientCIDRs`.
    pub advertise_address: String,
    /// How long a client may take to send a request's headers before its connection is closed.
    pub header_read_timeout: Duration,
    /// The seed of the watch timeouts' generator.
    pub seed: u64,
    /// The key and issuer of service account tokens (`--service-account-key-file`,
    /// `--service-account-issuer`): what `serviceaccounts/token` signs and the authenticator accepts.
    pub service_account_tokens: Arc<crate::registry::tokens::ServiceAccountTokens>,
    /// The authenticators (`--anonymous-auth`, `--token-auth-file`, `--client-ca-file`).
    pub authentication: authn::Authentication,
    /// `--authorization-mode`.
    pub authorization: crate::registry::authorizer::Modes,
    /// The admission plugins on (`--enable-admission-plugins`, `--disable-admission-plugins`).
    pub admission: crate::admission::AdmissionConfig,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            version: VersionInfo::default(),
            watch_list: true,
            min_request_timeout: Duration::from_secs(1800),
            request_timeout: Duration::from_secs(60),
            advertise_address: "127.0.0.1:6443".into(),
            header_read_timeout: Duration::from_secs(30),
            seed: 0,
            service_account_tokens: Arc::new(crate::registry::tokens::ServiceAccountTokens::from_seed(0)),
            authentication: authn::Authentication::default(),
            authorization: crate::registry::authorizer::Modes::default(),
            admission: crate::admission::AdmissionConfig::default(),
        }
    }
}

/// The checks behind `/healthz`, `/livez` and `/readyz` that look beyond the process.
pub(crate) trait HealthCheck: Send + Sync {
    /// Whether etcd answers (a read of a key no object uses).
    fn etcd(&self) -> BoxFuture<'_, Result<(), String>>;

    /// Whether every watch cache has completed its first list (`informer-sync`).
    fn caches_synced(&self) -> bool;
}

/// A server that is shutting down: readiness fails, new watches are refused, open watches end.
#[derive(Default)]
pub(crate) struct Shutdown {
    draining: AtomicBool,
    notify: Notify,
}

impl Shutdown {
    /// Starts draining.
    pub(crate) fn begin(&self) {
        self.draining.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub(crate) fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Resolves once draining has begun.
    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            if self.draining() {
                return;
            }
            notified.await;
        }
    }
}

/// The registry of each resource, by (group, version, plural).
pub(crate) use crate::registry::rest::Registry;

/// What a server serves at one moment: the catalog and a registry for every resource in it. A request
/// reads one snapshot from routing to its answer, so a CRD established meanwhile never half-applies to it.
pub(crate) struct Served {
    pub catalog: Catalog,
    pub registry: Registry,
    /// Counts replacements, so that what is derived from the catalog (the OpenAPI documents) knows when it
    /// is stale.
    pub generation: u64,
}

impl Served {
    /// A snapshot of `catalog` with `registry` holding a [`Rest`] for every resource in it.
    pub(crate) fn new(catalog: Catalog, registry: Registry, generation: u64) -> Served {
        for info in catalog.all() {
            let key = (info.resource.group.clone(), info.resource.version.clone(), info.resource.plural.clone());
            assert!(registry.contains_key(&key), "no registry for {key:?}, which the catalog serves");
        }
        Served { catalog, registry, generation }
    }

    pub(crate) fn rest(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<dyn Rest>> {
        self.registry.get(&(group.to_string(), version.to_string(), plural.to_string()))
    }
}

/// One apiserver: the resources it serves, their registries, and its settings.
pub struct ApiServer {
    served: RwLock<Arc<Served>>,
    pub(crate) config: ServerConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) rng: Mutex<ChaCha8Rng>,
    pub(crate) metrics: metrics::Metrics,
    pub(crate) health: Arc<dyn HealthCheck>,
    pub(crate) shutdown: Shutdown,
    /// Whether the system namespaces exist (the `start-system-namespaces-controller` post-start hook).
    pub(crate) system_namespaces: AtomicBool,
    /// The `/openapi/v3` documents of the catalog, built on first use.
    pub(crate) openapi: openapi::OpenApiCache,
    /// The failpoints of the HTTP layer (`before-http-watch-send`); nothing armed unless a simulation arms it.
    pub(crate) failpoints: crate::failpoint::Failpoints,
    /// How the CRD controller makes the registries of custom resources (none: CRDs are not served).
    pub(crate) custom_resources: Option<crate::apis::StoreFactory>,
    /// The admission plugins the configuration turns on, in order.
    pub(crate) plugins: crate::admission::Plugins,
}

impl ApiServer {
    /// A server for `catalog`, with `registry` holding a [`Rest`] for every resource in it.
    pub(crate) fn new(
        catalog: Catalog,
        registry: Registry,
        config: ServerConfig,
        clock: Arc<dyn Clock>,
        health: Arc<dyn HealthCheck>,
    ) -> ApiServer {
        ApiServer {
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(config.seed)),
            plugins: crate::admission::Plugins::new(&config.admission, &config.authorization),
            served: RwLock::new(Arc::new(Served::new(catalog, registry, 0))),
            config,
            clock,
            metrics: metrics::Metrics::default(),
            health,
            shutdown: Shutdown::default(),
            system_namespaces: AtomicBool::new(false),
            openapi: openapi::OpenApiCache::default(),
            failpoints: crate::failpoint::Failpoints::new(),
            custom_resources: None,
        }
    }

    /// This server with the means to serve the resources of CRDs.
    pub(crate) fn with_custom_resources(mut self, factory: crate::apis::StoreFactory) -> ApiServer {
        self.custom_resources = Some(factory);
        self
    }

    /// This server with the apiserver's failpoint registry, which its storage shares.
    pub(crate) fn with_failpoints(mut self, failpoints: crate::failpoint::Failpoints) -> ApiServer {
        self.failpoints = failpoints;
        self
    }

    /// What the server serves now.
    pub(crate) fn served(&self) -> Arc<Served> {
        self.served.read().expect("the served lock is never poisoned").clone()
    }

    /// Replaces what the server serves with what `change` makes of it (the CRD controller's one way in).
    pub(crate) fn replace_served(&self, change: impl FnOnce(&Served) -> (Catalog, Registry)) {
        let mut served = self.served.write().expect("the served lock is never poisoned");
        let (catalog, registry) = change(&served);
        *served = Arc::new(Served::new(catalog, registry, served.generation + 1));
    }

    /// Begins a graceful shutdown: `/readyz` fails, watches end cleanly, new watches are refused.
    pub(crate) fn begin_shutdown(&self) {
        self.shutdown.begin();
    }

    /// Records that the system namespaces exist.
    pub(crate) fn mark_system_namespaces_ready(&self) {
        self.system_namespaces.store(true, Ordering::SeqCst);
    }

    pub(crate) fn rest(&self, group: &str, version: &str, plural: &str) -> Option<Arc<dyn Rest>> {
        self.served().rest(group, version, plural).cloned()
    }

    /// A watch's lifetime when the client gave none: uniformly between the minimum request timeout and
    /// twice it, as kube draws it.
    pub(crate) fn random_watch_timeout(&self) -> Duration {
        use rand::Rng;
        let factor: f64 = self.rng.lock().expect("the generator lock is never poisoned").random_range(0.0..1.0);
        self.config.min_request_timeout.mul_f64(1.0 + factor)
    }
}
