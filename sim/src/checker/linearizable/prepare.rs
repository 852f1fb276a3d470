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

use fake_etcd::EtcdError;

use crate::history::{
    ErrorStatus, History, OpId, Outcome, Request, Response, ResponseBody, Revision, TxnOpResult, TxnResult,
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
    let mut entries: Vec<Entry<'_>> = history
        .ops
        .iter()
        .enumerate()
        .filter_map(|(i, op)| {
            let serializable = matches!(&op.request, Request::Range(r) if r.serializable);
            let expect = match op.outcome() {
                Outcome::Ok(response) if serializable => Expect::StaleRead(response),
                Outcome::Ok(response) => Expect::Response(response),
                Outcome::Err(status) if !serializable && is_predictable(status) => Expect::Error(status),
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

/// Whether the model can produce this error: etcd's errors that depend only on the request and the state.
/// Availability errors (no leader, timeouts) and anything unfamiliar leave the outcome unknown.
fn is_predictable(status: &ErrorStatus) -> bool {
    const PREDICTABLE: [EtcdError; 11] = [
        EtcdError::EmptyKey,
        EtcdError::KeyNotFound,
        EtcdError::ValueProvided,
        EtcdError::LeaseProvided,
        EtcdError::TooManyOps,
        EtcdError::DuplicateKey,
        EtcdError::Compacted,
        EtcdError::FutureRev,
        EtcdError::LeaseNotFound,
        EtcdError::LeaseExist,
        EtcdError::LeaseTtlTooLarge,
    ];
    PREDICTABLE.iter().any(|e| e.to_string() == status.message)
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
