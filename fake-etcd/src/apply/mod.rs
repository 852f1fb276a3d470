//! The state machine every committed request is applied to: KV requests (range, put, delete, txn, compact),
//! lease grant/revoke and auth requests over the MVCC store, the lease table and the auth store, each
//! checked first against the permissions of the user who made it ([`permit`]). Sans IO; time comes in as
//! [`Millis`].
//!
//! Semantics are etcd 3.4's `etcdserver/apply.go` (and `mvcc`, `lease`): sorting and
//! min/max filters, `count` and `more`, txn compares (a VALUE compare on a missing key is false), nested
//! txns, one revision per txn, later ops seeing earlier writes, lease checks, revoke deleting every attached
//! key at one revision. Checks that etcd makes before Raft live in [`validate`], so a request that fails
//! them never reaches `apply`.
//!
//! Responses carry a header with only `revision` set; the shell stamps cluster id, member id and term.
//! What this module must not do: read a clock, pick lease ids, or know about watchers and streams.
//!
//! [`Millis`]: crate::types::Millis

mod command;
mod compare;
mod permit;
mod range;
mod snapshot;
mod state;
mod txn;
pub mod validate;
mod write_ops;

#[cfg(test)]
mod tests;

pub use command::{Command, CommandResponse};
pub use state::StateMachine;
