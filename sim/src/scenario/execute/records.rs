//! What the Kubernetes parts of a run recorded, as plain data the judge and the report read: a `kube` step's
//! answer and watch events ([`KubeResult`], [`KubeEvent`]), and what an informer came to believe
//! ([`InformerLog`]). The steps that fill them in are `kube` and `informer`; this module depends on neither.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::apiserver::rest_client::StreamEvent;

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
}

impl KubeEvent {
    pub(super) fn of(e: &StreamEvent) -> KubeEvent {
        let meta = |f: &str| e.object.pointer(&format!("/metadata/{f}")).and_then(Value::as_str).unwrap_or("");
        let end = e.object.pointer("/metadata/annotations/k8s.io~1initial-events-end").and_then(Value::as_str);
        KubeEvent {
            kind: e.kind.clone(),
            name: meta("name").to_string(),
            rv: meta("resourceVersion").to_string(),
            initial_events_end: end == Some("true"),
            code: (e.kind == "ERROR").then(|| e.object.get("code").and_then(Value::as_u64).unwrap_or(0) as u16),
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
