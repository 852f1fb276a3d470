//! Shared informers: list and watch one resource into a local cache, and tell every subscribed handler
//! what changed (client-go's `SharedIndexInformer` and `SharedInformerFactory`, 1.32).
//!
//! The list and watch choices are the sans-IO [`Reflector`]'s (which resourceVersion to list from, when a
//! 410 forces a relist); the cache and its notifications are the sans-IO [`Store`]'s (a relist announces
//! objects that vanished as tombstones). This shell sends the requests: lists paged by 500 as client-go's
//! pager, watches with bookmarks and a server-side timeout drawn between 5 and 10 minutes, and after a
//! failure client-go's reflector backoff (800 ms doubling to 30 s, with full jitter) from a seeded generator.
//!
//! A handler subscribed after the informer started is first told of every cached object as an add, as
//! client-go's `AddEventHandler` does, so that it misses nothing.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::client::{query_escape, ApiResource, Client, ClientError};
use crate::runtime::reflector::{Failure, Reflector, RelistFrom, Request};
use crate::runtime::store::{object_key, Notice, Store};

/// client-go's pager's page size.
const PAGE_SIZE: usize = 500;
/// The reflector's backoff: the first wait, the cap, and full jitter on each.
const BACKOFF_INITIAL: Duration = Duration::from_millis(800);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// `minWatchTimeout`: a watch asks the server to end it after between this and twice this.
const MIN_WATCH_TIMEOUT_S: u64 = 300;

/// One change a handler is told of: the object's state before (none for an add) and after (for a delete,
/// its last known state, which for a tombstone may be older than its deletion).
#[derive(Clone, Debug, PartialEq)]
pub struct Delta {
    pub notice: Notice,
    pub key: String,
    pub old: Option<Value>,
    pub object: Value,
}

struct State {
    store: Store,
    subscribers: Vec<UnboundedSender<Delta>>,
}

/// One resource's informer: a cloneable handle on its cache; [`Informer::run`] fills it.
#[derive(Clone)]
pub struct Informer {
    resource: ApiResource,
    state: Arc<Mutex<State>>,
    /// Whether the first list is cached, and who waits for it. (Not a tokio watch channel: it wakes its
    /// waiters in an order drawn from a thread-local generator, which a simulation cannot replay.)
    synced: Arc<(AtomicBool, tokio::sync::Notify)>,
}

impl Informer {
    pub fn new(resource: ApiResource) -> Informer {
        Informer {
            resource,
            state: Arc::new(Mutex::new(State { store: Store::default(), subscribers: Vec::new() })),
            synced: Arc::default(),
        }
    }

    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("the informer's state is never poisoned")
    }

    /// A handler: every change from now on, after an add for each object already cached.
    pub fn subscribe(&self) -> UnboundedReceiver<Delta> {
        let (tx, rx) = unbounded_channel();
        let mut state = self.lock();
        for (key, obj) in state.store.objects() {
            let _ = tx.send(Delta { notice: Notice::Add, key: key.clone(), old: None, object: (**obj).clone() });
        }
        state.subscribers.push(tx);
        rx
    }

    /// The cached object at `key` (`namespace/name`, or `name`).
    pub fn get(&self, key: &str) -> Option<Value> {
        self.lock().store.get(key).cloned()
    }

    /// Every cached object, by key.
    pub fn list(&self) -> Vec<Value> {
        self.list_shared().into_iter().map(Arc::unwrap_or_clone).collect()
    }

    /// The cached objects of one namespace.
    pub fn list_namespace(&self, namespace: &str) -> Vec<Value> {
        self.list_namespace_shared(namespace).into_iter().map(Arc::unwrap_or_clone).collect()
    }

    /// The cached object at `key`, shared with the cache (a pointer copy, as client-go's listers hand out):
    /// for reading, or for cloning only what a controller is to change.
    pub fn get_shared(&self, key: &str) -> Option<Arc<Value>> {
        self.lock().store.get_shared(key).cloned()
    }

    /// Every cached object, by key, shared with the cache.
    pub fn list_shared(&self) -> Vec<Arc<Value>> {
        self.lock().store.objects().values().cloned().collect()
    }

    /// The cached objects of one namespace, by key, shared with the cache. Keys are `namespace/name`, so
    /// a namespace's objects are one range of the ordered map: no scan of the others.
    pub fn list_namespace_shared(&self, namespace: &str) -> Vec<Arc<Value>> {
        let prefix = format!("{namespace}/");
        self.lock()
            .store
            .objects()
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Whether the first list has been cached (`HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.synced.0.load(Ordering::SeqCst)
    }

    /// Waits until the first list has been cached (`WaitForCacheSync`).
    pub async fn wait_synced(&self) {
        loop {
            // Registered before the flag is read, so that a sync in between still wakes this waiter.
            let notified = self.synced.1.notified();
            if self.has_synced() {
                return;
            }
            notified.await;
        }
    }

    /// Tells every live handler of `deltas`, dropping those that went away. The last handler takes the
    /// original, so that a change costs one deep copy fewer than there are handlers.
    fn publish(state: &mut State, deltas: Vec<Delta>) {
        state.subscribers.retain(|tx| !tx.is_closed());
        for delta in deltas {
            if let Some((last, rest)) = state.subscribers.split_last() {
                for tx in rest {
                    // A handler that went away meanwhile is dropped on the next change.
                    let _ = tx.send(delta.clone());
                }
                let _ = last.send(delta);
            }
        }
    }

    fn apply_list(&self, items: Vec<Value>) {
        let mut state = self.lock();
        // Pointer copies: the relist's old states are read only for the notifications.
        let before: BTreeMap<String, Arc<Value>> = state.store.objects().clone();
        let notes = state.store.replace(items);
        let deltas = notes
            .into_iter()
            .map(|n| {
                let old = before.get(&n.key).map(|o| (**o).clone());
                let object = state.store.get(&n.key).cloned().or_else(|| old.clone()).unwrap_or(Value::Null);
                Delta { notice: n.notice, key: n.key, old, object }
            })
            .collect();
        Self::publish(&mut state, deltas);
    }

    fn apply_event(&self, kind: &str, object: Value) {
        let mut state = self.lock();
        let key = object_key(&object);
        // The store's old state is handed to the handlers: the store lets go of its `Arc`, so no copy is made
        // unless a lister still holds it.
        let old = state.store.get_shared(&key).cloned();
        let note = match kind {
            "ADDED" | "MODIFIED" => state.store.upsert(object.clone()),
            "DELETED" => state.store.delete(&object),
            _ => return,
        };
        let old = old.map(Arc::unwrap_or_clone);
        Self::publish(&mut state, vec![Delta { notice: note.notice, key, old, object }]);
    }

    /// Lists and watches for as long as the future lives.
    pub async fn run(self, client: Arc<Client>, seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut reflector = Reflector::new(RelistFrom::Consistent);
        let mut backoff = BACKOFF_INITIAL;
        loop {
            let outcome = match reflector.next() {
                Request::List { resource_version } | Request::WatchList { resource_version } => {
                    match self.list_from(&client, &resource_version).await {
                        Ok((items, rv)) => {
                            self.apply_list(items);
                            reflector.listed(&rv);
                            self.synced.0.store(true, Ordering::SeqCst);
                            self.synced.1.notify_waiters();
                            Ok(())
                        }
                        Err(err) => {
                            reflector.list_failed(&failure(&err));
                            Err(err)
                        }
                    }
                }
                Request::Watch { resource_version } => {
                    self.watch(&client, &mut reflector, &resource_version, &mut rng).await
                }
            };
            match outcome {
                Ok(()) => backoff = BACKOFF_INITIAL,
                Err(err) => {
                    tracing::debug!(resource = %self.resource.group_resource(), "list and watch failed: {err}");
                    tokio::time::sleep(backoff.mul_f64(rng.random::<f64>())).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
    }

    /// A paged list at `resource_version`: the items and the list's resourceVersion.
    async fn list_from(&self, client: &Client, resource_version: &str) -> Result<(Vec<Value>, String), ClientError> {
        let base = self.resource.collection_path(None);
        let mut items = Vec::new();
        let mut token = String::new();
        loop {
            let mut path = format!("{base}?limit={PAGE_SIZE}");
            if !token.is_empty() {
                path.push_str(&format!("&continue={}", query_escape(&token)));
            } else if !resource_version.is_empty() {
                path.push_str(&format!("&resourceVersion={}", query_escape(resource_version)));
            }
            let mut page = client.get(&path).await?;
            let kind = self.resource.kind.clone();
            let api_version = self.resource.api_version();
            for mut item in page.get_mut("items").and_then(Value::as_array_mut).map(std::mem::take).unwrap_or_default()
            {
                // A list's items carry no kind; handlers want whole objects, as client-go's decoded ones.
                if let Some(map) = item.as_object_mut() {
                    map.entry("kind").or_insert_with(|| Value::String(kind.clone()));
                    map.entry("apiVersion").or_insert_with(|| Value::String(api_version.clone()));
                }
                items.push(item);
            }
            let rv = page.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("").to_string();
            token = page.pointer("/metadata/continue").and_then(Value::as_str).unwrap_or("").to_string();
            if token.is_empty() {
                return Ok((items, rv));
            }
        }
    }

    /// One watch from `resource_version`, until it ends.
    async fn watch(
        &self,
        client: &Client,
        reflector: &mut Reflector,
        resource_version: &str,
        rng: &mut ChaCha8Rng,
    ) -> Result<(), ClientError> {
        let timeout_s = MIN_WATCH_TIMEOUT_S + rng.random_range(0..MIN_WATCH_TIMEOUT_S);
        let path = format!(
            "{}?watch=true&allowWatchBookmarks=true&timeoutSeconds={timeout_s}&resourceVersion={}",
            self.resource.collection_path(None),
            query_escape(resource_version)
        );
        let mut stream = match client.watch(&path).await {
            Ok(stream) => stream,
            Err(err) => {
                reflector.watch_ended(Some(&failure(&err)));
                return Err(err);
            }
        };
        while let Some(event) = stream.next().await {
            let rv =
                event.object.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("").to_string();
            match event.kind.as_str() {
                "ERROR" => {
                    let code = event.object.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
                    let err = crate::client::ClientError::Status {
                        code,
                        status: Box::new(serde_json::from_value(event.object).unwrap_or_default()),
                    };
                    reflector.watch_ended(Some(&failure(&err)));
                    return Err(err);
                }
                "BOOKMARK" => {}
                kind => self.apply_event(kind, event.object),
            }
            reflector.observed(&rv);
        }
        reflector.watch_ended(None);
        Ok(())
    }
}

/// How the reflector tells an error apart.
fn failure(err: &ClientError) -> Failure {
    if err.is_expired() {
        Failure::Expired
    } else if err.code() == Some(504)
        && matches!(err, ClientError::Status { status, .. }
            if status.details.as_ref().and_then(|d| d.causes.as_ref()).is_some_and(|c| c.iter().any(|c| c.reason.as_deref() == Some("ResourceVersionTooLarge"))))
    {
        Failure::TooLarge
    } else {
        Failure::Other
    }
}

/// The informers of one controller manager, one per resource, shared by every controller that asks
/// (`SharedInformerFactory`). Each runs from the moment it is first asked for until the factory is
/// dropped, which stops them all (a controller manager that lost its lease).
pub struct Informers {
    client: Arc<Client>,
    seed: u64,
    running: Mutex<BTreeMap<ApiResource, (Informer, tokio::task::JoinHandle<()>)>>,
}

impl Informers {
    /// Informers over `client`; each draws its watch timeouts and backoffs from a generator seeded from
    /// `seed` and its resource.
    pub fn new(client: Arc<Client>, seed: u64) -> Informers {
        Informers { client, seed, running: Mutex::new(BTreeMap::new()) }
    }

    /// The client the informers use, for the controllers' own requests.
    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// The informer of `resource`, started if it was not running.
    pub fn get(&self, resource: &ApiResource) -> Informer {
        let mut running = self.running.lock().expect("never poisoned");
        if let Some((informer, _)) = running.get(resource) {
            return informer.clone();
        }
        let informer = Informer::new(resource.clone());
        // Each informer's generator differs by its place in the start order, which is deterministic.
        let seed = self.seed.wrapping_add(running.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let task = tokio::spawn(informer.clone().run(self.client.clone(), seed));
        running.insert(resource.clone(), (informer.clone(), task));
        informer
    }

    /// Stops the informer of `resource` (the garbage collector's, when discovery no longer lists it).
    pub fn stop(&self, resource: &ApiResource) {
        if let Some((_, task)) = self.running.lock().expect("never poisoned").remove(resource) {
            task.abort();
        }
    }
}

impl Drop for Informers {
    fn drop(&mut self) {
        for (_, (_, task)) in std::mem::take(&mut *self.running.lock().expect("never poisoned")) {
            task.abort();
        }
    }
}
