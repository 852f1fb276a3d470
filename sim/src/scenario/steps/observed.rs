//! What a step's client observed ([`Observed`]), as plain data the judge, the snapshot and the report read:
//! for the Kubernetes steps a `kube` step's answer and watch events ([`KubeResult`], [`KubeEvent`]), a
//! controller's attempts ([`Attempt`]) and what an informer came to believe ([`InformerLog`]). The kinds
//! fill them in; this module depends on none of them.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::apiserver::rest_client::StreamEvent;
use crate::history::{self as h, ErrorStatus, Outcome, WatchId};

/// What a step's client observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// A KV or lease request's outcome, as filed in the history.
    Kv(Outcome),
    /// A keep-alive's or time-to-live's answer: the TTL and (a time-to-live asked with `keys`) the lease's
    /// keys in key order, or what went wrong.
    Ttl(Result<(i64, Vec<h::Bytes>), String>),
    /// A lease listing: the ids, sorted.
    Leases(Result<Vec<i64>, String>),
    /// A watch was created (its stream is judged at the end), or was not within the request timeout.
    Watch(Result<WatchId, String>),
    /// A wait's condition held, or the wait timed out.
    Waited(Result<(), String>),
    /// A `kube`, `informer` or `controller` step's answer (a watch's events and an informer's log filled in
    /// when the run ends).
    Kube(KubeResult),
    /// An `auth` step's answer.
    Auth(AuthOutcome),
    /// The answer of a kind of step that needs no shape of its own: whether it succeeded, and the named
    /// facts its kind judges (a new kind of step observes this, and touches nothing here).
    Answer(Answer),
    /// A sleep, progress request or cancel: nothing comes back.
    Done,
    /// The step could not be sent (an unresolved reference), or the run ended before it.
    NotRun(String),
}

impl Observed {
    /// Whether the step succeeded: an answer that is not a refusal (a 2xx for an HTTP request), a watch
    /// created, a wait whose condition held, a sleep or stream request done.
    pub fn succeeded(&self) -> bool {
        match self {
            Observed::Kv(o) => matches!(o, Outcome::Ok(_)),
            Observed::Ttl(r) => r.is_ok(),
            Observed::Leases(r) => r.is_ok(),
            Observed::Watch(r) => r.is_ok(),
            Observed::Waited(r) => r.is_ok(),
            Observed::Kube(k) => matches!(&k.answer, Ok((code, _)) if (200..300).contains(code)),
            Observed::Auth(a) => matches!(a, AuthOutcome::Ok(_)),
            Observed::Answer(a) => a.outcome == AnswerOutcome::Ok,
            Observed::Done => true,
            Observed::NotRun(_) => false,
        }
    }
}

/// What a `kube` step's client saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeResult {
    /// The apiserver the request went to.
    pub apiserver: String,
    /// The answer's status code and JSON, or why there was none.
    pub answer: Result<(u16, Value), String>,
    /// A watch's events, in order (filled in when the run ends).
    pub events: Vec<KubeEvent>,
    /// An informer step's log (filled in when the run ends).
    pub informer: Option<InformerLog>,
    /// A controller step's attempts, in order (empty for other steps).
    pub attempts: Vec<Attempt>,
    /// When the step began and when its answer came (or the step gave up), in simulated ms since the run
    /// began; for a step that asked again (`until_ms`), from its first request to its last answer.
    pub started_ms: u64,
    pub ended_ms: u64,
}

impl KubeResult {
    /// An answer with nothing else: a request's, or a list's, from `started_ms` until now.
    pub fn answer(apiserver: String, answer: Result<(u16, Value), String>, started_ms: u64) -> KubeResult {
        let ended_ms = now_ms();
        KubeResult { apiserver, answer, events: Vec::new(), informer: None, attempts: Vec::new(), started_ms, ended_ms }
    }
}

/// Simulated milliseconds since the run began.
pub fn now_ms() -> u64 {
    madsim::time::TimeHandle::current().elapsed().as_millis() as u64
}

/// What a step answered, in general terms: its outcome as etcd's clients read one, and named facts (`leader`
/// = `etcd-2`) in the order the kind filed them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// `Ok`: answered; `Err`: refused with etcd's code and text; `Unknown`: no answer, or an availability
    /// error that leaves the outcome unknown.
    pub outcome: AnswerOutcome,
    pub facts: Vec<(String, String)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AnswerOutcome {
    #[default]
    Ok,
    Err(ErrorStatus),
    Unknown(String),
}

impl Answer {
    /// A fact by name.
    pub fn fact(&self, name: &str) -> Option<&str> {
        self.facts.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Display for Answer {
    /// `ok leader=etcd-2`, `err FailedPrecondition "etcdserver: ..."`, or why there was no answer.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.outcome {
            AnswerOutcome::Ok => f.write_str("ok")?,
            AnswerOutcome::Err(status) => write!(f, "err {:?} {:?}", status.code, status.message)?,
            AnswerOutcome::Unknown(why) => return f.write_str(why),
        }
        for (name, value) in &self.facts {
            write!(f, " {name}={value}")?;
        }
        Ok(())
    }
}

/// One attempt of a controller's read-modify-write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub at_ms: u64,
    /// How long the update took to answer (0 when it was never sent).
    pub took_ms: u64,
    /// The resourceVersion of the object it read from the informer's store, if it found one.
    pub read_rv: Option<i64>,
    /// The apiserver the update went to ("" when it was never sent).
    pub apiserver: String,
    /// The answer as the trace shows it (`200 rv=12`, `409`, `no answer (..)`, or why it stopped).
    pub shown: String,
}

/// One event a Kubernetes watch delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    pub name: String,
    pub rv: String,
    pub initial_events_end: bool,
    /// An ERROR event's Status code.
    pub code: Option<u16>,
    /// When it arrived, in simulated ms since the run began.
    pub at_ms: u64,
}

impl KubeEvent {
    pub fn of(e: &StreamEvent) -> KubeEvent {
        let meta = |f: &str| e.object.pointer(&format!("/metadata/{f}")).and_then(Value::as_str).unwrap_or("");
        let end = e.object.pointer("/metadata/annotations/k8s.io~1initial-events-end").and_then(Value::as_str);
        KubeEvent {
            kind: e.kind.clone(),
            name: meta("name").to_string(),
            rv: meta("resourceVersion").to_string(),
            initial_events_end: end == Some("true"),
            code: (e.kind == "ERROR").then(|| e.object.get("code").and_then(Value::as_u64).unwrap_or(0) as u16),
            at_ms: now_ms(),
        }
    }

    /// The event as the trace and the report show it.
    pub fn describe(&self) -> String {
        crate::describe::kube_event(&self.kind, &self.name, &self.rv, self.initial_events_end, self.code)
    }
}

/// What an informer came to believe, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InformerLog {
    pub beliefs: Vec<Belief>,
    /// The store at the end of the run: name → resourceVersion.
    pub store: BTreeMap<String, u64>,
    /// Lists after the first.
    pub relists: u32,
    /// Objects a relist found gone, announced to handlers as `DeletedFinalStateUnknown` tombstones with
    /// their last known state: DELETEs the watch never delivered (`name@rv`).
    pub tombstones: Vec<String>,
    /// Times the informer's process was restarted (`informer_restart` steps).
    pub restarts: u32,
    /// 410 Gone (`Expired`) answers its lists and watches got.
    pub expired: u32,
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
    /// The informer's process restarted: it forgot its store and its resourceVersion.
    Restarted,
}

impl std::fmt::Display for Belief {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.what {
            BeliefKind::Listed { asked, items } => {
                let asked = if asked.is_empty() { "\"\"" } else { asked };
                write!(f, "list rv={asked} from {}: {items} items at rv={}", self.apiserver, self.rv)
            }
            BeliefKind::Event(e) => write!(f, "{} from {}", e.describe(), self.apiserver),
            BeliefKind::Restarted => f.write_str("restarted: store and resourceVersion forgotten"),
        }
    }
}

/// What an `auth` step's client saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthOutcome {
    /// Answered: the names a list or get returned (users, roles, or a role's permissions as
    /// `readwrite /a*`), in etcd's order; empty for the others.
    Ok(Vec<String>),
    /// Refused, with etcd's code and text.
    Err(ErrorStatus),
    /// No answer within the request timeout, or no connection.
    Unknown(String),
}

impl std::fmt::Display for AuthOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthOutcome::Ok(names) if names.is_empty() => f.write_str("ok"),
            AuthOutcome::Ok(names) => write!(f, "ok {names:?}"),
            AuthOutcome::Err(status) => write!(f, "err {:?} {:?}", status.code, status.message),
            AuthOutcome::Unknown(why) => f.write_str(why),
        }
    }
}
