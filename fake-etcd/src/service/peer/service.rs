//! The receiving side of the peer transport: the `kubesimpeer.Peer` service (fake-etcd's own protocol, see
//! `peer.proto`). Raft batches arrive on long-lived streams (one per sending peer) or, for snapshots, one call
//! each. Traffic from a member of another cluster is refused, with etcd's rafthttp texts, so that two clusters
//! sharing an address space never mix their logs. Forwarded lease calls are answered here too, if this member
//! leads.

use std::sync::Arc;

use etcd_proto::kubesimpeer::peer_server::Peer;
use etcd_proto::kubesimpeer::{
    DeliverAck, LeaseRenewRequest, LeaseRenewResponse, LeaseTtlRequest, LeaseTtlResponse, RaftBatch, StreamAck,
};
use tokio::sync::mpsc;
use tonic::metadata::MetadataMap;
use tonic::{Code, Request, Response, Status, Streaming};

use super::link::Link;
use super::wire::{metadata_hex, CLUSTER_ID_METADATA, CLUSTER_ID_MISMATCH, TO_METADATA};
use crate::error::EtcdError;
use crate::service::channel_stream::ChannelStream;
use crate::types::LeaseId;

/// One member's peer service; it reaches the member only through its [`Link`].
#[derive(Clone)]
pub struct PeerService {
    member: Arc<dyn Link>,
}

impl PeerService {
    pub fn new(member: Arc<dyn Link>) -> PeerService {
        PeerService { member }
    }

    fn check_cluster(&self, cluster_id: u64) -> Result<(), Status> {
        let mine = self.member.cluster_id();
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

    fn check_recipient(&self, to: u64) -> Result<(), Status> {
        let me = self.member.member_id();
        if to == me.0 {
            return Ok(());
        }
        Err(Status::failed_precondition(format!("fake-etcd: batch for member {to:x} reached member {me}")))
    }
}

#[tonic::async_trait]
impl Peer for PeerService {
    async fn deliver(&self, req: Request<RaftBatch>) -> Result<Response<DeliverAck>, Status> {
        let batch = req.into_inner();
        self.check_cluster(batch.cluster_id)?;
        self.check_recipient(batch.to)?;
        self.member.deliver(&batch.messages);
        Ok(Response::new(DeliverAck {}))
    }

    type StreamStream = ChannelStream<StreamAck>;

    async fn stream(&self, req: Request<Streaming<RaftBatch>>) -> Result<Response<Self::StreamStream>, Status> {
        // The cluster and the recipient are checked once, when the stream opens, so that the sender learns
        // of a refusal before it pushes anything more (etcd checks its stream's headers the same way).
        let Some(cluster_id) = metadata_hex(req.metadata(), CLUSTER_ID_METADATA) else {
            return Err(Status::invalid_argument("fake-etcd: peer stream without a cluster id"));
        };
        self.check_cluster(cluster_id)?;
        self.check_recipient(metadata_hex(req.metadata(), TO_METADATA).unwrap_or(0))?;
        let mut inbound = req.into_inner();
        let (tx, rx) = mpsc::unbounded_channel();
        let member = self.member.clone();
        // The batches are stepped in the order they arrive, one at a time; the task ends with the stream
        // (the sender closed it, its connection broke, or its member died), and the answers end with it.
        tokio::spawn(async move {
            while let Ok(Some(batch)) = inbound.message().await {
                member.deliver(&batch.messages);
                if batch.ack_seq != 0 && tx.send(Ok(StreamAck { ack_seq: batch.ack_seq })).is_err() {
                    break;
                }
            }
        });
        Ok(Response::new(ChannelStream::new(rx)))
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
