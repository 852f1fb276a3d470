//! [`ApiError`]: the one error type of the HTTP layer, and [`ApiError::to_status`], the one place where any
//! failure of a request becomes the `Status` kube-apiserver answers with.
//!
//! Registry failures keep their own translation ([`RegistryError::to_status`], which hands storage errors to
//! the storage layer's); this layer adds what kube-apiserver's handlers and router refuse before the
//! registry is reached: unknown paths and resources, methods a resource does not serve, media types, request
//! size, and malformed parameters and bodies. Texts and codes are kube-apiserver's (k8s.io/apimachinery
//! `pkg/api/errors`, k8s.io/apiserver `pkg/endpoints/handlers`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusCause, StatusDetails};

use crate::endpoints::negotiate::{supported_media_types, NotAcceptable};
use crate::registry::field_error::FieldError;
use crate::registry::RegistryError;

/// The request body limit (kube-apiserver's `MaxRequestBodyBytes`, 3 MiB).
pub(crate) const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// A failed request.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiError {
    /// The registry refused or failed.
    Registry(RegistryError),
    /// A path nothing is served at (Go's `http.NotFound`: plain text, not a `Status`).
    NoRoute,
    /// A resource path the API group serves nothing at, or a method its route does not have: go-restful's
    /// 404 or 405 as kube's `serviceErrorHandler` words it (`NewGenericServerResponse`).
    Generic { code: u16 },
    /// A create of a custom resource whose CRD is being deleted (405, crdHandler's words).
    CrdTerminating { group: String, resource: String },
    /// A body in a format the endpoint does not read (415); `accepted` are the media types it does.
    UnsupportedMediaType { accepted: Vec<String> },
    /// Nothing in `Accept` can be produced (406).
    NotAcceptable(NotAcceptable),
    /// A body over [`MAX_REQUEST_BODY_BYTES`] (413).
    BodyTooLarge,
    /// A malformed request (400) with kube's text.
    BadRequest(String),
    /// Invalid request options (422 on `ListOptions.meta.k8s.io` and the like).
    InvalidOptions { kind: String, errors: Vec<FieldError> },
    /// The server is shutting down or not ready for this request (503).
    Unavailable(String),
    /// Something the server could not do (500 `InternalError`).
    Internal(String),
    /// No authenticator accepted the request's credentials, or it has none and anonymous requests are off
    /// (`NewUnauthorized("Unauthorized")`; why is logged, never answered).
    Unauthorized,
    /// The authorizer refused (`responsewriters.Forbidden`): `resource` of `group` (both "" for a
    /// non-resource path), `name`, and the authorizer's message with its reason.
    Forbidden { group: String, resource: String, name: String, why: String },
}

impl From<RegistryError> for ApiError {
    fn from(err: RegistryError) -> ApiError {
        ApiError::Registry(err)
    }
}

impl From<NotAcceptable> for ApiError {
    fn from(err: NotAcceptable) -> ApiError {
        ApiError::NotAcceptable(err)
    }
}

impl ApiError {
    /// A 415 for a body the endpoint cannot read, listing every serialization.
    pub(crate) fn unsupported_media_type() -> ApiError {
        ApiError::UnsupportedMediaType { accepted: supported_media_types(false) }
    }

    /// Whether the answer is Go's plain-text 404 rather than a `Status`.
    pub(crate) fn is_plain_not_found(&self) -> bool {
        matches!(self, ApiError::NoRoute)
    }

    /// The `Status` kube-apiserver answers with.
    pub(crate) fn to_status(&self) -> Status {
        match self {
            ApiError::Registry(err) => err.to_status(),
            ApiError::NoRoute | ApiError::Generic { code: 404 } => failure(
                404,
                "NotFound",
                "the server could not find the requested resource".into(),
                Some(StatusDetails::default()),
            ),
            ApiError::Generic { code: 405 } => failure(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource".into(),
                Some(StatusDetails::default()),
            ),
            ApiError::Generic { code } => {
                let code = i32::from(*code);
                let message =
                    format!("the server responded with the status code {code} but did not return more information");
                failure(code, "", message, Some(StatusDetails::default()))
            }
            ApiError::CrdTerminating { group, resource } => failure(
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating".into(),
                Some(StatusDetails {
                    group: Some(group.clone()),
                    kind: Some(resource.clone()),
                    ..StatusDetails::default()
                }),
            ),
            ApiError::UnsupportedMediaType { accepted } => failure(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format - accepted media types include: {}",
                    accepted.join(", ")
                ),
                None,
            ),
            ApiError::NotAcceptable(err) => failure(406, "NotAcceptable", err.message(), None),
            ApiError::BodyTooLarge => failure(
                413,
                "RequestEntityTooLarge",
                format!("Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"),
                None,
            ),
            ApiError::BadRequest(message) => failure(400, "BadRequest", message.clone(), None),
            ApiError::InvalidOptions { kind, errors } => RegistryError::Invalid {
                group: "meta.k8s.io".into(),
                kind: kind.clone(),
                name: String::new(),
                errors: errors.clone(),
            }
            .to_status(),
            ApiError::Unauthorized => failure(401, "Unauthorized", "Unauthorized".into(), None),
            ApiError::Forbidden { group, resource, name, why } => {
                // `NewForbidden`: the message names the resource when there is one, and the object when
                // there is a name.
                let qualified = if group.is_empty() { resource.clone() } else { format!("{resource}.{group}") };
                let message = match (qualified.is_empty(), name.is_empty()) {
                    (true, _) => format!("forbidden: {why}"),
                    (false, true) => format!("{qualified} is forbidden: {why}"),
                    (false, false) => format!("{qualified} {name:?} is forbidden: {why}"),
                };
                let details = StatusDetails {
                    group: Some(group.clone()).filter(|g| !g.is_empty()),
                    kind: Some(resource.clone()).filter(|r| !r.is_empty()),
                    name: Some(name.clone()).filter(|n| !n.is_empty()),
                    ..StatusDetails::default()
                };
                failure(403, "Forbidden", message, Some(details))
            }
            ApiError::Unavailable(message) => failure(503, "ServiceUnavailable", message.clone(), None),
            ApiError::Internal(message) => failure(
                500,
                "InternalError",
                format!("Internal error occurred: {message}"),
                Some(StatusDetails {
                    causes: Some(vec![StatusCause { message: Some(message.clone()), reason: None, field: None }]),
                    ..StatusDetails::default()
                }),
            ),
        }
    }
}

fn failure(code: i32, reason: &str, message: String, details: Option<StatusDetails>) -> Status {
    Status {
        code: Some(code),
        details,
        message: Some(message),
        metadata: ListMeta::default(),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        status: Some("Failure".to_string()),
    }
}

/// The `Retry-After` seconds a status carries, if any (kube sets the header from `details.retryAfterSeconds`).
pub(crate) fn retry_after(status: &Status) -> Option<i32> {
    status.details.as_ref().and_then(|d| d.retry_after_seconds).filter(|s| *s > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_as_kube_apiserver_writes_them() {
        let cases: Vec<(ApiError, u16, &str, &str)> = vec![
            (ApiError::Generic { code: 404 }, 404, "NotFound", "the server could not find the requested resource"),
            (
                ApiError::Generic { code: 405 },
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            ),
            (
                ApiError::CrdTerminating { group: "example.com".into(), resource: "widgets".into() },
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
            ),
            (
                ApiError::unsupported_media_type(),
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            ),
            (ApiError::BodyTooLarge, 413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"),
            (ApiError::BadRequest("x".into()), 400, "BadRequest", "x"),
        ];
        for (err, code, reason, message) in cases {
            let status = err.to_status();
            assert_eq!(status.code, Some(i32::from(code)), "{err:?}");
            assert_eq!(status.reason.as_deref(), Some(reason), "{err:?}");
            assert_eq!(status.message.as_deref(), Some(message), "{err:?}");
            assert_eq!(status.status.as_deref(), Some("Failure"));
        }
    }
}
