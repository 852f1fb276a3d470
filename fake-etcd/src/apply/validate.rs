//! Checks etcd makes before a request enters Raft (`v3rpc/key.go`): they reject a request without
//! consuming a revision or a log entry.

use std::collections::BTreeSet;

use etcd_proto::etcdserverpb::{request_op, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest};

use crate::error::EtcdError;

/// etcd's default `--max-txn-ops`.
pub const DEFAULT_MAX_TXN_OPS: usize = 128;

/// The deepest txn nesting fake-etcd accepts (1 = a txn with no txn inside): a txn this deep still decodes
/// from its log entry, because prost refuses messages nested more than 100 levels and every nested txn
/// costs two (its `RequestOp` and its `TxnRequest`). etcd 3.4 (gogoproto) has no such limit. Over gRPC a
/// deeper txn already fails to decode as a request (tonic's error); a request made in-process could get
/// past that, commit, and then stop every member at apply, so the limit is checked before Raft.
pub(crate) const MAX_TXN_DEPTH: usize = 50;

pub fn check_range(req: &RangeRequest) -> Result<(), EtcdError> {
    non_empty(&req.key)
}

pub fn check_put(req: &PutRequest) -> Result<(), EtcdError> {
    non_empty(&req.key)?;
    if req.ignore_value && !req.value.is_empty() {
        return Err(EtcdError::ValueProvided);
    }
    if req.ignore_lease && req.lease != 0 {
        return Err(EtcdError::LeaseProvided);
    }
    Ok(())
}

pub fn check_delete_range(req: &DeleteRangeRequest) -> Result<(), EtcdError> {
    non_empty(&req.key)
}

/// Too many ops, empty keys, and the duplicate-key rule (`checkIntervals`), recursively.
///
/// As in etcd, the op-count and key checks of the whole tree come first, then the interval rules of the
/// success branch, then of the failure branch.
pub fn check_txn(req: &TxnRequest, max_txn_ops: usize) -> Result<(), EtcdError> {
    check_txn_shape(req, max_txn_ops, 1)?;
    check_intervals(&req.success)?;
    check_intervals(&req.failure)?;
    Ok(())
}

fn non_empty(key: &[u8]) -> Result<(), EtcdError> {
    if key.is_empty() {
        return Err(EtcdError::EmptyKey);
    }
    Ok(())
}

/// etcd's `checkTxnRequest`: the widest of compare/success/failure must fit `max_txn_ops`, and a nested txn
/// gets only what that width leaves over (`maxTxnOps - opc`).
/// `depth` is this txn's nesting depth, 1 for the request itself.
fn check_txn_shape(req: &TxnRequest, max_txn_ops: usize, depth: usize) -> Result<(), EtcdError> {
    if depth > MAX_TXN_DEPTH {
        return Err(EtcdError::TxnTooDeep { max_depth: MAX_TXN_DEPTH });
    }
    let n_ops_widest = req.compare.len().max(req.success.len()).max(req.failure.len());
    if n_ops_widest > max_txn_ops {
        return Err(EtcdError::TooManyOps);
    }
    for compare in &req.compare {
        non_empty(&compare.key)?;
    }
    let n_ops_left = max_txn_ops - n_ops_widest;
    for op in req.success.iter().chain(&req.failure) {
        check_op(op, n_ops_left, depth)?;
    }
    Ok(())
}

fn check_op(op: &RequestOp, max_txn_ops: usize, depth: usize) -> Result<(), EtcdError> {
    match &op.request {
        Some(request_op::Request::RequestRange(r)) => check_range(r),
        Some(request_op::Request::RequestPut(r)) => check_put(r),
        Some(request_op::Request::RequestDeleteRange(r)) => check_delete_range(r),
        Some(request_op::Request::RequestTxn(r)) => check_txn_shape(r, max_txn_ops, depth + 1),
        // etcd answers an empty op with "key not found".
        None => Err(EtcdError::KeyNotFound),
    }
}

/// A delete's key interval as etcd's `checkIntervals` builds it: `[key, range_end)` compared bytewise, with no
/// special meaning for `range_end = "\0"` (so a `--from-key` delete covers no put), or the single key.
#[derive(Clone, Debug)]
enum DeleteSpan {
    Key(Vec<u8>),
    Span(Vec<u8>, Vec<u8>),
}

impl DeleteSpan {
    fn of(req: &DeleteRangeRequest) -> DeleteSpan {
        if req.range_end.is_empty() {
            DeleteSpan::Key(req.key.clone())
        } else {
            DeleteSpan::Span(req.key.clone(), req.range_end.clone())
        }
    }

    fn covers(&self, key: &[u8]) -> bool {
        match self {
            DeleteSpan::Key(k) => k.as_slice() == key,
            DeleteSpan::Span(start, end) => start.as_slice() <= key && key < end.as_slice(),
        }
    }
}

fn covered(dels: &[DeleteSpan], key: &[u8]) -> bool {
    dels.iter().any(|d| d.covers(key))
}

/// etcd's `checkIntervals` for one list of ops: returns the keys put and the deletes made at this level or
/// below. The rules, in etcd's order (which makes them order-sensitive across sibling nested txns):
/// 1. collect this level's deletes;
/// 2. for each nested txn in order: its then-puts must be new and not covered by the deletes collected so
///    far; its else-puts likewise, except that a key the same txn's then-branch also puts is fine (only one
///    branch runs); then its deletes join the collected ones;
/// 3. this level's puts must be new and not covered by any collected delete.
///
/// Overlapping deletes are always allowed.
fn check_intervals(ops: &[RequestOp]) -> Result<(BTreeSet<Vec<u8>>, Vec<DeleteSpan>), EtcdError> {
    let mut dels: Vec<DeleteSpan> = ops
        .iter()
        .filter_map(|op| match &op.request {
            Some(request_op::Request::RequestDeleteRange(d)) => Some(DeleteSpan::of(d)),
            _ => None,
        })
        .collect();

    let mut puts = BTreeSet::new();
    for op in ops {
        let Some(request_op::Request::RequestTxn(nested)) = &op.request else { continue };
        let (puts_then, dels_then) = check_intervals(&nested.success)?;
        let (puts_else, dels_else) = check_intervals(&nested.failure)?;
        for key in &puts_then {
            if puts.contains(key) || covered(&dels, key) {
                return Err(EtcdError::DuplicateKey);
            }
            puts.insert(key.clone());
        }
        for key in &puts_else {
            if (puts.contains(key) && !puts_then.contains(key)) || covered(&dels, key) {
                return Err(EtcdError::DuplicateKey);
            }
            puts.insert(key.clone());
        }
        dels.extend(dels_then);
        dels.extend(dels_else);
    }

    for op in ops {
        let Some(request_op::Request::RequestPut(put)) = &op.request else { continue };
        if puts.contains(&put.key) || covered(&dels, &put.key) {
            return Err(EtcdError::DuplicateKey);
        }
        puts.insert(put.key.clone());
    }
    Ok((puts, dels))
}

#[cfg(test)]
mod tests {
    use etcd_proto::etcdserverpb::Compare;

    use super::*;

    fn put(k: &str) -> RequestOp {
        let req = PutRequest { key: k.as_bytes().to_vec(), value: b"v".to_vec(), ..PutRequest::default() };
        RequestOp { request: Some(request_op::Request::RequestPut(req)) }
    }

    fn del(k: &str, end: &str) -> RequestOp {
        let req = DeleteRangeRequest { key: k.as_bytes().to_vec(), range_end: end.as_bytes().to_vec(), prev_kv: false };
        RequestOp { request: Some(request_op::Request::RequestDeleteRange(req)) }
    }

    fn get(k: &str) -> RequestOp {
        let req = RangeRequest { key: k.as_bytes().to_vec(), ..RangeRequest::default() };
        RequestOp { request: Some(request_op::Request::RequestRange(req)) }
    }

    fn txn(success: Vec<RequestOp>, failure: Vec<RequestOp>) -> TxnRequest {
        TxnRequest { compare: vec![], success, failure }
    }

    fn nested(success: Vec<RequestOp>, failure: Vec<RequestOp>) -> RequestOp {
        RequestOp { request: Some(request_op::Request::RequestTxn(txn(success, failure))) }
    }

    fn compare(k: &str) -> Compare {
        Compare { key: k.as_bytes().to_vec(), ..Compare::default() }
    }

    #[test]
    fn single_requests() {
        let put_req = |key: &str, value: &str, lease, ignore_value, ignore_lease| PutRequest {
            key: key.as_bytes().to_vec(),
            value: value.as_bytes().to_vec(),
            lease,
            ignore_value,
            ignore_lease,
            prev_kv: false,
        };
        let cases = [
            (put_req("k", "v", 0, false, false), Ok(())),
            (put_req("", "v", 0, false, false), Err(EtcdError::EmptyKey)),
            (put_req("k", "", 0, true, false), Ok(())),
            (put_req("k", "v", 0, true, false), Err(EtcdError::ValueProvided)),
            (put_req("k", "", 5, false, true), Err(EtcdError::LeaseProvided)),
            (put_req("k", "v", 0, false, true), Ok(())),
            (put_req("k", "", 0, true, true), Ok(())),
            // The empty key is checked first.
            (put_req("", "v", 5, true, true), Err(EtcdError::EmptyKey)),
        ];
        for (req, want) in cases {
            assert_eq!(check_put(&req), want, "{req:?}");
        }
        assert_eq!(check_range(&RangeRequest::default()), Err(EtcdError::EmptyKey));
        assert_eq!(check_range(&RangeRequest { key: b"k".to_vec(), ..RangeRequest::default() }), Ok(()));
        assert_eq!(check_delete_range(&DeleteRangeRequest::default()), Err(EtcdError::EmptyKey));
        let d = DeleteRangeRequest { key: b"\0".to_vec(), range_end: b"\0".to_vec(), prev_kv: true };
        assert_eq!(check_delete_range(&d), Ok(()));
    }

    #[test]
    fn txn_op_counts_and_keys() {
        let n_puts = |n: usize| (0..n).map(|i| put(&format!("k{i}"))).collect::<Vec<_>>();
        let n_nested_puts = |n: usize| (0..n).map(|i| put(&format!("nested{i}"))).collect::<Vec<_>>();
        let with_compares =
            |n: usize| TxnRequest { compare: (0..n).map(|_| compare("c")).collect(), ..txn(vec![], vec![]) };
        let cases: Vec<(&str, TxnRequest, Result<(), EtcdError>)> = vec![
            ("128 success ops", txn(n_puts(128), vec![]), Ok(())),
            ("129 success ops", txn(n_puts(129), vec![]), Err(EtcdError::TooManyOps)),
            ("129 failure ops", txn(vec![], n_puts(129)), Err(EtcdError::TooManyOps)),
            ("129 compares", with_compares(129), Err(EtcdError::TooManyOps)),
            ("128 compares", with_compares(128), Ok(())),
            // The limits are per list, not summed.
            (
                "128 each",
                TxnRequest {
                    compare: (0..128).map(|_| compare("c")).collect(),
                    success: n_puts(128),
                    failure: n_puts(128),
                },
                Ok(()),
            ),
            // A nested txn may use only what the parent's widest list leaves: 128 - 100 = 28.
            (
                "nested within budget",
                txn([n_puts(99), vec![nested(n_nested_puts(28), vec![])]].concat(), vec![]),
                Ok(()),
            ),
            (
                "nested over budget",
                txn([n_puts(99), vec![nested(n_nested_puts(29), vec![])]].concat(), vec![]),
                Err(EtcdError::TooManyOps),
            ),
            (
                "empty compare key",
                TxnRequest { compare: vec![compare("")], ..txn(vec![], vec![]) },
                Err(EtcdError::EmptyKey),
            ),
            ("empty put key", txn(vec![put("")], vec![]), Err(EtcdError::EmptyKey)),
            ("empty get key", txn(vec![], vec![get("")]), Err(EtcdError::EmptyKey)),
            ("empty del key", txn(vec![del("", "")], vec![]), Err(EtcdError::EmptyKey)),
            ("empty key nested", txn(vec![nested(vec![], vec![get("")])], vec![]), Err(EtcdError::EmptyKey)),
            ("empty op", txn(vec![RequestOp { request: None }], vec![]), Err(EtcdError::KeyNotFound)),
            (
                "ignore_value with value nested",
                txn(
                    vec![nested(
                        vec![RequestOp {
                            request: Some(request_op::Request::RequestPut(PutRequest {
                                key: b"k".to_vec(),
                                value: b"v".to_vec(),
                                ignore_value: true,
                                ..PutRequest::default()
                            })),
                        }],
                        vec![],
                    )],
                    vec![],
                ),
                Err(EtcdError::ValueProvided),
            ),
            // Shape errors win over duplicate keys.
            ("empty key beats duplicate", txn(vec![put("a"), put("a")], vec![get("")]), Err(EtcdError::EmptyKey)),
        ];
        for (name, req, want) in cases {
            assert_eq!(check_txn(&req, DEFAULT_MAX_TXN_OPS), want, "{name}");
        }
        assert_eq!(check_txn(&txn(n_puts(3), vec![]), 2), Err(EtcdError::TooManyOps));
    }

    /// A txn `depth` deep (1 = no nesting) whose innermost txn compares and puts: the deepest message
    /// nesting a txn of that depth can have.
    fn txn_of_depth(depth: usize) -> TxnRequest {
        let mut t = TxnRequest { compare: vec![compare("a")], success: vec![put("a")], failure: vec![] };
        for _ in 1..depth {
            t = txn(vec![RequestOp { request: Some(request_op::Request::RequestTxn(t)) }], vec![]);
        }
        t
    }

    #[test]
    fn txns_nested_deeper_than_an_entry_decodes_are_refused() {
        use crate::apply::Command;
        use crate::raft::entry::{decode_command, encode_command};
        // The deepest accepted txn comes back from its log entry; one level more would not, and is refused
        // before it reaches Raft (fuzz/regressions/etcd_ops/crash-bf8522bb...: a member panicked at apply).
        let deepest = txn_of_depth(MAX_TXN_DEPTH);
        assert_eq!(check_txn(&deepest, DEFAULT_MAX_TXN_OPS), Ok(()));
        let cmd = Command::Txn(deepest);
        assert_eq!(decode_command(&encode_command(&cmd)).expect("the deepest accepted txn decodes"), cmd);
        let too_deep = txn_of_depth(MAX_TXN_DEPTH + 1);
        assert_eq!(check_txn(&too_deep, DEFAULT_MAX_TXN_OPS), Err(EtcdError::TxnTooDeep { max_depth: MAX_TXN_DEPTH }));
        assert!(decode_command(&encode_command(&Command::Txn(too_deep))).is_err(), "the limit is not needlessly low");
        // Depth is counted in the failure branch too.
        let deep_failure = txn(
            vec![],
            vec![RequestOp { request: Some(request_op::Request::RequestTxn(txn_of_depth(MAX_TXN_DEPTH))) }],
        );
        assert_eq!(
            check_txn(&deep_failure, DEFAULT_MAX_TXN_OPS),
            Err(EtcdError::TxnTooDeep { max_depth: MAX_TXN_DEPTH })
        );
    }

    #[test]
    fn txn_duplicate_keys() {
        let cases: Vec<(&str, TxnRequest, Result<(), EtcdError>)> = vec![
            ("two puts of one key", txn(vec![put("a"), put("a")], vec![]), Err(EtcdError::DuplicateKey)),
            ("same key in success and failure", txn(vec![put("a")], vec![put("a")]), Ok(())),
            ("put inside a delete range", txn(vec![del("a", "c"), put("b")], vec![]), Err(EtcdError::DuplicateKey)),
            ("put before a delete range", txn(vec![put("b"), del("a", "c")], vec![]), Err(EtcdError::DuplicateKey)),
            ("put at a delete range's end", txn(vec![del("a", "c"), put("c")], vec![]), Ok(())),
            ("put of a deleted single key", txn(vec![del("a", ""), put("a")], vec![]), Err(EtcdError::DuplicateKey)),
            ("put next to a deleted single key", txn(vec![del("a", ""), put("a\0")], vec![]), Ok(())),
            ("overlapping deletes", txn(vec![del("c", "e"), del("d", "f")], vec![]), Ok(())),
            ("same delete twice", txn(vec![del("c", ""), del("c", "")], vec![]), Ok(())),
            // etcd compares "\0" as an ordinary byte string here, so a from-key delete covers no put (verified
            // against etcd 3.4.23: `del a --from-key` + `put b` applies).
            ("from-key delete", txn(vec![del("a", "\0"), put("b")], vec![]), Ok(())),
            ("inverted delete range", txn(vec![del("c", "a"), put("b")], vec![]), Ok(())),
            (
                "put in nested then, delete at top",
                txn(vec![del("a", "c"), nested(vec![put("b")], vec![])], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            (
                "put at top, delete in nested",
                txn(vec![put("b"), nested(vec![del("a", "c")], vec![])], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            (
                "put at top and in nested",
                txn(vec![put("b"), nested(vec![], vec![put("b")])], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            ("then and else of one nested txn", txn(vec![nested(vec![put("b")], vec![put("b")])], vec![]), Ok(())),
            (
                "else put of an earlier nested txn's key",
                txn(vec![nested(vec![put("b")], vec![]), nested(vec![], vec![put("b")])], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            (
                "two nested txns put one key",
                txn(vec![nested(vec![put("b")], vec![]), nested(vec![put("b")], vec![])], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            // Sibling nested txns are checked in order: a delete in a later one does not see an earlier put
            // (etcd 3.4.23 applies this txn, putting and deleting z at one revision), the reverse is refused.
            (
                "nested put then nested delete",
                txn(vec![nested(vec![put("z")], vec![]), nested(vec![del("z", "")], vec![])], vec![]),
                Ok(()),
            ),
            (
                "nested delete then nested put",
                txn(vec![nested(vec![del("z", "")], vec![]), nested(vec![put("z")], vec![])], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            (
                "deep nesting",
                txn(vec![del("m", "n"), nested(vec![nested(vec![], vec![put("m1")])], vec![])], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            (
                "deep delete covers top put",
                txn(vec![nested(vec![nested(vec![del("m", "n")], vec![])], vec![]), put("m1")], vec![]),
                Err(EtcdError::DuplicateKey),
            ),
            ("failure branch checked too", txn(vec![], vec![put("x"), put("x")]), Err(EtcdError::DuplicateKey)),
            ("ranges never conflict", txn(vec![get("a"), put("a"), get("a")], vec![]), Ok(())),
        ];
        for (name, req, want) in cases {
            assert_eq!(check_txn(&req, DEFAULT_MAX_TXN_OPS), want, "{name}");
        }
    }
}
