//! The lease table: grants, deadlines, attached keys.

use std::collections::{BTreeMap, BTreeSet};

use super::MAX_LEASE_TTL_S;
use crate::error::EtcdError;
use crate::types::{LeaseId, Millis};

/// What LeaseTimeToLive reports for a live lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeToLive {
    /// Whole seconds left, rounded as etcd rounds them.
    pub ttl_s: i64,
    pub granted_ttl_s: i64,
    /// Attached keys in ascending order.
    pub keys: Vec<Vec<u8>>,
}

/// One granted lease.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Lease {
    /// The TTL in force (the requested one, raised to the minimum).
    ttl_s: i64,
    /// The lease expires when the clock reaches this point.
    deadline: Millis,
    keys: BTreeSet<Vec<u8>>,
}

impl Lease {
    fn is_expired(&self, now: Millis) -> bool {
        self.deadline <= now
    }
}

/// Serialisable for state-machine snapshots (`apply::StateMachine::snapshot`); the layout is internal.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Lessor {
    min_ttl_s: i64,
    leases: BTreeMap<LeaseId, Lease>,
    /// Which lease each attached key belongs to (etcd's `itemMap`); the mirror of every `Lease::keys`.
    items: BTreeMap<Vec<u8>, LeaseId>,
}

impl Lessor {
    /// `min_ttl_s` is etcd's minimum TTL: ceil(1.5 × election timeout), 2 s with etcd's defaults.
    pub(crate) fn new(min_ttl_s: i64) -> Lessor {
        Lessor { min_ttl_s, leases: BTreeMap::new(), items: BTreeMap::new() }
    }

    /// Grants lease `id` (never 0: the caller picks an id first) and returns the TTL actually granted.
    /// Errors: `LeaseExist`, `LeaseTtlTooLarge`; and `LeaseNotFound` for id 0, as etcd's lessor answers it.
    /// The size check comes before the existence check, as in etcd.
    pub(crate) fn grant(&mut self, id: LeaseId, ttl_s: i64, now: Millis) -> Result<i64, EtcdError> {
        if id.is_none() {
            return Err(EtcdError::LeaseNotFound);
        }
        if ttl_s > MAX_LEASE_TTL_S {
            return Err(EtcdError::LeaseTtlTooLarge);
        }
        if self.leases.contains_key(&id) {
            return Err(EtcdError::LeaseExist);
        }
        let ttl_s = ttl_s.max(self.min_ttl_s);
        self.leases.insert(id, Lease { ttl_s, deadline: now.plus_s(ttl_s), keys: BTreeSet::new() });
        Ok(ttl_s)
    }

    /// Removes the lease and returns its attached keys in ascending order. Errors: `LeaseNotFound`.
    pub(crate) fn revoke(&mut self, id: LeaseId) -> Result<Vec<Vec<u8>>, EtcdError> {
        let lease = self.leases.remove(&id).ok_or(EtcdError::LeaseNotFound)?;
        for key in &lease.keys {
            let owner = self.items.remove(key);
            debug_assert_eq!(owner, Some(id), "item map and lease keys disagree");
        }
        Ok(lease.keys.into_iter().collect())
    }

    pub(crate) fn contains(&self, id: LeaseId) -> bool {
        self.leases.contains_key(&id)
    }

    /// Attaches `key` to lease `id` (which must exist).
    pub(crate) fn attach(&mut self, id: LeaseId, key: &[u8]) {
        let lease = self.leases.get_mut(&id);
        // The apply layer checks that the lease exists before it writes the key; a miss here is a bug.
        assert!(lease.is_some(), "attach to unknown lease {id}");
        if let Some(lease) = lease {
            lease.keys.insert(key.to_vec());
        }
        // A key is detached from its old lease before it is attached to a new one.
        let previous = self.items.insert(key.to_vec(), id);
        debug_assert!(previous.is_none_or(|p| p == id), "{key:?} attached to {id} while still on {previous:?}");
    }

    /// Detaches `key` from lease `id`; a no-op if either is gone.
    pub(crate) fn detach(&mut self, id: LeaseId, key: &[u8]) {
        if let Some(lease) = self.leases.get_mut(&id) {
            let was_attached = lease.keys.remove(key);
            let owner = if was_attached { self.items.remove(key) } else { None };
            debug_assert!(!was_attached || owner == Some(id), "item map and lease keys disagree");
        }
    }

    /// The lease `key` is attached to, if any (a lookup the tests make; the lessor itself goes from leases
    /// to keys).
    #[cfg(test)]
    pub(crate) fn lease_of(&self, key: &[u8]) -> Option<LeaseId> {
        let id = self.items.get(key).copied();
        debug_assert!(id.is_none_or(|id| self.leases.get(&id).is_some_and(|l| l.keys.contains(key))));
        id
    }

    /// Keep-alive: resets the deadline to `now + granted TTL` and returns the TTL. Errors: `LeaseNotFound`
    /// for an unknown or already expired lease.
    pub(crate) fn renew(&mut self, id: LeaseId, now: Millis) -> Result<i64, EtcdError> {
        match self.leases.get_mut(&id) {
            Some(lease) if !lease.is_expired(now) => {
                lease.deadline = now.plus_s(lease.ttl_s);
                Ok(lease.ttl_s)
            }
            _ => Err(EtcdError::LeaseNotFound),
        }
    }

    /// `None` for an unknown or expired lease (etcd then answers TTL = -1).
    ///
    /// The remaining time is truncated to whole seconds, as etcd converts `Remaining().Seconds()` to an
    /// integer: 99.9 s left reads as 99 (the transcript's grant of 100 s read back as 99 at once).
    pub fn time_to_live(&self, id: LeaseId, now: Millis) -> Option<TimeToLive> {
        let lease = self.leases.get(&id).filter(|lease| !lease.is_expired(now))?;
        let remaining_ms = lease.deadline.0 - now.0;
        Some(TimeToLive {
            ttl_s: (remaining_ms / 1000) as i64,
            granted_ttl_s: lease.ttl_s,
            keys: lease.keys.iter().cloned().collect(),
        })
    }

    /// The keys attached to a lease, expired or not (empty for an unknown lease), ascending.
    pub(crate) fn keys(&self, id: LeaseId) -> Vec<Vec<u8>> {
        self.leases.get(&id).map(|lease| lease.keys.iter().cloned().collect()).unwrap_or_default()
    }

    /// Every lease id, ascending.
    pub fn leases(&self) -> Vec<LeaseId> {
        self.leases.keys().copied().collect()
    }

    /// Leases whose deadline is at or before `now`, ascending by id. They stay in the table until revoked.
    pub(crate) fn expired(&self, now: Millis) -> Vec<LeaseId> {
        self.leases.iter().filter(|(_, lease)| lease.is_expired(now)).map(|(id, _)| *id).collect()
    }

    /// What a new leader does (etcd's `Promote`): every lease's deadline becomes `now + extend + its TTL`.
    pub(crate) fn promote(&mut self, now: Millis, extend_ms: u64) {
        let base = Millis(now.0.saturating_add(extend_ms));
        for lease in self.leases.values_mut() {
            lease.deadline = base.plus_s(lease.ttl_s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: LeaseId = LeaseId(0x2040);

    fn lessor_with(id: LeaseId, ttl_s: i64) -> Lessor {
        let mut lessor = Lessor::new(2);
        lessor.grant(id, ttl_s, Millis(0)).unwrap();
        lessor
    }

    #[test]
    fn grant_rules() {
        // (ttl requested, expected result)
        let cases = [
            (60, Ok(60)),
            (2, Ok(2)),
            (1, Ok(2)),
            (0, Ok(2)),
            (-5, Ok(2)),
            (MAX_LEASE_TTL_S, Ok(MAX_LEASE_TTL_S)),
            (MAX_LEASE_TTL_S + 1, Err(EtcdError::LeaseTtlTooLarge)),
        ];
        for (ttl_s, want) in cases {
            let mut lessor = Lessor::new(2);
            assert_eq!(lessor.grant(ID, ttl_s, Millis(1000)), want, "grant {ttl_s}");
            assert_eq!(lessor.contains(ID), want.is_ok());
        }
    }

    #[test]
    fn grant_errors_leave_the_table_unchanged() {
        let mut lessor = lessor_with(ID, 10);
        lessor.attach(ID, b"k");
        let cases = [
            (ID, 60, EtcdError::LeaseExist),
            (ID, MAX_LEASE_TTL_S + 1, EtcdError::LeaseTtlTooLarge),
            (LeaseId::NONE, 60, EtcdError::LeaseNotFound),
        ];
        for (id, ttl_s, want) in cases {
            assert_eq!(lessor.grant(id, ttl_s, Millis(5000)), Err(want));
            assert_eq!(lessor.leases(), vec![ID]);
            assert_eq!(
                lessor.time_to_live(ID, Millis(0)).unwrap(),
                TimeToLive { ttl_s: 10, granted_ttl_s: 10, keys: vec![b"k".to_vec()] }
            );
        }
    }

    #[test]
    fn time_to_live_truncates_remaining_seconds() {
        let lessor = lessor_with(ID, 100);
        // (now in ms, expected remaining seconds; None once expired)
        let cases = [
            (0, Some(100)),
            (1, Some(99)),
            (999, Some(99)),
            (1000, Some(99)),
            (1001, Some(98)),
            (99_001, Some(0)),
            (99_999, Some(0)),
            (100_000, None),
            (200_000, None),
        ];
        for (now, want) in cases {
            assert_eq!(lessor.time_to_live(ID, Millis(now)).map(|t| t.ttl_s), want, "at {now} ms");
        }
        assert_eq!(lessor.time_to_live(LeaseId(1), Millis(0)), None);
    }

    #[test]
    fn renew_resets_the_deadline_unless_expired() {
        let mut lessor = lessor_with(ID, 10);
        assert_eq!(lessor.renew(ID, Millis(9_000)), Ok(10));
        assert_eq!(lessor.time_to_live(ID, Millis(9_000)).unwrap().ttl_s, 10);
        assert_eq!(lessor.expired(Millis(18_999)), vec![]);
        assert_eq!(lessor.expired(Millis(19_000)), vec![ID]);
        assert_eq!(lessor.renew(ID, Millis(19_000)), Err(EtcdError::LeaseNotFound));
        // An expired lease stays in the table (with its deadline) until it is revoked.
        assert_eq!(lessor.leases(), vec![ID]);
        assert_eq!(lessor.expired(Millis(19_000)), vec![ID]);
        assert_eq!(lessor.renew(LeaseId(1), Millis(0)), Err(EtcdError::LeaseNotFound));
    }

    #[test]
    fn expired_lists_ids_in_order() {
        let mut lessor = Lessor::new(2);
        for (id, ttl_s) in [(30, 5), (10, 20), (20, 5), (40, 2)] {
            lessor.grant(LeaseId(id), ttl_s, Millis(0)).unwrap();
        }
        let cases: [(u64, &[i64]); 4] =
            [(1_999, &[]), (2_000, &[40]), (5_000, &[20, 30, 40]), (20_000, &[10, 20, 30, 40])];
        for (now, want) in cases {
            let want: Vec<LeaseId> = want.iter().map(|id| LeaseId(*id)).collect();
            assert_eq!(lessor.expired(Millis(now)), want, "at {now}");
        }
        assert_eq!(lessor.leases(), vec![LeaseId(10), LeaseId(20), LeaseId(30), LeaseId(40)]);
    }

    #[test]
    fn attach_detach_and_revoke() {
        let mut lessor = lessor_with(ID, 10);
        lessor.grant(LeaseId(1), 10, Millis(0)).unwrap();
        lessor.attach(ID, b"b");
        lessor.attach(ID, b"a");
        lessor.attach(LeaseId(1), b"c");
        assert_eq!(lessor.lease_of(b"a"), Some(ID));
        lessor.detach(ID, b"b");
        lessor.detach(LeaseId(99), b"a");
        assert_eq!(lessor.revoke(ID), Ok(vec![b"a".to_vec()]));
        assert_eq!(lessor.revoke(ID), Err(EtcdError::LeaseNotFound));
        assert!(!lessor.contains(ID));
        assert_eq!(lessor.lease_of(b"a"), None);
        // Detaching from a revoked lease is a no-op.
        lessor.detach(ID, b"a");
        assert_eq!(lessor.leases(), vec![LeaseId(1)]);
        assert_eq!(lessor.time_to_live(LeaseId(1), Millis(0)).unwrap().keys, vec![b"c".to_vec()]);
    }

    #[test]
    fn promote_extends_every_lease() {
        let mut lessor = lessor_with(ID, 10);
        lessor.grant(LeaseId(1), 3, Millis(0)).unwrap();
        // Both would have expired by 20 s; a new leader at 20 s with a 1 s election timeout extends them.
        lessor.promote(Millis(20_000), 1_000);
        assert_eq!(lessor.expired(Millis(23_999)), vec![]);
        assert_eq!(lessor.expired(Millis(24_000)), vec![LeaseId(1)]);
        assert_eq!(lessor.time_to_live(ID, Millis(20_000)).unwrap().ttl_s, 11);
        assert_eq!(lessor.expired(Millis(31_000)), vec![LeaseId(1), ID]);
    }
}
