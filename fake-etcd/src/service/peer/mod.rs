//! The peer transport: Raft messages and forwarded lease calls between the members of one cluster, over
//! fake-etcd's own gRPC service (`kubesimpeer.Peer`, see `peer.proto`), not etcd's contract.
//!
//! - `transport`: the sending side, one long-lived stream per peer, batches pushed without an answer each;
//! - `service`: the receiving side, which refuses another cluster's traffic with etcd's texts;
//! - `forward`: a follower's side of the lease calls it forwards to the leader;
//! - `wire`: the conventions both sides share (metadata names, the refusal text, how a peer is dialled);
//! - `link`: [`Link`], all the transport knows of the member it serves, and [`PeerSpec`], where a peer is.
//!
//! The transport depends on the member only through [`Link`], which the member implements; the member
//! depends on the transport only to forward lease calls and to name its peers.

mod forward;
mod link;
mod service;
mod transport;
mod wire;

pub(super) use forward::{forward_lease_renew, forward_lease_time_to_live};
pub use link::Link;
pub(crate) use link::PeerSpec;
pub use service::PeerService;
pub(super) use transport::run;
