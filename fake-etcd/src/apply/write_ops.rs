//! Put and DeleteRange inside a write transaction, shared by the plain requests and by Txn, and the lease
//! bookkeeping they imply (applied to the lessor only once the write transaction has committed).

use etcd_proto::etcdserverpb::{DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse, ResponseHeader};

use crate::error::EtcdError;
use crate::lease::Lessor;
use crate::mvcc::{KeyRange, RangeOptions, WriteTxn};
use crate::types::{LeaseId, Revision};

/// A change of a key's lease attachment, recorded while a write transaction runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum LeaseOp {
    Attach(LeaseId, Vec<u8>),
    Detach(LeaseId, Vec<u8>),
}

/// Applies the attachments in the order the writes made them, so a key put and then deleted in one txn
/// ends up attached to nothing.
pub(super) fn apply_lease_ops(lessor: &mut Lessor, ops: Vec<LeaseOp>) {
    for op in ops {
        match op {
            LeaseOp::Attach(id, key) => lessor.attach(id, &key),
            LeaseOp::Detach(id, key) => lessor.detach(id, &key),
        }
    }
}

pub(super) fn header(rev: Revision) -> Option<ResponseHeader> {
    Some(ResponseHeader { revision: rev.0, ..ResponseHeader::default() })
}

/// etcd's Put inside a write txn. `ignore_value` / `ignore_lease` keep the current value / lease and need the
/// key to exist (`KeyNotFound` otherwise). The lease itself is checked by the caller beforehand.
pub(super) fn put(
    txn: &mut WriteTxn<'_>,
    req: &PutRequest,
    lease_ops: &mut Vec<LeaseOp>,
) -> Result<PutResponse, EtcdError> {
    let looked_up = req.ignore_value || req.ignore_lease || req.prev_kv;
    let prev =
        if looked_up { txn.range(&KeyRange::new(&req.key, b""), RangeOptions::default())?.kvs.pop() } else { None };
    if (req.ignore_value || req.ignore_lease) && prev.is_none() {
        return Err(EtcdError::KeyNotFound);
    }
    let value = match &prev {
        Some(prev) if req.ignore_value => prev.value.clone(),
        _ => req.value.clone(),
    };
    let lease = match &prev {
        Some(prev) if req.ignore_lease => LeaseId(prev.lease),
        _ => LeaseId(req.lease),
    };
    let replaced = txn.put(&req.key, value, lease);
    // The kv the write replaced is the one read just before it.
    debug_assert!(!looked_up || replaced == prev, "put replaced {replaced:?}, read {prev:?}");
    if let Some(old_lease) = replaced.as_ref().map(|kv| LeaseId(kv.lease)).filter(|l| !l.is_none()) {
        lease_ops.push(LeaseOp::Detach(old_lease, req.key.clone()));
    }
    if !lease.is_none() {
        lease_ops.push(LeaseOp::Attach(lease, req.key.clone()));
    }
    Ok(PutResponse { header: header(txn.rev()), prev_kv: if req.prev_kv { prev } else { None } })
}

/// etcd's DeleteRange inside a write txn. Its header names the txn's revision once the txn has changed
/// anything, the store's current revision before (a delete of nothing at the start of a txn).
pub(super) fn delete_range(
    txn: &mut WriteTxn<'_>,
    req: &DeleteRangeRequest,
    lease_ops: &mut Vec<LeaseOp>,
) -> DeleteRangeResponse {
    let deleted = txn.delete_range(&KeyRange::new(&req.key, &req.range_end));
    for kv in &deleted {
        if kv.lease != 0 {
            lease_ops.push(LeaseOp::Detach(LeaseId(kv.lease), kv.key.clone()));
        }
    }
    let rev = if txn.changes().is_empty() { txn.rev().prev() } else { txn.rev() };
    DeleteRangeResponse {
        header: header(rev),
        deleted: deleted.len() as i64,
        prev_kvs: if req.prev_kv { deleted } else { Vec::new() },
    }
}
