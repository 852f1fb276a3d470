//! An `informer` step: client-go's reflector (`tools/cache/reflector.go`) over the simulated HTTP path, so
//! that what informers believed, and from which apiserver, can be judged.
//!
//! It follows client-go's rules for which resourceVersion to ask for, because those rules are where the
//! time-travel races live (kubernetes #59848, Sieve's A1):
//! - the first list asks for resourceVersion "0" (any state the serving apiserver's cache has);
//! - a relist asks for the last resourceVersion it synced to, so that a lagging cache must wait or refuse
//!   rather than answer with the past; after a 410 Gone or a "too large resource version" it asks for ""
//!   (a consistent read), because the last one is known to be unavailable;
//! - the watch starts from the list's resourceVersion with bookmarks; a watch that ends cleanly is reopened
//!   from the last resourceVersion seen, while an ERROR event, a refused or failed watch, or a watch that ended
//!   within a second with no event sends it back to relist after a backoff.
//!
//! Every list and every event is filed as a [`Belief`] (what the informer held true from then on, and which
//! apiserver told it); the store is what a controller's lister would read. Requests go through the client's
//! routing, so behind a load balancer a relist may reach a different apiserver than the watch did.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use http::Method;
use serde_json::Value;

use super::ctx::{Ctx, Finished};
use super::kube::{answer_rv, KubeConn, KubeEvent, KubeResult};
use super::Observed;
use crate::apiserver::rest_client::ClientError;
use crate::scenario::plan::{KubePlan, StepPlan};

kubesim_failpoints::bugs! {
    /// A historical client-go reflector bug kubesim's informer can put back.
    pub enum Bug {
        /// Every list, relists included, asks for resourceVersion "0", as client-go's reflector did before
        /// it learned to relist from the last resourceVersion it had synced to.
        RelistAtRvZero => (
            "relist-at-rv-zero",
            "kubernetes #59848",
            "an informer relists with resourceVersion \"0\", which any apiserver may answer from its watch cache however far behind, so after a broken watch an informer can go back in time to a lagging apiserver's state"
        ),
    }
}

/// The informer's switches on.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;

/// How long client-go's reflector backs off before a relist (its backoff manager starts at 800 ms).
const RELIST_BACKOFF: Duration = Duration::from_millis(800);
/// How long a watch may stay silent before the informer takes its connection for dead: client-go's HTTP/2
/// health check (a ping after 30 s without reading, failed after 15 s more). A killed apiserver's streams
/// stall under madsim rather than reset, as a dead peer's do behind a lost network, so this is how an
/// informer notices.
const WATCH_IDLE_LIMIT: Duration = Duration::from_secs(45);
/// How long a step waits for its informer's first sync before it reports that it never synced.
const SYNC_LIMIT: Duration = Duration::from_secs(30);

/// What an informer came to believe, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InformerLog {
    pub beliefs: Vec<Belief>,
    /// The store at the end of the run: name → resourceVersion.
    pub store: BTreeMap<String, u64>,
    /// Lists after the first.
    pub relists: u32,
    /// etcd's objects under the informer's prefix once the run had settled (name → mod revision), read
    /// straight from a member: what the store must equal.
    pub etcd: Option<BTreeMap<String, u64>>,
}

/// One thing an informer was told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Belief {
    pub at_ms: u64,
    pub apiserver: String,
    /// The resourceVersion it believed it was at from then on.
    pub rv: u64,
    pub what: BeliefKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BeliefKind {
    /// A list (the first, or a relist) replaced the store, asking with this resourceVersion.
    Listed { asked: String, items: usize },
    /// A watch event applied to the store.
    Event(KubeEvent),
}

impl std::fmt::Display for Belief {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.what {
            BeliefKind::Listed { asked, items } => {
                let asked = if asked.is_empty() { "\"\"" } else { asked };
                write!(f, "list rv={asked} from {}: {items} items at rv={}", self.apiserver, self.rv)
            }
            BeliefKind::Event(e) => write!(f, "{} from {}", e.describe(), self.apiserver),
        }
    }
}

/// The informers the run started, by step label: their logs, and the tasks running them.
#[derive(Default)]
pub(super) struct Informers {
    pub(super) logs: BTreeMap<String, (String, Arc<Mutex<InformerLog>>)>,
    pub(super) tasks: Vec<madsim::task::JoinHandle<()>>,
}

/// Starts the informer and waits for its first sync, as a controller's `WaitForCacheSync` does.
pub(super) async fn informer_step(
    ctx: &Ctx,
    conn: &mut KubeConn,
    client: &str,
    step: &StepPlan,
    plan: &KubePlan,
) -> Finished {
    let log = Arc::new(Mutex::new(InformerLog::default()));
    let (synced_tx, synced_rx) = tokio::sync::oneshot::channel();
    let reflector = Reflector {
        conn: conn.fork(),
        plan: plan.clone(),
        label: step.label.clone(),
        trace: ctx.trace.clone(),
        timeout: ctx.request_timeout,
        log: log.clone(),
        bugs: ctx.informer_bugs.clone(),
    };
    let task = madsim::task::spawn(reflector.run(synced_tx));
    {
        let mut informers = ctx.informers.lock().expect("informers lock");
        informers.logs.insert(step.label.clone(), (plan.etcd_prefix.clone(), log));
        informers.tasks.push(task);
    }
    let (apiserver, answer) = match tokio::time::timeout(SYNC_LIMIT, synced_rx).await {
        Ok(Ok((apiserver, code, body))) => (apiserver, Ok((code, body))),
        _ => (String::new(), Err(format!("not synced within {}s", SYNC_LIMIT.as_secs()))),
    };
    let rv = answer.as_ref().ok().and_then(|(_, body)| answer_rv(body));
    let shown = match &answer {
        Ok((_, body)) => format!("synced rv={}", answer_rv(body).unwrap_or(0)),
        Err(why) => why.clone(),
    };
    ctx.trace.event(client, format_args!("{} informer {} -> {shown}", step.label, plan.resource));
    (Observed::Kube(KubeResult { apiserver, answer, events: Vec::new(), informer: None }), rv, None)
}

/// Reads what etcd holds under each informer's prefix (from the control node, straight from a member) and
/// takes every informer's log; the tasks end.
pub(super) async fn close(ctx: &Ctx, cluster: &crate::cluster::Cluster) -> BTreeMap<String, InformerLog> {
    let informers = std::mem::take(&mut *ctx.informers.lock().expect("informers lock"));
    let mut out = BTreeMap::new();
    for (label, (prefix, log)) in informers.logs {
        let (endpoints, timeout) = (ctx.endpoints.clone(), ctx.request_timeout);
        let etcd =
            cluster.control.spawn(async move { etcd_state(&endpoints, timeout, &prefix).await }).await.ok().flatten();
        let mut log = log.lock().expect("informer log lock").clone();
        log.etcd = etcd;
        out.insert(label, log);
    }
    for task in &informers.tasks {
        task.abort();
    }
    out
}

/// The objects under `prefix` by name, with their mod revisions, from the first member that answers.
async fn etcd_state(endpoints: &[String], timeout: Duration, prefix: &str) -> Option<BTreeMap<String, u64>> {
    for endpoint in endpoints {
        let mut kv = pb::kv_client::KvClient::new(crate::client::channel(endpoint));
        let request = pb::RangeRequest {
            key: prefix.as_bytes().to_vec(),
            range_end: fake_etcd::mvcc::prefix_end(prefix.as_bytes()),
            ..Default::default()
        };
        if let Ok(Ok(r)) = tokio::time::timeout(timeout, kv.range(request)).await {
            let kvs = r.into_inner().kvs;
            let names = kvs.iter().map(|kv| {
                let key = String::from_utf8_lossy(&kv.key);
                (key[prefix.len()..].to_string(), kv.mod_revision as u64)
            });
            return Some(names.collect());
        }
    }
    None
}

/// Why a watch sent the reflector back to relist, or ended cleanly.
enum WatchEnd {
    /// The stream closed after events: reopen from the last resourceVersion.
    Clean,
    /// Relist; `expired` means the last resourceVersion is unavailable (410), so ask for "".
    Relist { expired: bool },
}

struct Reflector {
    conn: KubeConn,
    plan: KubePlan,
    label: String,
    trace: crate::trace::Trace,
    timeout: Duration,
    log: Arc<Mutex<InformerLog>>,
    bugs: Bugs,
}

type Synced = tokio::sync::oneshot::Sender<(String, u16, Value)>;

impl Reflector {
    async fn run(mut self, synced: Synced) {
        let mut synced = Some(synced);
        let mut last_sync_rv = String::new();
        let mut unavailable = false;
        loop {
            let asked = if self.bugs.has(Bug::RelistAtRvZero) {
                "0".to_string()
            } else if unavailable {
                String::new()
            } else if last_sync_rv.is_empty() {
                "0".to_string()
            } else {
                last_sync_rv.clone()
            };
            match self.list(&asked).await {
                Ok((apiserver, code, body)) => {
                    last_sync_rv = body
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    self.replace(&apiserver, &asked, &body, synced.is_none());
                    if let Some(tx) = synced.take() {
                        let _ = tx.send((apiserver, code, body));
                    }
                }
                Err(expired) => {
                    unavailable |= expired;
                    tokio::time::sleep(RELIST_BACKOFF).await;
                    continue;
                }
            }
            loop {
                match self.watch(&mut last_sync_rv).await {
                    WatchEnd::Clean => continue,
                    WatchEnd::Relist { expired } => {
                        unavailable = expired;
                        break;
                    }
                }
            }
            tokio::time::sleep(RELIST_BACKOFF).await;
        }
    }

    /// One list, all its pages: the apiserver of the first page, the code, and the whole list. An error is
    /// `true` when it says the asked resourceVersion is unavailable (410, or 504 "too large").
    async fn list(&mut self, asked: &str) -> Result<(String, u16, Value), bool> {
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
                    self.conn.failed_at(i);
                    self.trace.event(&self.label, format_args!("list rv={} -> {apiserver}: no answer", shown(asked)));
                    return Err(false);
                }
            };
            if !(200..300).contains(&code) {
                if code == 429 || code >= 500 {
                    self.conn.failed_at(i);
                }
                let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
                self.trace.event(&self.label, format_args!("list rv={} -> {apiserver}: {code} {reason}", shown(asked)));
                let too_large =
                    body.pointer("/details/causes/0/reason").and_then(Value::as_str) == Some("ResourceVersionTooLarge");
                return Err(code == 410 || too_large);
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

    /// Replaces the store with a list's items and files the belief.
    fn replace(&self, apiserver: &str, asked: &str, body: &Value, relist: bool) {
        let rv = answer_rv(body).unwrap_or(0) as u64;
        let items = body.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut log = self.log.lock().expect("informer log lock");
        log.store = items
            .iter()
            .filter_map(|o| {
                let name = o.pointer("/metadata/name")?.as_str()?.to_string();
                let rv = o.pointer("/metadata/resourceVersion")?.as_str()?.parse().ok()?;
                Some((name, rv))
            })
            .collect();
        if relist {
            log.relists += 1;
        }
        let what = BeliefKind::Listed { asked: asked.to_string(), items: items.len() };
        let belief = Belief { at_ms: now_ms(), apiserver: apiserver.to_string(), rv, what };
        self.trace.event(&self.label, format_args!("{}", belief));
        log.beliefs.push(belief);
    }

    /// One watch from `rv`, until it ends; events are applied as they come and `rv` follows them.
    async fn watch(&mut self, rv: &mut String) -> WatchEnd {
        let path = {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("watch", "true");
            q.append_pair("resourceVersion", rv);
            q.append_pair("allowWatchBookmarks", "true");
            self.selectors(&mut q);
            format!("{}?{}", self.plan.collection, q.finish())
        };
        let (i, apiserver) = self.conn.pick_named();
        let opened = tokio::time::timeout(self.timeout, self.conn.client(i).watch(&path)).await;
        let mut stream = match opened {
            Ok(Ok(stream)) => stream,
            Ok(Err(ClientError::Status(s))) => {
                let code = s.code.unwrap_or(0);
                if code == 429 || code >= 500 {
                    self.conn.failed_at(i);
                }
                self.trace.event(&self.label, format_args!("watch rv={rv} -> {apiserver}: {code}"));
                return WatchEnd::Relist { expired: code == 410 };
            }
            Ok(Err(ClientError::Transport(_))) | Err(_) => {
                self.conn.failed_at(i);
                self.trace.event(&self.label, format_args!("watch rv={rv} -> {apiserver}: no answer"));
                return WatchEnd::Relist { expired: false };
            }
        };
        let started_ms = now_ms();
        let mut events = 0;
        loop {
            let e = match tokio::time::timeout(WATCH_IDLE_LIMIT, stream.next()).await {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(_) => {
                    let idle = WATCH_IDLE_LIMIT.as_secs();
                    self.trace.event(&self.label, format_args!("watch from {apiserver}: silent for {idle}s, reopened"));
                    return WatchEnd::Clean;
                }
            };
            let event = KubeEvent::of(&e);
            if event.kind == "ERROR" {
                self.trace.event(&self.label, format_args!("watch from {apiserver}: {}", event.describe()));
                return WatchEnd::Relist { expired: event.code == Some(410) };
            }
            events += 1;
            if let Ok(n) = event.rv.parse::<u64>() {
                *rv = event.rv.clone();
                let mut log = self.log.lock().expect("informer log lock");
                match event.kind.as_str() {
                    "ADDED" | "MODIFIED" => {
                        log.store.insert(event.name.clone(), n);
                    }
                    "DELETED" => {
                        log.store.remove(&event.name);
                    }
                    _ => {}
                }
                let belief =
                    Belief { at_ms: now_ms(), apiserver: apiserver.clone(), rv: n, what: BeliefKind::Event(event) };
                if !matches!(&belief.what, BeliefKind::Event(e) if e.kind == "BOOKMARK") {
                    self.trace.event(&self.label, format_args!("{belief}"));
                }
                log.beliefs.push(belief);
            }
        }
        // client-go: a watch that closed within a second with no event is an error, and relists.
        if events == 0 && now_ms() - started_ms < 1000 {
            return WatchEnd::Relist { expired: false };
        }
        WatchEnd::Clean
    }
}

fn shown(rv: &str) -> &str {
    if rv.is_empty() {
        "\"\""
    } else {
        rv
    }
}

fn now_ms() -> u64 {
    madsim::time::TimeHandle::current().elapsed().as_millis() as u64
}
