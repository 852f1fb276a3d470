//! Turns the history's operations into search entries: what each one must show, and when it may happen.
//!
//! - A response or an error the model can predict (etcd's deterministic errors: compacted, future
//!   revision, lease not found, ...) must be reproduced exactly where the op is linearized.
//! - A serializable Range is a stale read: it must equal the state at its own header revision, which must
//!   be committed by the time it is linearized, but that revision may lag behind the store's.
//! - Anything else (no answer, a timeout, an unavailable member, an error the model does not know) is an
//!   unknown outcome: the op may take effect at any point after its invocation, or never. Unknown reads
//!   are dropped (they cannot change anything), and so is an unknown `LeaseGrant` that left the id to the
//!   server: nobody can have learned its id, so nothing observable depends on it.
//! - A request that never left the client (`Outcome::NotSent`) is dropped: it did nothing.
//! - So is the members' revoke of an expired lease (`ClientId::MEMBERS`) that no response ever named: its
//!   grant is one of the dropped unknown grants, so no key can be attached to it and its revoke changes
//!   nothing anyone can observe.

use std::collections::BTreeSet;

use crate::checker::model::Refusal;
use crate::history::{
    ClientId, ErrorStatus, History, LeaseId, OpId, Outcome, Request, Response, ResponseBody, Revision, TxnOpResult,
    TxnResult,
};

/// What an entry must show when the search linearizes it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Expect<'h> {
    Response(&'h Response),
    Error(&'h ErrorStatus),
    StaleRead(&'h Response),
    /// An unknown outcome: nothing to check, and the op may also never happen.
    Anything,
}

#[derive(Debug)]
pub(super) struct Entry<'h> {
    pub op: OpId,
    pub request: &'h Request,
    pub expect: Expect<'h>,
    pub invoked: u64,
    /// `None` for an unknown outcome, which then constrains no other op's place.
    pub returned: Option<u64>,
    /// For an op with a response header: the store revisions at which it can take effect (inclusive).
    /// The header revision is the revision after the op, so a write must start one below it.
    pub before: Option<(Revision, Revision)>,
}

impl Entry<'_> {
    /// Whether the search must linearize this entry (it has a definite outcome).
    pub fn is_definite(&self) -> bool {
        !matches!(self.expect, Expect::Anything)
    }
}

/// The entries of `history`, in invocation order.
pub(super) fn entries(history: &History) -> Vec<Entry<'_>> {
    let named = named_leases(history);
    let mut entries: Vec<Entry<'_>> = history
        .ops
        .iter()
        .enumerate()
        .filter_map(|(i, op)| {
            if op.client == ClientId::MEMBERS
                && matches!(&op.request, Request::LeaseRevoke(r) if !named.contains(&r.id))
            {
                return None;
            }
            let serializable = matches!(&op.request, Request::Range(r) if r.serializable);
            let expect = match op.outcome() {
                // A request that never left the client did nothing.
                Outcome::NotSent { .. } => return None,
                Outcome::Ok(response) if serializable => Expect::StaleRead(response),
                Outcome::Ok(response) => Expect::Response(response),
                Outcome::Err(status) if !serializable && Refusal::of(status).is_some() => Expect::Error(status),
                _ if op.request.is_read_only() => return None,
                _ if matches!(&op.request, Request::LeaseGrant(g) if g.id.is_none()) => return None,
                _ => Expect::Anything,
            };
            let before = match expect {
                Expect::Response(response) => Some(revisions_before(&op.request, response)),
                _ => None,
            };
            let returned = match expect {
                Expect::Anything => None,
                _ => op.returned.as_ref().map(|r| r.at.seq),
            };
            Some(Entry { op: OpId(i), request: &op.request, expect, invoked: op.invoked.seq, returned, before })
        })
        .collect();
    entries.sort_by_key(|e| e.invoked);
    entries
}

/// The store revisions the op can start from, judging by its response: `h - 1` if it certainly wrote,
/// `h` if it certainly did not, either if the response cannot tell (a lease revoke may delete keys or not).
fn revisions_before(request: &Request, response: &Response) -> (Revision, Revision) {
    let h = response.header_revision;
    let wrote = match (request, &response.body) {
        (Request::Put(_), ResponseBody::Put(_)) => Some(true),
        (Request::DeleteRange(_), ResponseBody::DeleteRange(d)) => Some(d.deleted > 0),
        (Request::Txn(_), ResponseBody::Txn(t)) => Some(txn_wrote(t)),
        (Request::Range(_), ResponseBody::Range(_))
        | (Request::Compact(_), ResponseBody::Compact)
        | (Request::LeaseGrant(_), ResponseBody::LeaseGrant(_)) => Some(false),
        _ => None,
    };
    match wrote {
        Some(true) => (h.prev(), h.prev()),
        Some(false) => (h, h),
        None => (h.prev(), h),
    }
}

fn txn_wrote(t: &TxnResult) -> bool {
    t.responses.iter().any(|r| match r {
        TxnOpResult::Put(_) => true,
        TxnOpResult::DeleteRange(d) => d.deleted > 0,
        TxnOpResult::Txn(inner) => txn_wrote(inner),
        TxnOpResult::Range(_) => false,
    })
}

/// The lease ids some grant named: chosen by the client, or shown in a grant's response.
fn named_leases(history: &History) -> BTreeSet<LeaseId> {
    let mut named = BTreeSet::new();
    for op in &history.ops {
        if let Request::LeaseGrant(g) = &op.request {
            if !g.id.is_none() {
                named.insert(g.id);
            }
        }
        if let Outcome::Ok(Response { body: ResponseBody::LeaseGrant(g), .. }) = op.outcome() {
            named.insert(g.id);
        }
    }
    named
}
