//! Checks etcd makes before a request enters Raft (`v3rpc/key.go`): they reject a request without
//! consuming a revision or a log entry.

use etcd_proto::etcdserverpb::{DeleteRangeRequest, PutRequest, RangeRequest, TxnRequest};

use crate::error::EtcdError;

/// etcd's default `--max-txn-ops`.
pub const DEFAULT_MAX_TXN_OPS: usize = 128;

pub fn check_range(req: &RangeRequest) -> Result<(), EtcdError> {
    let _ = req;
    todo!()
}

pub fn check_put(req: &PutRequest) -> Result<(), EtcdError> {
    let _ = req;
    todo!()
}

pub fn check_delete_range(req: &DeleteRangeRequest) -> Result<(), EtcdError> {
    let _ = req;
    todo!()
}

/// Too many ops, empty keys, and the duplicate-key rule (`checkIntervals`), recursively.
pub fn check_txn(req: &TxnRequest, max_txn_ops: usize) -> Result<(), EtcdError> {
    let _ = (req, max_txn_ops);
    todo!()
}
