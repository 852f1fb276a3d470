//! The watch cache: [`Cacher`], kube-apiserver's Cacher (with its `CacheDelegator`) over the etcd3 store.
//!
//! It implements the same [`Storage`] interface as [`Etcd3Store`]: writes, counts and quorum gets go to the
//! store (updates and deletes with the cached object as their suggestion); reads with a
//! resourceVersion, lists and watches are served from a cache that a reflector keeps in step with etcd.
//! Which requests the cache serves, and how, follows kube-apiserver 1.33.
//!
//! Files: `watch_cache` (the sans-IO history and state), `config` (features and timing), `state` (what the
//! tasks share, under one lock: the cache, readiness, registered watchers), `reflector` (list and watch from
//! etcd), `freshness` (waiting for a resourceVersion, the progress requester), `cache_watcher` (one client
//! watch), `read` (get and list), `watch` (starting a client watch); `tests` shows the bug switches
//! (`crate::bug`) on the state and watchers directly.
//!
//! Three tasks run per Cacher, all stopped when its last clone is dropped: the reflector, the progress
//! requester and the bookmark timer. Time is tokio's (madsim's under simulation); no task reads a wall clock.

pub(crate) mod config;
pub(crate) mod watch_cache;

mod cache_watcher;
mod freshness;
mod read;
mod reflector;
mod signal;
mod state;
mod watch;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;

pub use self::config::CacherConfig;
use self::state::CacherState;
use crate::storage::error::StorageError;
use crate::storage::etcd3::Etcd3Store;
use crate::storage::interface::{ObjectList, ResponseMeta, Storage};
use crate::storage::options::{GetOptions, ListOptions, Preconditions};
use crate::storage::resource_version::ResourceVersion;
use crate::storage::watch::Watcher;

/// The watch cache in front of an etcd3 store. Clones share one cache.
#[derive(Clone)]
pub struct Cacher {
    shared: Arc<Shared>,
    _running: Arc<Running>,
}

/// What the Cacher's tasks and requests share.
struct Shared {
    store: Etcd3Store,
    config: CacherConfig,
    state: Mutex<CacherState>,
    /// The cache's resourceVersion, for reads waiting until it is fresh enough.
    fresh: signal::Latest<ResourceVersion>,
    /// Wakes the progress requester when a read starts waiting.
    wake_requester: Notify,
}

impl Shared {
    /// The state. Never held across an `.await` (the futures would not be `Send`).
    fn lock(&self) -> MutexGuard<'_, CacherState> {
        self.state.lock().expect("a cacher task panicked while holding the state")
    }
}

/// Stops the tasks when the last clone of the Cacher is dropped.
struct Running {
    stop: Arc<signal::Stop>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.stop();
    }
}

impl Cacher {
    /// A Cacher over `store`; it starts listing and watching at once and is ready after its first list.
    pub fn new(store: Etcd3Store, config: CacherConfig) -> Cacher {
        let fresh = signal::Latest::new(ResourceVersion(0));
        let shared = Arc::new(Shared {
            state: Mutex::new(CacherState::new(&config, Instant::now())),
            store,
            config,
            fresh,
            wake_requester: Notify::new(),
        });
        let stop = Arc::new(signal::Stop::default());
        tokio::spawn(reflector::run(shared.clone(), stop.clone()));
        tokio::spawn(freshness::request_progress_while_waiting(shared.clone(), stop.clone()));
        tokio::spawn(dispatch_bookmarks(shared.clone(), stop.clone()));
        Cacher { shared, _running: Arc::new(Running { stop }) }
    }

    /// Whether the cache has completed a list and is watching.
    pub fn ready(&self) -> bool {
        self.shared.lock().is_ready()
    }

    /// The resourceVersion the cache has reached.
    pub fn resource_version(&self) -> ResourceVersion {
        self.shared.lock().cache.resource_version()
    }

    /// Waits until the cache is ready, for at most `limit`; whether it is.
    pub async fn wait_ready(&self, limit: std::time::Duration) -> bool {
        // Readiness changes only with the resourceVersion being set (a list completing).
        let ready = tokio::time::timeout(limit, self.shared.fresh.wait_until(|| self.ready()));
        ready.await.is_ok() && self.ready()
    }

    /// The cached copy of `key`, the suggestion passed to updates and deletes.
    fn cached(&self, key: &str) -> Option<Value> {
        self.shared.lock().cache.get(key).map(|obj| obj.value().clone())
    }
}

/// The bookmark timer: every tick, watchers due a bookmark get one.
async fn dispatch_bookmarks(shared: Arc<Shared>, stop: Arc<signal::Stop>) {
    let mut tick = tokio::time::interval(shared.config.bookmark_tick);
    loop {
        tokio::select! {
            biased;
            () = stop.stopped() => return,
            _ = tick.tick() => shared.lock().dispatch_bookmarks(Instant::now(), shared.config.bookmark_frequency),
        }
    }
}

impl Storage for Cacher {
    async fn create(&self, key: &str, obj: Value) -> Result<Value, StorageError> {
        self.shared.store.create(key, obj).await
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Value, StorageError> {
        self.get_object(key, opts).await
    }

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<ObjectList, StorageError> {
        self.list_objects(key, opts).await
    }

    /// Upstream passes its own cached copy as the suggestion, whatever the caller had.
    async fn guaranteed_update<F>(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: Option<&Preconditions>,
        update: F,
        _cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        F: FnMut(Value, ResponseMeta) -> Result<Value, StorageError> + Send,
    {
        let cached = self.cached(key);
        self.shared.store.guaranteed_update(key, ignore_not_found, preconditions, update, cached).await
    }

    async fn delete<V>(
        &self,
        key: &str,
        preconditions: Option<&Preconditions>,
        validate: V,
        _cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        V: FnMut(&Value) -> Result<(), StorageError> + Send,
    {
        let cached = self.cached(key);
        self.shared.store.delete(key, preconditions, validate, cached).await
    }

    async fn watch(&self, key: &str, opts: &ListOptions) -> Result<Watcher, StorageError> {
        self.watch_objects(key, opts).await
    }

    async fn count(&self, key: &str) -> Result<i64, StorageError> {
        self.shared.store.count(key).await
    }

    async fn current_resource_version(&self) -> Result<ResourceVersion, StorageError> {
        self.shared.store.current_resource_version().await
    }
}
