//! The disk model: what one member has written for Raft (hard state, configuration, snapshot, log) and what
//! of it is durable. Every write lands in the "written" view at once (the page cache: reads see it) and in a
//! journal of pending operations; [`Disk::sync`] replays the journal onto the durable state (the fsync). A
//! crash is re-opening a [`Disk`] from its [`DurableDisk`] handle: whatever was written but not synced is gone.
//!
//! The durable state lives behind a cloneable handle so that the harness can keep it outside a node's tasks
//! and re-create the member from it after a madsim node restart. [`DiskOptions::skip_sync`] turns `sync`
//! into a no-op that still reports success: the "fsync skipped" bug, for tests that must show a durability
//! checker can fail.
//!
//! In the real build the durable state must also outlive the process: a [`DiskBackend`] attached to the
//! handle (the shell's data dir) receives every sync's writes and makes them durable on a real disk before
//! the sync returns. This module only calls it; the file IO lives in the shell.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use ::raft::eraftpb::{ConfState, Entry, HardState, Snapshot};

/// Everything one member keeps on disk for Raft. The log holds the entries after `truncated_index`, so its
/// first index is `truncated_index + 1`; `truncated_term` is the term of the entry at `truncated_index`, kept
/// so that the log can always answer the term of the entry just before its first one (Raft's consistency
/// check needs it). Everything compacted away is covered by `snapshot` (`truncated_index <= snapshot index`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskState {
    pub hard_state: HardState,
    pub conf_state: ConfState,
    /// The newest snapshot, data included; metadata index 0 means none.
    pub snapshot: Snapshot,
    pub truncated_index: u64,
    pub truncated_term: u64,
    pub entries: Vec<Entry>,
}

impl DiskState {
    pub fn first_index(&self) -> u64 {
        self.truncated_index + 1
    }

    pub(crate) fn last_index(&self) -> u64 {
        self.truncated_index + self.entries.len() as u64
    }

    /// The term of the entry at `index`, if the log still knows it.
    pub(crate) fn term_at(&self, index: u64) -> Option<u64> {
        if index == self.truncated_index {
            return Some(self.truncated_term);
        }
        if index < self.truncated_index || index > self.last_index() {
            return None;
        }
        Some(self.entries[(index - self.first_index()) as usize].term)
    }

    /// Appends entries that follow on from the log, replacing any conflicting suffix (a new leader
    /// overwriting entries the old one never committed). Entries at or below the truncation point are
    /// already covered by the snapshot and are skipped.
    fn append(&mut self, new: &[Entry]) {
        let new: Vec<&Entry> = new.iter().filter(|e| e.index > self.truncated_index).collect();
        let Some(first) = new.first() else { return };
        assert!(
            first.index <= self.last_index() + 1,
            "append leaves a gap: log ends at {}, append starts at {}",
            self.last_index(),
            first.index
        );
        self.entries.truncate((first.index - self.first_index()) as usize);
        self.entries.extend(new.into_iter().cloned());
        self.check();
    }

    /// Installs a snapshot received from the leader: the log is replaced by it, and the configuration and
    /// commit index are the snapshot's.
    fn install_snapshot(&mut self, snapshot: &Snapshot) {
        let meta = snapshot.get_metadata();
        assert!(
            meta.index >= self.truncated_index,
            "snapshot at {} is older than the log start {}",
            meta.index,
            self.truncated_index
        );
        self.entries.clear();
        self.truncated_index = meta.index;
        self.truncated_term = meta.term;
        self.conf_state = meta.get_conf_state().clone();
        self.hard_state.commit = self.hard_state.commit.max(meta.index);
        self.hard_state.term = self.hard_state.term.max(meta.term);
        self.snapshot = snapshot.clone();
        self.check();
    }

    /// Records a snapshot the member took of its own applied state. The log is left alone: compaction is a
    /// separate step, so that a member can keep entries after the snapshot for slow followers.
    fn save_snapshot(&mut self, snapshot: &Snapshot) {
        assert!(snapshot.get_metadata().index >= self.snapshot.get_metadata().index, "snapshots only move forward");
        self.snapshot = snapshot.clone();
        self.check();
    }

    /// Drops the entries up to and including `index`, which the snapshot must cover.
    fn compact(&mut self, index: u64) {
        if index <= self.truncated_index {
            return;
        }
        assert!(index <= self.snapshot.get_metadata().index, "compacting to {index} past the snapshot");
        assert!(index <= self.last_index(), "compacting to {index} past the log end {}", self.last_index());
        let term = self.term_at(index).expect("an index inside the log has a term");
        self.entries.drain(..(index - self.truncated_index) as usize);
        self.truncated_index = index;
        self.truncated_term = term;
        self.check();
    }

    /// The invariants of the layout, checked after every change (and so on every replay at sync).
    /// What [`DiskState::check`] asserts, as an error: a state read back from a data dir is trusted only if it
    /// holds (a torn or corrupted image must stop the member with a message, not a panic).
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.truncated_index > self.snapshot.get_metadata().index {
            return Err(format!(
                "the log starts after {} but the snapshot covers only up to {}",
                self.truncated_index,
                self.snapshot.get_metadata().index
            ));
        }
        Self::validate_run(self.truncated_index, self.truncated_term, &self.entries)
    }

    /// Entries that may follow index `after` (of term `after_term`): consecutive indices from `after + 1`,
    /// terms never going down.
    fn validate_run(after: u64, after_term: u64, entries: &[Entry]) -> Result<(), String> {
        let mut previous = after_term;
        for (i, e) in entries.iter().enumerate() {
            let want = after.checked_add(1 + i as u64).ok_or("a log index past u64")?;
            if e.index != want {
                return Err(format!("entry {} where entry {want} belongs", e.index));
            }
            if e.term < previous {
                return Err(format!("entry {} has term {} after term {previous}", e.index, e.term));
            }
            previous = e.term;
        }
        Ok(())
    }

    fn check(&self) {
        debug_assert!(self.truncated_index <= self.snapshot.get_metadata().index);
        debug_assert!(self.entries.iter().enumerate().all(|(i, e)| e.index == self.truncated_index + 1 + i as u64));
        debug_assert!(self.entries.windows(2).all(|w| w[0].term <= w[1].term), "terms never decrease along the log");
        debug_assert!(self.entries.first().is_none_or(|e| e.term >= self.truncated_term));
    }
}

/// One buffered write, replayed onto the durable state by `sync` (and by a backend's recovery).
#[derive(Clone, Debug, PartialEq)]
pub enum DiskOp {
    Append(Vec<Entry>),
    SetHardState(HardState),
    SetConfState(ConfState),
    InstallSnapshot(Snapshot),
    SaveSnapshot(Snapshot),
    Compact(u64),
}

impl DiskOp {
    /// Whether the write replaces or drops part of the log, so that a backend appending writes to a journal
    /// had better write the whole state afresh instead (its journal would otherwise keep what is gone).
    pub(crate) fn reshapes_log(&self) -> bool {
        matches!(self, DiskOp::InstallSnapshot(_) | DiskOp::SaveSnapshot(_) | DiskOp::Compact(_))
    }

    /// Applies a write read back from a WAL after checking that the member could have made it (no gap in the
    /// log, no snapshot older than the log, no compaction past the snapshot or the log's end), so that what
    /// [`DiskOp::apply_to`] asserts holds; the error says what is wrong.
    pub(crate) fn replay_onto(&self, state: &mut DiskState) -> Result<(), String> {
        match self {
            DiskOp::Append(entries) => {
                let new: Vec<Entry> = entries.iter().filter(|e| e.index > state.truncated_index).cloned().collect();
                if let Some(first) = new.first() {
                    if first.index > state.last_index() + 1 {
                        return Err(format!("an append at {} leaves a gap after {}", first.index, state.last_index()));
                    }
                    let before = first.index - 1;
                    let term = state.term_at(before).ok_or_else(|| format!("no term for entry {before}"))?;
                    DiskState::validate_run(before, term, &new)?;
                }
            }
            DiskOp::InstallSnapshot(snapshot) => {
                let meta = snapshot.get_metadata();
                if meta.index < state.truncated_index {
                    return Err(format!(
                        "a snapshot at {} older than the log start {}",
                        meta.index, state.truncated_index
                    ));
                }
            }
            DiskOp::SaveSnapshot(snapshot) => {
                if snapshot.get_metadata().index < state.snapshot.get_metadata().index {
                    return Err("a snapshot older than the one saved before it".into());
                }
            }
            DiskOp::Compact(index) => {
                let (index, snapshot) = (*index, state.snapshot.get_metadata().index);
                if index > state.truncated_index && (index > snapshot || index > state.last_index()) {
                    return Err(format!("a compaction to {index} past the snapshot ({snapshot}) or the log's end"));
                }
            }
            DiskOp::SetHardState(_) | DiskOp::SetConfState(_) => {}
        }
        self.apply_to(state);
        Ok(())
    }

    pub(crate) fn apply_to(&self, state: &mut DiskState) {
        match self {
            DiskOp::Append(entries) => state.append(entries),
            DiskOp::SetHardState(hs) => state.hard_state = hs.clone(),
            DiskOp::SetConfState(cs) => state.conf_state = cs.clone(),
            DiskOp::InstallSnapshot(snapshot) => state.install_snapshot(snapshot),
            DiskOp::SaveSnapshot(snapshot) => state.save_snapshot(snapshot),
            DiskOp::Compact(index) => state.compact(*index),
        }
    }
}

/// A real disk behind the model: every sync hands it the writes it made durable, in order, and the state
/// they led to. It must not return before they are durable (written and fsynced); it has no way to fail,
/// because a member whose disk refuses a write cannot keep the promise a sync makes, so a backend that
/// cannot write stops the process, as etcd exits when it cannot save to its WAL.
pub(crate) trait DiskBackend: Send + Sync + fmt::Debug {
    fn persist(&self, ops: &[DiskOp], after: &DiskState);
}

/// The durable part of a member's disk: what survives a crash. Cloning shares the same disk.
#[derive(Clone, Debug, Default)]
pub struct DurableDisk {
    state: Arc<Mutex<DiskState>>,
    backend: Option<Arc<dyn DiskBackend>>,
}

impl DurableDisk {
    pub fn new() -> DurableDisk {
        DurableDisk::default()
    }

    /// A disk that starts from `state` (recovered from a real disk) and hands every sync to `backend`.
    pub(crate) fn with_backend(state: DiskState, backend: Arc<dyn DiskBackend>) -> DurableDisk {
        DurableDisk { state: Arc::new(Mutex::new(state)), backend: Some(backend) }
    }

    /// A copy of what is durable now (for tests and checkers).
    pub(crate) fn snapshot_state(&self) -> DiskState {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, DiskState> {
        // Nothing panics while holding this lock except a broken invariant, which is a bug anyway.
        self.state.lock().expect("durable disk lock poisoned")
    }
}

/// Fault switches of the disk model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskOptions {
    /// `sync` does nothing and reports success: the "fsync skipped" bug. Only for negative tests.
    pub skip_sync: bool,
}

/// A member's open disk: the written view it reads from, and the journal not yet synced.
#[derive(Debug)]
pub struct Disk {
    durable: DurableDisk,
    written: DiskState,
    pending: Vec<DiskOp>,
    options: DiskOptions,
    /// How many syncs made something durable (for tests and traces).
    syncs: u64,
}

impl Disk {
    /// Opens the disk after a start or a crash: the process sees exactly what was durable.
    pub(crate) fn open(durable: DurableDisk, options: DiskOptions) -> Disk {
        let written = durable.snapshot_state();
        Disk { durable, written, pending: Vec::new(), options, syncs: 0 }
    }

    /// The handle to keep across a restart.
    #[cfg(test)]
    pub(crate) fn durable(&self) -> &DurableDisk {
        &self.durable
    }

    /// What the process sees: durable state plus unsynced writes.
    pub fn state(&self) -> &DiskState {
        &self.written
    }

    #[cfg(test)]
    pub(crate) fn has_unsynced(&self) -> bool {
        !self.pending.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn sync_count(&self) -> u64 {
        self.syncs
    }

    pub(crate) fn append(&mut self, entries: &[Entry]) {
        if entries.is_empty() {
            return;
        }
        self.write(DiskOp::Append(entries.to_vec()));
    }

    pub(crate) fn set_hard_state(&mut self, hs: &HardState) {
        self.write(DiskOp::SetHardState(hs.clone()));
    }

    pub(crate) fn set_conf_state(&mut self, cs: &ConfState) {
        self.write(DiskOp::SetConfState(cs.clone()));
    }

    pub(crate) fn install_snapshot(&mut self, snapshot: &Snapshot) {
        self.write(DiskOp::InstallSnapshot(snapshot.clone()));
    }

    pub(crate) fn save_snapshot(&mut self, snapshot: &Snapshot) {
        self.write(DiskOp::SaveSnapshot(snapshot.clone()));
    }

    pub(crate) fn compact(&mut self, index: u64) {
        self.write(DiskOp::Compact(index));
    }

    /// Makes every write so far durable, in order. With `skip_sync` the journal is dropped instead, so those
    /// writes are never durable, yet the caller is told they are.
    pub(crate) fn sync(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if self.options.skip_sync {
            self.pending.clear();
            return;
        }
        let mut durable = self.durable.lock();
        for op in &self.pending {
            op.apply_to(&mut durable);
        }
        if let Some(backend) = &self.durable.backend {
            backend.persist(&self.pending, &durable);
        }
        self.pending.clear();
        self.syncs += 1;
        // Read-back half of the persist invariant: after a sync the durable state is what the process sees
        // (compared on the cheap parts; the journal replay is the same code that built the written view).
        debug_assert!(
            durable.hard_state == self.written.hard_state
                && durable.conf_state == self.written.conf_state
                && durable.truncated_index == self.written.truncated_index
                && durable.last_index() == self.written.last_index()
                && durable.snapshot.get_metadata() == self.written.snapshot.get_metadata(),
            "durable state diverged from the written view after sync"
        );
    }

    fn write(&mut self, op: DiskOp) {
        op.apply_to(&mut self.written);
        self.pending.push(op);
    }
}

#[cfg(test)]
mod tests {
    use ::raft::{GetEntriesContext, Storage, StorageError};

    use super::*;

    fn entry(index: u64, term: u64) -> Entry {
        Entry { index, term, data: format!("e{index}").into_bytes().into(), ..Entry::default() }
    }

    fn hard_state(term: u64, vote: u64, commit: u64) -> HardState {
        HardState { term, vote, commit, ..HardState::default() }
    }

    fn snapshot_at(index: u64, term: u64) -> Snapshot {
        let mut s = Snapshot::default();
        s.mut_metadata().index = index;
        s.mut_metadata().term = term;
        s.data = b"state".to_vec().into();
        s
    }

    fn store_err(e: StorageError) -> ::raft::Error {
        ::raft::Error::Store(e)
    }

    #[test]
    fn only_synced_writes_survive_a_crash() {
        let durable = DurableDisk::new();
        let mut disk = Disk::open(durable.clone(), DiskOptions::default());
        disk.append(&[entry(1, 1), entry(2, 1)]);
        disk.set_hard_state(&hard_state(1, 1, 1));
        disk.sync();
        disk.append(&[entry(3, 1)]);
        disk.set_hard_state(&hard_state(2, 0, 2));
        // The process reads its own unsynced writes.
        assert_eq!(disk.state().last_index(), 3);
        assert_eq!(disk.state().hard_state.term, 2);

        let reopened = Disk::open(durable, DiskOptions::default());
        assert_eq!(reopened.state().last_index(), 2);
        assert_eq!(reopened.state().hard_state, hard_state(1, 1, 1));
        assert!(!reopened.has_unsynced());
    }

    #[test]
    fn skip_sync_reports_nothing_and_persists_nothing() {
        let durable = DurableDisk::new();
        let mut disk = Disk::open(durable.clone(), DiskOptions { skip_sync: true });
        disk.append(&[entry(1, 1)]);
        disk.sync();
        assert_eq!(disk.state().last_index(), 1);
        assert_eq!(Disk::open(durable, DiskOptions::default()).state().last_index(), 0);
    }

    #[test]
    fn append_replaces_a_conflicting_suffix() {
        let mut disk = Disk::open(DurableDisk::new(), DiskOptions::default());
        disk.append(&[entry(1, 1), entry(2, 1), entry(3, 1)]);
        disk.append(&[entry(2, 2)]);
        disk.sync();
        let state = disk.durable().snapshot_state();
        assert_eq!(state.entries.iter().map(|e| (e.index, e.term)).collect::<Vec<_>>(), vec![(1, 1), (2, 2)]);
    }

    #[test]
    fn storage_answers_as_raft_rs_documents_around_compaction() {
        let mut disk = Disk::open(DurableDisk::new(), DiskOptions::default());
        disk.append(&(1..=10).map(|i| entry(i, 1 + i / 5)).collect::<Vec<_>>());
        assert_eq!(disk.snapshot(0, 2), Err(store_err(StorageError::SnapshotTemporarilyUnavailable)));
        disk.save_snapshot(&snapshot_at(6, 2));
        disk.compact(4);
        assert_eq!(disk.first_index().unwrap(), 5);
        assert_eq!(disk.last_index().unwrap(), 10);
        // The term just before the first entry is kept for the consistency check.
        assert_eq!(disk.term(4).unwrap(), 1);
        assert_eq!(disk.term(3), Err(store_err(StorageError::Compacted)));
        assert_eq!(disk.term(11), Err(store_err(StorageError::Unavailable)));
        let ctx = || GetEntriesContext::empty(false);
        assert_eq!(disk.entries(4, 6, None, ctx()), Err(store_err(StorageError::Compacted)));
        assert_eq!(disk.entries(5, 8, None, ctx()).unwrap().len(), 3);
        // A size limit still returns at least one entry.
        assert_eq!(disk.entries(5, 8, 1, ctx()).unwrap().len(), 1);
        assert_eq!(disk.snapshot(0, 2).unwrap().get_metadata().index, 6);
        assert_eq!(disk.snapshot(7, 2), Err(store_err(StorageError::SnapshotTemporarilyUnavailable)));

        // Installing a leader's snapshot replaces the log.
        disk.install_snapshot(&snapshot_at(20, 3));
        assert_eq!((disk.first_index().unwrap(), disk.last_index().unwrap()), (21, 20));
        assert_eq!(disk.term(20).unwrap(), 3);
        assert_eq!(disk.state().hard_state.commit, 20);
        disk.sync();
        assert_eq!(disk.durable().snapshot_state().truncated_index, 20);
    }
}
