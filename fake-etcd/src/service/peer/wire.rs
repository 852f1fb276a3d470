//! What both sides of the peer protocol agree on beyond `peer.proto`: the metadata entries of a batch
//! stream, etcd's rafthttp text for refusing another cluster's traffic, and how a member dials a peer.

use etcd_proto::kubesimpeer::peer_client::PeerClient;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Endpoint};

use super::link::PeerSpec;

/// etcd's rafthttp refuses a request from another cluster with this body (`errClusterIDMismatch`).
pub(super) const CLUSTER_ID_MISMATCH: &str = "cluster ID mismatch";

/// The metadata entry that carries the refusing member's cluster id in hex, as etcd's `X-Etcd-Cluster-ID`
/// header does, so that the sender can name both clusters in its log.
pub(super) const CLUSTER_ID_METADATA: &str = "x-etcd-cluster-id";

/// The metadata entries of a batch stream that name its sender and its receiver, in hex.
pub(super) const FROM_METADATA: &str = "x-kubesim-from";
pub(super) const TO_METADATA: &str = "x-kubesim-to";

/// A hex number from a stream's metadata, if it is there and well formed.
pub(super) fn metadata_hex(metadata: &MetadataMap, key: &str) -> Option<u64> {
    u64::from_str_radix(metadata.get(key)?.to_str().ok()?, 16).ok()
}

/// Whether a peer refused a request because it belongs to another cluster.
pub(super) fn is_cluster_mismatch(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::FailedPrecondition && status.message() == CLUSTER_ID_MISMATCH
}

/// A client of `peer`'s peer service on its first peer URL; the connection opens with the first call.
pub(super) fn client(peer: &PeerSpec) -> Option<PeerClient<Channel>> {
    let url = peer.peer_urls.first()?;
    let endpoint = Endpoint::from_shared(url.clone()).ok()?;
    Some(PeerClient::new(endpoint.connect_lazy()))
}
