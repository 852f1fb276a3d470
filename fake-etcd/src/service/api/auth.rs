//! The Auth service of an etcd whose authentication is disabled and which has no users or roles: the
//! answers clients rely on (clientv3 treats "authentication is not enabled" as "carry on without a token")
//! are etcd's exact ones. Creating users and roles is not supported and says so.

use std::sync::Arc;

use etcd_proto::etcdserverpb::auth_server::Auth;
use etcd_proto::etcdserverpb::*;
use tonic::{Request, Response, Status};

use crate::error::EtcdError;
use crate::service::member::Member;

#[derive(Clone)]
pub struct AuthService {
    pub member: Arc<Member>,
}

impl AuthService {
    fn header(&self) -> Option<ResponseHeader> {
        Some(self.member.header(self.member.status_facts().revision))
    }
}

type Answer<T> = Result<Response<T>, Status>;

fn refuse<T>(err: EtcdError) -> Answer<T> {
    Err(err.into())
}

#[tonic::async_trait]
impl Auth for AuthService {
    async fn auth_enable(&self, _r: Request<AuthEnableRequest>) -> Answer<AuthEnableResponse> {
        // etcd refuses to enable authentication before a root user exists, and none ever does here.
        refuse(EtcdError::RootUserNotExist)
    }

    async fn auth_disable(&self, _r: Request<AuthDisableRequest>) -> Answer<AuthDisableResponse> {
        Ok(Response::new(AuthDisableResponse { header: self.header() }))
    }

    async fn authenticate(&self, _r: Request<AuthenticateRequest>) -> Answer<AuthenticateResponse> {
        refuse(EtcdError::AuthNotEnabled)
    }

    async fn user_add(&self, _r: Request<AuthUserAddRequest>) -> Answer<AuthUserAddResponse> {
        refuse(EtcdError::Unimplemented("Auth.UserAdd"))
    }

    async fn user_get(&self, _r: Request<AuthUserGetRequest>) -> Answer<AuthUserGetResponse> {
        refuse(EtcdError::UserNotFound)
    }

    async fn user_list(&self, _r: Request<AuthUserListRequest>) -> Answer<AuthUserListResponse> {
        Ok(Response::new(AuthUserListResponse { header: self.header(), users: Vec::new() }))
    }

    async fn user_delete(&self, _r: Request<AuthUserDeleteRequest>) -> Answer<AuthUserDeleteResponse> {
        refuse(EtcdError::UserNotFound)
    }

    async fn user_change_password(
        &self,
        _r: Request<AuthUserChangePasswordRequest>,
    ) -> Answer<AuthUserChangePasswordResponse> {
        refuse(EtcdError::UserNotFound)
    }

    async fn user_grant_role(&self, _r: Request<AuthUserGrantRoleRequest>) -> Answer<AuthUserGrantRoleResponse> {
        refuse(EtcdError::UserNotFound)
    }

    async fn user_revoke_role(&self, _r: Request<AuthUserRevokeRoleRequest>) -> Answer<AuthUserRevokeRoleResponse> {
        refuse(EtcdError::UserNotFound)
    }

    async fn role_add(&self, _r: Request<AuthRoleAddRequest>) -> Answer<AuthRoleAddResponse> {
        refuse(EtcdError::Unimplemented("Auth.RoleAdd"))
    }

    async fn role_get(&self, _r: Request<AuthRoleGetRequest>) -> Answer<AuthRoleGetResponse> {
        refuse(EtcdError::RoleNotFound)
    }

    async fn role_list(&self, _r: Request<AuthRoleListRequest>) -> Answer<AuthRoleListResponse> {
        Ok(Response::new(AuthRoleListResponse { header: self.header(), roles: Vec::new() }))
    }

    async fn role_delete(&self, _r: Request<AuthRoleDeleteRequest>) -> Answer<AuthRoleDeleteResponse> {
        refuse(EtcdError::RoleNotFound)
    }

    async fn role_grant_permission(
        &self,
        _r: Request<AuthRoleGrantPermissionRequest>,
    ) -> Answer<AuthRoleGrantPermissionResponse> {
        refuse(EtcdError::RoleNotFound)
    }

    async fn role_revoke_permission(
        &self,
        _r: Request<AuthRoleRevokePermissionRequest>,
    ) -> Answer<AuthRoleRevokePermissionResponse> {
        refuse(EtcdError::RoleNotFound)
    }
}
