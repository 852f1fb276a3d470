//! The multi-version key-value store at the heart of fake-etcd: revisions, a key index with generations,
//! values by revision, and compaction. Sans IO: no async, no clock, no randomness, no locking.
//!
//! Semantics are etcd 3.4's `mvcc` package (`mvcc/kvstore.go`, `key_index.go`, `kvstore_compaction.go`):
//! - the store revision starts at 1 and a write transaction that changes anything bumps it by one;
//! - every change in one write transaction shares that revision and gets a sub-revision in op order;
//! - a deleted key leaves a tombstone; `version` restarts at 1 when the key is created again;
//! - compaction at `rev` keeps, per key, the newest version at or before `rev`, and reading at exactly
//!   `rev` still works; reads below it fail with [`EtcdError::Compacted`], above the current revision with
//!   [`EtcdError::FutureRev`].
//!
//! [`MvccConfig`] carries the bug switches that put back etcd's compaction before its fixes of #18089 and
//! #19179 (off by default).
//!
//! What this module must not do: interpret requests (sorting, filters, txn compares, leases are the
//! `apply` layer's job), or know about watchers (the `watch` hub reads [`MvccStore::events`]).

mod key_index;
mod record_log;
mod store;
mod write_txn;

#[cfg(test)]
mod tests;

pub(crate) use store::{MvccConfig, MvccStore, RangeOptions, RangeResult};
pub(crate) use write_txn::WriteTxn;

/// The half-open key interval etcd derives from a request's `key` and `range_end`.
///
/// - empty `range_end`: the single key `key`;
/// - `range_end == "\0"`: every key `>= key` (and `key == "\0"` too means every key);
/// - otherwise `[key, range_end)`, which is empty when `range_end <= key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyRange {
    Single(Vec<u8>),
    /// `end == None` means unbounded above.
    Span {
        start: Vec<u8>,
        end: Option<Vec<u8>>,
    },
}

impl KeyRange {
    pub fn new(key: &[u8], range_end: &[u8]) -> KeyRange {
        if range_end.is_empty() {
            KeyRange::Single(key.to_vec())
        } else if range_end == [0] {
            // etcd maps key "\0" with end "\0" to "all keys"; "\0" is the smallest key anyway.
            KeyRange::Span { start: key.to_vec(), end: None }
        } else {
            KeyRange::Span { start: key.to_vec(), end: Some(range_end.to_vec()) }
        }
    }

    pub fn contains(&self, k: &[u8]) -> bool {
        match self {
            KeyRange::Single(key) => key.as_slice() == k,
            KeyRange::Span { start, end } => k >= start.as_slice() && end.as_ref().is_none_or(|e| k < e.as_slice()),
        }
    }
}

/// The smallest key greater than every key with this prefix (etcd's `GetPrefixRangeEnd`): increment the last
/// byte that is not 0xff and drop what follows; a prefix of only 0xff bytes (or empty) has no end, which
/// etcd spells "\0".
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}
