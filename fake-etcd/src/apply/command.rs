//! The commands the state machine applies, as they travel through consensus, and what applying one gives.

use etcd_proto::etcdserverpb::{
    CompactionRequest, CompactionResponse, DeleteRangeRequest, DeleteRangeResponse, LeaseGrantResponse,
    LeaseRevokeResponse, PutRequest, PutResponse, TxnRequest, TxnResponse,
};
use etcd_proto::mvccpb::Event;

use crate::auth::{AuthRequest, AuthResponse};
use crate::types::LeaseId;

/// A request that changes state, as it travels through consensus (ids already chosen).
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
    Compact(CompactionRequest),
    LeaseGrant {
        id: LeaseId,
        ttl_s: i64,
    },
    /// Both LeaseRevoke requests and expiry (which the leader proposes) are this command.
    LeaseRevoke(LeaseId),
    /// Every auth request etcd 3.4 orders through Raft, reads (UserGet, RoleList, …) and logins included.
    Auth(AuthRequest),
}

#[derive(Clone, Debug, PartialEq)]
pub enum CommandResponse {
    Put(PutResponse),
    DeleteRange(DeleteRangeResponse),
    Txn(TxnResponse),
    Compact(CompactionResponse),
    LeaseGrant(LeaseGrantResponse),
    LeaseRevoke(LeaseRevokeResponse),
    Auth(AuthResponse),
}

/// The outcome of applying one command.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub response: CommandResponse,
    /// The changes this command committed, all at one revision, in sub-revision order (empty if none).
    pub events: Vec<Event>,
}
