//! Whether what the model predicts agrees with what a client observed.
//!
//! Agreement is equality of every observed field, with two allowances for what etcd leaves unspecified:
//! a granted lease's TTL (the server may raise it to its minimum, which depends on its election timeout),
//! and the order of kvs that tie on a non-key sort target (Go's sort is not stable).

use crate::checker::model::{compare_by, Refusal};
use crate::history::{
    ErrorStatus, KeyValue, RangeRequest, RangeResult, Request, Response, ResponseBody, SortOrder, SortTarget, TxnOp,
    TxnOpResult, TxnRequest, TxnResult,
};

pub(super) fn responses_agree(request: &Request, predicted: &Response, observed: &Response) -> bool {
    if predicted.header_revision != observed.header_revision {
        return false;
    }
    match (request, &predicted.body, &observed.body) {
        (Request::Range(r), ResponseBody::Range(p), ResponseBody::Range(o)) => ranges_agree(r, p, o),
        (Request::Txn(t), ResponseBody::Txn(p), ResponseBody::Txn(o)) => txns_agree(t, p, o),
        (_, ResponseBody::LeaseGrant(p), ResponseBody::LeaseGrant(o)) => p.id == o.id,
        (_, p, o) => p == o,
    }
}

pub(super) fn errors_agree(predicted: Refusal, observed: &ErrorStatus) -> bool {
    predicted.status() == *observed
}

/// A serializable read agrees with the state it claims to have read (the same allowances as a Range).
pub(super) fn stale_read_agrees(request: &RangeRequest, predicted: &RangeResult, observed: &RangeResult) -> bool {
    ranges_agree(request, predicted, observed)
}

fn ranges_agree(request: &RangeRequest, predicted: &RangeResult, observed: &RangeResult) -> bool {
    if predicted == observed {
        return true;
    }
    let sorts_by_value = request.sort_target != SortTarget::Key;
    if !sorts_by_value || predicted.count != observed.count || predicted.more != observed.more {
        return false;
    }
    let mut observed_kvs = observed.kvs.clone();
    sort_ties_by_key(&mut observed_kvs, request.sort_order, request.sort_target);
    observed_kvs == predicted.kvs
}

/// Puts kvs that tie on the sort target back in key order, which is the model's order for ties.
fn sort_ties_by_key(kvs: &mut [KeyValue], order: SortOrder, target: SortTarget) {
    kvs.sort_by(|a, b| {
        let by_target = compare_by(a, b, target);
        let by_target = if order == SortOrder::Descend { by_target.reverse() } else { by_target };
        by_target.then_with(|| a.key.cmp(&b.key))
    });
}

fn txns_agree(request: &TxnRequest, predicted: &TxnResult, observed: &TxnResult) -> bool {
    if predicted.succeeded != observed.succeeded || predicted.responses.len() != observed.responses.len() {
        return false;
    }
    let ops = if predicted.succeeded { &request.success } else { &request.failure };
    ops.iter().zip(predicted.responses.iter().zip(&observed.responses)).all(|(op, (p, o))| match (op, p, o) {
        (TxnOp::Range(r), TxnOpResult::Range(p), TxnOpResult::Range(o)) => ranges_agree(r, p, o),
        (TxnOp::Txn(t), TxnOpResult::Txn(p), TxnOpResult::Txn(o)) => txns_agree(t, p, o),
        (_, p, o) => p == o,
    })
}
