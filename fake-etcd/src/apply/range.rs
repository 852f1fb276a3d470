//! etcd's Range algorithm (`applierV3backend.Range`) over any reader: the store itself, or a write
//! transaction in progress (so that a Range inside a Txn sees the txn's earlier writes).

use std::cmp::Ordering;

use etcd_proto::etcdserverpb::range_request::{SortOrder, SortTarget};
use etcd_proto::etcdserverpb::{RangeRequest, RangeResponse, ResponseHeader};
use etcd_proto::mvccpb::KeyValue;

use crate::error::EtcdError;
use crate::mvcc::{KeyRange, MvccStore, RangeOptions, RangeResult, WriteTxn};
use crate::types::Revision;

/// Something a Range can read from.
pub(super) trait KvRead {
    fn read(&self, range: &KeyRange, opts: RangeOptions) -> Result<RangeResult, EtcdError>;

    /// What etcd puts in a Range response's header: the reader's latest revision, whatever revision was read.
    fn header_revision(&self) -> Revision;
}

impl KvRead for MvccStore {
    fn read(&self, range: &KeyRange, opts: RangeOptions) -> Result<RangeResult, EtcdError> {
        self.range(range, opts)
    }

    fn header_revision(&self) -> Revision {
        self.current_revision()
    }
}

impl KvRead for WriteTxn<'_> {
    fn read(&self, range: &KeyRange, opts: RangeOptions) -> Result<RangeResult, EtcdError> {
        self.range(range, opts)
    }

    /// A write txn reads at its own revision once it has changed something, at the store's before.
    fn header_revision(&self) -> Revision {
        if self.changes().is_empty() {
            self.rev().prev()
        } else {
            self.rev()
        }
    }
}

/// Serves one Range request:
/// 1. with a sort order or a min/max filter, read everything; otherwise read `limit + 1` to learn `more`
///    (the raw order decides: a sort target with order NONE sorts only those `limit + 1` keys, as etcd does);
/// 2. drop kvs outside the mod/create revision bounds;
/// 3. sort (a target other than KEY with order NONE sorts ascending);
/// 4. cut to `limit`, setting `more` if anything was cut;
/// 5. `count` is the number of keys in range at that revision, before filters and limit.
pub(super) fn range(reader: &impl KvRead, req: &RangeRequest) -> Result<RangeResponse, EtcdError> {
    let filtered = req.min_mod_revision != 0
        || req.max_mod_revision != 0
        || req.min_create_revision != 0
        || req.max_create_revision != 0;
    let read_limit = if req.sort_order != SortOrder::None as i32 || filtered {
        0
    } else if req.limit > 0 {
        req.limit.saturating_add(1)
    } else {
        req.limit
    };
    let opts = RangeOptions { limit: read_limit, rev: Revision(req.revision), count_only: req.count_only };
    let read = reader.read(&KeyRange::new(&req.key, &req.range_end), opts)?;
    let mut kvs = read.kvs;
    kvs.retain(|kv| within_bounds(req, kv));
    sort(&mut kvs, req);
    let mut more = false;
    if req.limit > 0 && kvs.len() as i64 > req.limit {
        kvs.truncate(req.limit as usize);
        more = true;
    }
    if req.keys_only {
        for kv in &mut kvs {
            kv.value.clear();
        }
    }
    debug_assert!(read.count >= kvs.len() as i64, "count covers every kv returned");
    Ok(RangeResponse {
        header: Some(ResponseHeader { revision: reader.header_revision().0, ..ResponseHeader::default() }),
        kvs,
        more,
        count: read.count,
    })
}

/// The min/max mod and create revision filters; 0 means no bound.
fn within_bounds(req: &RangeRequest, kv: &KeyValue) -> bool {
    let above_max = |max: i64, value: i64| max != 0 && value > max;
    let below_min = |min: i64, value: i64| min != 0 && value < min;
    !(above_max(req.max_mod_revision, kv.mod_revision)
        || below_min(req.min_mod_revision, kv.mod_revision)
        || above_max(req.max_create_revision, kv.create_revision)
        || below_min(req.min_create_revision, kv.create_revision))
}

/// Sorts by the requested target. The sort is stable, so ties keep key order (descending too); etcd uses
/// Go's unstable sort, which agrees with this on small inputs and on inputs already in order.
/// An unknown target leaves key order (etcd would dereference a nil sorter); an unknown order sorts nothing.
fn sort(kvs: &mut [KeyValue], req: &RangeRequest) {
    let target = SortTarget::try_from(req.sort_target).ok();
    let mut order = SortOrder::try_from(req.sort_order).unwrap_or(SortOrder::None);
    if req.sort_target != SortTarget::Key as i32 && order == SortOrder::None {
        order = SortOrder::Ascend;
    }
    let Some(target) = target else { return };
    let by_target = |a: &KeyValue, b: &KeyValue| -> Ordering {
        match target {
            SortTarget::Key => a.key.cmp(&b.key),
            SortTarget::Version => a.version.cmp(&b.version),
            SortTarget::Create => a.create_revision.cmp(&b.create_revision),
            SortTarget::Mod => a.mod_revision.cmp(&b.mod_revision),
            SortTarget::Value => a.value.cmp(&b.value),
        }
    };
    match order {
        SortOrder::None => {}
        SortOrder::Ascend => kvs.sort_by(by_target),
        SortOrder::Descend => kvs.sort_by(|a, b| by_target(b, a)),
    }
}
