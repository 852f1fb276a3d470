//! Whether a user may read or write a key or a range (etcd 3.4's `isOpPermitted` over the unified
//! permissions of `auth/range_perm_cache.go`).
//!
//! etcd compares keys as "bytes affine" values, in which the empty key is +infinity. A permission is a point
//! (no range end), a range `[key, range_end)`, or `[key, +inf)` (range end `[0]`). A single key is allowed
//! if some permission of the right kind overlaps it; a range only if the permissions of that kind that
//! overlap it cover it without a gap.

use std::cmp::Ordering;

use etcd_proto::etcdserverpb::{request_op, RequestOp, TxnRequest};

use super::request::Permission;
use super::store::AuthStore;
use super::{AuthInfo, ROOT};
use crate::error::EtcdError;

/// What a request wants to do to its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// A key in etcd's affine order: the empty key sorts after every other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Affine<'a>(&'a [u8]);

impl Ord for Affine<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.0.is_empty(), other.0.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self.0.cmp(other.0),
        }
    }
}

impl PartialOrd for Affine<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A half-open interval in affine order; `end` is `None` for one key (the point `[key, key + "\0")`).
struct Interval<'a> {
    begin: Affine<'a>,
    end: End<'a>,
}

#[derive(Clone, Copy)]
enum End<'a> {
    /// Just after this key: the end of a point.
    After(&'a [u8]),
    At(Affine<'a>),
}

impl End<'_> {
    /// Orders two ends; `After(k)` is `k + "\0"`, the smallest key above `k`.
    fn cmp(&self, other: &End<'_>) -> Ordering {
        match (*self, *other) {
            (End::At(a), End::At(b)) => a.cmp(&b),
            (End::After(a), End::After(b)) => Affine(a).cmp(&Affine(b)),
            (End::After(a), End::At(b)) => after_cmp(a, b),
            (End::At(a), End::After(b)) => after_cmp(b, a).reverse(),
        }
    }

    /// Orders this end against a begin key.
    fn cmp_key(&self, key: Affine<'_>) -> Ordering {
        self.cmp(&End::At(key))
    }
}

/// Orders `k + "\0"` against the affine key `b`.
fn after_cmp(k: &[u8], b: Affine<'_>) -> Ordering {
    if k.is_empty() || b.0.is_empty() {
        // +inf + "\0" is still +inf in etcd's comparison of the empty key.
        return Affine(k).cmp(&b);
    }
    let mut extended = k.to_vec();
    extended.push(0);
    extended.as_slice().cmp(b.0)
}

impl<'a> Interval<'a> {
    fn of_permission(p: &'a Permission) -> Interval<'a> {
        match p.range_end.as_slice() {
            [] => Interval { begin: Affine(&p.key), end: End::After(&p.key) },
            [0] => Interval { begin: Affine(&p.key), end: End::At(Affine(&[])) },
            end => Interval { begin: Affine(&p.key), end: End::At(Affine(end)) },
        }
    }

    fn overlaps(&self, other: &Interval<'_>) -> bool {
        self.end.cmp_key(other.begin) == Ordering::Greater && other.end.cmp_key(self.begin) == Ordering::Greater
    }
}

impl AuthStore {
    /// May `by` read or write `[key, range_end)` (one key if `range_end` is empty)? Always while auth is
    /// disabled; a user with the root role may do anything.
    pub(crate) fn check(&self, by: &AuthInfo, key: &[u8], range_end: &[u8], access: Access) -> Result<(), EtcdError> {
        if !self.is_enabled() {
            return Ok(());
        }
        if by.revision.0 == 0 {
            return Err(EtcdError::UserEmpty);
        }
        if by.revision < self.revision() {
            return Err(EtcdError::AuthOldRevision);
        }
        let user = self.user(&by.user).ok_or(EtcdError::PermissionDenied)?;
        if user.has_role(ROOT) {
            return Ok(());
        }
        let perms =
            user.roles.iter().filter_map(|r| self.role(r)).flat_map(|r| r.perms.iter()).filter(|p| match access {
                Access::Read => p.perm_type.allows_read(),
                Access::Write => p.perm_type.allows_write(),
            });
        let allowed = if range_end.is_empty() {
            let point = Interval { begin: Affine(key), end: End::After(key) };
            perms.map(Interval::of_permission).any(|p| p.overlaps(&point))
        } else {
            let end = if range_end == [0] { Affine(&[]) } else { Affine(range_end) };
            covers(perms.map(Interval::of_permission).collect(), &Interval { begin: Affine(key), end: End::At(end) })
        };
        if allowed {
            Ok(())
        } else {
            Err(EtcdError::PermissionDenied)
        }
    }

    /// Every key a txn touches: its compares and reads need read access, its puts and deletes write access
    /// (and a delete returning previous values read access too), nested txns alike (etcd's `checkTxnAuth`).
    pub(crate) fn check_txn(&self, by: &AuthInfo, txn: &TxnRequest) -> Result<(), EtcdError> {
        for c in &txn.compare {
            self.check(by, &c.key, &c.range_end, Access::Read)?;
        }
        for op in txn.success.iter().chain(&txn.failure) {
            self.check_op(by, op)?;
        }
        Ok(())
    }

    fn check_op(&self, by: &AuthInfo, op: &RequestOp) -> Result<(), EtcdError> {
        match &op.request {
            Some(request_op::Request::RequestRange(r)) => self.check(by, &r.key, &r.range_end, Access::Read),
            Some(request_op::Request::RequestPut(p)) => self.check(by, &p.key, &[], Access::Write),
            Some(request_op::Request::RequestDeleteRange(d)) => {
                if d.prev_kv {
                    self.check(by, &d.key, &d.range_end, Access::Read)?;
                }
                self.check(by, &d.key, &d.range_end, Access::Write)
            }
            Some(request_op::Request::RequestTxn(t)) => self.check_txn(by, t),
            None => Ok(()),
        }
    }
}

/// Whether the intervals that overlap `want`, taken in order of their begin, join without a gap from at or
/// before its begin to at or after its end (etcd's `IntervalTree.Contains`).
fn covers(mut have: Vec<Interval<'_>>, want: &Interval<'_>) -> bool {
    have.retain(|i| i.overlaps(want));
    have.sort_by(|a, b| a.begin.cmp(&b.begin));
    let Some(first) = have.first() else { return false };
    let (min_begin, mut max_end) = (first.begin, first.end);
    for i in &have[1..] {
        if max_end.cmp_key(i.begin) == Ordering::Less {
            return false;
        }
        if i.end.cmp(&max_end) == Ordering::Greater {
            max_end = i.end;
        }
    }
    min_begin <= want.begin && max_end.cmp(&want.end) != Ordering::Less
}
