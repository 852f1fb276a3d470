//! `Reference`: changes known to have been committed, each with the evidence for it, against which the
//! Reliable and Resumable checkers hold each watch.
//!
//! Evidence comes from two places:
//! - successful writes: a Put is a put of its key at its header revision; a delete is a delete of each key
//!   it reports in `prev_kvs`, or of its single key when it deleted one; a txn contributes the puts and
//!   deletes of the branch it reports, at its header revision;
//! - every event any watch delivered.
//!
//! Unknown outcomes, deletes of a range without `prev_kv`, and lease revokes contribute nothing: what they
//! changed is not known. So the reference is a lower bound on the truth, which keeps the checkers free of
//! false alarms but blind to changes nobody observed.

use std::collections::BTreeMap;

use crate::checker::Culprit;
use crate::history::{
    Bytes, DeleteRangeRequest, DeleteResult, EventKind, History, OpId, Outcome, Request, ResponseBody, Revision, TxnOp,
    TxnOpResult, TxnRequest, TxnResult, WatchCreate, WatchId,
};

/// One committed change and the first evidence seen for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    pub kind: EventKind,
    pub source: Culprit,
}

#[derive(Clone, Debug, Default)]
pub struct Reference {
    facts: BTreeMap<(Revision, Bytes), Fact>,
}

impl Reference {
    pub fn from_history(history: &History) -> Reference {
        let mut reference = Reference::default();
        for (i, op) in history.ops.iter().enumerate() {
            let Outcome::Ok(response) = op.outcome() else { continue };
            let source = Culprit::Op(OpId(i));
            let at = response.header_revision;
            match (&op.request, &response.body) {
                (Request::Put(p), ResponseBody::Put(_)) => reference.add(at, &p.key, EventKind::Put, source),
                (Request::DeleteRange(d), ResponseBody::DeleteRange(r)) => reference.add_delete(at, d, r, source),
                (Request::Txn(t), ResponseBody::Txn(r)) => reference.add_txn(at, t, r, source),
                _ => {}
            }
        }
        for (w, watch) in history.watches.iter().enumerate() {
            for (response, received) in watch.responses.iter().enumerate() {
                for (event, e) in received.response.events.iter().enumerate() {
                    let source = Culprit::Event { watch: WatchId(w), response, event };
                    reference.add(e.revision(), &e.kv.key, e.kind, source);
                }
            }
        }
        reference
    }

    /// Records a change; the first evidence for a (revision, key) is kept.
    pub fn add(&mut self, revision: Revision, key: &Bytes, kind: EventKind, source: Culprit) {
        self.facts.entry((revision, key.clone())).or_insert(Fact { kind, source });
    }

    /// The known changes with revision in `[from, to]` that `watch` asked for, in (revision, key) order.
    pub fn wanted<'a>(
        &'a self,
        watch: &'a WatchCreate,
        from: Revision,
        to: Revision,
    ) -> impl Iterator<Item = (Revision, &'a Bytes, &'a Fact)> + 'a {
        let upper = (to.next(), Bytes::default());
        self.facts
            .range((from, Bytes::default())..upper)
            .filter(move |((_, key), fact)| watch.wants(fact.kind, key.as_slice()))
            .map(|((rev, key), fact)| (*rev, key, fact))
    }

    fn add_delete(&mut self, at: Revision, request: &DeleteRangeRequest, result: &DeleteResult, source: Culprit) {
        if !result.prev_kvs.is_empty() {
            for kv in &result.prev_kvs {
                self.add(at, &kv.key, EventKind::Delete, source);
            }
        } else if request.span.range_end.is_empty() && result.deleted == 1 {
            self.add(at, &request.span.key, EventKind::Delete, source);
        }
    }

    fn add_txn(&mut self, at: Revision, request: &TxnRequest, result: &TxnResult, source: Culprit) {
        let ops = if result.succeeded { &request.success } else { &request.failure };
        for (op, op_result) in ops.iter().zip(&result.responses) {
            match (op, op_result) {
                (TxnOp::Put(p), TxnOpResult::Put(_)) => self.add(at, &p.key, EventKind::Put, source),
                (TxnOp::DeleteRange(d), TxnOpResult::DeleteRange(r)) => self.add_delete(at, d, r, source),
                (TxnOp::Txn(t), TxnOpResult::Txn(r)) => self.add_txn(at, t, r, source),
                _ => {}
            }
        }
    }
}
