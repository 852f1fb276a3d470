//! The pod creations and deletions each ReplicaSet waits to see before it syncs again (kube-controller-manager
//! 1.32, `pkg/controller/controller_utils.go`: `ControllerExpectations` wrapped in
//! `UIDTrackingControllerExpectations`).
//!
//! A sync that creates `n` pods expects `n` creations; one that deletes pods expects the deletion of each by
//! its `namespace/name`, so that a pod seen first with a `deletionTimestamp` and later as gone counts once.
//! Counts only go down as the informer reports pods; a ReplicaSet whose counts are at or below zero, or
//! whose expectations were set more than five minutes ago (`ExpectationsTimeout`, for watch events that
//! never came), is free to sync, as is one with none recorded.
//!
//! Sans-IO: time comes in as `now`, a `Duration` since an origin the caller picks (the controller uses
//! tokio's clock, madsim's under simulation).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::bug::{Bug, Bugs};

/// `ExpectationsTimeout`.
pub const EXPECTATIONS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// `ControlleeExpectations`: what one ReplicaSet still waits for, and when it started waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Controllee {
    pub add: i64,
    pub del: i64,
    pub timestamp: Duration,
}

impl Controllee {
    /// `Fulfilled`.
    pub fn fulfilled(&self) -> bool {
        self.add <= 0 && self.del <= 0
    }

    /// `isExpired`: strictly more than the timeout has passed.
    fn expired(&self, now: Duration) -> bool {
        now.saturating_sub(self.timestamp) > EXPECTATIONS_TIMEOUT
    }
}

/// Every ReplicaSet's expectations, by its `namespace/name` key, and the pod keys each expects deleted.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    counts: BTreeMap<String, Controllee>,
    deleting: BTreeMap<String, BTreeSet<String>>,
}

impl Expectations {
    /// `GetExpectations`.
    pub fn get(&self, key: &str) -> Option<Controllee> {
        self.counts.get(key).copied()
    }

    /// `SatisfiedExpectations`: whether the ReplicaSet at `key` may create or delete pods at `now`.
    pub fn satisfied(&self, key: &str, now: Duration) -> bool {
        match self.counts.get(key) {
            Some(exp) if exp.fulfilled() => true,
            Some(exp) if exp.expired(now) => {
                tracing::debug!(key, "controller expectations expired");
                true
            }
            Some(_) => false,
            // Never recorded, or deleted: nothing to wait for.
            None => true,
        }
    }

    /// Whether a sync of the ReplicaSet or Job at `key` may create or delete pods at `now`: once its
    /// expectations are [`satisfied`](Self::satisfied), or always with the switch
    /// `controller-ignores-expectations`, which trusts the informer cache alone.
    pub fn may_manage(&self, key: &str, now: Duration, bugs: &Bugs) -> bool {
        bugs.has(Bug::IgnoreExpectations) || self.satisfied(key, now)
    }

    /// `SetExpectations`: replaces whatever was expected.
    fn set(&mut self, key: &str, add: i64, del: i64, now: Duration) {
        self.counts.insert(key.to_string(), Controllee { add, del, timestamp: now });
    }

    /// `ExpectCreations`.
    pub fn expect_creations(&mut self, key: &str, adds: usize, now: Duration) {
        self.set(key, i64::try_from(adds).unwrap_or(i64::MAX), 0, now);
    }

    /// `UIDTrackingControllerExpectations.ExpectDeletions`: the pods (by `namespace/name`) about to be deleted.
    pub fn expect_deletions(&mut self, key: &str, pod_keys: &[String], now: Duration) {
        if let Some(existing) = self.deleting.get(key).filter(|s| !s.is_empty()) {
            tracing::error!(key, ?existing, "clobbering existing delete keys");
        }
        let expected: BTreeSet<String> = pod_keys.iter().cloned().collect();
        let dels = i64::try_from(expected.len()).unwrap_or(i64::MAX);
        self.deleting.insert(key.to_string(), expected);
        self.set(key, 0, dels, now);
    }

    /// `LowerExpectations`: only a ReplicaSet with expectations is changed.
    fn lower(&mut self, key: &str, add: i64, del: i64) {
        if let Some(exp) = self.counts.get_mut(key) {
            exp.add -= add;
            exp.del -= del;
        }
    }

    /// `CreationObserved`.
    pub fn creation_observed(&mut self, key: &str) {
        self.lower(key, 1, 0);
    }

    /// `UIDTrackingControllerExpectations.DeletionObserved`: counts a pod only if its deletion was
    /// expected, and only once.
    pub fn deletion_observed(&mut self, key: &str, pod_key: &str) {
        let expected = self.deleting.get_mut(key).is_some_and(|set| set.remove(pod_key));
        if expected {
            self.lower(key, 0, 1);
        }
    }

    /// `DeleteExpectations`: forgets the ReplicaSet (deleted, or a new one of the same name).
    pub fn delete(&mut self, key: &str) {
        self.counts.remove(key);
        self.deleting.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    /// One step of a table: what is done, then whether the ReplicaSet is satisfied at that time.
    enum Step {
        ExpectCreations(usize),
        ExpectDeletions(&'static [&'static str]),
        Created,
        Deleted(&'static str),
        Delete,
        Nothing,
    }

    #[test]
    fn expectations_are_met_by_observations_or_time() {
        use Step::*;
        let cases: &[(&str, &[(Step, Duration, bool)])] = &[
            ("none recorded", &[(Created, MIN, true)]),
            ("creations", &[(ExpectCreations(2), MIN, false), (Created, MIN, false), (Created, MIN, true)]),
            (
                "more observed than expected",
                &[(ExpectCreations(1), MIN, false), (Created, MIN, true), (Created, MIN, true)],
            ),
            (
                "a deletion counts once",
                &[
                    (ExpectDeletions(&["ns/a", "ns/b"]), MIN, false),
                    (Deleted("ns/a"), MIN, false),
                    (Deleted("ns/a"), MIN, false),
                    (Deleted("ns/b"), MIN, true),
                ],
            ),
            (
                "unexpected deletions do not count",
                &[(ExpectDeletions(&["ns/a"]), MIN, false), (Deleted("ns/z"), MIN, false)],
            ),
            (
                "expiry is strictly after five minutes",
                &[
                    (ExpectCreations(3), MIN, false),
                    (Nothing, MIN * 6, false),
                    (Nothing, MIN * 6 + Duration::from_nanos(1), true),
                ],
            ),
            ("deleting forgets", &[(ExpectCreations(1), MIN, false), (Delete, MIN, true)]),
            (
                "new expectations replace old ones",
                &[
                    (ExpectCreations(1), MIN, false),
                    (ExpectDeletions(&["ns/a"]), MIN, false),
                    (Created, MIN, false),
                    (Deleted("ns/a"), MIN, true),
                ],
            ),
        ];
        for (name, steps) in cases {
            let mut exp = Expectations::default();
            for (i, (step, now, want)) in steps.iter().enumerate() {
                match step {
                    // Expectations are set at the first step's time, one minute after the origin.
                    ExpectCreations(n) => exp.expect_creations("ns/rs", *n, MIN),
                    ExpectDeletions(keys) => {
                        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
                        exp.expect_deletions("ns/rs", &keys, MIN)
                    }
                    Created => exp.creation_observed("ns/rs"),
                    Deleted(pod) => exp.deletion_observed("ns/rs", pod),
                    Delete => exp.delete("ns/rs"),
                    Nothing => {}
                }
                assert_eq!(exp.satisfied("ns/rs", *now), *want, "{name}, step {i}");
            }
        }
    }

    #[test]
    fn the_switch_lets_a_sync_manage_before_its_creations_are_seen() {
        let on = Bugs::of(&[Bug::IgnoreExpectations]);
        let cases = [("off", Bugs::default(), false), ("on", on, true)];
        for (name, bugs, want) in cases {
            let mut exp = Expectations::default();
            exp.expect_creations("ns/rs", 2, MIN);
            assert_eq!(exp.may_manage("ns/rs", MIN, &bugs), want, "{name}");
            exp.creation_observed("ns/rs");
            exp.creation_observed("ns/rs");
            assert!(exp.may_manage("ns/rs", MIN, &bugs), "{name}: met expectations");
        }
    }

    #[test]
    fn observations_without_expectations_record_nothing() {
        let mut exp = Expectations::default();
        exp.creation_observed("ns/rs");
        exp.deletion_observed("ns/rs", "ns/p");
        assert_eq!(exp.get("ns/rs"), None);
        exp.expect_creations("ns/rs", 2, MIN);
        exp.creation_observed("ns/other");
        assert_eq!(exp.get("ns/rs"), Some(Controllee { add: 2, del: 0, timestamp: MIN }));
    }
}
