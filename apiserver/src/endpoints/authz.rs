//! The authorization step of the request path (kube's `WithAuthorization` filter): the request's
//! attributes from its [`RequestInfo`] and user, asked of the server's `--authorization-mode` chain; a
//! refusal is upstream's 403 (`responsewriters.Forbidden`).

use crate::apis::rbac::authorizer;
use crate::endpoints::error::ApiError;
use crate::endpoints::request_info::RequestInfo;
use crate::endpoints::ApiServer;
use crate::registry::authorizer::{Attributes, ResourceAttributes};
use crate::registry::user::UserInfo;

/// The attributes of a request made by `user`; `method` is the request's lower-cased HTTP method, the
/// verb of a non-resource request.
pub(crate) fn attributes<'a>(info: &'a RequestInfo, user: &'a UserInfo, method: &'a str) -> Attributes<'a> {
    let resource = info.is_resource_request.then(|| ResourceAttributes {
        namespace: &info.namespace,
        api_group: &info.api_group,
        api_version: &info.api_version,
        resource: &info.resource,
        subresource: &info.subresource,
        name: &info.name,
    });
    let verb = if info.is_resource_request { info.verb.as_str() } else { method };
    Attributes { user, verb, resource, path: &info.path }
}

/// Whether the server's authorizers allow `attrs`; the 403 if not.
pub(crate) async fn check(server: &ApiServer, attrs: &Attributes<'_>) -> Result<(), ApiError> {
    let served = server.served();
    let decision = authorizer::authorize(&server.config.authorization, &served.registry, attrs).await;
    if decision.allowed() {
        return Ok(());
    }
    Err(forbidden(attrs, decision.reason()))
}

/// `responsewriters.Forbidden`: the authorizer's message, its reason after a colon when it gave one.
pub(crate) fn forbidden(attrs: &Attributes<'_>, reason: &str) -> ApiError {
    let message = authorizer::forbidden_message(attrs);
    let why = if reason.is_empty() { message } else { format!("{message}: {reason}") };
    let (group, resource, name) = match &attrs.resource {
        Some(r) => (r.api_group.to_string(), r.resource.to_string(), r.name.to_string()),
        None => (String::new(), String::new(), String::new()),
    };
    ApiError::Forbidden { group, resource, name, why }
}
