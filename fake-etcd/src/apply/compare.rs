//! Txn compares (etcd's `applyCompare` / `compareKV`), evaluated against the store before the txn writes.

use std::cmp::Ordering;

use etcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use etcd_proto::etcdserverpb::Compare;
use etcd_proto::mvccpb::KeyValue;

use crate::mvcc::{KeyRange, MvccStore, RangeOptions};

/// Whether every compare holds (an empty list holds).
pub(super) fn all_hold(store: &MvccStore, compares: &[Compare]) -> bool {
    compares.iter().all(|c| holds(store, c))
}

/// One compare over `key` or `[key, range_end)` at the current revision:
/// - every key in range must satisfy it;
/// - an empty range compares as one all-zero kv, except that a VALUE compare on it is always false (etcd
///   cannot tell a missing value from an empty one, so it refuses to compare).
fn holds(store: &MvccStore, c: &Compare) -> bool {
    let Ok(read) = store.range(&KeyRange::new(&c.key, &c.range_end), RangeOptions::default()) else {
        return false;
    };
    if read.kvs.is_empty() {
        return c.target != CompareTarget::Value as i32 && compare_kv(c, &KeyValue::default());
    }
    read.kvs.iter().all(|kv| compare_kv(c, kv))
}

/// Compares one kv. A target union of the wrong kind counts as 0 (or the empty value); an unknown target
/// compares equal and an unknown result holds, as in etcd.
fn compare_kv(c: &Compare, kv: &KeyValue) -> bool {
    let int_operand = |pick: fn(&TargetUnion) -> Option<i64>| c.target_union.as_ref().and_then(pick).unwrap_or(0);
    let order = match CompareTarget::try_from(c.target) {
        Ok(CompareTarget::Value) => {
            let operand: &[u8] = match &c.target_union {
                Some(TargetUnion::Value(v)) => v,
                _ => &[],
            };
            kv.value.as_slice().cmp(operand)
        }
        Ok(CompareTarget::Version) => {
            kv.version.cmp(&int_operand(|u| if let TargetUnion::Version(v) = u { Some(*v) } else { None }))
        }
        Ok(CompareTarget::Create) => {
            kv.create_revision
                .cmp(&int_operand(|u| if let TargetUnion::CreateRevision(v) = u { Some(*v) } else { None }))
        }
        Ok(CompareTarget::Mod) => {
            kv.mod_revision.cmp(&int_operand(|u| if let TargetUnion::ModRevision(v) = u { Some(*v) } else { None }))
        }
        Ok(CompareTarget::Lease) => {
            kv.lease.cmp(&int_operand(|u| if let TargetUnion::Lease(v) = u { Some(*v) } else { None }))
        }
        Err(_) => Ordering::Equal,
    };
    match CompareResult::try_from(c.result) {
        Ok(CompareResult::Equal) => order == Ordering::Equal,
        Ok(CompareResult::NotEqual) => order != Ordering::Equal,
        Ok(CompareResult::Greater) => order == Ordering::Greater,
        Ok(CompareResult::Less) => order == Ordering::Less,
        Err(_) => true,
    }
}
