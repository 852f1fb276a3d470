//! The apiserver's guarantees, one checker each, named after the guarantee, over an [`ApiHistory`]: pure
//! functions, no IO, no clock, no randomness.
//!
//! - [`watch_from_rv`]: a watch from resourceVersion N delivers every change after N, in order, exactly
//!   once, or fails with 410 Expired;
//! - [`consistent_read`]: a consistent read (resourceVersion unset) sees every write acknowledged before it
//!   started;
//! - [`cache_parity`]: the outcomes of a scripted write sequence are the same without the watch cache.
//!
//! The first two compare what clients saw with the etcd-side record of the registry prefix
//! ([`ApiHistory::changes`]); the third compares two runs of one seed.

pub mod cache_parity;
pub mod consistent_read;
pub mod watch_from_rv;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use crate::history::apiserver::{ApiHistory, Change, ChangeKind};

/// The guarantees checked here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ApiGuarantee {
    WatchFromResourceVersion,
    ConsistentReadSeesAcknowledgedWrites,
    WriteOutcomesSameWithoutWatchCache,
}

impl ApiGuarantee {
    pub fn statement(self) -> &'static str {
        match self {
            ApiGuarantee::WatchFromResourceVersion => {
                "a watch from resourceVersion N delivers every change after N (in order, exactly once) or fails \
                 with 410 Expired"
            }
            ApiGuarantee::ConsistentReadSeesAcknowledgedWrites => {
                "a consistent read (list or get with resourceVersion unset) sees every write acknowledged before \
                 it started"
            }
            ApiGuarantee::WriteOutcomesSameWithoutWatchCache => {
                "write outcomes are the same with the watch cache on and off"
            }
        }
    }
}

impl fmt::Display for ApiGuarantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A broken guarantee, with what was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiViolation {
    pub guarantee: ApiGuarantee,
    pub details: String,
}

impl fmt::Display for ApiViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broke {} (\"{}\"): {}", self.guarantee, self.guarantee.statement(), self.details)
    }
}

/// Runs the checkers that read one history.
pub fn check_run(history: &ApiHistory) -> Vec<ApiViolation> {
    let mut found = watch_from_rv::check(history);
    found.extend(consistent_read::check(history));
    found
}

/// The state of every key at a revision, replayed from the etcd-side changes.
pub(crate) fn state_at(changes: &[Change], rev: u64) -> BTreeMap<&str, u64> {
    let mut state = BTreeMap::new();
    for c in changes.iter().take_while(|c| c.rev <= rev) {
        match c.kind {
            ChangeKind::Put => state.insert(c.key.as_str(), c.rev),
            ChangeKind::Delete => state.remove(c.key.as_str()),
        };
    }
    state
}
