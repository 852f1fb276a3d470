//! The Lease service. Grants and revokes go through the write path; keep-alives and time-to-live queries are
//! answered by the leader without Raft, as etcd's are; a follower forwards them to the leader.

use std::sync::Arc;

use etcd_proto::etcdserverpb::lease_server::Lease;
use etcd_proto::etcdserverpb::{
    LeaseGrantRequest, LeaseGrantResponse, LeaseKeepAliveRequest, LeaseKeepAliveResponse, LeaseLeasesRequest,
    LeaseLeasesResponse, LeaseRevokeRequest, LeaseRevokeResponse, LeaseStatus, LeaseTimeToLiveRequest,
    LeaseTimeToLiveResponse,
};
use tokio::sync::mpsc;
use tonic::{Request, Response, Status, Streaming};

use super::token::requester;
use crate::apply::{Command, CommandResponse};
use crate::error::EtcdError;
use crate::lease::MAX_LEASE_TTL_S;
use crate::service::channel_stream::ChannelStream;
use crate::service::member::Member;
use crate::types::LeaseId;

#[derive(Clone)]
pub struct LeaseService {
    pub member: Arc<Member>,
}

impl LeaseService {
    fn current_revision(&self) -> i64 {
        self.member.read(|sm| sm.mvcc.current_revision().0)
    }
}

#[tonic::async_trait]
impl Lease for LeaseService {
    async fn lease_grant(&self, req: Request<LeaseGrantRequest>) -> Result<Response<LeaseGrantResponse>, Status> {
        // A grant needs no permission, but its token must be valid (etcd resolves it for every proposal).
        let by = requester(&self.member, &req)?;
        let req = req.into_inner();
        // etcd checks the TTL bound and picks the id before proposing, so every replica applies the same id.
        if req.ttl > MAX_LEASE_TTL_S {
            return Err(EtcdError::LeaseTtlTooLarge.into());
        }
        let id = if req.id == 0 { self.member.next_lease_id() } else { LeaseId(req.id) };
        match self.member.propose_as(Command::LeaseGrant { id, ttl_s: req.ttl }, &by).await? {
            CommandResponse::LeaseGrant(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(Status::internal("fake-etcd: LeaseGrant answered with another response kind")),
        }
    }

    async fn lease_revoke(&self, req: Request<LeaseRevokeRequest>) -> Result<Response<LeaseRevokeResponse>, Status> {
        // Revoking needs write access to every key on the lease, checked when it applies.
        let by = requester(&self.member, &req)?;
        let id = LeaseId(req.into_inner().id);
        match self.member.propose_as(Command::LeaseRevoke(id), &by).await? {
            CommandResponse::LeaseRevoke(mut resp) => {
                self.member.stamp(&mut resp.header);
                Ok(Response::new(resp))
            }
            _ => Err(Status::internal("fake-etcd: LeaseRevoke answered with another response kind")),
        }
    }

    type LeaseKeepAliveStream = ChannelStream<LeaseKeepAliveResponse>;

    async fn lease_keep_alive(
        &self,
        req: Request<Streaming<LeaseKeepAliveRequest>>,
    ) -> Result<Response<Self::LeaseKeepAliveStream>, Status> {
        let mut inbound = req.into_inner();
        let (tx, rx) = mpsc::unbounded_channel();
        let svc = self.clone();
        tokio::spawn(async move {
            while let Ok(Some(req)) = inbound.message().await {
                let id = LeaseId(req.id);
                // etcd answers an unknown or expired lease with TTL 0 and no error; clients turn that into
                // "requested lease not found" themselves. Any other failure (no leader, a forward that timed
                // out) ends the stream with its error, as etcd's does.
                let ttl = match svc.member.renew_lease(id).await {
                    Ok(ttl) => ttl,
                    Err(EtcdError::LeaseNotFound) => 0,
                    Err(e) => {
                        let _ = tx.send(Err(e.into()));
                        break;
                    }
                };
                let resp =
                    LeaseKeepAliveResponse { header: Some(svc.member.header(svc.current_revision())), id: id.0, ttl };
                if tx.send(Ok(resp)).is_err() {
                    break;
                }
            }
        });
        Ok(Response::new(ChannelStream::new(rx)))
    }

    async fn lease_time_to_live(
        &self,
        req: Request<LeaseTimeToLiveRequest>,
    ) -> Result<Response<LeaseTimeToLiveResponse>, Status> {
        let req = req.into_inner();
        // A follower asks the leader (see `Member::lease_time_to_live`); the header is this member's own, as
        // etcd fills the forwarded answer's header on the member the client asked.
        let ttl = self.member.lease_time_to_live(LeaseId(req.id)).await?;
        let revision = self.current_revision();
        // An unknown or expired lease is TTL -1 with no error, as etcd 3.4 answers.
        let resp = match ttl {
            Some(t) => LeaseTimeToLiveResponse {
                header: Some(self.member.header(revision)),
                id: req.id,
                ttl: t.ttl_s,
                granted_ttl: t.granted_ttl_s,
                keys: if req.keys { t.keys } else { Vec::new() },
            },
            None => LeaseTimeToLiveResponse {
                header: Some(self.member.header(revision)),
                id: req.id,
                ttl: -1,
                granted_ttl: 0,
                keys: Vec::new(),
            },
        };
        Ok(Response::new(resp))
    }

    async fn lease_leases(&self, _req: Request<LeaseLeasesRequest>) -> Result<Response<LeaseLeasesResponse>, Status> {
        let (ids, revision) = self.member.read(|sm| (sm.lessor.leases(), sm.mvcc.current_revision().0));
        Ok(Response::new(LeaseLeasesResponse {
            header: Some(self.member.header(revision)),
            leases: ids.into_iter().map(|id| LeaseStatus { id: id.0 }).collect(),
        }))
    }
}
