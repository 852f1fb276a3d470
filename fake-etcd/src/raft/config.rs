//! `RaftConfig`: how one member runs Raft. The defaults are etcd 3.4's (`etcdserver/raft.go`): check-quorum
//! on, pre-vote off (etcd 3.5 turns it on; both are configurable), heartbeat every tick, an election timeout
//! of 10 ticks, ReadIndex (`ReadOnlySafe`) for linearizable reads.
//!
//! Determinism: raft-rs randomises each election timeout in `[election_tick, 2 * election_tick)` with
//! `thread_rng`, which is not deterministic under madsim on Linux (raft-rs `RaftCore::reset_randomized_election_timeout`).
//! [`RaftConfig::election_timeout_tick`] is the first timeout and [`RaftConfig::election_seed`] seeds the
//! later ones; `RaftNode` overrides raft-rs's draw with them (see `raft::timeout`), so every run of a seed
//! is identical and members still draw a new timeout each term, as etcd's do.

use ::raft::{Config, ReadOnlyOption};

use super::error::RaftError;
use crate::types::MemberId;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaftConfig {
    /// This member. Raft ids must not be 0.
    pub id: MemberId,
    /// Every voting member of the initial cluster, this one included. Used only to bootstrap an empty disk;
    /// a restarted member takes its configuration from its disk.
    pub peers: Vec<MemberId>,
    /// Ticks without a leader's message after which a follower may campaign (etcd: election timeout /
    /// heartbeat interval = 10).
    pub election_tick: usize,
    /// Ticks between a leader's heartbeats (etcd: 1).
    pub heartbeat_tick: usize,
    /// This member's first election timeout, in `[election_tick, 2 * election_tick)`, drawn by the caller
    /// from the simulation seed (see the module doc).
    pub election_timeout_tick: usize,
    /// Seeds the timeouts drawn at each later election reset.
    pub election_seed: u64,
    /// A leader that has not heard from a quorum for an election timeout steps down (etcd: always on).
    pub check_quorum: bool,
    /// A candidate first asks whether it could win before bumping its term (etcd 3.4: off, 3.5: on).
    pub pre_vote: bool,
    /// Most bytes of entries in one append message (etcd: 1 MiB).
    pub max_size_per_msg: u64,
    /// Most append messages in flight to one follower (etcd: 512).
    pub max_inflight_msgs: usize,
    /// Take a snapshot of the applied state once this many entries were applied since the last one
    /// (etcd: `--snapshot-count`, 100 000 in 3.4; small values exercise snapshot install in tests).
    pub snapshot_threshold_entries: u64,
    /// Entries kept in the log behind a snapshot, so a follower that is only a little behind catches up from
    /// the log rather than a snapshot (etcd: `SnapshotCatchUpEntries` = 5000).
    pub snapshot_catch_up_entries: u64,
}

impl RaftConfig {
    /// etcd 3.4's settings for member `id` of `peers`, with the election timeout at its lower bound.
    pub fn etcd_defaults(id: MemberId, peers: Vec<MemberId>) -> RaftConfig {
        RaftConfig {
            id,
            peers,
            election_tick: 10,
            heartbeat_tick: 1,
            election_timeout_tick: 10,
            election_seed: 0,
            check_quorum: true,
            pre_vote: false,
            max_size_per_msg: 1024 * 1024,
            max_inflight_msgs: 512,
            snapshot_threshold_entries: 100_000,
            snapshot_catch_up_entries: 5000,
        }
    }

    /// The raft-rs configuration. `applied` is the index the state machine starts from (the snapshot's).
    pub(crate) fn to_raft(&self, applied: u64) -> Result<Config, RaftError> {
        if self.id.0 == 0 {
            return Err(RaftError::Config("member id 0 is reserved by Raft".into()));
        }
        if self.election_timeout_tick < self.election_tick || self.election_timeout_tick >= 2 * self.election_tick {
            return Err(RaftError::Config(format!(
                "election timeout {} outside [election_tick, 2 * election_tick) = [{}, {})",
                self.election_timeout_tick,
                self.election_tick,
                2 * self.election_tick
            )));
        }
        let config = Config {
            id: self.id.0,
            election_tick: self.election_tick,
            heartbeat_tick: self.heartbeat_tick,
            applied,
            max_size_per_msg: self.max_size_per_msg,
            max_inflight_msgs: self.max_inflight_msgs,
            check_quorum: self.check_quorum,
            pre_vote: self.pre_vote,
            min_election_tick: self.election_tick,
            max_election_tick: 2 * self.election_tick,
            read_only_option: ReadOnlyOption::Safe,
            // Not raft-rs's `batch_append`: its `try_batching` can glue entries onto an earlier empty append
            // without checking that they follow that message's previous index (after a rejection moved the
            // follower's next index back), and the follower then acknowledges entries it does not have (with
            // it on, a 5-member sim run panicked with "to_commit out of range" on a follower). The node merges
            // appends itself (`node::merge_appends`), only where they follow on.
            batch_append: false,
            ..Config::default()
        };
        config.validate().map_err(|e| RaftError::Config(e.to_string()))?;
        Ok(config)
    }
}
