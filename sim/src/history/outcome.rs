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
