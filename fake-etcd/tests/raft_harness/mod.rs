//! An in-memory, deterministic cluster of `RaftNode`s for the Raft tests: a seeded network (delivery order,
//! drops, duplicates, delays, partitions), crashes that lose what was not synced, restarts from the durable
//! disk, a toy state machine that records what it applied, and checkers for Raft's safety properties.
//!
//! Everything random comes from one `ChaCha8Rng` seeded by the test, so a failing seed replays exactly.
//! Time is the tick: each [`Cluster::tick`] first delivers the messages due, then ticks every live member.
//! The checkers record violations instead of panicking, so that a negative test can assert that a seeded
//! bug is caught.

#![allow(dead_code)] // Each test binary uses a different part of the harness.

pub mod workload;

use std::collections::{BTreeMap, BTreeSet};

use fake_etcd::raft::{
    codec, DiskOptions, DurableDisk, EntryKind, Message, MessageType, Output, RaftConfig, RaftNode, ReadState, Role,
};
use fake_etcd::{LogIndex, MemberId, Term};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How the simulated network misbehaves. Delays are in ticks; 0 means "within this tick".
#[derive(Clone, Copy, Debug)]
pub struct NetFaults {
    pub drop_per_mille: u32,
    pub duplicate_per_mille: u32,
    pub max_delay_ticks: u64,
}

impl NetFaults {
    pub const NONE: NetFaults = NetFaults { drop_per_mille: 0, duplicate_per_mille: 0, max_delay_ticks: 0 };
    pub const LOSSY: NetFaults = NetFaults { drop_per_mille: 50, duplicate_per_mille: 30, max_delay_ticks: 2 };
}

/// A safety property that failed, with what showed it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Violation {
    TwoLeaders {
        term: u64,
        first: u64,
        second: u64,
    },
    DifferentApply {
        index: u64,
        member: u64,
    },
    LogMismatch {
        a: u64,
        b: u64,
        index: u64,
    },
    LeaderMissesCommitted {
        leader: u64,
        term: u64,
        index: u64,
    },
    AckedLost {
        proposal: Vec<u8>,
    },
    /// raft-rs panicked on a member: it detected state it cannot have (a lost log, a commit beyond its log).
    /// Only the disk-fault tests expect this; the member stays down for the rest of the run.
    Panicked {
        member: u64,
        message: String,
    },
}

struct Envelope {
    deliver_at: u64,
    /// A tie-breaker drawn at send time: messages due at the same tick are delivered in this order.
    order: u64,
    from: MemberId,
    to: MemberId,
    bytes: Vec<u8>,
    is_snapshot: bool,
}

/// The toy state machine: the data of every normal entry applied, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub index: u64,
    pub data: Vec<Vec<u8>>,
}

impl Applied {
    fn snapshot(&self) -> Vec<u8> {
        let mut out = self.index.to_be_bytes().to_vec();
        for d in &self.data {
            out.extend_from_slice(&(d.len() as u32).to_be_bytes());
            out.extend_from_slice(d);
        }
        out
    }

    fn restore(bytes: &[u8]) -> Applied {
        let index = u64::from_be_bytes(bytes[..8].try_into().unwrap());
        let mut data = Vec::new();
        let mut rest = &bytes[8..];
        while !rest.is_empty() {
            let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            data.push(rest[4..4 + len].to_vec());
            rest = &rest[4 + len..];
        }
        Applied { index, data }
    }
}

pub struct Member {
    pub node: Option<RaftNode>,
    pub durable: DurableDisk,
    pub disk_options: DiskOptions,
    pub sm: Applied,
    pub read_states: Vec<ReadState>,
    pub restarts: u32,
}

pub struct ClusterOptions {
    pub size: u64,
    pub pre_vote: bool,
    pub check_quorum: bool,
    pub snapshot_threshold_entries: u64,
    pub snapshot_catch_up_entries: u64,
    pub net: NetFaults,
    pub skip_sync: bool,
}

impl ClusterOptions {
    pub fn new(size: u64) -> ClusterOptions {
        ClusterOptions {
            size,
            pre_vote: true,
            check_quorum: true,
            snapshot_threshold_entries: 1_000_000,
            snapshot_catch_up_entries: 0,
            net: NetFaults::NONE,
            skip_sync: false,
        }
    }
}

pub struct Cluster {
    pub now: u64,
    pub rng: ChaCha8Rng,
    pub members: BTreeMap<MemberId, Member>,
    pub net: NetFaults,
    /// Links that drop everything, as (from, to).
    pub blocked: BTreeSet<(MemberId, MemberId)>,
    in_flight: Vec<Envelope>,
    opts: ClusterOptions,
    /// Every leader seen, by term.
    pub leaders: BTreeMap<u64, MemberId>,
    /// The data applied at each index, by whoever applied it first (all others must agree).
    pub committed: BTreeMap<u64, Vec<u8>>,
    /// Proposals whose proposer applied them: a client got "ok" for these.
    pub acked: BTreeSet<Vec<u8>>,
    /// Proposal contexts each member is waiting for (proposal data by context).
    waiting: BTreeMap<MemberId, BTreeMap<Vec<u8>, Vec<u8>>>,
    pub violations: BTreeSet<Violation>,
    next_proposal: u64,
    pub first_leader_tick: Option<u64>,
    /// Snapshot messages that reached their member.
    pub snapshots_delivered: u64,
    /// Members that panicked; they are not restarted.
    pub broken: BTreeSet<MemberId>,
}

impl Cluster {
    pub fn new(seed: u64, opts: ClusterOptions) -> Cluster {
        let mut cluster = Cluster {
            now: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            members: BTreeMap::new(),
            net: opts.net,
            blocked: BTreeSet::new(),
            in_flight: Vec::new(),
            leaders: BTreeMap::new(),
            committed: BTreeMap::new(),
            acked: BTreeSet::new(),
            waiting: BTreeMap::new(),
            violations: BTreeSet::new(),
            next_proposal: 0,
            first_leader_tick: None,
            snapshots_delivered: 0,
            broken: BTreeSet::new(),
            opts,
        };
        for id in cluster.ids_from_opts() {
            let member = Member {
                node: None,
                durable: DurableDisk::new(),
                disk_options: DiskOptions { skip_sync: cluster.opts.skip_sync },
                sm: Applied::default(),
                read_states: Vec::new(),
                restarts: 0,
            };
            cluster.members.insert(id, member);
            cluster.start(id);
        }
        cluster
    }

    fn ids_from_opts(&self) -> Vec<MemberId> {
        (1..=self.opts.size).map(MemberId).collect()
    }

    pub fn ids(&self) -> Vec<MemberId> {
        self.members.keys().copied().collect()
    }

    /// Starts (or restarts) a member from its durable disk, with an election timeout drawn from the seed.
    pub fn start(&mut self, id: MemberId) {
        if self.broken.contains(&id) {
            return;
        }
        let election_timeout_tick = self.rng.random_range(10..20);
        let mut config = RaftConfig::etcd_defaults(id, self.ids_from_opts());
        config.election_timeout_tick = election_timeout_tick;
        config.pre_vote = self.opts.pre_vote;
        config.check_quorum = self.opts.check_quorum;
        config.snapshot_threshold_entries = self.opts.snapshot_threshold_entries;
        config.snapshot_catch_up_entries = self.opts.snapshot_catch_up_entries;
        config.max_size_per_msg = 4096;
        config.max_inflight_msgs = 16;
        let member = self.members.get_mut(&id).unwrap();
        assert!(member.node.is_none(), "start of a running member");
        member.node = Some(RaftNode::open(config, member.durable.clone(), member.disk_options).unwrap());
        member.sm = Applied::default();
        member.read_states.clear();
        self.waiting.remove(&id);
        self.drain(id);
    }

    /// Kills a member: its process state and every unsynced write are gone.
    pub fn crash(&mut self, id: MemberId) {
        let member = self.members.get_mut(&id).unwrap();
        member.node = None;
        member.restarts += 1;
        self.waiting.remove(&id);
    }

    pub fn restart(&mut self, id: MemberId) {
        self.crash(id);
        self.start(id);
    }

    pub fn node(&self, id: MemberId) -> &RaftNode {
        self.members[&id].node.as_ref().expect("member is down")
    }

    pub fn node_mut(&mut self, id: MemberId) -> &mut RaftNode {
        self.members.get_mut(&id).unwrap().node.as_mut().expect("member is down")
    }

    pub fn is_up(&self, id: MemberId) -> bool {
        self.members[&id].node.is_some()
    }

    /// Cuts every link between the two groups, both ways.
    pub fn partition(&mut self, a: &[MemberId], b: &[MemberId]) {
        for &x in a {
            for &y in b {
                self.blocked.insert((x, y));
                self.blocked.insert((y, x));
            }
        }
    }

    pub fn isolate(&mut self, id: MemberId) {
        let others: Vec<MemberId> = self.ids().into_iter().filter(|&o| o != id).collect();
        self.partition(&[id], &others);
    }

    pub fn heal(&mut self) {
        self.blocked.clear();
    }

    /// The live leader with the highest term, if any.
    pub fn leader(&self) -> Option<MemberId> {
        self.members
            .iter()
            .filter_map(|(&id, m)| m.node.as_ref().filter(|n| n.is_leader()).map(|n| (n.term(), id)))
            .max()
            .map(|(_, id)| id)
    }

    /// Proposes unique data through `via`; returns the data, or `None` if the proposal was dropped.
    pub fn propose(&mut self, via: MemberId) -> Option<Vec<u8>> {
        self.next_proposal += 1;
        let data = format!("p{}-via{}", self.next_proposal, via.0).into_bytes();
        let context = self.next_proposal.to_be_bytes().to_vec();
        let node = self.members.get_mut(&via).unwrap().node.as_mut()?;
        match node.propose(data.clone(), context.clone()) {
            Ok(()) => {
                self.waiting.entry(via).or_default().insert(context, data.clone());
                self.drain(via);
                Some(data)
            }
            Err(_) => None,
        }
    }

    pub fn read_index(&mut self, via: MemberId, ctx: &[u8]) {
        self.node_mut(via).read_index(ctx.to_vec());
        self.drain(via);
    }

    /// Advances one tick: delivers everything due (including what that delivery causes within the tick),
    /// then ticks each live member.
    pub fn tick(&mut self) {
        self.deliver_due();
        for id in self.ids() {
            if let Some(node) = self.members.get_mut(&id).unwrap().node.as_mut() {
                node.tick();
                self.drain(id);
            }
        }
        self.deliver_due();
        self.now += 1;
    }

    pub fn run(&mut self, ticks: u64) {
        for _ in 0..ticks {
            self.tick();
        }
    }

    /// Runs until `done` holds or `max_ticks` pass; returns whether it held.
    pub fn run_until(&mut self, max_ticks: u64, mut done: impl FnMut(&Cluster) -> bool) -> bool {
        for _ in 0..max_ticks {
            if done(self) {
                return true;
            }
            self.tick();
        }
        done(self)
    }

    fn deliver_due(&mut self) {
        // Bounded so that a livelock in the code under test shows up as a failure rather than a hang.
        for _ in 0..10_000 {
            let now = self.now;
            let Some(pos) = self
                .in_flight
                .iter()
                .enumerate()
                .filter(|(_, e)| e.deliver_at <= now)
                .min_by_key(|(_, e)| (e.deliver_at, e.order))
                .map(|(i, _)| i)
            else {
                return;
            };
            let env = self.in_flight.swap_remove(pos);
            self.deliver(env);
        }
        panic!("more than 10000 messages delivered in one tick: livelock");
    }

    fn deliver(&mut self, env: Envelope) {
        let delivered = !self.blocked.contains(&(env.from, env.to)) && self.is_up(env.to);
        if env.is_snapshot {
            // The transport tells the sender whether its snapshot arrived, as etcd's snapshot sender does.
            if let Some(sender) = self.members.get_mut(&env.from).unwrap().node.as_mut() {
                sender.report_snapshot(env.to, delivered);
            }
        }
        if !delivered {
            return;
        }
        self.snapshots_delivered += u64::from(env.is_snapshot);
        let msg = codec::decode_message(&env.bytes).unwrap();
        // A message from an earlier incarnation or a stale term is the receiver's business, as on a network.
        // raft-rs panics when a message contradicts what the member must have persisted (etcd does too):
        // that happens only when the disk lost synced data, so it is recorded as a violation.
        let node = self.members.get_mut(&env.to).unwrap().node.as_mut().unwrap();
        let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = node.step(msg);
        }));
        if let Err(panic) = stepped {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            self.violations.insert(Violation::Panicked { member: env.to.0, message });
            self.crash(env.to);
            self.broken.insert(env.to);
            return;
        }
        self.drain(env.to);
    }

    /// Handles every pending Output of a member: sends, restores, applies, answers reads, snapshots.
    pub fn drain(&mut self, id: MemberId) {
        loop {
            let Some(node) = self.members.get_mut(&id).unwrap().node.as_mut() else { return };
            if !node.has_ready() {
                break;
            }
            let out = node.ready();
            self.handle(id, out);
        }
        self.check_leader(id);
    }

    fn handle(&mut self, id: MemberId, out: Output) {
        for msg in &out.messages {
            self.send(msg);
        }
        let member = self.members.get_mut(&id).unwrap();
        if let Some(snapshot) = &out.snapshot {
            member.sm = Applied::restore(&snapshot.data);
            assert_eq!(member.sm.index, snapshot.index.0, "snapshot data and metadata disagree");
        }
        for entry in &out.committed {
            assert_eq!(entry.index.0, member.sm.index + 1, "member {id} applies out of order");
            member.sm.index = entry.index.0;
            if let EntryKind::Normal { data, context } = &entry.kind {
                member.sm.data.push(data.clone());
                match self.committed.get(&entry.index.0) {
                    Some(first) if first != data => {
                        self.violations.insert(Violation::DifferentApply { index: entry.index.0, member: id.0 });
                    }
                    Some(_) => {}
                    None => {
                        self.committed.insert(entry.index.0, data.clone());
                    }
                }
                if let Some(mine) = self.waiting.get_mut(&id) {
                    if mine.remove(context).is_some() {
                        self.acked.insert(data.clone());
                    }
                }
            } else {
                // An empty entry takes an index too; all members must agree that it is empty.
                match self.committed.get(&entry.index.0) {
                    Some(first) if !first.is_empty() => {
                        self.violations.insert(Violation::DifferentApply { index: entry.index.0, member: id.0 });
                    }
                    Some(_) => {}
                    None => {
                        self.committed.insert(entry.index.0, Vec::new());
                    }
                }
            }
        }
        member.read_states.extend(out.read_states.iter().cloned());
        if let Some(index) = out.snapshot_due {
            assert_eq!(member.sm.index, index.0);
            let data = member.sm.snapshot();
            member.node.as_mut().unwrap().compact(index, data).unwrap();
        }
    }

    fn send(&mut self, msg: &Message) {
        let copies = if self.rng.random_range(0..1000) < self.net.drop_per_mille {
            0
        } else if self.rng.random_range(0..1000) < self.net.duplicate_per_mille {
            2
        } else {
            1
        };
        let is_snapshot = msg.get_msg_type() == MessageType::MsgSnapshot;
        if copies == 0 && is_snapshot {
            // A lost snapshot is reported to the sender (on delivery, below, for the others).
            let (from, to) = (MemberId(msg.from), MemberId(msg.to));
            if let Some(sender) = self.members.get_mut(&from).unwrap().node.as_mut() {
                sender.report_snapshot(to, false);
            }
        }
        for _ in 0..copies {
            let delay =
                if self.net.max_delay_ticks == 0 { 0 } else { self.rng.random_range(0..=self.net.max_delay_ticks) };
            let order = self.rng.random();
            self.in_flight.push(Envelope {
                deliver_at: self.now + delay,
                order,
                from: MemberId(msg.from),
                to: MemberId(msg.to),
                bytes: codec::encode_message(msg),
                is_snapshot,
            });
        }
    }

    /// Election safety: at most one leader per term, ever, across restarts.
    fn check_leader(&mut self, id: MemberId) {
        let Some(node) = self.members[&id].node.as_ref() else { return };
        if !node.is_leader() {
            return;
        }
        let term = node.term().0;
        self.first_leader_tick.get_or_insert(self.now);
        match self.leaders.get(&term) {
            Some(&other) if other != id => {
                self.violations.insert(Violation::TwoLeaders { term, first: other.0, second: id.0 });
            }
            Some(_) => {}
            None => {
                self.leaders.insert(term, id);
                self.check_leader_completeness(id, term);
            }
        }
    }

    /// Leader completeness: a new leader's log holds every entry known committed (applied anywhere) that
    /// its log has not compacted into a snapshot.
    fn check_leader_completeness(&mut self, id: MemberId, term: u64) {
        let state = self.node(id).disk().state();
        let first = state.first_index();
        let mut missing = None;
        for (&index, data) in self.committed.range(first..) {
            let found = state.entries.get((index - first) as usize);
            if found.is_none_or(|e| e.data.as_ref() != data.as_slice()) {
                missing = Some(index);
                break;
            }
        }
        if let Some(index) = missing {
            self.violations.insert(Violation::LeaderMissesCommitted { leader: id.0, term, index });
        }
    }

    /// Log matching: two logs that hold an entry with the same index and term hold the same entries up to
    /// there (checked over the indexes both still have).
    pub fn check_log_matching(&mut self) {
        type Log = Vec<(u64, u64, Vec<u8>)>;
        let logs: Vec<(MemberId, Log)> = self
            .members
            .iter()
            .filter_map(|(&id, m)| m.node.as_ref().map(|n| (id, n)))
            .map(|(id, n)| {
                let entries = n.disk().state().entries.iter().map(|e| (e.index, e.term, e.data.to_vec())).collect();
                (id, entries)
            })
            .collect();
        for (i, (a, log_a)) in logs.iter().enumerate() {
            for (b, log_b) in &logs[i + 1..] {
                let by_index: BTreeMap<u64, (u64, &Vec<u8>)> = log_b.iter().map(|(ix, t, d)| (*ix, (*t, d))).collect();
                // The highest common index with equal terms; everything both hold below it must be equal.
                let Some(top) = log_a
                    .iter()
                    .rev()
                    .find(|(ix, t, _)| by_index.get(ix).is_some_and(|(tb, _)| tb == t))
                    .map(|(ix, _, _)| *ix)
                else {
                    continue;
                };
                for (ix, t, d) in log_a.iter().filter(|(ix, _, _)| *ix <= top) {
                    if let Some((tb, db)) = by_index.get(ix) {
                        if tb != t || *db != d {
                            self.violations.insert(Violation::LogMismatch { a: a.0, b: b.0, index: *ix });
                        }
                    }
                }
            }
        }
    }

    /// Durability: every acknowledged proposal is in the state machine of every live member that has caught
    /// up to the highest commit.
    pub fn check_acked_durable(&mut self) {
        let Some(top) = self.members.values().filter_map(|m| m.node.as_ref()).map(|n| n.status().applied).max() else {
            return;
        };
        for member in self.members.values().filter(|m| m.node.as_ref().is_some_and(|n| n.status().applied == top)) {
            for acked in &self.acked {
                if !member.sm.data.contains(acked) {
                    self.violations.insert(Violation::AckedLost { proposal: acked.clone() });
                }
            }
        }
    }

    pub fn applied_of(&self, id: MemberId) -> &Applied {
        &self.members[&id].sm
    }

    pub fn term_of(&self, id: MemberId) -> Term {
        self.node(id).term()
    }

    pub fn commit_of(&self, id: MemberId) -> LogIndex {
        self.node(id).status().commit
    }

    pub fn role_of(&self, id: MemberId) -> Role {
        self.node(id).role()
    }

    /// Runs every checker and fails the test with the seed if any property broke.
    pub fn assert_safe(&mut self, seed: u64) {
        self.check_log_matching();
        assert!(self.violations.is_empty(), "seed {seed}: safety violations: {:?}", self.violations);
    }
}
