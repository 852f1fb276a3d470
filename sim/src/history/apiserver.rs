//! The history of an apiserver run ([`ApiHistory`]): what clients asked the apiserver's registry and what it
//! answered, every watch they opened with every event it delivered, and the etcd-side record of every change
//! under the registry prefix that the checkers compare them with. Plain data; nothing here judges it.
//!
//! Real-time order is the recorder's sequence ([`ApiOp::invoked`], [`ApiOp::returned`]), as for the KV
//! history: madsim often invokes the next request at the nanosecond the previous one returned. The
//! simulated times beside it (`*_at`) are for the run's report only; no checker reads them.
//! ResourceVersions are etcd revisions (`u64`); keys are full etcd keys (`/registry/configmaps/ns/name`).

use std::collections::BTreeMap;
use std::fmt;

use super::Nanos;

/// One change to a key under the registry prefix, as etcd recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub rev: u64,
    pub key: String,
    pub kind: ChangeKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Put,
    Delete,
}

/// What a client asked. Reads here are all consistent (resourceVersion unset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiCall {
    Create {
        key: String,
    },
    /// An update with the body's resourceVersion as optimistic lock (`None`: unconditional).
    Update {
        key: String,
        rv: Option<u64>,
    },
    /// A delete, with a resourceVersion precondition if `rv` is set.
    Delete {
        key: String,
        rv: Option<u64>,
    },
    Get {
        key: String,
    },
    /// A list of every key under `prefix` (ending in '/').
    List {
        prefix: String,
    },
}

impl ApiCall {
    pub fn is_write(&self) -> bool {
        matches!(self, ApiCall::Create { .. } | ApiCall::Update { .. } | ApiCall::Delete { .. })
    }

    /// The key a write or get names.
    pub fn key(&self) -> Option<&str> {
        match self {
            ApiCall::Create { key }
            | ApiCall::Update { key, .. }
            | ApiCall::Delete { key, .. }
            | ApiCall::Get { key } => Some(key),
            ApiCall::List { .. } => None,
        }
    }
}

/// A refusal whose cause is the stored state, not the availability of the system: the same request on the
/// same state gets it every time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    AlreadyExists,
    NotFound,
    /// A stale resourceVersion or a failed precondition (409).
    Conflict,
    Invalid,
}

/// What the apiserver answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiOutcome {
    /// A create or update took effect at `rv`; `data` is the object's `data.v`.
    Written {
        rv: u64,
        data: String,
    },
    /// A delete took effect at `rv`.
    Deleted {
        rv: u64,
    },
    /// A get found the object, last modified at `rv`.
    Found {
        rv: u64,
        data: String,
    },
    /// A list at `rv` with these keys and their modification revisions.
    Listed {
        rv: u64,
        items: BTreeMap<String, u64>,
    },
    Refused(Refusal),
    /// An error that says nothing about the state (unreachable etcd, a cache not ready, a timeout inside the
    /// apiserver): a write may or may not have taken effect.
    Unavailable(String),
    /// No answer within the client's timeout: a write may or may not have taken effect.
    Unknown,
}

impl ApiOutcome {
    /// Whether a write with this outcome may or may not have taken effect.
    pub fn is_ambiguous(&self) -> bool {
        matches!(self, ApiOutcome::Unavailable(_) | ApiOutcome::Unknown)
    }
}

/// One request from invocation to return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiOp {
    pub client: String,
    pub invoked: u64,
    pub returned: u64,
    /// When it was sent and when it returned, in simulated time.
    pub invoked_at: Nanos,
    pub returned_at: Nanos,
    pub call: ApiCall,
    pub outcome: ApiOutcome,
}

/// One event a watch delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchedEvent {
    pub kind: WatchedKind,
    pub key: String,
    pub rv: u64,
    /// When the client read it, in simulated time.
    pub at: Nanos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchedKind {
    Added,
    Modified,
    Deleted,
}

/// How a watch ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEnd {
    /// 410 Expired (Gone): the resourceVersion is too old, at the start or later.
    Expired,
    /// Refused or failed for another reason (the text of its status).
    Failed(String),
    /// The stream closed without an error (a cache relist ends every watcher).
    Closed,
    /// The client stopped reading.
    Stopped,
}

/// One watch: its prefix, its starting resourceVersion, what it delivered in order, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiWatch {
    pub client: String,
    pub prefix: String,
    pub from: u64,
    pub events: Vec<WatchedEvent>,
    pub end: WatchEnd,
    /// When the client asked for it and when it ended, in simulated time.
    pub opened_at: Nanos,
    pub ended_at: Nanos,
}

/// Everything an apiserver run recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiHistory {
    pub ops: Vec<ApiOp>,
    pub watches: Vec<ApiWatch>,
    /// Every change under the registry prefix, in revision order, from revision 1 on.
    pub changes: Vec<Change>,
    /// The last revision `changes` is complete up to.
    pub changes_through: u64,
}

impl fmt::Display for ApiCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rv = |rv: &Option<u64>| rv.map_or(String::new(), |rv| format!(" rv={rv}"));
        match self {
            ApiCall::Create { key } => write!(f, "create {key}"),
            ApiCall::Update { key, rv: r } => write!(f, "update {key}{}", rv(r)),
            ApiCall::Delete { key, rv: r } => write!(f, "delete {key}{}", rv(r)),
            ApiCall::Get { key } => write!(f, "get {key}"),
            ApiCall::List { prefix } => write!(f, "list {prefix}"),
        }
    }
}

impl fmt::Display for ApiOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiOutcome::Written { rv, data } => write!(f, "ok rv={rv} v={data}"),
            ApiOutcome::Deleted { rv } => write!(f, "deleted rv={rv}"),
            ApiOutcome::Found { rv, data } => write!(f, "found rv={rv} v={data}"),
            ApiOutcome::Listed { rv, items } => write!(f, "listed rv={rv} items={}", items.len()),
            ApiOutcome::Refused(r) => write!(f, "refused {r:?}"),
            ApiOutcome::Unavailable(why) => write!(f, "unavailable: {why}"),
            ApiOutcome::Unknown => f.write_str("no answer"),
        }
    }
}
