//! `auth` steps: one request of etcd's Auth service from the step's client, carrying the client's token
//! when it has one, answered as an [`AuthOutcome`] and traced as one line. A login keeps the token it gets
//! for the client's later requests; a logout drops it. Auth requests are not filed in the KV history: they
//! change no key, and what they change (who may read or write what) shows in the answers of the requests
//! after them.

use std::future::Future;

use etcd_proto::authpb;
use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::auth_client::AuthClient;
use tonic::transport::Channel;

use super::ctx::Finished;
use super::Observed;
use crate::client::{channel, RecordingClient};
use crate::history::{Bytes, ErrorStatus};
use crate::scenario::auth::{AuthPlan, Perm};
use crate::scenario::plan::StepPlan;
use crate::scenario::step_text::step_text;

/// What an `auth` step's client saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthOutcome {
    /// Answered: the names a list or get returned (users, roles, or a role's permissions as
    /// `readwrite /a*`), in etcd's order; empty for the others.
    Ok(Vec<String>),
    /// Refused, with etcd's code and text.
    Err(ErrorStatus),
    /// No answer within the request timeout, or no connection.
    Unknown(String),
}

impl std::fmt::Display for AuthOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthOutcome::Ok(names) if names.is_empty() => f.write_str("ok"),
            AuthOutcome::Ok(names) => write!(f, "ok {names:?}"),
            AuthOutcome::Err(status) => write!(f, "err {:?} {:?}", status.code, status.message),
            AuthOutcome::Unknown(why) => f.write_str(why),
        }
    }
}

/// Runs an `auth` step on `client`.
pub(super) async fn auth_step(client: &mut RecordingClient, step: &StepPlan, plan: &AuthPlan) -> Finished {
    let outcome = match plan {
        AuthPlan::Logout => {
            client.set_token(None);
            AuthOutcome::Ok(Vec::new())
        }
        AuthPlan::Login { user, password } => {
            let req = pb::AuthenticateRequest { name: user.clone(), password: password.clone() };
            let (outcome, token) = send(
                client,
                |mut a, r| async move { a.authenticate(r).await },
                req,
                |r| (Vec::new(), Some(r.token.clone())),
            )
            .await;
            if let Some(token) = token {
                client.set_token(Some(token));
            }
            outcome
        }
        _ => request(client, plan).await,
    };
    client.trace().event(client.name(), format_args!("{} {} -> {outcome}", step.label, step_text(step)));
    (Observed::Auth(outcome), None, None)
}

/// Every request but login and logout.
async fn request(client: &RecordingClient, plan: &AuthPlan) -> AuthOutcome {
    match plan.clone() {
        AuthPlan::Enable => {
            send(client, |mut a, r| async move { a.auth_enable(r).await }, pb::AuthEnableRequest {}, none).await.0
        }
        AuthPlan::Disable => {
            send(client, |mut a, r| async move { a.auth_disable(r).await }, pb::AuthDisableRequest {}, none).await.0
        }
        AuthPlan::UserAdd { user, password } => {
            let req = pb::AuthUserAddRequest {
                name: user,
                options: Some(authpb::UserAddOptions { no_password: password.is_none() }),
                password: password.unwrap_or_default(),
            };
            send(client, |mut a, r| async move { a.user_add(r).await }, req, none).await.0
        }
        AuthPlan::UserDelete { user } => {
            let req = pb::AuthUserDeleteRequest { name: user };
            send(client, |mut a, r| async move { a.user_delete(r).await }, req, none).await.0
        }
        AuthPlan::UserGet { user } => {
            let req = pb::AuthUserGetRequest { name: user };
            send(client, |mut a, r| async move { a.user_get(r).await }, req, |r| (r.roles.clone(), None)).await.0
        }
        AuthPlan::UserList => {
            let req = pb::AuthUserListRequest {};
            send(client, |mut a, r| async move { a.user_list(r).await }, req, |r| (r.users.clone(), None)).await.0
        }
        AuthPlan::UserChangePassword { user, password } => {
            let req = pb::AuthUserChangePasswordRequest { name: user, password };
            send(client, |mut a, r| async move { a.user_change_password(r).await }, req, none).await.0
        }
        AuthPlan::UserGrantRole { user, role } => {
            let req = pb::AuthUserGrantRoleRequest { user, role };
            send(client, |mut a, r| async move { a.user_grant_role(r).await }, req, none).await.0
        }
        AuthPlan::UserRevokeRole { user, role } => {
            let req = pb::AuthUserRevokeRoleRequest { name: user, role };
            send(client, |mut a, r| async move { a.user_revoke_role(r).await }, req, none).await.0
        }
        AuthPlan::RoleAdd { role } => {
            let req = pb::AuthRoleAddRequest { name: role };
            send(client, |mut a, r| async move { a.role_add(r).await }, req, none).await.0
        }
        AuthPlan::RoleDelete { role } => {
            let req = pb::AuthRoleDeleteRequest { role };
            send(client, |mut a, r| async move { a.role_delete(r).await }, req, none).await.0
        }
        AuthPlan::RoleGet { role } => {
            let req = pb::AuthRoleGetRequest { role };
            let perms = |r: &pb::AuthRoleGetResponse| (r.perm.iter().map(permission).collect(), None);
            send(client, |mut a, r| async move { a.role_get(r).await }, req, perms).await.0
        }
        AuthPlan::RoleList => {
            let req = pb::AuthRoleListRequest {};
            send(client, |mut a, r| async move { a.role_list(r).await }, req, |r| (r.roles.clone(), None)).await.0
        }
        AuthPlan::RoleGrantPermission { role, keys, perm } => {
            let perm = authpb::Permission {
                perm_type: perm.wire(),
                key: keys.key.as_slice().to_vec(),
                range_end: keys.range_end.as_slice().to_vec(),
            };
            let req = pb::AuthRoleGrantPermissionRequest { name: role, perm: Some(perm) };
            send(client, |mut a, r| async move { a.role_grant_permission(r).await }, req, none).await.0
        }
        AuthPlan::RoleRevokePermission { role, keys } => {
            let req = pb::AuthRoleRevokePermissionRequest {
                role,
                key: keys.key.as_slice().to_vec(),
                range_end: keys.range_end.as_slice().to_vec(),
            };
            send(client, |mut a, r| async move { a.role_revoke_permission(r).await }, req, none).await.0
        }
        AuthPlan::Login { .. } | AuthPlan::Logout => unreachable!("handled by auth_step"),
    }
}

/// The answer of a request that lists nothing.
fn none<R>(_: &R) -> (Vec<String>, Option<String>) {
    (Vec::new(), None)
}

/// A permission as `role-get` shows it: `readwrite /a*` (the key range as the trace writes ranges).
fn permission(p: &authpb::Permission) -> String {
    let span = crate::history::KeySpan { key: Bytes(p.key.clone()), range_end: Bytes(p.range_end.clone()) };
    format!("{} {}", Perm::from_wire(p.perm_type), crate::describe::span(&span))
}

/// Sends `message` with the client's token, waits at most the client's timeout, and reads the answer with
/// `read` (the names it lists, and a token for a login).
async fn send<T, R, F, Fut>(
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
