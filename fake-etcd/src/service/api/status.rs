//! The one place where fake-etcd errors become gRPC statuses.

use crate::error::{Code, EtcdError};

pub(crate) fn to_status(err: &EtcdError) -> tonic::Status {
    let code = match err.code() {
        Code::InvalidArgument => tonic::Code::InvalidArgument,
        Code::OutOfRange => tonic::Code::OutOfRange,
        Code::NotFound => tonic::Code::NotFound,
        Code::FailedPrecondition => tonic::Code::FailedPrecondition,
        Code::ResourceExhausted => tonic::Code::ResourceExhausted,
        Code::Unavailable => tonic::Code::Unavailable,
        Code::Unimplemented => tonic::Code::Unimplemented,
        Code::PermissionDenied => tonic::Code::PermissionDenied,
        Code::Unauthenticated => tonic::Code::Unauthenticated,
        Code::Unknown => tonic::Code::Unknown,
    };
    tonic::Status::new(code, err.to_string())
}

impl From<EtcdError> for tonic::Status {
    fn from(err: EtcdError) -> tonic::Status {
        to_status(&err)
    }
}
