//! `RaftError`: the one error type of the Raft layer. Every variant is an expected condition the shell
//! handles (a proposal without a leader, a message from an unknown peer, bytes that do not decode); a broken
//! invariant is a panic instead.

use crate::types::MemberId;

#[derive(Debug, thiserror::Error)]
pub enum RaftError {
    /// The node knows no leader, or the leader is transferring leadership: etcd answers a client with
    /// "etcdserver: no leader" (or retries) in this case.
    #[error("raft: proposal dropped (no leader or leadership transfer in progress)")]
    ProposalDropped,
    /// A message from, or addressed to, a member that is not in the configuration.
    #[error("raft: member {0} is not in the configuration")]
    UnknownPeer(MemberId),
    /// Bytes from the transport or a log entry that do not decode.
    #[error("raft: cannot decode {what}: {detail}")]
    Decode { what: &'static str, detail: String },
    /// The configuration is invalid (raft-rs's `Config::validate` or ours).
    #[error("raft: invalid configuration: {0}")]
    Config(String),
    /// A local snapshot was requested at an index the node cannot snapshot (not applied yet, or older than
    /// the snapshot it already has).
    #[error("raft: cannot snapshot at index {index}: {reason}")]
    Snapshot { index: u64, reason: &'static str },
}

impl RaftError {
    /// Translates raft-rs's errors at the one place they enter this layer. Storage errors never reach here:
    /// our storage answers raft-rs's queries without failing except as its contract allows, and raft-rs
    /// handles those itself.
    pub(crate) fn from_raft(err: ::raft::Error, peer: Option<MemberId>) -> RaftError {
        match err {
            ::raft::Error::ProposalDropped => RaftError::ProposalDropped,
            ::raft::Error::StepPeerNotFound => RaftError::UnknownPeer(peer.unwrap_or_default()),
            ::raft::Error::ConfigInvalid(s) => RaftError::Config(s),
            ::raft::Error::StepLocalMsg => {
                RaftError::Decode { what: "message", detail: "a local message type arrived from the network".into() }
            }
            other => panic!("raft-rs returned an error this layer does not expect: {other}"),
        }
    }
}
