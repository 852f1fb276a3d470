//! `RaftNode`: one member's Raft, raft-rs's `RawNode` over the disk model, driven by the shell through
//! plain calls (tick, step, propose, read_index, transfer_leader, campaign) and one [`RaftNode::ready`] that
//! runs a whole turn of raft-rs 0.7's Ready loop and returns an [`Output`].
//!
//! The turn, in the order raft-rs documents it (`raft@0.7.0:src/lib.rs`, "Processing the Ready State"):
//! 1. take the soft state, the read states and the messages a leader may send before persisting;
//! 2. write the leader's snapshot, if any (the shell restores it before applying anything);
//! 3. hand out the committed entries (committed on a quorum, so they may be applied before this member's
//!    own write completes);
//! 4. write the new entries and the hard state, then sync if raft-rs says the Ready must be durable
//!    (new entries, a term or vote change, a snapshot);
//! 5. only then release the messages that promise what was just written (votes, append acks);
//! 6. `advance`, which yields the commit index to record, more messages and more committed entries;
//!    then `advance_apply`, because the shell applies everything in the Output before its next call.
//!
//! The leader's early messages are released together with the rest after the sync: sending later than
//! raft-rs allows is always safe, and it leaves the shell a single list to send.
//!
//! A turn carries every proposal made since the last one (the shell does not drive after each proposal),
//! so it has one append and one sync for all of them. raft-rs still queues one append message per proposal
//! and follower; [`merge_appends`] folds those that follow on from each other into one, so that a follower
//! steps and acknowledges one message per turn.

use ::raft::eraftpb::{ConfState, HardState, Message, MessageType, Snapshot, SnapshotMetadata};
use ::raft::{RawNode, SnapshotStatus, StateRole};

use super::timeout::ElectionTimeouts;

use super::config::RaftConfig;
use super::disk::{Disk, DiskOptions, DurableDisk};
use super::error::RaftError;
use super::output::{CommittedEntry, HardStateView, Output, Role, SnapshotData, SoftStateView};
use crate::types::{LogIndex, MemberId, Term};

/// What MemberList and Status report about this member's Raft.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeStatus {
    pub id: MemberId,
    pub role: Role,
    pub leader: Option<MemberId>,
    pub term: Term,
    pub commit: LogIndex,
    /// The last index handed out in an [`Output`] (so applied, once the shell has handled it).
    pub applied: LogIndex,
    pub first_index: LogIndex,
    pub last_index: LogIndex,
    pub snapshot_index: LogIndex,
}

pub struct RaftNode {
    raw: RawNode<Disk>,
    config: RaftConfig,
    /// After opening a disk that holds a snapshot, the state machine must be restored from it first.
    pending_restore: Option<SnapshotData>,
    /// The last entry handed out for applying (or the snapshot index, after a restore).
    applied: LogIndex,
    /// The index of the newest snapshot on disk.
    snapshot_index: LogIndex,
    /// The hard state last reported, so `Output::hard_state` carries changes only.
    reported_hard_state: HardStateView,
    /// Where the next election timeout comes from, and the (term, role) it was last drawn for.
    timeouts: ElectionTimeouts,
    drawn_for: (u64, StateRole),
}

impl RaftNode {
    /// Opens member `config.id` on its disk: after a crash or restart, only what was synced is there. An
    /// empty disk is bootstrapped with `config.peers` as the voters.
    pub fn open(config: RaftConfig, durable: DurableDisk, options: DiskOptions) -> Result<RaftNode, RaftError> {
        let mut disk = Disk::open(durable, options);
        if disk.state().conf_state.voters.is_empty() {
            if !config.peers.contains(&config.id) {
                return Err(RaftError::Config(format!("member {} is not among the peers", config.id)));
            }
            debug_assert_eq!(disk.state().last_index(), 0, "a disk with a log has a configuration");
            let voters: Vec<u64> = config.peers.iter().map(|p| p.0).collect();
            disk.set_conf_state(&ConfState::from((voters, Vec::<u64>::new())));
            disk.sync();
        }
        let snapshot = disk.state().snapshot.clone();
        let snapshot_index = LogIndex(snapshot.get_metadata().index);
        let pending_restore = (snapshot_index.0 > 0).then(|| snapshot_data(&snapshot));
        let raft_config = config.to_raft(snapshot_index.0)?;
        let reported_hard_state = hard_state_view(&disk.state().hard_state);
        let logger = slog::Logger::root(slog::Discard, slog::o!());
        let mut raw = RawNode::new(&raft_config, disk, &logger).map_err(|e| RaftError::from_raft(e, None))?;
        raw.raft.set_randomized_election_timeout(config.election_timeout_tick);
        let timeouts = ElectionTimeouts::new(config.election_seed, config.election_tick);
        let drawn_for = (raw.raft.term, raw.raft.state);
        Ok(RaftNode {
            raw,
            config,
            pending_restore,
            applied: snapshot_index,
            snapshot_index,
            reported_hard_state,
            timeouts,
            drawn_for,
        })
    }

    /// raft-rs re-draws the election timeout from `thread_rng` whenever it resets its election clock, which
    /// it does exactly when the term or the role changes. Right after any call that may have done so, and
    /// before a tick can read the value, this replaces the draw with the seeded stream's next value.
    fn redraw_election_timeout(&mut self) {
        let now = (self.raw.raft.term, self.raw.raft.state);
        if now != self.drawn_for {
            self.drawn_for = now;
            let ticks = self.timeouts.next_ticks();
            self.raw.raft.set_randomized_election_timeout(ticks);
        }
    }

    /// The disk as this process sees it (synced or not).
    pub fn disk(&self) -> &Disk {
        self.raw.store()
    }

    /// One tick of the logical clock (etcd: one heartbeat interval). Returns whether anything happened.
    pub fn tick(&mut self) -> bool {
        let happened = self.raw.tick();
        self.redraw_election_timeout();
        happened
    }

    /// A message from a peer.
    pub fn step(&mut self, msg: ::raft::eraftpb::Message) -> Result<(), RaftError> {
        debug_assert_eq!(msg.to, self.config.id.0, "a message delivered to the wrong member");
        let from = MemberId(msg.from);
        let stepped = self.raw.step(msg).map_err(|e| RaftError::from_raft(e, Some(from)));
        self.redraw_election_timeout();
        stepped
    }

    /// Proposes opaque data; `context` comes back with the committed entry. On a follower raft-rs forwards
    /// the proposal to the leader, as etcd does. `ProposalDropped` when there is no leader (or a transfer is
    /// under way): the proposal will never commit.
    pub fn propose(&mut self, data: Vec<u8>, context: Vec<u8>) -> Result<(), RaftError> {
        debug_assert!(!data.is_empty(), "empty data is the leader's empty entry");
        let proposed = self.raw.propose(context, data).map_err(|e| RaftError::from_raft(e, None));
        self.redraw_election_timeout();
        proposed
    }

    /// Asks for a linearizable read point. The answer comes as a `ReadState` with the same `ctx` in a later
    /// Output, once the leader has confirmed with a quorum that it still leads. With no known leader the
    /// request is dropped silently (raft-rs's behaviour), so the shell times out and retries, as etcd does.
    pub fn read_index(&mut self, ctx: Vec<u8>) {
        self.raw.read_index(ctx);
    }

    /// etcd's MoveLeader: the leader brings `to` up to date and tells it to campaign at once.
    pub fn transfer_leader(&mut self, to: MemberId) {
        self.raw.transfer_leader(to.0);
        self.redraw_election_timeout();
    }

    /// Starts an election now (tests and a forced campaign; normal elections come from ticks).
    pub fn campaign(&mut self) -> Result<(), RaftError> {
        let campaigned = self.raw.campaign().map_err(|e| RaftError::from_raft(e, None));
        self.redraw_election_timeout();
        campaigned
    }

    /// The transport could not reach `to`: the leader stops streaming appends to it and probes instead.
    pub(crate) fn report_unreachable(&mut self, to: MemberId) {
        self.raw.report_unreachable(to.0);
    }

    /// Whether a snapshot message to `to` was delivered. The leader waits for this before sending `to`
    /// anything else, so the transport must report every snapshot it was given.
    pub fn report_snapshot(&mut self, to: MemberId, delivered: bool) {
        let status = if delivered { SnapshotStatus::Finish } else { SnapshotStatus::Failure };
        self.raw.report_snapshot(to.0, status);
    }

    pub fn role(&self) -> Role {
        Role::from_raft(self.raw.raft.state)
    }

    pub fn is_leader(&self) -> bool {
        self.raw.raft.state == StateRole::Leader
    }

    pub fn leader(&self) -> Option<MemberId> {
        leader_of(self.raw.raft.leader_id)
    }

    pub fn term(&self) -> Term {
        Term(self.raw.raft.term)
    }

    pub fn status(&self) -> NodeStatus {
        let state = self.raw.store().state();
        NodeStatus {
            id: self.config.id,
            role: self.role(),
            leader: self.leader(),
            term: self.term(),
            commit: LogIndex(self.raw.raft.raft_log.committed),
            applied: self.applied,
            first_index: LogIndex(state.first_index()),
            last_index: LogIndex(self.raw.raft.raft_log.last_index()),
            snapshot_index: self.snapshot_index,
        }
    }

    /// Whether [`RaftNode::ready`] would return anything.
    pub fn has_ready(&self) -> bool {
        self.pending_restore.is_some() || self.raw.has_ready()
    }

    /// Runs one turn of the Ready loop (see the module doc). The shell must handle the Output completely,
    /// applying every committed entry, before its next call into this node.
    pub fn ready(&mut self) -> Output {
        let mut out = Output { snapshot: self.pending_restore.take(), ..Output::default() };
        if self.raw.has_ready() {
            self.turn(&mut out);
        }
        let hs = hard_state_view(&self.raw.raft.hard_state());
        if hs != self.reported_hard_state {
            self.reported_hard_state = hs;
            out.hard_state = Some(hs);
        }
        if let Some(last) = out.committed.last() {
            debug_assert!(out.committed.windows(2).all(|w| w[1].index.0 == w[0].index.0 + 1));
            debug_assert!(out.committed[0].index.0 == self.applied.0 + 1, "committed entries skip or repeat");
            self.applied = last.index;
            if self.applied.0 - self.snapshot_index.0 >= self.config.snapshot_threshold_entries {
                out.snapshot_due = Some(self.applied);
            }
        }
        out
    }

    fn turn(&mut self, out: &mut Output) {
        let mut rd = self.raw.ready();
        if let Some(ss) = rd.ss() {
            out.soft_state =
                Some(SoftStateView { leader: leader_of(ss.leader_id), role: Role::from_raft(ss.raft_state) });
        }
        out.read_states = rd.take_read_states();
        let early = rd.take_messages();

        if !rd.snapshot().is_empty() {
            let snapshot = rd.snapshot().clone();
            self.raw.mut_store().install_snapshot(&snapshot);
            let index = LogIndex(snapshot.get_metadata().index);
            // The leader's snapshot replaces whatever this member had applied, including a restore pending
            // from its own older snapshot.
            debug_assert!(index >= self.applied, "a snapshot from the leader never moves the state machine back");
            out.snapshot = Some(snapshot_data(&snapshot));
            self.applied = index;
            self.snapshot_index = index;
        }
        out.committed.extend(rd.take_committed_entries().iter().map(CommittedEntry::from_raft));

        let disk = self.raw.mut_store();
        disk.append(rd.entries());
        if let Some(hs) = rd.hs() {
            disk.set_hard_state(hs);
        }
        if rd.must_sync() {
            disk.sync();
        }
        out.messages = early;
        out.messages.extend(rd.take_persisted_messages());

        let mut light = self.raw.advance(rd);
        if light.commit_index().is_some() {
            // A commit-index change alone is not synced (etcd does not sync it either): a member that
            // forgets it relearns it from the leader.
            let hs = self.raw.raft.hard_state();
            self.raw.mut_store().set_hard_state(&hs);
        }
        out.messages.extend(light.take_messages());
        merge_appends(&mut out.messages);
        out.committed.extend(light.take_committed_entries().iter().map(CommittedEntry::from_raft));
        self.raw.advance_apply();
    }

    /// Records the state machine's snapshot `data`, taken after applying exactly up to `index`, and compacts
    /// the log behind it (keeping `snapshot_catch_up_entries`). Synced before returning.
    pub fn compact(&mut self, index: LogIndex, data: Vec<u8>) -> Result<(), RaftError> {
        if index > self.applied {
            return Err(RaftError::Snapshot { index: index.0, reason: "not applied yet" });
        }
        if index <= self.snapshot_index {
            return Err(RaftError::Snapshot { index: index.0, reason: "not newer than the current snapshot" });
        }
        let disk = self.raw.mut_store();
        let term = disk.state().term_at(index.0).expect("an applied index newer than the snapshot is in the log");
        let mut metadata = SnapshotMetadata { index: index.0, term, ..SnapshotMetadata::default() };
        metadata.set_conf_state(disk.state().conf_state.clone());
        let mut snapshot = Snapshot::default();
        snapshot.set_metadata(metadata);
        snapshot.data = data.into();
        disk.save_snapshot(&snapshot);
        let compact_to = index.0.saturating_sub(self.config.snapshot_catch_up_entries);
        if compact_to > disk.state().truncated_index {
            disk.compact(compact_to);
        }
        disk.sync();
        self.snapshot_index = index;
        Ok(())
    }
}

/// Folds each append into the previous message to the same member when that is an append of the same term
/// whose entries it continues (its previous index and term are that message's last entry), so that a
/// follower gets one append per turn instead of one per proposal. A merged message is exactly the two
/// delivered in order; the follower answers once, for the last entry, which the leader reads as both
/// answers with the first one lost, a loss Raft tolerates. Messages to different members are never reordered
/// relative to their own member's others.
pub(crate) fn merge_appends(messages: &mut Vec<Message>) {
    let mut merged: Vec<Message> = Vec::with_capacity(messages.len());
    // The position in `merged` of the last message to each member.
    let mut last_to: Vec<(u64, usize)> = Vec::new();
    for msg in messages.drain(..) {
        let previous = last_to.iter().find(|(to, _)| *to == msg.to).map(|&(_, at)| at);
        if let Some(at) = previous {
            if continues(&merged[at], &msg) {
                let target = &mut merged[at];
                target.commit = target.commit.max(msg.commit);
                let mut entries: Vec<_> = target.take_entries().into();
                entries.extend(msg.entries.iter().cloned());
                target.set_entries(entries.into());
                continue;
            }
        }
        match last_to.iter_mut().find(|(to, _)| *to == msg.to) {
            Some(slot) => slot.1 = merged.len(),
            None => last_to.push((msg.to, merged.len())),
        }
        merged.push(msg);
    }
    *messages = merged;
}

/// Whether `next` is an append that picks up exactly where the append `first` ends.
fn continues(first: &Message, next: &Message) -> bool {
    if first.get_msg_type() != MessageType::MsgAppend || next.get_msg_type() != MessageType::MsgAppend {
        return false;
    }
    if first.term != next.term || first.from != next.from {
        return false;
    }
    let (end_index, end_term) = match first.entries.last() {
        Some(e) => (e.index, e.term),
        None => (first.index, first.log_term),
    };
    next.index == end_index && next.log_term == end_term
}

fn leader_of(raw_id: u64) -> Option<MemberId> {
    (raw_id != ::raft::INVALID_ID).then_some(MemberId(raw_id))
}

fn hard_state_view(hs: &HardState) -> HardStateView {
    HardStateView { term: Term(hs.term), vote: leader_of(hs.vote), commit: LogIndex(hs.commit) }
}

fn snapshot_data(snapshot: &Snapshot) -> SnapshotData {
    let meta = snapshot.get_metadata();
    SnapshotData { index: LogIndex(meta.index), term: Term(meta.term), data: snapshot.data.to_vec() }
}

#[cfg(test)]
mod tests {
    use ::raft::eraftpb::Entry;

    use super::*;

    fn append(to: u64, prev: (u64, u64), entries: &[(u64, u64)], commit: u64) -> Message {
        let mut m = Message { to, from: 1, term: 2, index: prev.0, log_term: prev.1, commit, ..Message::default() };
        m.set_msg_type(MessageType::MsgAppend);
        let entries: Vec<Entry> =
            entries.iter().map(|&(index, term)| Entry { index, term, ..Entry::default() }).collect();
        m.set_entries(entries.into());
        m
    }

    fn shape(messages: &[Message]) -> Vec<(u64, u64, Vec<u64>, u64)> {
        messages.iter().map(|m| (m.to, m.index, m.entries.iter().map(|e| e.index).collect(), m.commit)).collect()
    }

    #[test]
    fn appends_that_follow_on_are_merged_per_member() {
        let mut msgs = vec![
            append(2, (5, 2), &[(6, 2)], 5),
            append(3, (5, 2), &[(6, 2)], 5),
            append(2, (6, 2), &[(7, 2)], 5),
            append(3, (6, 2), &[(7, 2), (8, 2)], 6),
            // A commit-only append that follows on only raises the commit index of the one before.
            append(2, (7, 2), &[], 6),
        ];
        merge_appends(&mut msgs);
        assert_eq!(shape(&msgs), vec![(2, 5, vec![6, 7], 6), (3, 5, vec![6, 7, 8], 6)]);
    }

    #[test]
    fn entries_that_do_not_follow_on_stay_apart() {
        // The follower's next index moved back after a rejection: these entries do not continue the empty
        // append before them (raft-rs's own batching would glue them on and the follower would acknowledge
        // entries it does not have).
        let mut msgs = vec![append(2, (9, 2), &[], 9), append(2, (6, 2), &[(7, 2), (8, 2), (9, 2)], 9)];
        merge_appends(&mut msgs);
        assert_eq!(shape(&msgs), vec![(2, 9, vec![], 9), (2, 6, vec![7, 8, 9], 9)]);
        // An empty append that does continue takes the entries after it.
        let mut msgs = vec![append(2, (9, 2), &[], 9), append(2, (9, 2), &[(10, 2)], 9)];
        merge_appends(&mut msgs);
        assert_eq!(shape(&msgs), vec![(2, 9, vec![10], 9)]);
        // A heartbeat in between is another kind of message: the append after it is not moved before it.
        let mut hb = Message { to: 2, from: 1, term: 2, ..Message::default() };
        hb.set_msg_type(MessageType::MsgHeartbeat);
        let mut msgs = vec![append(2, (5, 2), &[(6, 2)], 5), hb, append(2, (6, 2), &[(7, 2)], 5)];
        merge_appends(&mut msgs);
        assert_eq!(msgs.len(), 3);
    }
}
