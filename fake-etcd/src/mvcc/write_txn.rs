//! `WriteTxn`: one write transaction. Its changes stay in an overlay until [`WriteTxn::end`] commits them all
//! at one revision, so a transaction dropped without `end` leaves the store exactly as it was (the apply layer
//! relies on this to answer an error without a partial write). [`MvccStore::write`] starts one here, beside
//! the transaction, so that the dependency points from the transaction to the store and never back.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::iter::Peekable;

use etcd_proto::mvccpb::{event::EventType, Event, KeyValue};

use super::key_index::bounds;
use super::store::{Live, MvccStore, RangeOptions, RangeResult};
use super::KeyRange;
use crate::error::EtcdError;
use crate::types::{LeaseId, Revision};

/// A write transaction: every change gets the same main revision (`store.current + 1`) and increasing
/// sub-revisions. Reads through it see its own earlier writes. Dropping it without [`WriteTxn::end`]
/// discards its changes.
pub(crate) struct WriteTxn<'a> {
    store: &'a mut MvccStore,
    /// The newest state of every key this transaction touched: `Some` after a put, `None` after a delete.
    overlay: BTreeMap<Vec<u8>, Option<KeyValue>>,
    /// Every change so far, in order; the position is the sub-revision.
    changes: Vec<Event>,
}

impl MvccStore {
    /// Starts a write transaction at revision `current + 1`. It commits when [`WriteTxn::end`] is called;
    /// a transaction that changed nothing leaves the revision where it was.
    pub(crate) fn write(&mut self) -> WriteTxn<'_> {
        WriteTxn { store: self, overlay: BTreeMap::new(), changes: Vec::new() }
    }
}

impl WriteTxn<'_> {
    /// The revision this transaction writes at.
    pub(crate) fn rev(&self) -> Revision {
        Revision(self.store.current_rev + 1)
    }

    /// Reads like [`MvccStore::range`], except that a read at the latest revision sees this transaction's
    /// changes so far. The latest revision is the transaction's own once it has changed something (as etcd's
    /// write txn reads at `beginRev + 1` then), the store's current one before.
    pub(crate) fn range(&self, range: &KeyRange, opts: RangeOptions) -> Result<RangeResult, EtcdError> {
        let begin = self.store.current_rev;
        let latest = if self.changes.is_empty() { begin } else { begin + 1 };
        let rev = self.store.resolve_read_rev(opts.rev, latest)?;
        if rev <= begin {
            let live = self.store.index.live(range, rev).map(|(key, at)| Live::Stored(key, at));
            return Ok(self.store.collect(live, rev, &opts));
        }
        Ok(self.store.collect(self.live_now(range), rev, &opts))
    }

    /// Puts `key = value` with `lease` and returns the previous kv if the key existed.
    pub(crate) fn put(&mut self, key: &[u8], value: Vec<u8>, lease: LeaseId) -> Option<KeyValue> {
        let rev = self.rev().0;
        let prev = self.latest(key).cloned();
        let kv = KeyValue {
            key: key.to_vec(),
            create_revision: prev.as_ref().map_or(rev, |p| p.create_revision),
            mod_revision: rev,
            version: prev.as_ref().map_or(1, |p| p.version + 1),
            value,
            lease: lease.0,
        };
        // Write-side half of the version invariant that `RecordLog::put_at` checks on every read.
        debug_assert!(prev.as_ref().is_none_or(|p| p.mod_revision <= rev && p.version >= 1));
        debug_assert!(prev.is_some() || (kv.version == 1 && kv.create_revision == rev), "a create starts at version 1");
        self.changes.push(Event { r#type: EventType::Put as i32, kv: Some(kv.clone()), prev_kv: None });
        self.overlay.insert(key.to_vec(), Some(kv));
        prev
    }

    /// Deletes every live key in `range` and returns their previous kvs in key order.
    pub(crate) fn delete_range(&mut self, range: &KeyRange) -> Vec<KeyValue> {
        let rev = self.rev().0;
        let doomed: Vec<KeyValue> = self.live_now(range).map(|item| self.materialize(item)).collect();
        for kv in &doomed {
            let tombstone = KeyValue { key: kv.key.clone(), mod_revision: rev, ..KeyValue::default() };
            self.changes.push(Event { r#type: EventType::Delete as i32, kv: Some(tombstone), prev_kv: None });
            self.overlay.insert(kv.key.clone(), None);
        }
        doomed
    }

    /// The changes made so far, as watch events (see [`MvccStore::events`]).
    pub(crate) fn changes(&self) -> &[Event] {
        &self.changes
    }

    /// Commits: bumps the store revision if anything changed, and returns the changes.
    pub(crate) fn end(self) -> Vec<Event> {
        if !self.changes.is_empty() {
            let before = self.store.current_rev;
            self.store.commit(&self.changes);
            debug_assert_eq!(self.store.current_rev, before + 1, "a write txn bumps the revision by exactly one");
        }
        self.changes
    }

    /// The newest state of `key` as this transaction sees it.
    fn latest(&self, key: &[u8]) -> Option<&KeyValue> {
        match self.overlay.get(key) {
            Some(pending) => pending.as_ref(),
            None => self.store.live_kv(key),
        }
    }

    fn materialize(&self, item: Live<'_>) -> KeyValue {
        match item {
            Live::Stored(key, _) => self.store.live_kv(key).cloned().expect("a live key has a value"),
            Live::Pending(kv) => kv.clone(),
        }
    }

    /// Every key live in `range` as this transaction sees it: committed keys it did not touch, merged in key
    /// order with the keys it put.
    fn live_now<'s>(&'s self, range: &'s KeyRange) -> impl Iterator<Item = Live<'s>> + 's {
        let begin = self.store.current_rev;
        let stored = self
            .store
            .index
            .live(range, begin)
            .filter(|(key, _)| !self.overlay.contains_key(*key))
            .map(|(key, at)| Live::Stored(key, at));
        let pending =
            self.overlay.range::<[u8], _>(bounds(range)).filter_map(|(_, state)| state.as_ref().map(Live::Pending));
        MergeByKey { left: stored.peekable(), right: pending.peekable() }
    }
}

/// Merges two key-ordered streams of live keys with disjoint keys into one key-ordered stream.
struct MergeByKey<'a, L: Iterator<Item = Live<'a>>, R: Iterator<Item = Live<'a>>> {
    left: Peekable<L>,
    right: Peekable<R>,
}

impl<'a, L: Iterator<Item = Live<'a>>, R: Iterator<Item = Live<'a>>> Iterator for MergeByKey<'a, L, R> {
    type Item = Live<'a>;

    fn next(&mut self) -> Option<Live<'a>> {
        let order = match (self.left.peek(), self.right.peek()) {
            (Some(l), Some(r)) => l.key().cmp(r.key()),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return None,
        };
        debug_assert_ne!(order, Ordering::Equal, "the overlay hides committed keys it touched");
        if order == Ordering::Less {
            self.left.next()
        } else {
            self.right.next()
        }
    }
}
