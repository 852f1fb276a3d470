//! The key index: for every key, the ordered list of revisions at which it was put or deleted.
//!
//! A range at revision `r` asks each key for its newest change at or before `r`; the key is live there if
//! that change is a put. The values themselves live in the record log, addressed by [`RevPair`].

use std::collections::BTreeMap;
use std::ops::Bound;

use super::KeyRange;

/// A (main, sub) revision: `main` is the store revision of the write transaction, `sub` the position of the
/// change inside it. Ordered lexicographically, as etcd orders its backend keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) struct RevPair {
    pub main: i64,
    pub sub: i64,
}

impl RevPair {
    pub(super) fn new(main: i64, sub: i64) -> RevPair {
        RevPair { main, sub }
    }
}

/// One change of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Change {
    pub rev: RevPair,
    pub tombstone: bool,
}

/// Every change of one key still needed for reads, oldest first.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct KeyHistory {
    changes: Vec<Change>,
}

impl KeyHistory {
    /// The newest change with `main <= at`, if any.
    pub(super) fn latest_at(&self, at: i64) -> Option<Change> {
        // Changes are sorted by revision, so the ones at or before `at` form a prefix.
        let n_upto = self.changes.partition_point(|c| c.rev.main <= at);
        let change = self.changes[..n_upto].last().copied();
        if let Some(c) = change {
            // Read-side half of the ordering invariant checked in `push`.
            debug_assert!(n_upto < 2 || self.changes[n_upto - 2].rev < c.rev, "key history out of order");
        }
        change
    }

    /// The revision of the put that makes the key live at `at`, or `None` if it is absent or deleted there.
    pub(super) fn live_at(&self, at: i64) -> Option<RevPair> {
        self.latest_at(at).filter(|c| !c.tombstone).map(|c| c.rev)
    }

    /// The oldest change still indexed (compaction keeps at most one change at or before its revision).
    pub(super) fn first(&self) -> Option<Change> {
        self.changes.first().copied()
    }

    /// Appends a change; revisions strictly increase per key, and a key can only be deleted while live.
    pub(super) fn push(&mut self, change: Change) {
        if let Some(last) = self.changes.last() {
            debug_assert!(last.rev < change.rev, "revisions must strictly increase per key");
            debug_assert!(!(last.tombstone && change.tombstone), "a deleted key cannot be deleted again");
        } else {
            debug_assert!(!change.tombstone, "a key that was never put cannot be deleted");
        }
        self.changes.push(change);
    }

    /// Forgets the changes that compaction at `at` makes unreachable: everything before the newest change at
    /// or before `at`, and that change too if it is a tombstone. Returns whether nothing is left.
    pub(super) fn compact(&mut self, at: i64) -> bool {
        let n_upto = self.changes.partition_point(|c| c.rev.main <= at);
        if n_upto > 0 {
            let keep_from = if self.changes[n_upto - 1].tombstone { n_upto } else { n_upto - 1 };
            self.changes.drain(..keep_from);
        }
        debug_assert!(self.changes.first().is_none_or(|c| !c.tombstone || c.rev.main > at));
        self.changes.is_empty()
    }
}

/// The index of every key with history still reachable by reads.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct KeyIndex {
    keys: BTreeMap<Vec<u8>, KeyHistory>,
}

impl KeyIndex {
    pub(super) fn get(&self, key: &[u8]) -> Option<&KeyHistory> {
        self.keys.get(key)
    }

    pub(super) fn push(&mut self, key: &[u8], change: Change) {
        match self.keys.get_mut(key) {
            Some(history) => history.push(change),
            None => {
                let mut history = KeyHistory::default();
                history.push(change);
                self.keys.insert(key.to_vec(), history);
            }
        }
    }

    /// Every indexed key in `range`, ascending, with its history.
    pub(super) fn range<'a>(&'a self, range: &'a KeyRange) -> impl Iterator<Item = (&'a Vec<u8>, &'a KeyHistory)> + 'a {
        self.keys.range::<[u8], _>(bounds(range))
    }

    /// Every key live at `at` in `range`, ascending, with the revision of its live put.
    pub(super) fn live<'a>(&'a self, range: &'a KeyRange, at: i64) -> impl Iterator<Item = (&'a [u8], RevPair)> + 'a {
        self.range(range).filter_map(move |(k, h)| h.live_at(at).map(|rev| (k.as_slice(), rev)))
    }

    /// Compacts every key's history at `at`, dropping keys with nothing left.
    pub(super) fn compact(&mut self, at: i64) {
        self.keys.retain(|_, history| !history.compact(at));
    }
}

/// The `BTreeMap` bounds of a key range. An empty span becomes `[start, start)`, which `BTreeMap::range`
/// accepts (unlike a start above the end, which it rejects with a panic).
pub(crate) fn bounds(range: &KeyRange) -> (Bound<&[u8]>, Bound<&[u8]>) {
    match range {
        KeyRange::Single(key) => (Bound::Included(key.as_slice()), Bound::Included(key.as_slice())),
        KeyRange::Span { start, end: None } => (Bound::Included(start.as_slice()), Bound::Unbounded),
        KeyRange::Span { start, end: Some(end) } if end.as_slice() > start.as_slice() => {
            (Bound::Included(start.as_slice()), Bound::Excluded(end.as_slice()))
        }
        KeyRange::Span { start, end: Some(_) } => {
            (Bound::Included(start.as_slice()), Bound::Excluded(start.as_slice()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(main: i64) -> Change {
        Change { rev: RevPair::new(main, 0), tombstone: false }
    }

    fn del(main: i64) -> Change {
        Change { rev: RevPair::new(main, 0), tombstone: true }
    }

    fn history(changes: &[Change]) -> KeyHistory {
        let mut h = KeyHistory::default();
        for c in changes {
            h.push(*c);
        }
        h
    }

    #[test]
    fn live_at_follows_puts_and_tombstones() {
        let h = history(&[put(2), put(4), del(6), put(8)]);
        let cases = [
            (1, None),
            (2, Some(2)),
            (3, Some(2)),
            (4, Some(4)),
            (5, Some(4)),
            (6, None),
            (7, None),
            (8, Some(8)),
            (100, Some(8)),
        ];
        for (at, want) in cases {
            assert_eq!(h.live_at(at).map(|r| r.main), want, "at {at}");
        }
    }

    #[test]
    fn compact_keeps_newest_put_and_drops_tombstones() {
        // (changes, compact at, remaining mains, emptied)
        let cases: &[(&[Change], i64, &[i64], bool)] = &[
            (&[put(2), put(4)], 3, &[2, 4], false),
            (&[put(2), put(4)], 4, &[4], false),
            (&[put(2), put(4), del(6)], 6, &[], true),
            (&[put(2), put(4), del(6)], 5, &[4, 6], false),
            (&[put(2), del(3), put(5)], 4, &[5], false),
            (&[put(2), del(3), put(5)], 1, &[2, 3, 5], false),
        ];
        for (changes, at, remaining, emptied) in cases {
            let mut h = history(changes);
            assert_eq!(h.compact(*at), *emptied, "compact {at} of {changes:?}");
            let mains: Vec<i64> = h.changes.iter().map(|c| c.rev.main).collect();
            assert_eq!(mains, *remaining, "compact {at} of {changes:?}");
        }
    }

    #[test]
    fn bounds_of_an_inverted_span_are_empty() {
        let mut index = KeyIndex::default();
        index.push(b"b", put(2));
        let inverted = KeyRange::Span { start: b"c".to_vec(), end: Some(b"a".to_vec()) };
        assert_eq!(index.range(&inverted).count(), 0);
        let from_a = KeyRange::Span { start: b"a".to_vec(), end: None };
        assert_eq!(index.range(&from_a).count(), 1);
    }
}
