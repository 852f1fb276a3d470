//! `MvccStore`: the key index, the revision-ordered record log, and write transactions over them.

use etcd_proto::mvccpb::{Event, KeyValue};

use super::KeyRange;
use crate::error::EtcdError;
use crate::types::{LeaseId, Revision};

/// What to read. `rev == Revision(0)` (or negative) means the current revision.
#[derive(Clone, Copy, Debug, Default)]
pub struct RangeOptions {
    /// At most this many kvs; 0 means no limit.
    pub limit: i64,
    pub rev: Revision,
    /// Count only; return no kvs.
    pub count_only: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RangeResult {
    /// In ascending key order, at most `limit`.
    pub kvs: Vec<KeyValue>,
    /// The revision that was read (the current one when the request said 0).
    pub rev: Revision,
    /// How many keys the range holds at `rev`, ignoring `limit`.
    pub count: i64,
}

#[derive(Debug, Default)]
pub struct MvccStore {}

impl MvccStore {
    pub fn new() -> MvccStore {
        todo!()
    }

    /// The revision of the last committed write; 1 for an empty store.
    pub fn current_revision(&self) -> Revision {
        todo!()
    }

    /// The revision of the last compaction; 0 before any.
    pub fn compact_revision(&self) -> Revision {
        todo!()
    }

    /// Reads `range` at `opts.rev`. Errors: `Compacted` below the compaction revision, `FutureRev` above
    /// the current revision.
    pub fn range(&self, range: &KeyRange, opts: RangeOptions) -> Result<RangeResult, EtcdError> {
        let _ = (range, opts);
        todo!()
    }

    /// Starts a write transaction at revision `current + 1`. It commits when [`WriteTxn::end`] is called;
    /// a transaction that changed nothing leaves the revision where it was.
    pub fn write(&mut self) -> WriteTxn<'_> {
        todo!()
    }

    /// Compacts history at `rev`. Errors: `Compacted` if `rev <= compact_revision`, `FutureRev` if
    /// `rev > current_revision`. Records at exactly `rev` stay readable for watchers, tombstones included
    /// (the fixed behaviour of etcd #18089 / #19179), but a range at `rev` does not return deleted keys.
    pub fn compact(&mut self, rev: Revision) -> Result<(), EtcdError> {
        let _ = rev;
        todo!()
    }

    /// Every change to a key in `range` with revision in `[from, to]`, in (revision, sub-revision) order, as
    /// watch events: a PUT carries the full kv, a DELETE carries only `key` and `mod_revision`; `prev_kv` is
    /// never filled here. Errors with `Compacted` if `from < compact_revision`.
    pub fn events(&self, range: &KeyRange, from: Revision, to: Revision) -> Result<Vec<Event>, EtcdError> {
        let _ = (range, from, to);
        todo!()
    }

    /// A CRC-32C over every record with revision `<= rev` that is still stored (after compaction), in
    /// revision order, and the compaction revision it covers. `rev == 0` means the current revision.
    /// Members with the same history hash the same; the value is not comparable with real etcd's.
    pub fn hash_kv(&self, rev: Revision) -> Result<(u32, Revision), EtcdError> {
        let _ = rev;
        todo!()
    }

    /// Approximate bytes held (keys + values of every stored record), for Maintenance.Status's dbSize.
    pub fn size_bytes(&self) -> i64 {
        todo!()
    }
}

/// A write transaction: every change gets the same main revision (`store.current + 1`) and increasing
/// sub-revisions. Reads through it see its own earlier writes.
pub struct WriteTxn<'a> {
    store: &'a mut MvccStore,
}

impl WriteTxn<'_> {
    /// The revision this transaction writes at.
    pub fn rev(&self) -> Revision {
        let _ = &self.store;
        todo!()
    }

    /// Reads like [`MvccStore::range`], except that a read at the latest revision sees this transaction's
    /// changes so far.
    pub fn range(&self, range: &KeyRange, opts: RangeOptions) -> Result<RangeResult, EtcdError> {
        let _ = (range, opts);
        todo!()
    }

    /// Puts `key = value` with `lease` and returns the previous kv if the key existed.
    pub fn put(&mut self, key: &[u8], value: Vec<u8>, lease: LeaseId) -> Option<KeyValue> {
        let _ = (key, value, lease);
        todo!()
    }

    /// Deletes every live key in `range` and returns their previous kvs in key order.
    pub fn delete_range(&mut self, range: &KeyRange) -> Vec<KeyValue> {
        let _ = range;
        todo!()
    }

    /// The changes made so far, as watch events (see [`MvccStore::events`]).
    pub fn changes(&self) -> &[Event] {
        todo!()
    }

    /// Commits: bumps the store revision if anything changed, and returns the changes.
    pub fn end(self) -> Vec<Event> {
        todo!()
    }
}
