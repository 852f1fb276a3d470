//! The one way to describe what clients asked and saw: requests, outcomes, key-values, watches and their
//! events, as short, stable text. The trace, every checker's verdict, the scenario report and its
//! snapshots all write through this module, so an operation reads the same wherever it appears.
//!
//! - Bytes ([`text`]): as text when every byte is printable ASCII, else `0x` and hex.
//! - Spans ([`span`]): `/a` (one key), `/a*` (a prefix), `/a..` (every key from `/a` on), `/a../b` (a range).
//! - Requests ([`request`]): `get /a* limit=10 rev=5`, `put /a=1 lease=7`, `del /a`, `compact rev=5`,
//!   `txn [mod(/a)==5] ? put /a=2 : get /a`, `lease-grant ttl=5s`, `lease-revoke 7`, `lease-keepalive 7`,
//!   `lease-ttl 7 keys`, `lease-leases`.
//! - Outcomes ([`outcome`]): `ok rev=17`, `ok rev=3 kvs=1 count=1`, `ok rev=4 then [got 1,put]`,
//!   `err OutOfRange "etcdserver: mvcc: required revision has been compacted"`, `unknown (why)`,
//!   `not sent (why)`.
//! - Key-values ([`kv`]): `/a=1 create=2 mod=3 ver=2`.
//! - Watches ([`watch`], [`watch_request`]) and their events ([`event`]): `watch#2 (c1, /a* from rev=5)`,
//!   `put /a rev=3`, `delete /a rev=4`, `canceled compact_revision=3 reason=""`.
//! - Kubernetes requests and answers ([`KubeRequest`], [`KubeAnswer`], [`kube_event`]): `create configmaps
//!   default/a`, `list configmaps default limit=2`, `201 rv=12`, `409 Conflict`, `ADDED a rv=5`.
//!
//! Each has a short form, the one the trace writes, and some a full form ([`outcome_in_full`],
//! [`event_in_full`]) for readers that must compare two answers: it adds what the short form leaves out
//! (the key-values a response carried; an event's value and revisions).
//!
//! Everything is a `Display` that writes straight into its destination: a run writes thousands of trace
//! lines, and building each part as its own `String` first was a visible share of a run's cost. A scenario
//! shows requests whose numbers are still names (`rev_of(create)`); the grammar's pieces ([`Range`],
//! [`write_put`], [`write_compare`], [`write_txn`], [`WatchTarget`] and the other `write_` functions) take any displayable value for that.

mod kube;
mod outcome;
mod request;
mod text;
mod watch;

use std::fmt::{self, Display, Formatter};

pub use kube::{kube_event, KubeAnswer, KubeRequest};
pub use outcome::{error, outcome, outcome_in_full, response_in_full, DescribeOutcome};
pub use request::{
    compare_op, request, write_compact, write_compare, write_del, write_lease_grant, write_lease_keep_alive,
    write_lease_revoke, write_lease_time_to_live, write_nested, write_put, write_txn, DescribeRequest, Range,
    LEASE_LEASES,
};
pub use text::{kv, span, text, Kv, Span, Text};
pub use watch::{cancel, change, event, event_in_full, watch, watch_request, DescribeEvent, WatchTarget};

/// A `Display` made of a closure, for a description put together from the pieces above.
pub struct FromFn<F>(pub F);

impl<F: Fn(&mut Formatter<'_>) -> fmt::Result> Display for FromFn<F> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

#[cfg(test)]
mod tests;
