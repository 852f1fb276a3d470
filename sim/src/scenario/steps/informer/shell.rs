//! The shell around one informer: it sends the requests the sans-IO [`Reflector`] asks for (list, paged;
//! watch with bookmarks) through the client's routing, feeds the answers back, and keeps the [`Store`] a
//! controller's lister would read. With `streaming` the lists are watch-lists: the initial events up to the
//! `k8s.io/initial-events-end` bookmark stand for the list, and the same stream goes on as the watch. The
//! reflector decides the rules (which resourceVersion a list asks for, what a failure makes it do next;
//! `crate::kube::reflector`).
//!
//! Every list, event and restart is filed as a [`Belief`] (what the informer held true from then on, and
//! which apiserver told it), every tombstone a relist produced and every 410 it got; the judge reads them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use serde_json::Value;

use crate::apiserver::rest_client::{ClientError, StreamEvent, WatchStream};
use crate::kube::reflector::{Failure, Reflector, Request};
use crate::kube::store::{Notice, Store};
use crate::scenario::steps::kube::send::answer_rv;
use crate::scenario::steps::kube::Kube;
use crate::scenario::steps::kube_conn::KubeConn;
use crate::scenario::steps::observed::{now_ms, Belief, BeliefKind, InformerLog, KubeEvent};

/// How long the reflector backs off after a failure (client-go's backoff manager starts at 800 ms).
pub(super) const BACKOFF: Duration = Duration::from_millis(800);
/// How long a watch may stay silent before the informer takes its connection for dead: client-go's HTTP/2
/// health check (a ping after 30 s without reading, failed after 15 s more). A killed apiserver's streams
/// stall under madsim rather than reset, as a dead peer's do behind a lost network, so this is how an
/// informer notices.
pub(super) const WATCH_IDLE_LIMIT: Duration = Duration::from_secs(45);
/// How long a step waits for its informer's first sync before it reports that it never synced.
pub(super) const SYNC_LIMIT: Duration = Duration::from_secs(30);

/// The shell around one informer's reflector and store.
pub(super) struct Shell {
    pub(super) conn: KubeConn,
    pub(super) plan: Kube,
    pub(super) label: String,
    pub(super) trace: crate::trace::Trace,
    pub(super) timeout: Duration,
    pub(super) log: Arc<Mutex<InformerLog>>,
    pub(super) reflector: Reflector,
    /// Shared with `controller` steps, which read it as a controller reads its lister.
    pub(super) store: Arc<Mutex<Store>>,
}

pub(super) type Synced = tokio::sync::oneshot::Sender<(String, u16, Value)>;

impl Shell {
    /// Does what the reflector asks, forever (the run aborts the task); a restart request starts over.
    pub(super) async fn run(mut self, synced: Synced, restart: Arc<tokio::sync::Notify>) {
        let mut synced = Some(synced);
        loop {
            let step = async {
                match self.reflector.next() {
                    Request::List { resource_version } => self.list_step(&resource_version, &mut synced).await,
                    Request::Watch { resource_version } => self.watch_step(&resource_version).await,
                    Request::WatchList { resource_version } => {
                        self.watch_list_step(&resource_version, &mut synced).await
                    }
                }
            };
            let restarted = tokio::select! {
                biased;
                () = restart.notified() => true,
                () = step => false,
            };
            if restarted {
                self.restart();
            }
        }
    }

    async fn list_step(&mut self, asked: &str, synced: &mut Option<Synced>) {
        match self.list(asked).await {
            Ok((apiserver, code, body)) => {
                let rv = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default();
                self.reflector.listed(rv);
                self.replace(&apiserver, asked, &body, synced.is_none());
                if let Some(tx) = synced.take() {
                    let _ = tx.send((apiserver, code, body));
                }
            }
            Err(failure) => {
                self.reflector.list_failed(&failure);
                tokio::time::sleep(BACKOFF).await;
            }
        }
    }

    async fn watch_step(&mut self, from: &str) {
        let failure = match self.open(&self.watch_path(from, false), from).await {
            Ok((stream, apiserver)) => self.follow(stream, &apiserver).await,
            Err(failure) => Some(failure),
        };
        self.watch_ended(failure).await;
    }

    async fn watch_ended(&mut self, failure: Option<Failure>) {
        if failure.is_some() {
            tokio::time::sleep(BACKOFF).await;
        }
        self.reflector.watch_ended(failure.as_ref());
    }

    /// A streaming list: the initial events make the list; once they end, the same stream is the watch.
    async fn watch_list_step(&mut self, asked: &str, synced: &mut Option<Synced>) {
        let (mut stream, apiserver) = match self.open(&self.watch_path(asked, true), asked).await {
            Ok(opened) => opened,
            Err(failure) => return self.watch_list_failed(failure).await,
        };
        let mut items = Vec::new();
        let rv = loop {
            let e = match tokio::time::timeout(WATCH_IDLE_LIMIT, stream.next()).await {
                Ok(Some(e)) => e,
                Ok(None) | Err(_) => {
                    self.trace.event(
                        &self.label,
                        format_args!("watch-list from {apiserver}: ended before its initial events"),
                    );
                    return self.watch_list_failed(Failure::Other).await;
                }
            };
            let event = KubeEvent::of(&e);
            match event.kind.as_str() {
                "ERROR" => {
                    self.trace.event(&self.label, format_args!("watch-list from {apiserver}: {}", event.describe()));
                    let failure = self.failure(event.code.unwrap_or(0), &e.object);
                    return self.watch_list_failed(failure).await;
                }
                "BOOKMARK" if ends_initial_events(&e) => break event.rv,
                "ADDED" => items.push(e.object),
                _ => {}
            }
        };
        self.reflector.listed(&rv);
        let body = serde_json::json!({ "metadata": { "resourceVersion": rv }, "items": items });
        self.replace(&apiserver, asked, &body, synced.is_none());
        if let Some(tx) = synced.take() {
            let _ = tx.send((apiserver.clone(), 200, body));
        }
        let failure = self.follow(stream, &apiserver).await;
        self.watch_ended(failure).await;
    }

    async fn watch_list_failed(&mut self, failure: Failure) {
        // client-go retries a 410 or a too-large resourceVersion at once, from "".
        if failure == Failure::Other {
            tokio::time::sleep(BACKOFF).await;
        }
        self.reflector.watch_list_failed(&failure);
    }

    /// The process restarted: a new reflector and an empty store, as a crashed controller comes back.
    fn restart(&mut self) {
        self.reflector.restart();
        *self.store.lock().expect("store lock") = Store::default();
        let mut log = self.log.lock().expect("informer log lock");
        log.restarts += 1;
        log.store.clear();
        let rv = log.beliefs.last().map_or(0, |b| b.rv);
        self.trace.event(&self.label, "restarted");
        log.beliefs.push(Belief { at_ms: now_ms(), apiserver: String::new(), rv, what: BeliefKind::Restarted });
    }

    /// One list, all its pages: the apiserver of the first page, the code, and the whole list.
    async fn list(&mut self, asked: &str) -> Result<(String, u16, Value), Failure> {
        let mut items: Vec<Value> = Vec::new();
        let mut cont: Option<String> = None;
        let mut first: Option<(String, u16, Value)> = None;
        loop {
            let path = self.list_path(asked, cont.as_deref());
            let (i, apiserver) = self.conn.pick_named();
            let call = self.conn.client(i).exchange(Method::GET, &path, None, "application/json");
            let answer = tokio::time::timeout(self.timeout, call).await;
            let (code, body) = match answer {
                Ok(Ok(pair)) => pair,
                Ok(Err(ClientError::Status(s))) => (s.code.unwrap_or(0) as u16, serde_json::json!(*s)),
                Ok(Err(ClientError::Transport(_))) | Err(_) => {
                    self.conn.failed(i);
                    self.trace.event(&self.label, format_args!("list rv={} -> {apiserver}: no answer", shown(asked)));
                    return Err(Failure::Other);
                }
            };
            if !(200..300).contains(&code) {
                if code == 429 || code >= 500 {
                    self.conn.failed(i);
                }
                let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
                self.trace.event(&self.label, format_args!("list rv={} -> {apiserver}: {code} {reason}", shown(asked)));
                return Err(self.failure(code, &body));
            }
            items.extend(body.get("items").and_then(Value::as_array).cloned().unwrap_or_default());
            cont = body
                .pointer("/metadata/continue")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_string);
            if first.is_none() {
                first = Some((apiserver, code, body.clone()));
            }
            if cont.is_none() {
                let (apiserver, code, mut whole) = first.expect("one page at least");
                // The list's resourceVersion is its last page's, as client-go's pager keeps it.
                whole["metadata"] = body["metadata"].clone();
                whole["items"] = Value::Array(items);
                return Ok((apiserver, code, whole));
            }
        }
    }

    fn list_path(&self, asked: &str, cont: Option<&str>) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("resourceVersion", asked);
        if let Some(limit) = self.plan.limit {
            q.append_pair("limit", &limit.to_string());
        }
        if let Some(c) = cont {
            q.append_pair("continue", c);
        }
        self.selectors(&mut q);
        format!("{}?{}", self.plan.collection, q.finish())
    }

    fn selectors(&self, q: &mut form_urlencoded::Serializer<'_, String>) {
        if let Some(s) = &self.plan.label_selector {
            q.append_pair("labelSelector", s);
        }
        if let Some(s) = &self.plan.field_selector {
            q.append_pair("fieldSelector", s);
        }
    }

    /// Replaces the store with a list's items, files the belief and any tombstones.
    fn replace(&mut self, apiserver: &str, asked: &str, body: &Value, relist: bool) {
        let rv = answer_rv(body).unwrap_or(0) as u64;
        let items = body.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
        let count = items.len();
        let mut store = self.store.lock().expect("store lock");
        let notices = store.replace(items);
        let mut log = self.log.lock().expect("informer log lock");
        for n in notices.iter().filter(|n| n.notice == Notice::DeleteTombstone) {
            self.trace.event(&self.label, format_args!("tombstone {}@{}", n.key, n.rv));
            log.tombstones.push(format!("{}@{}", n.key, n.rv));
        }
        log.store = names(&store);
        if relist {
            log.relists += 1;
        }
        let what = BeliefKind::Listed { asked: asked.to_string(), items: count };
        let belief = Belief { at_ms: now_ms(), apiserver: apiserver.to_string(), rv, what };
        self.trace.event(&self.label, format_args!("{}", belief));
        log.beliefs.push(belief);
    }

    /// How the reflector reads a refusal, counting the 410s in the log.
    fn failure(&self, code: u16, status: &Value) -> Failure {
        let failure = failure_of(code, status);
        if failure == Failure::Expired {
            self.log.lock().expect("informer log lock").expired += 1;
        }
        failure
    }

    fn watch_path(&self, from: &str, streaming: bool) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("watch", "true");
        if streaming {
            q.append_pair("sendInitialEvents", "true");
            q.append_pair("resourceVersionMatch", "NotOlderThan");
        }
        q.append_pair("resourceVersion", from);
        q.append_pair("allowWatchBookmarks", "true");
        self.selectors(&mut q);
        format!("{}?{}", self.plan.collection, q.finish())
    }

    /// Opens a watch on `path` through the client's routing: the stream and the apiserver serving it.
    async fn open(&mut self, path: &str, from: &str) -> Result<(WatchStream, String), Failure> {
        let (i, apiserver) = self.conn.pick_named();
        let opened = tokio::time::timeout(self.timeout, self.conn.client(i).watch(path)).await;
        match opened {
            Ok(Ok(stream)) => Ok((stream, apiserver)),
            Ok(Err(ClientError::Status(s))) => {
                let code = s.code.unwrap_or(0) as u16;
                if code == 429 || code >= 500 {
                    self.conn.failed(i);
                }
                self.trace.event(&self.label, format_args!("watch rv={} -> {apiserver}: {code}", shown(from)));
                Err(self.failure(code, &serde_json::json!(*s)))
            }
            Ok(Err(ClientError::Transport(_))) | Err(_) => {
                self.conn.failed(i);
                self.trace.event(&self.label, format_args!("watch rv={} -> {apiserver}: no answer", shown(from)));
                Err(Failure::Other)
            }
        }
    }

    /// Follows a watch until it ends: `None` when it ended cleanly, else why it failed.
    async fn follow(&mut self, mut stream: WatchStream, apiserver: &str) -> Option<Failure> {
        let started_ms = now_ms();
        let mut events = 0;
        loop {
            let e = match tokio::time::timeout(WATCH_IDLE_LIMIT, stream.next()).await {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(_) => {
                    let idle = WATCH_IDLE_LIMIT.as_secs();
                    self.trace.event(&self.label, format_args!("watch from {apiserver}: silent for {idle}s, reopened"));
                    return None;
                }
            };
            let event = KubeEvent::of(&e);
            if event.kind == "ERROR" {
                self.trace.event(&self.label, format_args!("watch from {apiserver}: {}", event.describe()));
                return Some(self.failure(event.code.unwrap_or(0), &e.object));
            }
            events += 1;
            let Ok(rv) = event.rv.parse::<u64>() else { continue };
            self.reflector.observed(&event.rv);
            let mut store = self.store.lock().expect("store lock");
            let mut log = self.log.lock().expect("informer log lock");
            // The log's copy of the store's names follows the object an ADDED or MODIFIED is about (a whole
            // copy per event cost a pass over the store each time, 4 % of a control-plane run); a DELETED
            // copies the store again, in case an object of the same name lives in another namespace.
            match event.kind.as_str() {
                "ADDED" | "MODIFIED" => {
                    log.store.insert(object_name(&e.object), crate::kube::store::object_rv(&e.object));
                    store.upsert(e.object);
                }
                "DELETED" => {
                    store.delete(&e.object);
                    log.store = names(&store);
                }
                _ => {}
            }
            drop(store);
            let apiserver = apiserver.to_string();
            let belief = Belief { at_ms: now_ms(), apiserver, rv, what: BeliefKind::Event(event) };
            if !matches!(&belief.what, BeliefKind::Event(e) if e.kind == "BOOKMARK") {
                self.trace.event(&self.label, format_args!("{belief}"));
            }
            log.beliefs.push(belief);
        }
        // client-go: a watch that closed within a second with no event is an error.
        if events == 0 && now_ms() - started_ms < 1000 {
            return Some(Failure::Other);
        }
        None
    }
}

/// Whether a bookmark marks the end of a watch-list's initial events.
fn ends_initial_events(e: &StreamEvent) -> bool {
    e.object.pointer("/metadata/annotations/k8s.io~1initial-events-end").and_then(Value::as_str) == Some("true")
}

/// How the reflector reads a refusal: 410 is `Expired`, a 504 whose cause is `ResourceVersionTooLarge` is
/// `TooLarge`, anything else `Other`.
fn failure_of(code: u16, status: &Value) -> Failure {
    let cause = status.pointer("/details/causes/0/reason").and_then(Value::as_str);
    match (code, cause) {
        (410, _) => Failure::Expired,
        (_, Some("ResourceVersionTooLarge")) => Failure::TooLarge,
        _ => Failure::Other,
    }
}

/// The store's objects by name, with their resourceVersions.
fn names(store: &Store) -> BTreeMap<String, u64> {
    store.objects().values().map(|o| (object_name(o), crate::kube::store::object_rv(o))).collect()
}

fn object_name(o: &Value) -> String {
    o.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string()
}

fn shown(rv: &str) -> &str {
    if rv.is_empty() {
        "\"\""
    } else {
        rv
    }
}
