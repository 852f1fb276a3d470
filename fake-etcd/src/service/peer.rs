//! The receiving side of the peer transport: the `kubesimpeer.Peer` service (fake-etcd's own protocol, see
//! `peer.proto`). Traffic from a member of another cluster is refused, with etcd's rafthttp texts, so that two
//! clusters sharing an address space never mix their logs.

use std::sync::Arc;

use etcd_proto::kubesimpeer::peer_server::Peer;
use etcd_proto::kubesimpeer::{
    DeliverAck, LeaseRenewRequest, LeaseRenewResponse, LeaseTtlRequest, LeaseTtlResponse, RaftBatch,
};
use tonic::metadata::MetadataMap;
use tonic::{Code, Request, Response, Status};

use super::member::Member;
use crate::error::EtcdError;
use crate::types::LeaseId;

#[derive(Clone)]
pub struct PeerService {
    pub member: Arc<Member>,
}

/// etcd's rafthttp refuses a request from another cluster with this body (`errClusterIDMismatch`).
pub const CLUSTER_ID_MISMATCH: &str = "cluster ID mismatch";

/// The metadata entry that carries the refusing member's cluster id in hex, as etcd's `X-Etcd-Cluster-ID`
/// header does, so that the sender can name both clusters in its log.
pub const CLUSTER_ID_METADATA: &str = "x-etcd-cluster-id";

impl PeerService {
    fn check_cluster(&self, cluster_id: u64) -> Result<(), Status> {
        let mine = self.member.config().cluster_id;
        if cluster_id == mine.0 {
            return Ok(());
        }
        // etcd 3.4's text (capnslog): "rafthttp: request cluster ID mismatch (got <remote> want <local>)".
        tracing::warn!("rafthttp: request cluster ID mismatch (got {cluster_id:x} want {:x})", mine.0);
        let mut metadata = MetadataMap::new();
        if let Ok(value) = format!("{:x}", mine.0).parse() {
            metadata.insert(CLUSTER_ID_METADATA, value);
        }
        Err(Status::with_metadata(Code::FailedPrecondition, CLUSTER_ID_MISMATCH, metadata))
    }
}

#[tonic::async_trait]
impl Peer for PeerService {
    async fn deliver(&self, req: Request<RaftBatch>) -> Result<Response<DeliverAck>, Status> {
        let batch = req.into_inner();
        self.check_cluster(batch.cluster_id)?;
        if batch.to != self.member.config().member_id.0 {
            return Err(Status::failed_precondition(format!(
                "fake-etcd: batch for member {:x} reached member {}",
                batch.to,
                self.member.config().member_id
            )));
        }
        self.member.deliver(&batch.messages);
        Ok(Response::new(DeliverAck {}))
    }

    async fn lease_renew(&self, req: Request<LeaseRenewRequest>) -> Result<Response<LeaseRenewResponse>, Status> {
        let req = req.into_inner();
        self.check_cluster(req.cluster_id)?;
        let resp = match self.member.renew_lease_as_leader(LeaseId(req.id)) {
            None => LeaseRenewResponse { ttl: 0, not_leader: true },
            Some(Ok(ttl)) => LeaseRenewResponse { ttl, not_leader: false },
            Some(Err(EtcdError::LeaseNotFound)) => LeaseRenewResponse { ttl: 0, not_leader: false },
            Some(Err(e)) => return Err(e.into()),
        };
        Ok(Response::new(resp))
    }

    async fn lease_time_to_live(&self, req: Request<LeaseTtlRequest>) -> Result<Response<LeaseTtlResponse>, Status> {
        let req = req.into_inner();
        self.check_cluster(req.cluster_id)?;
        let resp = match self.member.lease_time_to_live_as_leader(LeaseId(req.id)) {
            None => LeaseTtlResponse { not_leader: true, ..LeaseTtlResponse::default() },
            Some(None) => LeaseTtlResponse::default(),
            Some(Some(t)) => LeaseTtlResponse {
                not_leader: false,
                found: true,
                ttl: t.ttl_s,
                granted_ttl: t.granted_ttl_s,
                keys: t.keys,
            },
        };
        Ok(Response::new(resp))
    }
}
