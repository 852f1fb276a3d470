//! The receiving side of the peer transport: the `kubesimpeer.Peer` service (fake-etcd's own protocol, see
//! `peer.proto`). Traffic from a member of another cluster is refused, so that two clusters sharing an
//! address space never mix their logs.

use std::sync::Arc;

use etcd_proto::kubesimpeer::peer_server::Peer;
use etcd_proto::kubesimpeer::{DeliverAck, LeaseRenewRequest, LeaseRenewResponse, RaftBatch};
use tonic::{Request, Response, Status};

use super::member::Member;
use crate::error::EtcdError;
use crate::types::LeaseId;

#[derive(Clone)]
pub struct PeerService {
    pub member: Arc<Member>,
}

impl PeerService {
    fn check_cluster(&self, cluster_id: u64) -> Result<(), Status> {
        let mine = self.member.config().cluster_id;
        if cluster_id != mine.0 {
            return Err(Status::failed_precondition(format!(
                "fake-etcd: peer belongs to cluster {cluster_id:x}, this member to cluster {:x}",
                mine.0
            )));
        }
        Ok(())
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
}
