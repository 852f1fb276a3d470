//! One gRPC Watch stream: its watchers by id, id allocation, whether it is stalled, and a pending progress
//! request.

use std::collections::{BTreeMap, BTreeSet};

use etcd_proto::etcdserverpb::WatchResponse;

use super::respond::{progress, NO_WATCH_ID};
use super::watcher::{CreateError, Watcher};
use crate::types::Revision;

#[derive(Debug, Default)]
pub(super) struct Stream {
    /// Ordered, so that responses go out in watch-id order.
    pub(super) watchers: BTreeMap<i64, Watcher>,
    /// Ids of watchers that compaction canceled. etcd keeps such an id registered on the stream until the
    /// client cancels it (clientv3 does so at once), so it cannot be reused, and cancelling it is answered.
    retired: BTreeSet<i64>,
    /// etcd's `nextID`: auto ids only ever move up, skipping ids in use.
    next_auto_id: i64,
    /// Its outbound buffer is full: its watchers are all unsynced until `WatchHub::sync` lifts this.
    pub(super) stalled: bool,
    /// A progress request waits for every watcher to be synced. Several waiting requests get one answer,
    /// as in etcd 3.4.25 to 3.4.30; from 3.4.31 etcd drops such a request instead and clients ask again.
    progress_requested: bool,
}

impl Stream {
    /// The id for a new watcher: `requested`, or the next free one when it is 0 (etcd's `AutoWatchID`).
    pub(super) fn allocate_id(&mut self, requested: i64) -> Result<i64, CreateError> {
        if requested != 0 {
            return if self.is_registered(requested) { Err(CreateError::DuplicateId) } else { Ok(requested) };
        }
        while self.is_registered(self.next_auto_id) {
            self.next_auto_id += 1;
        }
        let id = self.next_auto_id;
        self.next_auto_id += 1;
        Ok(id)
    }

    fn is_registered(&self, id: i64) -> bool {
        self.watchers.contains_key(&id) || self.retired.contains(&id)
    }

    /// A client's cancel: true if the id was registered (etcd answers only then).
    pub(super) fn cancel(&mut self, id: i64) -> bool {
        self.watchers.remove(&id).is_some() || self.retired.remove(&id)
    }

    /// Compaction overtook the watcher: it is gone, but its id stays registered.
    pub(super) fn retire(&mut self, id: i64) {
        let removed = self.watchers.remove(&id);
        debug_assert!(removed.is_some(), "retiring unknown watcher {id}");
        self.retired.insert(id);
    }

    pub(super) fn stall(&mut self) {
        self.stalled = true;
        for w in self.watchers.values_mut() {
            w.synced = false;
        }
    }

    pub(super) fn request_progress(&mut self) {
        self.progress_requested = true;
    }

    /// Answers a waiting progress request if every watcher can take it now. A stream without watchers gets
    /// no answer, as in etcd (the answer would have no watcher to travel on).
    pub(super) fn answer_progress(&mut self, current: Revision) -> Option<WatchResponse> {
        if !self.progress_requested {
            return None;
        }
        if self.watchers.is_empty() {
            self.progress_requested = false;
            return None;
        }
        if !self.watchers.values().all(|w| w.progress_ready(current)) {
            return None;
        }
        self.progress_requested = false;
        Some(progress(NO_WATCH_ID, current))
    }

    /// The stream's invariants with the store at `current`.
    pub(super) fn check(&self, current: Revision) {
        for (id, w) in &self.watchers {
            debug_assert!(!self.retired.contains(id), "watcher {id} is both live and retired");
            // Unsynced watchers exist only on stalled streams: creation and `sync` catch up the others at once.
            debug_assert_eq!(w.synced, !self.stalled, "watcher {id}: synced must mean the stream is not stalled");
            w.check(*id, current);
        }
        debug_assert!(!self.progress_requested || !self.watchers.is_empty(), "a progress request waits for no watcher");
        debug_assert!(
            !self.progress_requested || self.watchers.values().any(|w| !w.progress_ready(current)),
            "a progress request waits although every watcher is ready"
        );
    }
}
