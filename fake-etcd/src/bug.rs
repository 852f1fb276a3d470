//! fake-etcd's bug switches: historical etcd bugs a simulation can put back, each where it lived (the
//! watch hub, the replica's apply, the disk), so that a scenario shows the race failing with the switch on
//! and passing with it off. Off by default: fake-etcd implements the fixed behaviour. A member's set comes
//! in through [`crate::service::MemberConfig::bugs`], never a global.

pub use kubesim_failpoints::UnknownBug;

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
    }
}

/// The switches on for one member.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;
