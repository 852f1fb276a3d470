//! Newtypes for etcd's protocol numbers, so that a revision is never passed where a lease id is expected.
//!
//! The wire types (`etcd-proto`) carry raw integers; conversions happen at the edges of the cores.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A store revision (etcd's "main" revision). Starts at 1 for an empty store; every mutating request
/// that changes at least one key bumps it by exactly one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Revision(pub i64);

impl Revision {
    pub const ZERO: Revision = Revision(0);

    pub fn next(self) -> Revision {
        Revision(self.0 + 1)
    }

    pub fn prev(self) -> Revision {
        Revision(self.0 - 1)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A lease id. 0 means "no lease" on the wire; [`LeaseId::NONE`] names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct LeaseId(pub i64);

impl LeaseId {
    pub const NONE: LeaseId = LeaseId(0);

    pub fn is_none(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // etcdctl prints lease ids in hex.
        write!(f, "{:x}", self.0)
    }
}

/// A member id, as etcd derives it from the member's name and peer URLs and the cluster token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberId(pub u64);

impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}", self.0)
    }
}

/// A cluster id, derived from the ids of the initial members.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterId(pub u64);

/// A Raft term. A single member without Raft reports the term etcd reports after its first self-election.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Term(pub u64);

/// A point on the member's monotonic clock, in milliseconds since the member started. The cores never read a
/// clock: the async shell passes `now` in (madsim's simulated clock under `--cfg madsim`, the real one otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct Millis(pub u64);

impl Millis {
    pub(crate) fn plus_s(self, seconds: i64) -> Millis {
        Millis(self.0.saturating_add((seconds.max(0) as u64).saturating_mul(1000)))
    }
}

/// A position in the Raft log. Index 0 is "before the first entry": a fresh log is empty and its last index is 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogIndex(pub u64);

impl fmt::Display for LogIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The auth store's revision: bumped by every change to users, roles or permissions (and by disabling
/// auth), so that a request checked against an older store can be told apart. A fresh store is at 1; 0 is
/// what a request without a user carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct AuthRevision(pub u64);

impl AuthRevision {
    pub(crate) fn next(self) -> AuthRevision {
        AuthRevision(self.0 + 1)
    }
}
