//! Why a request got no object, and what a controller does about it: client-go's `errors.IsNotFound`,
//! `IsConflict`, `IsAlreadyExists` and the retry rules of a work queue's handler.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde_json::Value;

/// Why a request got no object.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with this `Status` (its HTTP code in `code`).
    #[error("{} ({code})", status.message.as_deref().unwrap_or("no message"))]
    Status { code: u16, status: Box<Status> },
    /// No answer: the connection could not be made, broke, or the answer was not JSON.
    #[error("{0}")]
    Transport(String),
    /// Not sent: the manager's lease may have passed to another (its fence is closed).
    #[error("not sent: the controller manager's lease may have passed to another manager")]
    Fenced,
}

impl ClientError {
    /// The error of an answer with HTTP code `code` and body `body` (a `Status`, or anything else).
    pub(crate) fn from_status(code: u16, body: Value) -> ClientError {
        let status = serde_json::from_value::<Status>(body.clone()).unwrap_or_else(|_| Status {
            code: Some(i32::from(code)),
            message: Some(format!("an answer that is not a Status: {body}")),
            status: Some("Failure".into()),
            ..Status::default()
        });
        ClientError::Status { code, status: Box::new(status) }
    }

    /// The `Status` reason (`NotFound`, `Conflict`, ...), if the server gave one.
    pub fn reason(&self) -> Option<&str> {
        match self {
            ClientError::Status { status, .. } => status.reason.as_deref(),
            ClientError::Transport(_) | ClientError::Fenced => None,
        }
    }

    /// The HTTP code, if the server answered.
    pub fn code(&self) -> Option<u16> {
        match self {
            ClientError::Status { code, .. } => Some(*code),
            ClientError::Transport(_) | ClientError::Fenced => None,
        }
    }

    /// `errors.IsNotFound`.
    pub fn is_not_found(&self) -> bool {
        self.code() == Some(404)
    }

    /// `errors.IsConflict`.
    pub fn is_conflict(&self) -> bool {
        self.code() == Some(409) && self.reason() != Some("AlreadyExists")
    }

    /// `errors.IsAlreadyExists`.
    pub fn is_already_exists(&self) -> bool {
        self.reason() == Some("AlreadyExists")
    }

    /// `errors.IsGone` or `IsResourceExpired`: a watch or list from a compacted resourceVersion.
    pub fn is_expired(&self) -> bool {
        self.code() == Some(410) || matches!(self.reason(), Some("Expired" | "Gone"))
    }

    /// Whether trying again later may succeed: a transport failure, a timeout, throttling, a server error or
    /// a conflict. A 4xx that is the request's own fault (forbidden, invalid) is not.
    pub fn is_retriable(&self) -> bool {
        match self.code() {
            None => true,
            Some(code) => code == 409 || code == 429 || code >= 500,
        }
    }
}
