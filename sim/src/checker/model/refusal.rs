//! `Refusal`: the errors the model predicts, in the model's own words: etcd's refusals that depend only on
//! the request and the state, each with the gRPC code and the exact text an etcd 3.4 client receives
//! (`rpctypes/error.go`).
//!
//! The model keeps its own list, rather than borrowing fake-etcd's error type, because a checker must not
//! depend on the implementation it judges: if fake-etcd changed a text or a code, the checker would follow
//! it silently instead of catching it. `checker::linearizable`'s differential test holds the two lists
//! against each other.

use std::fmt;

use crate::history::{ErrorStatus, GrpcCode};

/// An error etcd answers whatever the timing: the request itself, or the state it met, rules it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Refusal {
    EmptyKey,
    KeyNotFound,
    ValueProvided,
    LeaseProvided,
    TooManyOps,
    DuplicateKey,
    Compacted,
    FutureRev,
    LeaseNotFound,
    LeaseExist,
    LeaseTtlTooLarge,
}

impl Refusal {
    pub const ALL: [Refusal; 11] = [
        Refusal::EmptyKey,
        Refusal::KeyNotFound,
        Refusal::ValueProvided,
        Refusal::LeaseProvided,
        Refusal::TooManyOps,
        Refusal::DuplicateKey,
        Refusal::Compacted,
        Refusal::FutureRev,
        Refusal::LeaseNotFound,
        Refusal::LeaseExist,
        Refusal::LeaseTtlTooLarge,
    ];

    /// The text an etcd client receives, byte for byte (clients match on the whole string).
    pub fn message(self) -> &'static str {
        match self {
            Refusal::EmptyKey => "etcdserver: key is not provided",
            Refusal::KeyNotFound => "etcdserver: key not found",
            Refusal::ValueProvided => "etcdserver: value is provided",
            Refusal::LeaseProvided => "etcdserver: lease is provided",
            Refusal::TooManyOps => "etcdserver: too many operations in txn request",
            Refusal::DuplicateKey => "etcdserver: duplicate key given in txn request",
            Refusal::Compacted => "etcdserver: mvcc: required revision has been compacted",
            Refusal::FutureRev => "etcdserver: mvcc: required revision is a future revision",
            Refusal::LeaseNotFound => "etcdserver: requested lease not found",
            Refusal::LeaseExist => "etcdserver: lease already exists",
            Refusal::LeaseTtlTooLarge => "etcdserver: too large lease TTL",
        }
    }

    /// The gRPC code etcd sends with it.
    pub fn code(self) -> GrpcCode {
        match self {
            Refusal::EmptyKey
            | Refusal::KeyNotFound
            | Refusal::ValueProvided
            | Refusal::LeaseProvided
            | Refusal::TooManyOps
            | Refusal::DuplicateKey => GrpcCode::InvalidArgument,
            Refusal::Compacted | Refusal::FutureRev | Refusal::LeaseTtlTooLarge => GrpcCode::OutOfRange,
            Refusal::LeaseNotFound => GrpcCode::NotFound,
            Refusal::LeaseExist => GrpcCode::FailedPrecondition,
        }
    }

    /// The status a client sees for this refusal.
    pub fn status(self) -> ErrorStatus {
        ErrorStatus::new(self.code(), self.message())
    }

    /// The refusal a client's error status reports, if it is one: the status says for certain that the
    /// request did nothing. Availability errors (no leader, timeouts, a connection reset after sending) and
    /// anything unfamiliar are not refusals; they leave the outcome unknown.
    pub fn of(status: &ErrorStatus) -> Option<Refusal> {
        Refusal::ALL.into_iter().find(|r| r.message() == status.message)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}
