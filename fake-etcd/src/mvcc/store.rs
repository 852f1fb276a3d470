//! `MvccStore`: the key index, the revision-ordered record log, reads at a revision, compaction, and the
//! event history that watchers replay. Write transactions are `write_txn`'s: they build on the store's
//! reads and commit through `MvccStore::commit`, and the store knows nothing of them.

use etcd_proto::mvccpb::{Event, KeyValue};

use super::key_index::{Change, KeyIndex, RevPair};
use super::record_log::{Record, RecordLog};
use super::KeyRange;
use crate::error::EtcdError;
use crate::types::Revision;

/// What to read. `rev == Revision(0)` (or negative) means the current revision.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RangeOptions {
    /// At most this many kvs; 0 means no limit.
    pub limit: i64,
    pub rev: Revision,
    /// Count only; return no kvs.
    pub count_only: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RangeResult {
    /// In ascending key order, at most `limit`.
    pub kvs: Vec<KeyValue>,
    /// The revision that was read (the current one when the request said 0).
    pub rev: Revision,
    /// How many keys the range holds at `rev`, ignoring `limit`.
    pub count: i64,
}

/// Historical etcd bugs the store can put back, each off by default: `crate::bug` declares them and the
/// member hands them in from its bug set. The fixed behaviour is etcd's since the fixes named on each field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MvccConfig {
    /// etcd #18089: compaction at `rev` judges the records at `rev` like the older ones, so a tombstone at
    /// exactly `rev`, which the compacted key index no longer holds, is removed with them. See
    /// [`MvccStore::compact`].
    pub compaction_drops_tombstone_at_revision: bool,
    /// etcd #19179: a store restored from a snapshot finishes its last compaction over a key index rebuilt
    /// without the keys whose only stored record is a tombstone, and so removes the tombstones at the
    /// compaction revision. See [`MvccStore::adopt`].
    pub restore_drops_tombstones_at_compaction: bool,
}

/// Serialisable for state-machine snapshots (`apply::StateMachine::snapshot`); the layout is internal.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct MvccStore {
    pub(super) index: KeyIndex,
    pub(super) log: RecordLog,
    pub(super) current_rev: i64,
    /// etcd's `compactMainRev`: -1 until the first compaction. etcd lets that first compaction be at
    /// revision 0, and reports -1 in HashKV before it, so the raw value is kept rather than a clamped one.
    compact_main_rev: i64,
    /// The member's, not the snapshot's: a snapshot carries none, and [`MvccStore::adopt`] keeps the
    /// restoring store's.
    #[serde(skip)]
    config: MvccConfig,
}

impl Default for MvccStore {
    fn default() -> Self {
        MvccStore::new()
    }
}

/// A key live in a read, before its value is fetched: values are only cloned for the kvs actually returned,
/// so that counting a large range stays cheap.
pub(super) enum Live<'a> {
    /// A put already committed to the store, found through the index.
    Stored(&'a [u8], RevPair),
    /// A put made earlier in the current write transaction.
    Pending(&'a KeyValue),
}

impl Live<'_> {
    pub(super) fn key(&self) -> &[u8] {
        match self {
            Live::Stored(key, _) => key,
            Live::Pending(kv) => &kv.key,
        }
    }
}

impl MvccStore {
    pub(crate) fn new() -> MvccStore {
        MvccStore::with_config(MvccConfig::default())
    }

    /// An empty store with `config`'s bug switches.
    pub(crate) fn with_config(config: MvccConfig) -> MvccStore {
        MvccStore {
            index: KeyIndex::default(),
            log: RecordLog::default(),
            current_rev: 1,
            compact_main_rev: -1,
            config,
        }
    }

    /// Replaces this store with `restored`, read from a snapshot, keeping this store's configuration.
    ///
    /// etcd rebuilds its key index from the backend when it restarts, and then finishes a compaction a crash
    /// interrupted at the revision it had scheduled. Before etcd PR #19188 that rebuild skipped a key whose
    /// oldest stored record was a tombstone, so the finished compaction did not keep the tombstone at its
    /// revision and a watch from that revision missed the delete (etcd #19179). Here a compaction is one
    /// step and a snapshot carries the index itself, so nothing is ever left half done; with
    /// [`MvccConfig::restore_drops_tombstones_at_compaction`] a restore plays the restart that finishes the
    /// last compaction over such an index. After a compaction at `c`, the only stored record at or below `c`
    /// of a key deleted at `c` is that tombstone, so finishing the compaction removes exactly the tombstones
    /// at `c`. Over a correctly rebuilt index it would change nothing, which is why the fixed path does
    /// nothing at all.
    pub(crate) fn adopt(&mut self, restored: MvccStore) {
        let config = self.config;
        *self = restored;
        self.config = config;
        if config.restore_drops_tombstones_at_compaction && self.compact_main_rev > 0 {
            self.drop_unindexed_records_below(self.compact_main_rev + 1);
        }
    }

    /// The revision of the last committed write; 1 for an empty store.
    pub fn current_revision(&self) -> Revision {
        Revision(self.current_rev)
    }

    /// The revision of the last compaction; 0 before any.
    pub(crate) fn compact_revision(&self) -> Revision {
        Revision(self.compact_main_rev.max(0))
    }

    /// etcd's raw `compactMainRev`: -1 before the first compaction, which may itself be at revision 0.
    /// HashKV reports this value, and a txn's Range with a negative revision is checked against it
    /// (`checkRequestRange`), so `revision = -1` is accepted in a txn only before any compaction.
    pub(crate) fn compact_revision_raw(&self) -> Revision {
        Revision(self.compact_main_rev)
    }

    /// Reads `range` at `opts.rev`. Errors: `Compacted` below the compaction revision, `FutureRev` above
    /// the current revision.
    pub(crate) fn range(&self, range: &KeyRange, opts: RangeOptions) -> Result<RangeResult, EtcdError> {
        let rev = self.resolve_read_rev(opts.rev, self.current_rev)?;
        let live = self.index.live(range, rev).map(|(key, at)| Live::Stored(key, at));
        Ok(self.collect(live, rev, &opts))
    }

    /// Compacts history at `rev`. Errors: `Compacted` if `rev <= compact_revision`, `FutureRev` if
    /// `rev > current_revision`. Records at exactly `rev` stay readable for watchers, tombstones included
    /// (the fixed behaviour of etcd #18089 / #19179), but a range at `rev` does not return deleted keys.
    ///
    /// With [`MvccConfig::compaction_drops_tombstone_at_revision`], etcd before its fix of #18089: the
    /// backend kept only the revisions the compacted key index named, and the index forgets a tombstone at
    /// the compaction revision, so that tombstone was deleted too.
    pub(crate) fn compact(&mut self, rev: Revision) -> Result<(), EtcdError> {
        if rev.0 <= self.compact_main_rev {
            return Err(EtcdError::Compacted);
        }
        if rev.0 > self.current_rev {
            return Err(EtcdError::FutureRev);
        }
        self.compact_main_rev = rev.0;
        self.index.compact(rev.0);
        // Records at `rev` and above all stay, so that a watcher starting at `rev` still sees a delete made
        // at `rev`; the bug switch judges the records at `rev` like the older ones.
        let below = if self.config.compaction_drops_tombstone_at_revision { rev.0 + 1 } else { rev.0 };
        self.drop_unindexed_records_below(below);
        Ok(())
    }

    /// Removes every record below `below` that the key index no longer reaches. A record survives only as
    /// the newest put of its key at or before the compaction revision, which the compacted index still
    /// points at (as its oldest change).
    fn drop_unindexed_records_below(&mut self, below: i64) {
        let index = &self.index;
        self.log.retain_below(below, |at, record| {
            index.get(record.key()).and_then(|history| history.first()).is_some_and(|c| c.rev == at)
        });
    }

    /// Every change to a key in `range` with revision in `[from, to]`, in (revision, sub-revision) order, as
    /// watch events: a PUT carries the full kv, a DELETE carries only `key` and `mod_revision`; `prev_kv` is
    /// never filled here. Errors with `Compacted` if `from < compact_revision`.
    pub fn events(&self, range: &KeyRange, from: Revision, to: Revision) -> Result<Vec<Event>, EtcdError> {
        self.events_batch(range, from, to, usize::MAX).map(|(events, _)| events)
    }

    /// The first events of [`MvccStore::events`]`(range, from, to)` that fall on at most `max_revs` distinct
    /// revisions (a revision is never split), and where the rest begins: `None` when nothing in `[from, to]`
    /// is left over. Reads only as far as it returns, so a watcher caught up in batches does not read its
    /// whole backlog for every batch.
    pub(crate) fn events_batch(
        &self,
        range: &KeyRange,
        from: Revision,
        to: Revision,
        max_revs: usize,
    ) -> Result<(Vec<Event>, Option<Revision>), EtcdError> {
        assert!(max_revs > 0, "a batch holds at least one revision");
        if from.0 < self.compact_main_rev {
            return Err(EtcdError::Compacted);
        }
        let mut events = Vec::new();
        let (mut n_revs, mut last_main) = (0, None);
        for (at, record) in self.log.between(from.0, to.0).filter(|(_, record)| range.contains(record.key())) {
            if last_main != Some(at.main) {
                if n_revs == max_revs {
                    return Ok((events, Some(Revision(at.main))));
                }
                n_revs += 1;
                last_main = Some(at.main);
            }
            events.push(record.to_event(*at));
        }
        Ok((events, None))
    }

    /// A CRC-32C over every record with revision `<= rev` that is still stored (after compaction), in
    /// revision order, and the compaction revision it covers (-1 before any compaction, as etcd reports).
    /// `rev == 0` means the current revision. Errors as etcd's `HashByRev`: `Compacted` if
    /// `0 < rev <= compact_revision`, `FutureRev` if `rev > current_revision`.
    /// Members with the same history hash the same; the value is not comparable with real etcd's.
    pub(crate) fn hash_kv(&self, rev: Revision) -> Result<(u32, Revision), EtcdError> {
        if rev.0 > 0 && rev.0 <= self.compact_main_rev {
            return Err(EtcdError::Compacted);
        }
        if rev.0 > self.current_rev {
            return Err(EtcdError::FutureRev);
        }
        let upto = if rev.0 <= 0 { self.current_rev } else { rev.0 };
        let crc = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
        let mut digest = crc.digest();
        // etcd's checksum starts with the name of the bucket it walks ("key"), so even an empty history
        // hashes to a non-zero value, and clients see a `hash` field (proto3 would leave out a zero).
        digest.update(b"key");
        for (at, record) in self.log.upto(upto) {
            digest.update(&at.main.to_be_bytes());
            digest.update(&at.sub.to_be_bytes());
            match record {
                Record::Put(kv) => {
                    digest.update(&[1]);
                    hash_bytes(&mut digest, &kv.key);
                    hash_bytes(&mut digest, &kv.value);
                    digest.update(&kv.create_revision.to_be_bytes());
                    digest.update(&kv.version.to_be_bytes());
                    digest.update(&kv.lease.to_be_bytes());
                }
                Record::Tombstone(key) => {
                    digest.update(&[0]);
                    hash_bytes(&mut digest, key);
                }
            }
        }
        Ok((digest.finalize(), Revision(self.compact_main_rev)))
    }

    /// Approximate bytes held (keys + values of every stored record), for Maintenance.Status's dbSize.
    pub(crate) fn size_bytes(&self) -> i64 {
        self.log.size_bytes()
    }

    /// etcd's `rangeKeys` revision rules: above `latest` is a future revision (checked on the raw request),
    /// zero or negative means `latest`, below the compaction revision is compacted (equal is readable).
    pub(super) fn resolve_read_rev(&self, requested: Revision, latest: i64) -> Result<i64, EtcdError> {
        if requested.0 > latest {
            return Err(EtcdError::FutureRev);
        }
        let rev = if requested.0 <= 0 { latest } else { requested.0 };
        if rev < self.compact_main_rev {
            return Err(EtcdError::Compacted);
        }
        Ok(rev)
    }

    /// Counts every live key and clones the first `limit` of them (none for `count_only`).
    pub(super) fn collect<'a>(
        &'a self,
        live: impl Iterator<Item = Live<'a>>,
        rev: i64,
        opts: &RangeOptions,
    ) -> RangeResult {
        let n_wanted = if opts.count_only {
            0
        } else if opts.limit > 0 {
            opts.limit as usize
        } else {
            usize::MAX
        };
        let mut kvs = Vec::new();
        let mut count = 0i64;
        for item in live {
            count += 1;
            if kvs.len() < n_wanted {
                kvs.push(match item {
                    Live::Stored(key, at) => self.log.put_at(at, key).clone(),
                    Live::Pending(kv) => kv.clone(),
                });
            }
        }
        debug_assert!(kvs.windows(2).all(|w| w[0].key < w[1].key), "range results must be in key order");
        RangeResult { kvs, rev: Revision(rev), count }
    }

    /// The kv of `key` live at the current revision, if any.
    pub(super) fn live_kv(&self, key: &[u8]) -> Option<&KeyValue> {
        let at = self.index.get(key)?.live_at(self.current_rev)?;
        Some(self.log.put_at(at, key))
    }

    /// Commits the changes of one write transaction at `current + 1`, sub-revisions in change order.
    pub(super) fn commit(&mut self, changes: &[Event]) {
        let rev = self.current_rev + 1;
        for (sub, event) in changes.iter().enumerate() {
            let at = RevPair::new(rev, sub as i64);
            let kv = event.kv.as_ref().expect("events made by a write txn carry a kv");
            let tombstone = event.r#type == etcd_proto::mvccpb::event::EventType::Delete as i32;
            self.index.push(&kv.key, Change { rev: at, tombstone });
            let record = if tombstone { Record::Tombstone(kv.key.clone()) } else { Record::Put(kv.clone()) };
            self.log.insert(at, record);
        }
        self.current_rev = rev;
    }
}

fn hash_bytes(digest: &mut crc::Digest<'_, u32>, bytes: &[u8]) {
    // Length-prefixed so that ("ab", "c") and ("a", "bc") hash differently.
    digest.update(&(bytes.len() as u64).to_be_bytes());
    digest.update(bytes);
}
