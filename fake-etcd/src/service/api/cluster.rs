//! The Cluster service: the members of the initial cluster, with the client URLs each one published.
//! Membership changes (add, remove, promote) are not implemented and are refused by name.

use std::sync::Arc;

use etcd_proto::etcdserverpb::cluster_server::Cluster;
use etcd_proto::etcdserverpb::{
    Member as PbMember, MemberAddRequest, MemberAddResponse, MemberListRequest, MemberListResponse,
    MemberPromoteRequest, MemberPromoteResponse, MemberRemoveRequest, MemberRemoveResponse, MemberUpdateRequest,
    MemberUpdateResponse,
};
use tonic::{Request, Response, Status};

use crate::error::EtcdError;
use crate::service::member::Member;

#[derive(Clone)]
pub struct ClusterService {
    pub member: Arc<Member>,
}

impl ClusterService {
    fn members(&self) -> Vec<PbMember> {
        self.member
            .members()
            .into_iter()
            .map(|m| PbMember {
                id: m.id.0,
                name: m.name,
                peer_ur_ls: m.peer_urls,
                client_ur_ls: m.client_urls,
                is_learner: false,
            })
            .collect()
    }
}

#[tonic::async_trait]
impl Cluster for ClusterService {
    async fn member_add(&self, _req: Request<MemberAddRequest>) -> Result<Response<MemberAddResponse>, Status> {
        Err(EtcdError::Unimplemented("Cluster.MemberAdd").into())
    }

    async fn member_remove(
        &self,
        _req: Request<MemberRemoveRequest>,
    ) -> Result<Response<MemberRemoveResponse>, Status> {
        Err(EtcdError::Unimplemented("Cluster.MemberRemove").into())
    }

    async fn member_update(
        &self,
        _req: Request<MemberUpdateRequest>,
    ) -> Result<Response<MemberUpdateResponse>, Status> {
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
