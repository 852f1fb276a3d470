//! The narrow interface between the peer transport and the member it serves: [`Link`], what the transport
//! may ask and tell the member, and [`PeerSpec`], where a member of the cluster is. The member implements
//! [`Link`]; the transport never names the member itself.

use crate::error::EtcdError;
use crate::lease::TimeToLive;
use crate::types::{ClusterId, LeaseId, MemberId};

/// One member of the initial cluster as `--initial-cluster` names it. Client URLs are known up front in a
/// simulation; in the real build other members' client URLs arrive with their published attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerSpec {
    pub id: MemberId,
    pub name: String,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
}

/// What the peer transport needs of the member it carries messages for: its identity (every batch names
/// the cluster, the sender and the receiver), where its peers are, delivering the batches that arrive,
/// hearing what could not be delivered, and answering the lease calls followers forward to the leader.
pub trait Link: Send + Sync + 'static {
    fn cluster_id(&self) -> ClusterId;

    fn member_id(&self) -> MemberId;

    /// A member of the initial cluster by id.
    fn peer(&self, id: MemberId) -> Option<PeerSpec>;

    /// The other members of the initial cluster, whom the transport greets when it starts.
    fn peer_ids(&self) -> Vec<MemberId>;

    /// Whether a stream to `to` is open now (etcd's "active peer"): the member waits for its peers to be
    /// reachable before it fast-forwards its first election timeout.
    fn set_peer_active(&self, to: MemberId, active: bool);

    /// Steps a batch of encoded Raft messages from a peer.
    fn deliver(&self, messages: &[Vec<u8>]);

    /// The transport's verdict on messages it could not deliver to `to` (`snapshot`: one of them was a
    /// snapshot, which Raft must hear failed).
    fn report_undelivered(&self, to: MemberId, snapshot: bool);

    /// A snapshot reached `to`.
    fn report_snapshot_delivered(&self, to: MemberId);

    /// The leader's side of a forwarded keep-alive; `None` when this member does not lead.
    fn renew_lease_as_leader(&self, id: LeaseId) -> Option<Result<i64, EtcdError>>;

    /// The leader's side of a forwarded LeaseTimeToLive; `None` when this member does not lead.
    fn lease_time_to_live_as_leader(&self, id: LeaseId) -> Option<Option<TimeToLive>>;
}
