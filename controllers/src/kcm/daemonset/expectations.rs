//! The pod creations and deletions each DaemonSet waits to see before it manages its pods again
//! (kube-controller-manager 1.32, `pkg/controller/controller_utils.go` `ControllerExpectations`, which the
//! DaemonSet controller uses plain: unlike the ReplicaSet's `UIDTrackingControllerExpectations`, a
//! deletion counts by number, and one sync sets creations and deletions together with `SetExpectations`).
//!
//! The record and its five-minute expiry are the ReplicaSet module's ([`Controllee`],
//! [`EXPECTATIONS_TIMEOUT`]); only the bookkeeping that differs lives here. Sans-IO: time comes in as a
//! `Duration` since an origin the caller picks.

use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::kcm::replicaset::expectations::{Controllee, EXPECTATIONS_TIMEOUT};

/// Every DaemonSet's expectations, by its `namespace/name` key.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    counts: BTreeMap<String, Controllee>,
}

impl Expectations {
    /// `GetExpectations`.
    pub fn get(&self, key: &str) -> Option<Controllee> {
        self.counts.get(key).copied()
    }

    /// `SatisfiedExpectations`: met, expired (strictly after five minutes), or never recorded.
    pub fn satisfied(&self, key: &str, now: Duration) -> bool {
        match self.counts.get(key) {
            Some(exp) => exp.fulfilled() || now.saturating_sub(exp.timestamp) > EXPECTATIONS_TIMEOUT,
            None => true,
        }
    }

    /// `SetExpectations`: replaces whatever was expected.
    pub fn set(&mut self, key: &str, add: usize, del: usize, now: Duration) {
        let n = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        self.counts.insert(key.to_string(), Controllee { add: n(add), del: n(del), timestamp: now });
    }

    /// `LowerExpectations`: only a DaemonSet with expectations changes.
    pub fn lower(&mut self, key: &str, add: usize, del: usize) {
        if let Some(exp) = self.counts.get_mut(key) {
            exp.add -= i64::try_from(add).unwrap_or(i64::MAX);
            exp.del -= i64::try_from(del).unwrap_or(i64::MAX);
        }
    }

    /// `CreationObserved`.
    pub fn creation_observed(&mut self, key: &str) {
        self.lower(key, 1, 0);
    }

    /// `DeletionObserved`.
    pub fn deletion_observed(&mut self, key: &str) {
        self.lower(key, 0, 1);
    }

    /// `DeleteExpectations`.
    pub fn delete(&mut self, key: &str) {
        self.counts.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn creations_and_deletions_are_awaited_together() {
        // (creations, deletions) expected, then observations: (created?, now) with whether satisfied after.
        let cases: &[(&str, (usize, usize), &[(bool, Duration, bool)])] = &[
            ("nothing expected", (0, 0), &[]),
            ("both kinds", (1, 2), &[(true, MIN, false), (false, MIN, false), (false, MIN, true)]),
            ("more deletions than expected", (0, 1), &[(false, MIN, true), (false, MIN, true)]),
        ];
        for (name, (add, del), steps) in cases {
            let mut exp = Expectations::default();
            exp.set("ns/d", *add, *del, MIN);
            assert_eq!(exp.satisfied("ns/d", MIN), *add == 0 && *del == 0, "{name}, at first");
            for (i, (created, now, want)) in steps.iter().enumerate() {
                if *created {
                    exp.creation_observed("ns/d");
                } else {
                    exp.deletion_observed("ns/d");
                }
                assert_eq!(exp.satisfied("ns/d", *now), *want, "{name}, step {i}");
            }
        }
    }

    #[test]
    fn expectations_expire_lower_and_go() {
        let mut exp = Expectations::default();
        assert!(exp.satisfied("ns/d", MIN), "none recorded");
        exp.set("ns/d", 3, 0, MIN);
        assert!(!exp.satisfied("ns/d", MIN * 6));
        assert!(exp.satisfied("ns/d", MIN * 6 + Duration::from_nanos(1)));
        exp.lower("ns/d", 3, 0);
        assert_eq!(exp.get("ns/d"), Some(Controllee { add: 0, del: 0, timestamp: MIN }));
        exp.delete("ns/d");
        assert_eq!(exp.get("ns/d"), None);
        exp.creation_observed("ns/d");
        assert_eq!(exp.get("ns/d"), None, "observations without expectations record nothing");
    }
}
