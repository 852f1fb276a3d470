//! fake-etcd's bug switches: historical etcd bugs a simulation can put back, each where it lived (the
//! watch hub, the replica's apply, the disk, the store's compaction and restore), so that a scenario shows
//! the race failing with the switch on and passing with it off. Off by default: fake-etcd implements the
//! fixed behaviour. A member's set comes in through [`crate::service::MemberConfig::bugs`], never a global,
//! and the member hands each switch to the sans-IO core it concerns as a plain field of that core's own
//! configuration ([`crate::watch::HubConfig`], [`crate::mvcc::MvccConfig`], `crate::raft::DiskOptions`).

kubesim_failpoints::bugs! {
    /// A historical etcd bug fake-etcd can put back.
    pub enum Bug {
        /// The watch hub lowers its watchers to the restored revision when a member installs a leader's
        /// snapshot (`crate::watch::HubConfig::restore_lowers_watchers`).
        RestoreLowersWatchers => (
            "restore-lowers-watchers",
            "etcd #15271, #20221",
            "a member that installs a leader's snapshot sends its watchers back in time: delivered events come again and a watch on a future revision gets events below its start"
        ),
        /// The disk acknowledges a sync without making the writes durable (`crate::raft::DiskOptions::skip_sync`).
        SkipSync => (
            "skip-sync",
            "etcd #14370",
            "a member acknowledges writes its disk has not made durable, so a crash loses acknowledged writes"
        ),
        /// A member applying a txn another member served skips the txn's range checks
        /// (`crate::apply::StateMachine::apply_from_elsewhere_skipping_txn_ranges`).
        TxnRangesCheckedOnlyWhereServed => (
            "txn-ranges-checked-only-where-served",
            "etcd #18667",
            "a txn reading at a compacted revision fails on the member that served it and writes everywhere else, so the replicas diverge"
        ),
        /// Compaction removes a tombstone at exactly its revision
        /// (`crate::mvcc::MvccConfig::compaction_drops_tombstone_at_revision`).
        CompactionDropsDeleteTombstone => (
            "compaction-drops-delete-tombstone",
            "etcd #18089",
            "compaction at the revision of a delete removes that tombstone, so a watch from the compaction revision never sees the delete"
        ),
        /// A snapshot restore finishes the last compaction over a key index rebuilt without keys whose only
        /// record is a tombstone (`crate::mvcc::MvccConfig::restore_drops_tombstones_at_compaction`).
        WatchAtCompactionMissesDelete => (
            "watch-at-compaction-misses-delete",
            "etcd #19179",
            "a member that restores its store after a compaction at a delete loses that tombstone, so a watch opened at the compaction revision misses the delete"
        ),
        /// The watch hub lets a slow watcher that compaction overtook skip to the compaction revision
        /// (`crate::watch::HubConfig::slow_watcher_skips_compacted`).
        SlowWatcherSkipsCompacted => (
            "slow-watcher-skips-compacted",
            "etcd #17529",
            "a slow watcher overtaken by compaction is not canceled with compact_revision but resumes after the gap, silently losing the compacted events"
        ),
        /// The watch hub answers a progress request at once, whether or not every watcher on the stream is
        /// synced (`crate::watch::HubConfig::progress_ignores_unsynced`).
        ProgressBeforeUnsyncedEvents => (
            "progress-before-unsynced-events",
            "etcd #15220",
            "a requested progress notification overtakes the events an unsynced watcher on the stream still owes, so a client believes it has seen a revision it has not"
        ),
    }
}

/// The switches on for one member.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;
