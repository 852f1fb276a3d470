//! The Cluster service: membership as a one-member etcd reports it. Membership changes need Raft and are
//! refused by name until replication exists.

use std::sync::Arc;

use etcd_proto::etcdserverpb::cluster_server::Cluster;
use etcd_proto::etcdserverpb::{
    Member as PbMember, MemberAddRequest, MemberAddResponse, MemberListRequest, MemberListResponse,
    MemberPromoteRequest, MemberPromoteResponse, MemberRemoveRequest, MemberRemoveResponse, MemberUpdateRequest,
    MemberUpdateResponse,
};
use tonic::{Request, Response, Status};

use super::member::Member;
use crate::error::EtcdError;

#[derive(Clone)]
pub struct ClusterService {
    pub member: Arc<Member>,
}

impl ClusterService {
    fn members(&self) -> Vec<PbMember> {
        let c = self.member.config();
        vec![PbMember {
            id: c.member_id.0,
            name: c.name.clone(),
            peer_ur_ls: c.peer_urls.clone(),
            client_ur_ls: c.client_urls.clone(),
            is_learner: false,
        }]
    }
}

#[tonic::async_trait]
impl Cluster for ClusterService {
    async fn member_add(&self, _req: Request<MemberAddRequest>) -> Result<Response<MemberAddResponse>, Status> {
        Err(EtcdError::Unimplemented("Cluster.MemberAdd").into())
    }

    async fn member_remove(&self, _req: Request<MemberRemoveRequest>) -> Result<Response<MemberRemoveResponse>, Status> {
        Err(EtcdError::Unimplemented("Cluster.MemberRemove").into())
    }

    async fn member_update(&self, _req: Request<MemberUpdateRequest>) -> Result<Response<MemberUpdateResponse>, Status> {
        Err(EtcdError::Unimplemented("Cluster.MemberUpdate").into())
    }

    async fn member_list(&self, _req: Request<MemberListRequest>) -> Result<Response<MemberListResponse>, Status> {
        // etcd's MemberList header carries no revision.
        Ok(Response::new(MemberListResponse { header: Some(self.member.header(0)), members: self.members() }))
    }

    async fn member_promote(
        &self,
        _req: Request<MemberPromoteRequest>,
    ) -> Result<Response<MemberPromoteResponse>, Status> {
        Err(EtcdError::Unimplemented("Cluster.MemberPromote").into())
    }
}
