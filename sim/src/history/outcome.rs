//! How a KV request ended, from the client's side: a response, an error status, or no answer at all.

use serde::{Deserialize, Serialize};

use super::Response;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// The server answered with a response.
    Ok(Response),
    /// The server (or the client library) answered with a gRPC error status.
    Err(ErrorStatus),
    /// No answer: the client timed out or lost its connection. The request may or may not have taken effect.
    Unknown { reason: String },
    /// The request never left the client (no connection could be made), so it certainly took no effect.
    NotSent { reason: String },
}

/// A gRPC error as the client saw it: the code, and the message text etcd clients match on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorStatus {
    pub code: GrpcCode,
    pub message: String,
}

impl ErrorStatus {
    pub fn new(code: GrpcCode, message: impl Into<String>) -> ErrorStatus {
        ErrorStatus { code, message: message.into() }
    }

    /// Whether the error says for certain that the request did nothing: etcd's errors that depend only on
    /// the request and the state (the model can produce them). Availability errors (no leader, timeouts, a
    /// connection reset after sending) and anything unfamiliar leave the outcome unknown.
    pub fn is_definite(&self) -> bool {
        use fake_etcd::EtcdError;
        const DEFINITE: [EtcdError; 11] = [
            EtcdError::EmptyKey,
            EtcdError::KeyNotFound,
            EtcdError::ValueProvided,
            EtcdError::LeaseProvided,
            EtcdError::TooManyOps,
            EtcdError::DuplicateKey,
            EtcdError::Compacted,
            EtcdError::FutureRev,
            EtcdError::LeaseNotFound,
            EtcdError::LeaseExist,
            EtcdError::LeaseTtlTooLarge,
        ];
        DEFINITE.iter().any(|e| e.to_string() == self.message)
    }
}

impl From<&fake_etcd::EtcdError> for ErrorStatus {
    fn from(err: &fake_etcd::EtcdError) -> ErrorStatus {
        ErrorStatus { code: err.code().into(), message: err.to_string() }
    }
}

/// The gRPC status codes (the numbering is gRPC's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GrpcCode {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl GrpcCode {
    /// The code with gRPC number `n`; unassigned numbers read as `Unknown`, as gRPC itself reads them.
    pub fn from_i32(n: i32) -> GrpcCode {
        use GrpcCode::*;
        const ALL: [GrpcCode; 17] = [
            Ok,
            Cancelled,
            Unknown,
            InvalidArgument,
            DeadlineExceeded,
            NotFound,
            AlreadyExists,
            PermissionDenied,
            ResourceExhausted,
            FailedPrecondition,
            Aborted,
            OutOfRange,
            Unimplemented,
            Internal,
            Unavailable,
            DataLoss,
            Unauthenticated,
        ];
        usize::try_from(n).ok().and_then(|i| ALL.get(i).copied()).unwrap_or(Unknown)
    }
}

impl From<fake_etcd::error::Code> for GrpcCode {
    fn from(code: fake_etcd::error::Code) -> GrpcCode {
        use fake_etcd::error::Code;
        match code {
            Code::InvalidArgument => GrpcCode::InvalidArgument,
            Code::OutOfRange => GrpcCode::OutOfRange,
            Code::NotFound => GrpcCode::NotFound,
            Code::FailedPrecondition => GrpcCode::FailedPrecondition,
            Code::ResourceExhausted => GrpcCode::ResourceExhausted,
            Code::Unavailable => GrpcCode::Unavailable,
            Code::Unimplemented => GrpcCode::Unimplemented,
        }
    }
}
