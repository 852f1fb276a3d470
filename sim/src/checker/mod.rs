//! The checkers: one per guarantee etcd makes to its clients, each named after it, each reading a
//! [`History`] and returning a [`Verdict`]. Pure: no IO, no clock, no randomness.
//!
//! - [`linearizable`]: the KV history against [`model::KvModel`], etcd's KV semantics;
//! - [`watch`]: Ordered, Unique, Atomic, Reliable, Resumable and Bookmarkable, per watch;
//! - [`apiserver`]: the apiserver's guarantees (watch from a resourceVersion, consistent reads, cache parity)
//!   over an apiserver run's own history.
//! - [`controllers`]: the controller managers' guarantee (one manager acts at a time) over their log.
//! - [`garbage_collector`]: the garbage collector deletes only objects whose owners are gone.
//! - [`replicas`]: the workload controllers' pods (and Services' EndpointSlices) as specified at quiescence.
//! - [`namespace`]: the namespace controller's guarantee (deleted namespaces go, and nothing of them stays).
//!
//! A failing verdict quotes the guarantee it found broken (in our words, after etcd's API guarantees) and
//! names the operations or watch events that broke it. `Unknown` means a checker gave up within its budget;
//! it is neither a pass nor a failure.

pub mod apiserver;
pub mod controllers;
pub mod garbage_collector;
pub mod linearizable;
pub mod model;
pub mod namespace;
pub mod replicas;
pub mod watch;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::history::{History, OpId, WatchId};

/// The guarantees the checkers check, in the order they are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Guarantee {
    Linearizable,
    Ordered,
    Unique,
    Atomic,
    Reliable,
    Resumable,
    Bookmarkable,
}

impl Guarantee {
    pub const ALL: [Guarantee; 7] = [
        Guarantee::Linearizable,
        Guarantee::Ordered,
        Guarantee::Unique,
        Guarantee::Atomic,
        Guarantee::Reliable,
        Guarantee::Resumable,
        Guarantee::Bookmarkable,
    ];

    /// The guarantee as the checkers understand it, after etcd's API guarantees.
    pub fn statement(self) -> &'static str {
        match self {
            Guarantee::Linearizable => {
                "every KV request takes effect at one instant between its invocation and its response, in an \
                 order that respects real time, and each response is what etcd's KV semantics give at that \
                 instant"
            }
            Guarantee::Ordered => {
                "a watch delivers events in revision order; it never delivers an event whose revision is lower \
                 than that of an event it already delivered"
            }
            Guarantee::Unique => "a watch never delivers the same event (same revision, same key) twice",
            Guarantee::Atomic => {
                "a watch delivers a revision whole: the events of one revision are never spread over several \
                 responses, unless the client asked for fragments"
            }
            Guarantee::Reliable => {
                "a watch never skips an event: from the first revision it reports to the last revision it \
                 vouches for, every change to a key it watches is delivered"
            }
            Guarantee::Resumable => {
                "a watch started at revision R delivers the changes from R on, beginning with the first one at \
                 or after R, unless R has been compacted, and then it is canceled with a compact revision \
                 above R"
            }
            Guarantee::Bookmarkable => {
                "a progress notification at revision P promises that every later event on the watch has a \
                 revision above P"
            }
        }
    }
}

impl fmt::Display for Guarantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// What a checker concluded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    Pass,
    Fail(Violation),
    /// The checker ran out of its search budget before it could decide.
    Unknown {
        reason: String,
    },
    /// The history held nothing the checker judges (no etcd operations, no watches): neither a pass nor a
    /// failure, and said so rather than printed as a pass.
    Skipped {
        reason: String,
    },
}

impl Verdict {
    pub fn is_pass(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    pub fn is_fail(&self) -> bool {
        matches!(self, Verdict::Fail(_))
    }

    pub fn is_skipped(&self) -> bool {
        matches!(self, Verdict::Skipped { .. })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Pass => f.write_str("pass"),
            Verdict::Fail(v) => write!(f, "FAIL {v}"),
            Verdict::Unknown { reason } => write!(f, "unknown: {reason}"),
            Verdict::Skipped { reason } => write!(f, "skipped: {reason}"),
        }
    }
}

/// A broken guarantee, with the evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub guarantee: Guarantee,
    /// What was seen, in terms of the culprits.
    pub details: String,
    pub culprits: Vec<Culprit>,
}

impl Violation {
    pub(crate) fn new(guarantee: Guarantee, details: String, culprits: Vec<Culprit>) -> Violation {
        Violation { guarantee, details, culprits }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broke {} (\"{}\"): {}", self.guarantee, self.guarantee.statement(), self.details)
    }
}

/// Where the evidence of a violation is in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Culprit {
    Op(OpId),
    /// A watch response, by its index in [`crate::history::WatchRecord::responses`].
    Response {
        watch: WatchId,
        response: usize,
    },
    /// One event of a watch response.
    Event {
        watch: WatchId,
        response: usize,
        event: usize,
    },
}

impl fmt::Display for Culprit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Culprit::Op(op) => write!(f, "{op}"),
            Culprit::Response { watch, response } => write!(f, "{watch} response {response}"),
            Culprit::Event { watch, response, event } => write!(f, "{watch} response {response} event {event}"),
        }
    }
}

/// Every checker's verdict on one history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub verdicts: BTreeMap<Guarantee, Verdict>,
}

impl Report {
    /// Whether no checker failed or gave up: each passed, or had nothing to judge.
    pub fn all_pass(&self) -> bool {
        self.verdicts.values().all(|v| v.is_pass() || v.is_skipped())
    }
}

/// Runs every checker on `history`. A checker with nothing to judge says so: `Linearizable` without a KV
/// operation, the watch guarantees without a watch, are skipped rather than passed.
pub fn check_all(history: &History, options: &linearizable::Options) -> Report {
    let mut verdicts = BTreeMap::new();
    let linearizable = if history.ops.is_empty() {
        Verdict::Skipped { reason: "no etcd operations".into() }
    } else {
        linearizable::check(history, options).verdict
    };
    verdicts.insert(Guarantee::Linearizable, linearizable);
    for (guarantee, verdict) in watch::check_all(history) {
        let verdict =
            if history.watches.is_empty() { Verdict::Skipped { reason: "no etcd watches".into() } } else { verdict };
        verdicts.insert(guarantee, verdict);
    }
    Report { verdicts }
}
