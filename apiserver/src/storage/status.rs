//! The one place where a [`StorageError`] becomes a Kubernetes `Status` (apiVersion v1, kind Status).
//!
//! kube-apiserver translates storage errors per operation (`storeerr.InterpretGetError`, `...CreateError`,
//! `...UpdateError`, `...DeleteError`, `...ListError`): the same "key exists" is 409 AlreadyExists on create
//! but 409 Conflict on update. Errors its etcd3 store raises as API errors already (bad resourceVersion,
//! too large resourceVersion, compacted revisions) keep their status whatever the operation, and anything
//! else becomes a 500 with an empty reason and the raw text, as its `ErrorToAPIStatus` does. Codes, reasons
//! and message texts are kube-apiserver's.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusCause, StatusDetails};

use crate::storage::error::StorageError;

/// The resource an operation acted on, as kube-apiserver names it in messages (`configmaps`, `deployments.apps`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupResource {
    /// The API group; empty for the core group.
    pub group: String,
    /// The plural resource name.
    pub resource: String,
}

impl GroupResource {
    pub fn new(group: &str, resource: &str) -> GroupResource {
        GroupResource { group: group.to_string(), resource: resource.to_string() }
    }

    /// `resource.group`, or `resource` for the core group.
    pub(crate) fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// The storage operation that failed; it decides how some errors read (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Get,
    List,
    Create,
    Update,
    Delete,
    Watch,
}

impl Operation {
    fn verb(self) -> &'static str {
        match self {
            Operation::Get => "get",
            Operation::List => "list",
            Operation::Create => "create",
            Operation::Update => "update",
            Operation::Delete => "delete",
            Operation::Watch => "watch",
        }
    }
}

/// How long a client should wait before retrying when the store is unreachable (kube-apiserver's fixed 2 s).
const UNREACHABLE_RETRY_AFTER_S: i32 = 2;

impl StorageError {
    /// The `Status` kube-apiserver answers with when `op` on `resource`/`name` fails with this error.
    pub fn to_status(&self, op: Operation, resource: &GroupResource, name: &str) -> Status {
        use StorageError as E;
        match (self, op) {
            (E::KeyNotFound { .. }, Operation::List) => not_found(resource, ""),
            (E::KeyNotFound { .. }, Operation::Get | Operation::Update | Operation::Delete) => {
                not_found(resource, name)
            }
            (E::KeyExists { .. }, Operation::Create) => already_exists(resource, name),
            (
                E::ResourceVersionConflicts { .. } | E::KeyExists { .. } | E::InvalidObj { .. },
                Operation::Update | Operation::Delete,
            ) => conflict(resource, name, &self.to_string()),
            (
                E::Unreachable { .. },
                Operation::Get | Operation::List | Operation::Create | Operation::Update | Operation::Delete,
            ) => server_timeout(resource, op.verb(), UNREACHABLE_RETRY_AFTER_S),
            (E::Internal(message), _) => internal_error(message),
            (E::InvalidResourceVersion { .. }, Operation::Get | Operation::List) => {
                bad_request(&format!("invalid resource version: {self}"))
            }
            (E::InvalidContinue(_) | E::ResourceVersionWithContinue, _) => bad_request(&self.to_string()),
            (E::TooLargeResourceVersion { retry_after_s, .. }, _) => {
                too_large_resource_version(&self.to_string(), *retry_after_s)
            }
            (E::ListExpired | E::WatchExpired | E::TooOldResourceVersion { .. }, _) => expired(&self.to_string(), None),
            (E::ContinueExpired { continue_token }, _) => expired(&self.to_string(), Some(continue_token.clone())),
            (E::Caller(status), _) => (**status).clone(),
            (E::NotReady { message, retry_after_s }, _) => too_many_requests(message, *retry_after_s),
            // newErrWatcher's fallback for an error that is not an API status: raw text, no details.
            (E::FeatureDisabled(_), _) => failure(500, "InternalError", self.to_string(), None),
            // A bare storage conflict is a 409 with no reason; everything else uninterpreted is a 500.
            (E::ResourceVersionConflicts { .. }, _) => unknown(409, &self.to_string()),
            _ => unknown(500, &self.to_string()),
        }
    }
}

fn failure(code: i32, reason: &str, message: String, details: Option<StatusDetails>) -> Status {
    Status {
        code: Some(code),
        details,
        message: Some(message),
        metadata: ListMeta::default(),
        // kube-apiserver omits an empty reason (StatusReasonUnknown).
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        status: Some("Failure".to_string()),
    }
}

/// A `details.group`: kube-apiserver leaves an empty group out (`omitempty`), so the core group has none.
pub(crate) fn non_empty(group: &str) -> Option<String> {
    (!group.is_empty()).then(|| group.to_string())
}

/// Details naming an object: kube-apiserver puts the resource plural in `kind`.
pub(crate) fn object_details(resource: &GroupResource, name: &str) -> StatusDetails {
    StatusDetails {
        group: non_empty(&resource.group),
        kind: Some(resource.resource.clone()),
        name: Some(name.to_string()),
        ..StatusDetails::default()
    }
}

/// 404 NotFound: `<resource> "<name>" not found`.
pub(crate) fn not_found(resource: &GroupResource, name: &str) -> Status {
    let message = format!("{} {name:?} not found", resource.qualified());
    failure(404, "NotFound", message, Some(object_details(resource, name)))
}

/// 409 AlreadyExists: `<resource> "<name>" already exists`.
pub(crate) fn already_exists(resource: &GroupResource, name: &str) -> Status {
    let message = format!("{} {name:?} already exists", resource.qualified());
    failure(409, "AlreadyExists", message, Some(object_details(resource, name)))
}

/// 409 Conflict: `Operation cannot be fulfilled on <resource> "<name>": <why>`.
pub fn conflict(resource: &GroupResource, name: &str, why: &str) -> Status {
    let message = format!("Operation cannot be fulfilled on {} {name:?}: {why}", resource.qualified());
    failure(409, "Conflict", message, Some(object_details(resource, name)))
}

/// 500 ServerTimeout: the store could not be reached; `details.name` is the operation, as upstream has it.
pub(crate) fn server_timeout(resource: &GroupResource, operation: &str, retry_after_s: i32) -> Status {
    let message = format!(
        "The {operation} operation against {} could not be completed at this time, please try again.",
        resource.qualified()
    );
    let details = StatusDetails {
        group: non_empty(&resource.group),
        kind: Some(resource.resource.clone()),
        name: Some(operation.to_string()),
        retry_after_seconds: Some(retry_after_s),
        ..StatusDetails::default()
    };
    failure(500, "ServerTimeout", message, Some(details))
}

/// 500 InternalError: `Internal error occurred: <why>`, with the text as the one cause.
pub(crate) fn internal_error(why: &str) -> Status {
    let details = StatusDetails {
        causes: Some(vec![StatusCause { message: Some(why.to_string()), ..StatusCause::default() }]),
        ..StatusDetails::default()
    };
    failure(500, "InternalError", format!("Internal error occurred: {why}"), Some(details))
}

/// 400 BadRequest with free text.
pub(crate) fn bad_request(message: &str) -> Status {
    failure(400, "BadRequest", message.to_string(), None)
}

/// 504 Timeout `Timeout: Too large resource version: N, current: M` with the ResourceVersionTooLarge cause.
/// The store answers with no retry hint; the watch cache with 1 s.
pub(crate) fn too_large_resource_version(message: &str, retry_after_s: i32) -> Status {
    let details = StatusDetails {
        causes: Some(vec![StatusCause {
            reason: Some("ResourceVersionTooLarge".to_string()),
            message: Some("Too large resource version".to_string()),
            field: None,
        }]),
        retry_after_seconds: (retry_after_s > 0).then_some(retry_after_s),
        ..StatusDetails::default()
    };
    failure(504, "Timeout", format!("Timeout: {message}"), Some(details))
}

/// 429 TooManyRequests with free text and a retry hint (`errors.NewTooManyRequests`).
pub(crate) fn too_many_requests(message: &str, retry_after_s: i32) -> Status {
    let details = StatusDetails { retry_after_seconds: Some(retry_after_s), ..StatusDetails::default() };
    failure(429, "TooManyRequests", message.to_string(), Some(details))
}

/// 410 Expired with free text; a compacted continue token carries the inconsistent-continue token.
pub(crate) fn expired(message: &str, continue_token: Option<String>) -> Status {
    let mut status = failure(410, "Expired", message.to_string(), None);
    status.metadata.continue_ = continue_token;
    status
}

/// An error that is not an API status: kube-apiserver answers `code` with an empty reason and the raw text.
pub(crate) fn unknown(code: i32, message: &str) -> Status {
    failure(code, "", message.to_string(), None)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn wire(status: &Status) -> serde_json::Value {
        serde_json::to_value(status).unwrap()
    }

    #[test]
    fn statuses_read_as_kube_apiserver_writes_them() {
        let cm = GroupResource::new("", "configmaps");
        let deploy = GroupResource::new("apps", "deployments");
        let key = "/registry/configmaps/ns/x".to_string();
        let cases: Vec<(StorageError, Operation, &GroupResource, serde_json::Value)> = vec![
            (
                StorageError::KeyNotFound { key: key.clone(), rv: 0 },
                Operation::Get,
                &cm,
                json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":404,"reason":"NotFound",
                       "message":"configmaps \"x\" not found","details":{"kind":"configmaps","name":"x"}}),
            ),
            (
                StorageError::KeyExists { key: key.clone(), rv: 0 },
                Operation::Create,
                &deploy,
                json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":409,"reason":"AlreadyExists",
                       "message":"deployments.apps \"x\" already exists","details":{"group":"apps","kind":"deployments","name":"x"}}),
            ),
            (
                StorageError::InvalidObj {
                    key: key.clone(),
                    message: "Precondition failed: UID in precondition: a, UID in object meta: b".into(),
                },
                Operation::Delete,
                &cm,
                json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":409,"reason":"Conflict",
                       "message":"Operation cannot be fulfilled on configmaps \"x\": StorageError: invalid object, Code: 4, Key: /registry/configmaps/ns/x, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: a, UID in object meta: b",
                       "details":{"kind":"configmaps","name":"x"}}),
            ),
            (
                StorageError::Unreachable { key: key.clone(), message: "connection refused".into() },
                Operation::Update,
                &cm,
                json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":500,"reason":"ServerTimeout",
                       "message":"The update operation against configmaps could not be completed at this time, please try again.",
                       "details":{"kind":"configmaps","name":"update","retryAfterSeconds":2}}),
            ),
            (
                StorageError::TooLargeResourceVersion { requested: 10, current: 5, retry_after_s: 0 },
                Operation::Get,
                &cm,
                json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":504,"reason":"Timeout",
                       "message":"Timeout: Too large resource version: 10, current: 5",
                       "details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]}}),
            ),
            (
                StorageError::ContinueExpired { continue_token: "tok".into() },
                Operation::List,
                &cm,
                json!({"apiVersion":"v1","kind":"Status","metadata":{"continue":"tok"},"status":"Failure","code":410,"reason":"Expired",
                       "message":CONTINUE_EXPIRED_FOR_TEST}),
            ),
            (
                StorageError::ResourceVersionSetOnCreate,
                Operation::Create,
                &cm,
                json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":500,
                       "message":"resourceVersion should not be set on objects to be created"}),
            ),
            (
                StorageError::InvalidResourceVersion {
                    value: "x".into(),
                    reason: "strconv.ParseUint: parsing \"x\": invalid syntax".into(),
                },
                Operation::List,
                &cm,
                json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":400,"reason":"BadRequest",
                       "message":"invalid resource version: resourceVersion: Invalid value: \"x\": strconv.ParseUint: parsing \"x\": invalid syntax"}),
            ),
        ];
        for (err, op, resource, want) in cases {
            assert_eq!(wire(&err.to_status(op, resource, "x")), want, "{err:?} on {op:?}");
        }
    }

    const CONTINUE_EXPIRED_FOR_TEST: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";
}
