//! raft-rs's `Storage` trait on top of the disk model. raft-rs reads its stable log through this trait
//! (its unstable entries it keeps itself until the Ready loop has written them), so these reads see the
//! written view: what this process wrote, synced or not, as reads through a page cache do.
//!
//! The contract, as raft-rs 0.7 documents it: `entries(low, high)` fails with `Compacted` when `low` is below
//! the first index and returns at least one entry whatever `max_size` says; `term(i)` answers for
//! `first_index - 1 ..= last_index`, `Compacted` below and `Unavailable` above; `snapshot` returns the newest
//! snapshot, or `SnapshotTemporarilyUnavailable` if it is older than the index asked for.

use ::raft::eraftpb::{Entry, Snapshot};
use ::raft::{GetEntriesContext, RaftState, Storage, StorageError};
use protobuf::Message as _;

use super::disk::Disk;

impl Storage for Disk {
    fn initial_state(&self) -> ::raft::Result<RaftState> {
        let state = self.state();
        Ok(RaftState::new(state.hard_state.clone(), state.conf_state.clone()))
    }

    fn entries(
        &self,
        low: u64,
        high: u64,
        max_size: impl Into<Option<u64>>,
        _context: GetEntriesContext,
    ) -> ::raft::Result<Vec<Entry>> {
        let state = self.state();
        if low < state.first_index() {
            return Err(::raft::Error::Store(StorageError::Compacted));
        }
        // Asking past the end is a bug in the caller, as raft-rs's contract says.
        assert!(high <= state.last_index() + 1, "entries({low}, {high}) past the log end {}", state.last_index());
        let from = (low - state.first_index()) as usize;
        let to = (high - state.first_index()) as usize;
        let max_size = max_size.into().unwrap_or(u64::MAX);
        let mut size = 0u64;
        let mut out = Vec::with_capacity(to.saturating_sub(from));
        for entry in &state.entries[from..to] {
            size = size.saturating_add(u64::from(entry.compute_size()));
            // The first entry is returned even when it alone exceeds the limit, so replication always moves.
            if !out.is_empty() && size > max_size {
                break;
            }
            out.push(entry.clone());
        }
        Ok(out)
    }

    fn term(&self, idx: u64) -> ::raft::Result<u64> {
        let state = self.state();
        if idx < state.truncated_index {
            return Err(::raft::Error::Store(StorageError::Compacted));
        }
        state.term_at(idx).ok_or(::raft::Error::Store(StorageError::Unavailable))
    }

    fn first_index(&self) -> ::raft::Result<u64> {
        Ok(self.state().first_index())
    }

    fn last_index(&self) -> ::raft::Result<u64> {
        Ok(self.state().last_index())
    }

    fn snapshot(&self, request_index: u64, _to: u64) -> ::raft::Result<Snapshot> {
        let snapshot = &self.state().snapshot;
        let index = snapshot.get_metadata().index;
        if index == 0 || index < request_index {
            return Err(::raft::Error::Store(StorageError::SnapshotTemporarilyUnavailable));
        }
        Ok(snapshot.clone())
    }
}
