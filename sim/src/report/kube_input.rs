//! What a run's Kubernetes clients did, as the report reads it: each `kube` step's request and watch
//! events, each controller attempt, each informer's beliefs and its store against etcd's, and the
//! `apiserver` workloads' history. Plain data copied out of what the run recorded (`report::scenario`
//! fills it in from the steps' `Observed` answers), so that the report's builder needs nothing from the
//! simulation build and a test can write it by hand.
//!
//! Times are simulated milliseconds since the run began, the precision the steps record; the workloads'
//! history keeps nanoseconds.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::history::apiserver::ApiHistory;

/// Everything the Kubernetes clients of a run did.
#[derive(Clone, Debug, Default)]
pub struct KubeData<'a> {
    /// `kube` steps' requests and controllers' attempts, in the clients' and steps' order.
    pub calls: Vec<KubeCall>,
    /// The events `kube` watch steps delivered, each watch's in order.
    pub events: Vec<KubeWatchEvent>,
    pub informers: Vec<InformerData>,
    /// The `apiserver` workloads' requests and watches.
    pub api_history: Option<&'a ApiHistory>,
}

/// One HTTP request of a scripted Kubernetes client: a `kube` step (from its first request to its last
/// answer, for a step that asked again), or one attempt of a `controller` step.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeCall {
    pub client: String,
    /// The step's label.
    pub step: String,
    /// The request as the step's record shows it (`update configmaps default/a`).
    pub request: String,
    /// The apiserver that answered ("" when none was asked).
    pub apiserver: String,
    pub start_ms: u64,
    pub end_ms: u64,
    /// The HTTP status; `None` when no answer came or the request was never sent.
    pub code: Option<u16>,
    /// Whether it left the client (a controller that found nothing in its informer's store sent nothing).
    pub sent: bool,
    /// The answer in one line (`200 rv=12`, `409 Conflict`, `no answer (..)`).
    pub shown: String,
    /// The answer's JSON, for a click.
    pub body: Option<Value>,
    /// The step opened a watch: its events are [`KubeData::events`] of the same client and step.
    pub watch: bool,
    /// A controller's attempt: its number and the resourceVersion it read from the informer's store.
    pub attempt: Option<(u32, Option<i64>)>,
}

/// One event a `kube` watch step delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeWatchEvent {
    pub client: String,
    pub step: String,
    pub at_ms: u64,
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    /// The resourceVersion as a number (0 for none, as an ERROR has).
    pub rv: i64,
    /// The event as the trace shows it (`ADDED a rv=5`, `ERROR 410`).
    pub shown: String,
}

/// One informer: what it was told, in order, and what it held at the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InformerData {
    pub client: String,
    /// The informer step's label, which is also the node its own trace lines name.
    pub step: String,
    /// The step as its record shows it (`informer configmaps`).
    pub request: String,
    pub beliefs: Vec<BeliefData>,
    /// Its store at the end of the run (name → resourceVersion), and etcd's objects then (`None`: etcd
    /// could not be read).
    pub store: BTreeMap<String, u64>,
    pub etcd: Option<BTreeMap<String, u64>>,
    /// How the store differs from etcd's objects, as `InformerMatchesEtcdAtQuiescence` words it (each name
    /// missing, extra, or at another resourceVersion).
    pub differences: Vec<String>,
    pub relists: u32,
    pub expired: u32,
    pub restarts: u32,
    /// The tombstones its relists announced (`name@rv`).
    pub tombstones: Vec<String>,
}

/// One thing an informer was told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeliefData {
    pub at_ms: u64,
    pub apiserver: String,
    /// The resourceVersion it believed it was at from then on.
    pub rv: u64,
    pub kind: BeliefKind,
    /// The belief as the trace shows it (`list rv="" from apiserver-1: 2 items at rv=7`).
    pub shown: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeliefKind {
    /// A list replaced its store (the first, or a relist).
    Listed,
    /// A watch event; a bookmark is one too, and the trace leaves it out.
    Event { bookmark: bool },
    /// Its process restarted: store and resourceVersion forgotten.
    Restarted,
}
