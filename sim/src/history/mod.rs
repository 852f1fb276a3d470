//! The history of a simulation run: what every client asked, when, and what it saw. The checkers read it;
//! nothing here judges it.
//!
//! - A KV or lease request is an [`Operation`]: its invocation and, once it ends, its return with an
//!   [`Outcome`] (a response, an error status, or `Unknown` when the client timed out or lost the
//!   connection and cannot tell whether the request took effect).
//! - A watch is a [`WatchRecord`]: its create request and every response in arrival order.
//! - An apiserver run records an [`apiserver::ApiHistory`] instead: registry requests, watches through the
//!   apiserver, and the etcd-side changes they are checked against.
//!
//! Real-time order is the order in which the recorder saw invocations and returns ([`Stamp::seq`]), not
//! simulated time: madsim does not advance its clock between two steps of one task, so a client's next
//! request is often invoked at the very nanosecond its previous one returned, and only the recording order
//! says which came first. The simulation is single-threaded, so that order is the true one.
//!
//! Everything is plain data (serde, `Vec`, `BTreeMap`) and independent of the gRPC types; `proto` converts.

pub mod apiserver;
mod bytes;
pub mod controllers;
mod kv;
mod outcome;
mod proto;
mod watch;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use bytes::Bytes;
pub use kv::{
    CompactRequest, Compare, CompareResult, CompareTarget, DeleteRangeRequest, DeleteResult, KeySpan, KeyValue,
    LeaseGrantRequest, LeaseGrantResult, LeaseRevokeRequest, PutRequest, PutResult, RangeRequest, RangeResult, Request,
    Response, ResponseBody, SortOrder, SortTarget, TxnOp, TxnOpResult, TxnRequest, TxnResult,
};
pub use outcome::{ErrorStatus, GrpcCode, Outcome};
pub use watch::{Event, EventKind, WatchCreate, WatchFilter, WatchReceived, WatchRecord, WatchResponse};

/// A store revision and a lease id as clients see them: fake-etcd's own newtypes (0 means "none" or
/// "latest" depending on the field, as on the wire).
pub use fake_etcd::types::{LeaseId, Revision};

/// A simulated client (one connection's worth of sequential requests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientId(pub u32);

impl ClientId {
    /// Not a client: the members themselves, for what they do on their own (a lease expiry is filed as a
    /// revoke by `c0`). Simulated clients are numbered from 1.
    pub const MEMBERS: ClientId = ClientId(0);
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}", self.0)
    }
}

/// An operation's index in [`History::ops`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OpId(pub usize);

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op#{}", self.0)
    }
}

/// A watch's index in [`History::watches`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WatchId(pub usize);

impl fmt::Display for WatchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "watch#{}", self.0)
    }
}

/// Simulated time in nanoseconds since the simulation started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The trace's format: seconds with millisecond precision.
        write!(f, "t={}.{:03}s", self.0 / 1_000_000_000, (self.0 / 1_000_000) % 1000)
    }
}

/// When something was recorded: its place in the recording order, and the simulated time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Stamp {
    /// Strictly increasing over the whole history; this, not `time`, orders events (see the module doc).
    pub seq: u64,
    pub time: Nanos,
}

/// One KV or lease request from invocation to return.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    pub client: ClientId,
    pub request: Request,
    pub invoked: Stamp,
    /// `None` while the client still waits; a history that ends so treats the outcome as unknown.
    pub returned: Option<Returned>,
}

impl Operation {
    /// The outcome, with a request that never returned read as unknown.
    pub fn outcome(&self) -> &Outcome {
        const PENDING: &Outcome = &Outcome::Unknown { reason: String::new() };
        self.returned.as_ref().map_or(PENDING, |r| &r.outcome)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Returned {
    pub at: Stamp,
    pub outcome: Outcome,
}

/// Everything the clients of one run did and saw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    pub ops: Vec<Operation>,
    pub watches: Vec<WatchRecord>,
    /// The next [`Stamp::seq`] to hand out.
    next_seq: u64,
}

impl History {
    pub fn new() -> History {
        History::default()
    }

    fn stamp(&mut self, time: Nanos) -> Stamp {
        let seq = self.next_seq;
        self.next_seq += 1;
        Stamp { seq, time }
    }

    /// Records that `client` sent `request` at `time`.
    pub fn invoke(&mut self, client: ClientId, request: Request, time: Nanos) -> OpId {
        let invoked = self.stamp(time);
        self.ops.push(Operation { client, request, invoked, returned: None });
        OpId(self.ops.len() - 1)
    }

    /// Records how `op` ended.
    ///
    /// Panics if `op` already returned: a request returns once, and a second return is a harness bug.
    pub fn complete(&mut self, op: OpId, time: Nanos, outcome: Outcome) {
        let at = self.stamp(time);
        let slot = &mut self.ops[op.0].returned;
        assert!(slot.is_none(), "{op} returned twice");
        *slot = Some(Returned { at, outcome });
    }

    /// Records that `client` sent a watch create request at `time`.
    pub fn open_watch(&mut self, client: ClientId, request: WatchCreate, time: Nanos) -> WatchId {
        let opened = self.stamp(time);
        self.watches.push(WatchRecord { client, request, opened, responses: Vec::new() });
        WatchId(self.watches.len() - 1)
    }

    /// Records a response that arrived for `watch` at `time`.
    pub fn watch_response(&mut self, watch: WatchId, time: Nanos, response: WatchResponse) {
        let at = self.stamp(time);
        self.watches[watch.0].responses.push(WatchReceived { at, response });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recording_order_orders_events_at_the_same_instant() {
        let mut h = History::new();
        let a = h.invoke(ClientId(1), Request::Range(RangeRequest::key("a")), Nanos(5));
        let t = Response { header_revision: Revision(1), body: ResponseBody::Range(RangeResult::default()) };
        h.complete(a, Nanos(5), Outcome::Ok(t));
        let b = h.invoke(ClientId(1), Request::Range(RangeRequest::key("a")), Nanos(5));
        let ret = h.ops[a.0].returned.as_ref().unwrap().at;
        assert!(ret.seq < h.ops[b.0].invoked.seq);
        assert_eq!(ret.time, h.ops[b.0].invoked.time);
        assert!(matches!(h.ops[b.0].outcome(), Outcome::Unknown { .. }));
    }

    #[test]
    fn history_serializes_to_readable_json() {
        let mut h = History::new();
        let op = h.invoke(ClientId(2), Request::Put(PutRequest::new("/a", "1")), Nanos(1_500_000_000));
        h.complete(op, Nanos(1_600_000_000), Outcome::Unknown { reason: "timeout".into() });
        let json = serde_json::to_string(&h).unwrap();
        assert!(json.contains(r#""key":"/a""#), "{json}");
        let back: History = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
    }
}
