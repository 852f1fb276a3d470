//! The lease table: grants, deadlines, attached keys.

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

#[derive(Debug, Default)]
pub struct Lessor {}

impl Lessor {
    /// `min_ttl_s` is etcd's minimum TTL: ceil(1.5 × election timeout), 2 s with etcd's defaults.
    pub fn new(min_ttl_s: i64) -> Lessor {
        let _ = min_ttl_s;
        todo!()
    }

    /// Grants lease `id` (never 0: the caller picks an id first) and returns the TTL actually granted.
    /// Errors: `LeaseExist`, `LeaseTtlTooLarge`.
    pub fn grant(&mut self, id: LeaseId, ttl_s: i64, now: Millis) -> Result<i64, EtcdError> {
        let _ = (id, ttl_s, now);
        todo!()
    }

    /// Removes the lease and returns its attached keys in ascending order. Errors: `LeaseNotFound`.
    pub fn revoke(&mut self, id: LeaseId) -> Result<Vec<Vec<u8>>, EtcdError> {
        let _ = id;
        todo!()
    }

    pub fn contains(&self, id: LeaseId) -> bool {
        let _ = id;
        todo!()
    }

    /// Attaches `key` to lease `id` (which must exist).
    pub fn attach(&mut self, id: LeaseId, key: &[u8]) {
        let _ = (id, key);
        todo!()
    }

    /// Detaches `key` from lease `id`; a no-op if either is gone.
    pub fn detach(&mut self, id: LeaseId, key: &[u8]) {
        let _ = (id, key);
        todo!()
    }

    /// Keep-alive: resets the deadline to `now + granted TTL` and returns the TTL. Errors: `LeaseNotFound`
    /// for an unknown or already expired lease.
    pub fn renew(&mut self, id: LeaseId, now: Millis) -> Result<i64, EtcdError> {
        let _ = (id, now);
        todo!()
    }

    /// `None` for an unknown or expired lease (etcd then answers TTL = -1).
    pub fn time_to_live(&self, id: LeaseId, now: Millis) -> Option<TimeToLive> {
        let _ = (id, now);
        todo!()
    }

    /// Every lease id, ascending.
    pub fn leases(&self) -> Vec<LeaseId> {
        todo!()
    }

    /// Leases whose deadline is at or before `now`, ascending by id. They stay in the table until revoked.
    pub fn expired(&self, now: Millis) -> Vec<LeaseId> {
        let _ = now;
        todo!()
    }

    /// What a new leader does (etcd's `Promote`): every lease's deadline becomes `now + extend + its TTL`.
    pub fn promote(&mut self, now: Millis, extend_ms: u64) {
        let _ = (now, extend_ms);
        todo!()
    }
}
