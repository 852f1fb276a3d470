//! [`RegistryError`]: the one error type of the registry layer, and [`RegistryError::to_status`], the one place
//! it becomes a Kubernetes `Status`.
//!
//! Storage failures stay [`StorageError`]s inside [`RegistryError::Storage`] together with the operation, so
//! their translation remains the storage layer's (`StorageError::to_status`); the registry adds the errors
//! that kube-apiserver raises above storage: validation (422), optimistic-lock conflicts, namespace
//! lifecycle admission (404, 403), generateName exhaustion and bad requests. Codes, reasons and texts are
//! kube-apiserver's.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusCause, StatusDetails};

use crate::registry::field_error::{aggregate, FieldError};
use crate::storage::status::{self, object_details, GroupResource, Operation};
use crate::storage::StorageError;

/// `OptimisticLockErrorMsg`: the reason of a 409 after an update with a stale resourceVersion.
pub(crate) const OPTIMISTIC_LOCK_MESSAGE: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// A failed registry operation.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RegistryError {
    /// The storage layer failed `op` on `name`. (Boxed: a storage error is larger than the other variants.)
    #[error("{err}")]
    Storage { err: Box<StorageError>, op: Operation, resource: GroupResource, name: String },
    /// Validation failed: 422 Invalid, named by kind (`ConfigMap`, `Deployment.apps`), not by resource.
    #[error("{} {:?} is invalid: {}", qualified_kind(group, kind), name, aggregate(errors))]
    Invalid { group: String, kind: String, name: String, errors: Vec<FieldError> },
    /// The object does not exist (and the operation may not create it).
    #[error("{} {name:?} not found", resource.qualified())]
    NotFound { resource: GroupResource, name: String },
    /// A write the stored state refuses: an update with a stale resourceVersion ([`OPTIMISTIC_LOCK_MESSAGE`]),
    /// or a delete whose preconditions do not hold; `why` says which.
    #[error("Operation cannot be fulfilled on {} {name:?}: {why}", resource.qualified())]
    Conflict { resource: GroupResource, name: String, why: String },
    /// A server-side apply would change fields other managers own (`NewApplyConflict`): 409 with one cause
    /// per field.
    #[error("{}", crate::registry::managed_fields::conflict_message(conflicts))]
    ApplyConflict { conflicts: Vec<crate::registry::managed_fields::Conflict> },
    /// Every generated name was taken (`NewGenerateNameConflict`).
    #[error("{} {name:?} already exists, the server was not able to generate a unique name for the object", resource.qualified())]
    GenerateNameConflict { resource: GroupResource, name: String },
    /// Creation in a namespace that does not exist (the NamespaceLifecycle admission plugin).
    #[error("namespaces {namespace:?} not found")]
    NamespaceNotFound { namespace: String },
    /// Creation in a namespace that is being deleted (the NamespaceLifecycle admission plugin).
    #[error("{} {name:?} is forbidden: unable to create new content in namespace {namespace} because it is being terminated", resource.qualified())]
    NamespaceTerminating { resource: GroupResource, name: String, namespace: String },
    /// Any other refusal: 403 `<resource> "<name>" is forbidden: <reason>`.
    #[error("{} {name:?} is forbidden: {reason}", resource.qualified())]
    Forbidden { resource: GroupResource, name: String, reason: String },
    /// A request refused for now, to be retried (`NewTooManyRequests`): 429 with a reason per cause, and
    /// `Retry-After` when `retry_after_s` is not 0. An eviction against a spent disruption budget.
    #[error("{message}")]
    TooManyRequests { message: String, retry_after_s: i32, causes: Vec<(String, String)> },
    /// A path the server does not serve, such as a subresource the resource lacks: 404 with no details.
    #[error("the server could not find the requested resource")]
    NoSuchPath,
    /// A request that contradicts itself (name or namespace in the body against the URL): 400.
    #[error("{0}")]
    BadRequest(String),
    /// A request too large to process (a JSON patch of too many operations): 413.
    #[error("Request entity too large: {0}")]
    TooLarge(String),
    /// A patch that does not apply to the current object (a failed JSON patch `test`, a missing path):
    /// kube's generic 422, which keeps the patch library's words out of the message.
    #[error("the server rejected our request due to an error in our request")]
    PatchNotApplicable(String),
    /// A failure of the server's own (`NewInternalError`): 500.
    #[error("Internal error occurred: {0}")]
    Internal(String),
    /// A refusal admission makes with a `Status` of its own (a webhook's denial, which keeps the webhook's
    /// code, reason and details; a policy's): the status is the answer as it is.
    #[error("{}", .0.message.as_deref().unwrap_or(""))]
    Admission(Box<Status>),
    /// An error upstream passes on without making it a `Status` (a strategic merge patch's list element
    /// without its merge key): `ErrorToAPIStatus` answers 500 with no reason and the error's own text.
    #[error("{0}")]
    Unconverted(String),
}

fn qualified_kind(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

impl RegistryError {
    /// The `Status` kube-apiserver answers with.
    pub fn to_status(&self) -> Status {
        use RegistryError as E;
        let message = self.to_string();
        match self {
            E::Storage { err, op, resource, name } => err.to_status(*op, resource, name),
            E::Invalid { group, kind, name, errors } => {
                let causes = errors
                    .iter()
                    .map(|e| StatusCause {
                        reason: Some(e.kind.cause().to_string()),
                        message: Some(e.body()),
                        field: Some(e.field.clone()),
                    })
                    .collect();
                let details = StatusDetails {
                    group: crate::storage::status::non_empty(group),
                    kind: Some(kind.clone()),
                    name: Some(name.clone()),
                    causes: Some(causes),
                    ..StatusDetails::default()
                };
                failure(422, "Invalid", message, details)
            }
            E::NotFound { resource, name } => status::not_found(resource, name),
            E::Conflict { resource, name, why } => status::conflict(resource, name, why),
            E::ApplyConflict { conflicts } => {
                let causes = conflicts
                    .iter()
                    .map(|c| StatusCause {
                        reason: Some("FieldManagerConflict".to_string()),
                        message: Some(format!("conflict with {}", c.manager)),
                        field: Some(c.field.clone()),
                    })
                    .collect();
                failure(409, "Conflict", message, StatusDetails { causes: Some(causes), ..StatusDetails::default() })
            }
            E::GenerateNameConflict { resource, name } => {
                let mut details = object_details(resource, name);
                details.retry_after_seconds = Some(1);
                failure(409, "AlreadyExists", message, details)
            }
            E::NamespaceNotFound { namespace } => status::not_found(&GroupResource::new("", "namespaces"), namespace),
            E::NamespaceTerminating { resource, name, namespace } => {
                let mut details = object_details(resource, name);
                details.causes = Some(vec![StatusCause {
                    reason: Some("NamespaceTerminating".to_string()),
                    message: Some(format!("namespace {namespace} is being terminated")),
                    field: Some("metadata.namespace".to_string()),
                }]);
                failure(403, "Forbidden", message, details)
            }
            E::Forbidden { resource, name, .. } => failure(403, "Forbidden", message, object_details(resource, name)),
            E::BadRequest(_) => status::bad_request(&message),
            E::TooManyRequests { retry_after_s, causes, .. } => {
                let causes = causes
                    .iter()
                    .map(|(reason, message)| StatusCause {
                        reason: Some(reason.clone()),
                        message: Some(message.clone()),
                        field: None,
                    })
                    .collect::<Vec<_>>();
                let details = StatusDetails {
                    retry_after_seconds: Some(*retry_after_s).filter(|s| *s > 0),
                    causes: Some(causes).filter(|c| !c.is_empty()),
                    ..StatusDetails::default()
                };
                failure(429, "TooManyRequests", message, details)
            }
            E::NoSuchPath => failure(404, "NotFound", message, StatusDetails::default()),
            E::TooLarge(_) => {
                Status { details: None, ..failure(413, "RequestEntityTooLarge", message, StatusDetails::default()) }
            }
            E::PatchNotApplicable(_) => failure(422, "Invalid", message, StatusDetails::default()),
            E::Unconverted(_) => {
                Status { details: None, reason: None, ..failure(500, "", message, StatusDetails::default()) }
            }
            E::Admission(status) => (**status).clone(),
            E::Internal(why) => {
                let details = StatusDetails {
                    causes: Some(vec![StatusCause { message: Some(why.clone()), ..StatusCause::default() }]),
                    ..StatusDetails::default()
                };
                failure(500, "InternalError", message, details)
            }
        }
    }
}

fn failure(code: i32, reason: &str, message: String, details: StatusDetails) -> Status {
    Status {
        code: Some(code),
        details: Some(details),
        message: Some(message),
        metadata: ListMeta::default(),
        reason: Some(reason.to_string()),
        status: Some("Failure".to_string()),
    }
}
