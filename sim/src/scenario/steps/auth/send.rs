//! Sending an `auth` step's request: one call of etcd's Auth service from the step's client, with the
//! client's token when it has one, answered as an [`AuthOutcome`].

use std::future::Future;

use etcd_proto::authpb;
use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::auth_client::AuthClient;
use tonic::transport::Channel;

use super::plan::{Auth, Perm};
use crate::client::{channel, RecordingClient};
use crate::history::{Bytes, ErrorStatus};
use crate::scenario::steps::observed::AuthOutcome;

/// Every request but login and logout.
pub(super) async fn request(client: &RecordingClient, plan: &Auth) -> AuthOutcome {
    match plan.clone() {
        Auth::Enable => {
            send(client, |mut a, r| async move { a.auth_enable(r).await }, pb::AuthEnableRequest {}, none).await.0
        }
        Auth::Disable => {
            send(client, |mut a, r| async move { a.auth_disable(r).await }, pb::AuthDisableRequest {}, none).await.0
        }
        Auth::UserAdd { user, password } => {
            let req = pb::AuthUserAddRequest {
                name: user,
                options: Some(authpb::UserAddOptions { no_password: password.is_none() }),
                password: password.unwrap_or_default(),
            };
            send(client, |mut a, r| async move { a.user_add(r).await }, req, none).await.0
        }
        Auth::UserDelete { user } => {
            let req = pb::AuthUserDeleteRequest { name: user };
            send(client, |mut a, r| async move { a.user_delete(r).await }, req, none).await.0
        }
        Auth::UserGet { user } => {
            let req = pb::AuthUserGetRequest { name: user };
            send(client, |mut a, r| async move { a.user_get(r).await }, req, |r| (r.roles.clone(), None)).await.0
        }
        Auth::UserList => {
            let req = pb::AuthUserListRequest {};
            send(client, |mut a, r| async move { a.user_list(r).await }, req, |r| (r.users.clone(), None)).await.0
        }
        Auth::UserChangePassword { user, password } => {
            let req = pb::AuthUserChangePasswordRequest { name: user, password };
            send(client, |mut a, r| async move { a.user_change_password(r).await }, req, none).await.0
        }
        Auth::UserGrantRole { user, role } => {
            let req = pb::AuthUserGrantRoleRequest { user, role };
            send(client, |mut a, r| async move { a.user_grant_role(r).await }, req, none).await.0
        }
        Auth::UserRevokeRole { user, role } => {
            let req = pb::AuthUserRevokeRoleRequest { name: user, role };
            send(client, |mut a, r| async move { a.user_revoke_role(r).await }, req, none).await.0
        }
        Auth::RoleAdd { role } => {
            let req = pb::AuthRoleAddRequest { name: role };
            send(client, |mut a, r| async move { a.role_add(r).await }, req, none).await.0
        }
        Auth::RoleDelete { role } => {
            let req = pb::AuthRoleDeleteRequest { role };
            send(client, |mut a, r| async move { a.role_delete(r).await }, req, none).await.0
        }
        Auth::RoleGet { role } => {
            let req = pb::AuthRoleGetRequest { role };
            let perms = |r: &pb::AuthRoleGetResponse| (r.perm.iter().map(permission).collect(), None);
            send(client, |mut a, r| async move { a.role_get(r).await }, req, perms).await.0
        }
        Auth::RoleList => {
            let req = pb::AuthRoleListRequest {};
            send(client, |mut a, r| async move { a.role_list(r).await }, req, |r| (r.roles.clone(), None)).await.0
        }
        Auth::RoleGrantPermission { role, keys, perm } => {
            let perm = authpb::Permission {
                perm_type: perm.wire(),
                key: keys.key.as_slice().to_vec(),
                range_end: keys.range_end.as_slice().to_vec(),
            };
            let req = pb::AuthRoleGrantPermissionRequest { name: role, perm: Some(perm) };
            send(client, |mut a, r| async move { a.role_grant_permission(r).await }, req, none).await.0
        }
        Auth::RoleRevokePermission { role, keys } => {
            let req = pb::AuthRoleRevokePermissionRequest {
                role,
                key: keys.key.as_slice().to_vec(),
                range_end: keys.range_end.as_slice().to_vec(),
            };
            send(client, |mut a, r| async move { a.role_revoke_permission(r).await }, req, none).await.0
        }
        Auth::Login { .. } | Auth::Logout => unreachable!("handled by auth_step"),
    }
}

/// The answer of a request that lists nothing.
pub(super) fn none<R>(_: &R) -> (Vec<String>, Option<String>) {
    (Vec::new(), None)
}

/// A permission as `role-get` shows it: `readwrite /a*` (the key range as the trace writes ranges).
fn permission(p: &authpb::Permission) -> String {
    let span = crate::history::KeySpan { key: Bytes(p.key.clone()), range_end: Bytes(p.range_end.clone()) };
    format!("{} {}", Perm::from_wire(p.perm_type), crate::describe::span(&span))
}

/// Sends `message` with the client's token, waits at most the client's timeout, and reads the answer with
/// `read` (the names it lists, and a token for a login).
pub(super) async fn send<T, R, F, Fut>(
    client: &RecordingClient,
    call: F,
    message: T,
    read: impl FnOnce(&R) -> (Vec<String>, Option<String>),
) -> (AuthOutcome, Option<String>)
where
    F: FnOnce(AuthClient<Channel>, tonic::Request<T>) -> Fut,
    Fut: Future<Output = Result<tonic::Response<R>, tonic::Status>>,
{
    let auth = AuthClient::new(channel(client.endpoint()));
    match tokio::time::timeout(client.timeout(), call(auth, client.authorized(message))).await {
        Ok(Ok(response)) => {
            let (names, token) = read(response.get_ref());
            (AuthOutcome::Ok(names), token)
        }
        Ok(Err(status)) if status.code() == tonic::Code::Unavailable => {
            (AuthOutcome::Unknown(format!("unavailable: {}", status.message())), None)
        }
        Ok(Err(status)) => (AuthOutcome::Err(ErrorStatus::from(&status)), None),
        Err(_) => (AuthOutcome::Unknown(format!("no answer within {}ms", client.timeout().as_millis())), None),
    }
}
