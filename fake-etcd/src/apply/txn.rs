//! Txn (etcd's `applierV3backend.Txn`): choose the branches by the compares, check the chosen ops, then run
//! them in one write transaction at one revision.

use etcd_proto::etcdserverpb::{
    request_op, response_op, RequestOp, ResponseHeader, ResponseOp, TxnRequest, TxnResponse,
};
use etcd_proto::mvccpb::Event;

use super::compare;
use super::range;
use super::write_ops::{self, LeaseOp};
use crate::error::EtcdError;
use crate::lease::Lessor;
use crate::mvcc::{KeyRange, MvccStore, RangeOptions, WriteTxn};
use crate::types::LeaseId;

/// The branch every txn on the chosen path takes, decided up front against the state before the txn (etcd's
/// `compareToPath`): nested txns' compares do not see the outer txn's writes.
#[derive(Debug)]
struct Path {
    succeeded: bool,
    /// The paths of the nested txns in the chosen branch, in op order.
    nested: Vec<Path>,
}

impl Path {
    fn of(store: &MvccStore, req: &TxnRequest) -> Path {
        let succeeded = compare::all_hold(store, &req.compare);
        let nested = branch(req, succeeded).iter().filter_map(nested_txn).map(|t| Path::of(store, t)).collect();
        Path { succeeded, nested }
    }
}

fn branch(req: &TxnRequest, succeeded: bool) -> &[RequestOp] {
    if succeeded {
        &req.success
    } else {
        &req.failure
    }
}

fn nested_txn(op: &RequestOp) -> Option<&TxnRequest> {
    match &op.request {
        Some(request_op::Request::RequestTxn(t)) => Some(t),
        _ => None,
    }
}

/// Whether a txn's range operations are checked before it runs: always, except under the #18667 bug switch
/// on a member that did not serve the txn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RangeChecks {
    Run,
    Skip,
}

/// Applies a txn. Returns the response, the committed events and the lease attachments to make; on `Err` the
/// store is unchanged (the write txn is dropped without committing).
pub(super) fn apply(
    store: &mut MvccStore,
    lessor: &Lessor,
    req: &TxnRequest,
    ranges: RangeChecks,
) -> Result<(TxnResponse, Vec<Event>, Vec<LeaseOp>), EtcdError> {
    let path = Path::of(store, req);
    // etcd checks the puts of the chosen ops first (only if the txn can write at all), then their ranges.
    if has_writes(req) {
        check_chosen(req, &path, &mut |op| check_put(store, lessor, op))?;
    }
    if ranges == RangeChecks::Skip {
        // The bug: the ranges are stripped, so the txn runs its writes alone. Its response goes nowhere.
        let stripped = strip_ranges(req);
        return apply(store, lessor, &stripped, RangeChecks::Run);
    }
    check_chosen(req, &path, &mut |op| check_range(store, op))?;

    let rev_before = store.current_revision();
    let mut lease_ops = Vec::new();
    let mut txn = store.write();
    let mut resp = run(&mut txn, req, &path, &mut lease_ops)?;
    let events = txn.end();
    let rev = if events.is_empty() { rev_before } else { rev_before.next() };
    debug_assert_eq!(rev, store.current_revision(), "a txn commits at one revision");
    resp.header = write_ops::header(rev);
    Ok((resp, events, lease_ops))
}

/// `req` without its range operations, at any depth (the #18667 bug's view of a txn served elsewhere).
fn strip_ranges(req: &TxnRequest) -> TxnRequest {
    let keep = |ops: &[RequestOp]| -> Vec<RequestOp> {
        ops.iter()
            .filter_map(|op| match &op.request {
                Some(request_op::Request::RequestRange(_)) => None,
                Some(request_op::Request::RequestTxn(t)) => {
                    Some(RequestOp { request: Some(request_op::Request::RequestTxn(strip_ranges(t))) })
                }
                _ => Some(op.clone()),
            })
            .collect()
    };
    TxnRequest { compare: req.compare.clone(), success: keep(&req.success), failure: keep(&req.failure) }
}

/// Whether any op in either branch, at any depth, is a put or a delete (etcd's `!isTxnReadonly`).
fn has_writes(req: &TxnRequest) -> bool {
    req.success.iter().chain(&req.failure).any(|op| match &op.request {
        Some(request_op::Request::RequestPut(_)) | Some(request_op::Request::RequestDeleteRange(_)) => true,
        Some(request_op::Request::RequestTxn(t)) => has_writes(t),
        _ => false,
    })
}

/// Runs `check` on every non-txn op on the chosen path, depth first in op order.
fn check_chosen(
    req: &TxnRequest,
    path: &Path,
    check: &mut impl FnMut(&RequestOp) -> Result<(), EtcdError>,
) -> Result<(), EtcdError> {
    let mut nested_paths = path.nested.iter();
    for op in branch(req, path.succeeded) {
        match nested_txn(op) {
            Some(t) => check_chosen(t, nested_paths.next().expect("a path per nested txn"), check)?,
            None => check(op)?,
        }
    }
    Ok(())
}

/// etcd's `checkRequestPut`, against the state before the txn: `ignore_value` / `ignore_lease` need the key,
/// and a lease must exist.
fn check_put(store: &MvccStore, lessor: &Lessor, op: &RequestOp) -> Result<(), EtcdError> {
    let Some(request_op::Request::RequestPut(put)) = &op.request else { return Ok(()) };
    if put.ignore_value || put.ignore_lease {
        let read = store.range(&KeyRange::new(&put.key, b""), RangeOptions::default())?;
        if read.kvs.is_empty() {
            return Err(EtcdError::KeyNotFound);
        }
    }
    let lease = LeaseId(put.lease);
    if !lease.is_none() && !lessor.contains(lease) {
        return Err(EtcdError::LeaseNotFound);
    }
    Ok(())
}

/// etcd's `checkRequestRange`, against the state before the txn. It compares the raw revision with the raw
/// compaction revision, so a negative revision fails once anything was compacted (-1 passes before that),
/// and a revision equal to the txn's own is already in the future.
fn check_range(store: &MvccStore, op: &RequestOp) -> Result<(), EtcdError> {
    let Some(request_op::Request::RequestRange(r)) = &op.request else { return Ok(()) };
    if r.revision == 0 {
        Ok(())
    } else if r.revision > store.current_revision().0 {
        Err(EtcdError::FutureRev)
    } else if r.revision < store.compact_revision_raw().0 {
        Err(EtcdError::Compacted)
    } else {
        Ok(())
    }
}

/// Runs the chosen branch. Inner responses carry a header with only `revision` (a nested txn's header is
/// empty, as etcd leaves it).
fn run(
    txn: &mut WriteTxn<'_>,
    req: &TxnRequest,
    path: &Path,
    lease_ops: &mut Vec<LeaseOp>,
) -> Result<TxnResponse, EtcdError> {
    let mut nested_paths = path.nested.iter();
    let mut responses = Vec::new();
    for op in branch(req, path.succeeded) {
        let response = match &op.request {
            Some(request_op::Request::RequestRange(r)) => {
                Some(response_op::Response::ResponseRange(range::range(&*txn, r)?))
            }
            Some(request_op::Request::RequestPut(p)) => {
                Some(response_op::Response::ResponsePut(write_ops::put(txn, p, lease_ops)?))
            }
            Some(request_op::Request::RequestDeleteRange(d)) => {
                Some(response_op::Response::ResponseDeleteRange(write_ops::delete_range(txn, d, lease_ops)))
            }
            Some(request_op::Request::RequestTxn(t)) => {
                let nested_path = nested_paths.next().expect("a path per nested txn");
                Some(response_op::Response::ResponseTxn(run(txn, t, nested_path, lease_ops)?))
            }
            // Validation refuses empty ops before Raft; etcd leaves their response empty too.
            None => None,
        };
        responses.push(ResponseOp { response });
    }
    Ok(TxnResponse { header: Some(ResponseHeader::default()), succeeded: path.succeeded, responses })
}
