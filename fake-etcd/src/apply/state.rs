//! `StateMachine`: applies commands to the MVCC store and the lease table.

use etcd_proto::etcdserverpb::{
    CompactionRequest, CompactionResponse, DeleteRangeRequest, DeleteRangeResponse, LeaseGrantResponse,
    LeaseRevokeResponse, PutRequest, PutResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse,
};
use etcd_proto::mvccpb::Event;

use crate::error::EtcdError;
use crate::lease::Lessor;
use crate::mvcc::MvccStore;
use crate::types::{LeaseId, Millis};

/// A request that changes state, as it travels through consensus (ids already chosen).
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
    Compact(CompactionRequest),
    LeaseGrant { id: LeaseId, ttl_s: i64 },
    /// Both LeaseRevoke requests and expiry (which the leader proposes) are this command.
    LeaseRevoke(LeaseId),
}

#[derive(Clone, Debug, PartialEq)]
pub enum CommandResponse {
    Put(PutResponse),
    DeleteRange(DeleteRangeResponse),
    Txn(TxnResponse),
    Compact(CompactionResponse),
    LeaseGrant(LeaseGrantResponse),
    LeaseRevoke(LeaseRevokeResponse),
}

/// The outcome of applying one command.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub response: CommandResponse,
    /// The changes this command committed, all at one revision, in sub-revision order (empty if none).
    pub events: Vec<Event>,
}

#[derive(Debug)]
pub struct StateMachine {
    pub mvcc: MvccStore,
    pub lessor: Lessor,
}

impl StateMachine {
    pub fn new(min_lease_ttl_s: i64) -> StateMachine {
        StateMachine { mvcc: MvccStore::new(), lessor: Lessor::new(min_lease_ttl_s) }
    }

    /// Serves a Range (linearizability is the shell's concern: it calls this once the member is caught up).
    pub fn range(&self, req: &RangeRequest) -> Result<RangeResponse, EtcdError> {
        let _ = req;
        todo!()
    }

    /// Applies one committed command. An `Err` leaves the state unchanged.
    pub fn apply(&mut self, cmd: Command, now: Millis) -> Result<Applied, EtcdError> {
        let _ = (cmd, now);
        todo!()
    }
}
