//! The Auth service: every request but a login is proposed through Raft as etcd 3.4 orders it, reads
//! (UserGet, UserList, RoleGet, RoleList) included, and made by the user the request's token names, so
//! that every member applies the same admin checks. A login checks the password on this member first
//! (`Member::authenticate`). Passwords are hashed here, before Raft, so that no log entry carries one.

use std::sync::Arc;

use etcd_proto::etcdserverpb::auth_server::Auth;
use etcd_proto::etcdserverpb::*;
use tonic::{Request, Response, Status};

use super::token::requester;
use crate::apply::{Command, CommandResponse};
use crate::auth::{AuthRequest, AuthResponse, PermType, Permission};
use crate::service::member::Member;

#[derive(Clone)]
pub struct AuthService {
    pub member: Arc<Member>,
}

type Answer<T> = Result<Response<T>, Status>;

impl AuthService {
    /// Proposes `req` as the user `from`'s token names and returns the store's answer, header stamped.
    async fn propose<T>(&self, from: &Request<T>, req: AuthRequest) -> Result<AuthResponse, Status> {
        let by = requester(&self.member, from)?;
        match self.member.propose_as(Command::Auth(req), &by).await? {
            CommandResponse::Auth(mut resp) => {
                self.member.stamp(resp.header_mut());
                Ok(resp)
            }
            other => Err(Status::internal(format!("fake-etcd: an auth request was answered with {other:?}"))),
        }
    }
}

/// Unwraps the expected kind of [`AuthResponse`] into a gRPC response.
macro_rules! answer {
    ($resp:expr, $kind:ident) => {
        match $resp {
            AuthResponse::$kind(r) => Ok(Response::new(r)),
            other => Err(Status::internal(format!("fake-etcd: {} was answered with {other:?}", stringify!($kind)))),
        }
    };
}

#[tonic::async_trait]
impl Auth for AuthService {
    async fn auth_enable(&self, r: Request<AuthEnableRequest>) -> Answer<AuthEnableResponse> {
        answer!(self.propose(&r, AuthRequest::Enable).await?, Enable)
    }

    async fn auth_disable(&self, r: Request<AuthDisableRequest>) -> Answer<AuthDisableResponse> {
        answer!(self.propose(&r, AuthRequest::Disable).await?, Disable)
    }

    async fn authenticate(&self, r: Request<AuthenticateRequest>) -> Answer<AuthenticateResponse> {
        let req = r.into_inner();
        let token = self.member.authenticate(&req.name, &req.password).await?;
        let revision = self.member.status_facts().revision;
        Ok(Response::new(AuthenticateResponse { header: Some(self.member.header(revision)), token }))
    }

    async fn user_add(&self, r: Request<AuthUserAddRequest>) -> Answer<AuthUserAddResponse> {
        let no_password = r.get_ref().options.as_ref().is_some_and(|o| o.no_password);
        let hashed_password = (!no_password).then(|| self.member.hash_password(&r.get_ref().password));
        let req = AuthRequest::UserAdd { name: r.get_ref().name.clone(), hashed_password };
        answer!(self.propose(&r, req).await?, UserAdd)
    }

    async fn user_get(&self, r: Request<AuthUserGetRequest>) -> Answer<AuthUserGetResponse> {
        let req = AuthRequest::UserGet { name: r.get_ref().name.clone() };
        answer!(self.propose(&r, req).await?, UserGet)
    }

    async fn user_list(&self, r: Request<AuthUserListRequest>) -> Answer<AuthUserListResponse> {
        answer!(self.propose(&r, AuthRequest::UserList).await?, UserList)
    }

    async fn user_delete(&self, r: Request<AuthUserDeleteRequest>) -> Answer<AuthUserDeleteResponse> {
        let req = AuthRequest::UserDelete { name: r.get_ref().name.clone() };
        answer!(self.propose(&r, req).await?, UserDelete)
    }

    async fn user_change_password(
        &self,
        r: Request<AuthUserChangePasswordRequest>,
    ) -> Answer<AuthUserChangePasswordResponse> {
        let hashed_password = self.member.hash_password(&r.get_ref().password);
        let req = AuthRequest::UserChangePassword { name: r.get_ref().name.clone(), hashed_password };
        answer!(self.propose(&r, req).await?, UserChangePassword)
    }

    async fn user_grant_role(&self, r: Request<AuthUserGrantRoleRequest>) -> Answer<AuthUserGrantRoleResponse> {
        let req = AuthRequest::UserGrantRole { user: r.get_ref().user.clone(), role: r.get_ref().role.clone() };
        answer!(self.propose(&r, req).await?, UserGrantRole)
    }

    async fn user_revoke_role(&self, r: Request<AuthUserRevokeRoleRequest>) -> Answer<AuthUserRevokeRoleResponse> {
        let req = AuthRequest::UserRevokeRole { name: r.get_ref().name.clone(), role: r.get_ref().role.clone() };
        answer!(self.propose(&r, req).await?, UserRevokeRole)
    }

    async fn role_add(&self, r: Request<AuthRoleAddRequest>) -> Answer<AuthRoleAddResponse> {
        let req = AuthRequest::RoleAdd { name: r.get_ref().name.clone() };
        answer!(self.propose(&r, req).await?, RoleAdd)
    }

    async fn role_get(&self, r: Request<AuthRoleGetRequest>) -> Answer<AuthRoleGetResponse> {
        let req = AuthRequest::RoleGet { role: r.get_ref().role.clone() };
        answer!(self.propose(&r, req).await?, RoleGet)
    }

    async fn role_list(&self, r: Request<AuthRoleListRequest>) -> Answer<AuthRoleListResponse> {
        answer!(self.propose(&r, AuthRequest::RoleList).await?, RoleList)
    }

    async fn role_delete(&self, r: Request<AuthRoleDeleteRequest>) -> Answer<AuthRoleDeleteResponse> {
        let req = AuthRequest::RoleDelete { role: r.get_ref().role.clone() };
        answer!(self.propose(&r, req).await?, RoleDelete)
    }

    async fn role_grant_permission(
        &self,
        r: Request<AuthRoleGrantPermissionRequest>,
    ) -> Answer<AuthRoleGrantPermissionResponse> {
        // A request without a permission grants an empty point permission, as etcd 3.4 reads a nil one.
        let perm = r.get_ref().perm.clone().unwrap_or_default();
        let perm =
            Permission { perm_type: PermType::from_wire(perm.perm_type), key: perm.key, range_end: perm.range_end };
        let req = AuthRequest::RoleGrantPermission { name: r.get_ref().name.clone(), perm };
        answer!(self.propose(&r, req).await?, RoleGrantPermission)
    }

    async fn role_revoke_permission(
        &self,
        r: Request<AuthRoleRevokePermissionRequest>,
    ) -> Answer<AuthRoleRevokePermissionResponse> {
        let req = AuthRequest::RoleRevokePermission {
            role: r.get_ref().role.clone(),
            key: r.get_ref().key.clone(),
            range_end: r.get_ref().range_end.clone(),
        };
        answer!(self.propose(&r, req).await?, RoleRevokePermission)
    }
}
