//! Whether what the model predicts agrees with what a client observed, and short descriptions of both for
//! failure messages.
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

/// A one-line description of a request, for messages.
pub(crate) fn describe_request(request: &Request) -> String {
    match request {
        Request::Range(r) => {
            let mut s = format!("get {}", describe_span(&r.span.key, &r.span.range_end));
            if r.revision.0 > 0 {
                s += &format!(" @{}", r.revision);
            }
            if r.limit > 0 {
                s += &format!(" limit={}", r.limit);
            }
            if r.serializable {
                s += " serializable";
            }
            s
        }
        Request::Put(p) if p.lease.is_none() => format!("put {}={}", p.key, p.value),
        Request::Put(p) => format!("put {}={} lease={}", p.key, p.value, p.lease),
        Request::DeleteRange(d) => format!("del {}", describe_span(&d.span.key, &d.span.range_end)),
        Request::Txn(t) => format!(
            "txn({} compares, {} success ops, {} failure ops)",
            t.compare.len(),
            t.success.len(),
            t.failure.len()
        ),
        Request::Compact(c) => format!("compact {}", c.revision),
        Request::LeaseGrant(g) => format!("lease-grant id={} ttl={}s", g.id, g.ttl_s),
        Request::LeaseRevoke(r) => format!("lease-revoke {}", r.id),
    }
}

fn describe_span(key: &crate::history::Bytes, range_end: &crate::history::Bytes) -> String {
    if range_end.is_empty() {
        key.to_string()
    } else {
        format!("[{key}, {range_end})")
    }
}

/// A short description of a response, for messages.
pub(crate) fn describe_response(response: &Response) -> String {
    format!("rev={} {}", response.header_revision, describe_body(&response.body))
}

fn describe_body(body: &ResponseBody) -> String {
    match body {
        ResponseBody::Range(r) => describe_range(r),
        ResponseBody::Put(p) => describe_prev(&p.prev_kv),
        ResponseBody::DeleteRange(d) => format!("deleted={}", d.deleted),
        ResponseBody::Txn(t) => describe_txn(t),
        ResponseBody::Compact => "compacted".to_string(),
        ResponseBody::LeaseGrant(g) => format!("lease={}", g.id),
        ResponseBody::LeaseRevoke => "revoked".to_string(),
    }
}

fn describe_range(r: &RangeResult) -> String {
    let kvs: Vec<String> = r.kvs.iter().map(describe_kv).collect();
    format!("kvs=[{}] count={}{}", kvs.join(", "), r.count, if r.more { " more" } else { "" })
}

fn describe_prev(prev: &Option<KeyValue>) -> String {
    prev.as_ref().map_or_else(|| "ok".to_string(), |kv| format!("prev={}", describe_kv(kv)))
}

fn describe_txn(t: &TxnResult) -> String {
    let ops: Vec<String> = t
        .responses
        .iter()
        .map(|r| match r {
            TxnOpResult::Range(r) => describe_range(r),
            TxnOpResult::Put(p) => describe_prev(&p.prev_kv),
            TxnOpResult::DeleteRange(d) => format!("deleted={}", d.deleted),
            TxnOpResult::Txn(t) => describe_txn(t),
        })
        .collect();
    format!("{} [{}]", if t.succeeded { "succeeded" } else { "failed" }, ops.join("; "))
}

/// `key=value (create c, mod m, version v)`, the facts a reader needs to place the kv in the history.
pub(crate) fn describe_kv(kv: &KeyValue) -> String {
    format!("{}={} (create {}, mod {}, v{})", kv.key, kv.value, kv.create_revision, kv.mod_revision, kv.version)
}
