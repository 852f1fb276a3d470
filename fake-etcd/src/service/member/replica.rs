//! A member's Raft side: its [`RaftNode`] and what Ready told about the cluster (leader, role, applied
//! index, published client URLs), the ids of this life's proposals, and the drive loop that turns each Ready
//! into effects on the member's parts: send messages, restore a snapshot on the state machine and the watch
//! hub, apply committed entries on them, answer proposals and reads, react to leader changes. Ticks, the
//! inputs that need no client, drive here too.
//!
//! Bootstrapping follows etcd: a new cluster's log starts with one entry per member at term 1 (etcd's
//! membership entries), committed everywhere, so the first election is for term 2. After every start the
//! member publishes its attributes through Raft and the first leader records the cluster version, so a fresh
//! single member stands at raft index 4, term 2, exactly as etcd 3.4 does.

use std::collections::BTreeMap;

use ::raft::eraftpb::{ConfState, HardState};

use super::auth::TokenEffect;
use super::config::{MemberConfig, MemberEvent};
use super::internal::{Internal, CLUSTER_VERSION};
use super::write::Reply;
use super::{Member, State};
use crate::apply::Command;
use crate::bug::Bug;
use crate::raft::{encode_internal, DiskOptions, Entry, Payload, ProposalId, RaftConfig, RaftError, RaftNode, Role};
use crate::raft::{Disk, DurableDisk};
use crate::types::{LogIndex, MemberId, Revision};

/// This member's Raft node and what its Readys told; only `node` is shared with the other parts, which
/// propose, read and report through it.
pub(super) struct Replica {
    pub(super) node: RaftNode,
    me: MemberId,
    next_seq: u64,
    applied: LogIndex,
    leader: Option<MemberId>,
    role: Role,
    /// This incarnation's attributes reached the log.
    published: bool,
    cluster_version_set: bool,
    /// Client URLs members published.
    client_urls: BTreeMap<MemberId, Vec<String>>,
}

impl Replica {
    pub(super) fn open(config: &MemberConfig, start_ms: u64) -> Result<Replica, RaftError> {
        let ids: Vec<MemberId> = config.peers.iter().map(|p| p.id).collect();
        bootstrap(&config.disk, &ids);
        let mut raft = RaftConfig::etcd_defaults(config.member_id, ids);
        raft.election_tick = config.raft.election_tick;
        raft.election_timeout_tick = config.raft.election_timeout_tick;
        raft.election_seed = config.raft.election_seed;
        raft.pre_vote = config.raft.pre_vote;
        raft.snapshot_threshold_entries = config.raft.snapshot_threshold_entries;
        raft.snapshot_catch_up_entries = config.raft.snapshot_catch_up_entries;
        let disk_options = DiskOptions { skip_sync: config.bugs.has(Bug::SkipSync) };
        let node = RaftNode::open(raft, config.disk.clone(), disk_options)?;
        Ok(Replica {
            node,
            me: config.member_id,
            // Proposal ids must not repeat across this member's lives: each life starts its sequence at its
            // start time, in a range no earlier life can reach.
            next_seq: start_ms << 20,
            applied: LogIndex(0),
            leader: None,
            role: Role::Follower,
            published: false,
            cluster_version_set: false,
            client_urls: BTreeMap::new(),
        })
    }

    /// The next number of this life's sequence: proposals' ids and read requests' contexts draw from it.
    pub(super) fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// A ReadIndex request's context: this member's id, then the next number of its sequence. The leader
    /// keeps one pending read per context, so a context must be unique across the cluster and not only on
    /// this member: two followers asking with the same bare sequence number at once would have one of
    /// them never answered (etcd's request ids carry the member id for the same reason).
    pub(super) fn read_ctx(&mut self) -> (u64, Vec<u8>) {
        let seq = self.next_seq();
        let mut ctx = self.me.0.to_be_bytes().to_vec();
        ctx.extend_from_slice(&seq.to_be_bytes());
        (seq, ctx)
    }

    pub(super) fn proposal_id(&self, seq: u64) -> ProposalId {
        ProposalId { member: self.me, seq }
    }

    /// The leader as the last Ready reported it.
    pub(super) fn leader(&self) -> Option<MemberId> {
        self.leader
    }

    /// The index of the last entry applied here.
    pub(super) fn applied(&self) -> LogIndex {
        self.applied
    }

    /// The client URLs `member` published, if its attributes reached the log.
    pub(super) fn client_urls(&self, member: MemberId) -> Option<&[String]> {
        self.client_urls.get(&member).map(Vec::as_slice)
    }

    /// Proposes an internal record nobody waits for; a dropped one is retried at the next leader change.
    fn propose_internal(&mut self, record: &Internal) {
        let seq = self.next_seq();
        let id = self.proposal_id(seq);
        let _ = self.node.propose(encode_internal(&record.encode()), id.encode());
    }
}

/// Writes etcd's bootstrap onto an empty disk: the voters, and one committed entry per member at term 1.
///
/// The bootstrap is synced even with the skip-sync bug switched on: it is the same on every member and is
/// written before anything is served, and the bug under test is about acknowledged writes.
fn bootstrap(durable: &DurableDisk, ids: &[MemberId]) {
    let mut disk = Disk::open(durable.clone(), DiskOptions::default());
    if !disk.state().conf_state.voters.is_empty() {
        return;
    }
    let voters: Vec<u64> = ids.iter().map(|m| m.0).collect();
    disk.set_conf_state(&ConfState::from((voters, Vec::<u64>::new())));
    let entries: Vec<Entry> =
        (1..=ids.len() as u64).map(|index| Entry { index, term: 1, ..Entry::default() }).collect();
    disk.append(&entries);
    disk.set_hard_state(&HardState { term: 1, commit: ids.len() as u64, ..HardState::default() });
    disk.sync();
}

impl State {
    /// Runs the Ready loop until Raft has nothing more to hand out. Called after every input to the node.
    pub(super) fn drive(&mut self, member: &Member) {
        let now = member.now();
        while self.raft.node.has_ready() {
            let out = self.raft.node.ready();
            for msg in out.messages {
                member.send_to_peer(msg);
            }
            if let Some(snapshot) = out.snapshot {
                self.sm.restore(&snapshot.data, now).expect("a snapshot taken by a member restores");
                self.raft.applied = snapshot.index;
                // Watchers must not stall at the revision they had, nor go back: the hub re-syncs them.
                self.watches.restored(&self.sm.mvcc, member);
                let revision = self.sm.mvcc.current_revision();
                member
                    .config()
                    .observer
                    .emit(&format!("snapshot restored index={} revision={revision}", snapshot.index));
            }
            for entry in out.committed {
                let index = entry.index;
                match entry.payload().expect("every entry in the log was written by a member") {
                    None => {}
                    Some((id, Payload::Command(cmd, by))) => {
                        let compact = match &cmd {
                            Command::Compact(req) => Some(Revision(req.revision)),
                            _ => None,
                        };
                        let tokens = TokenEffect::of(&cmd);
                        let mut result = if id.member != self.raft.me
                            && member.config().bugs.has(Bug::TxnRangesCheckedOnlyWhereServed)
                        {
                            self.sm.apply_from_elsewhere_skipping_txn_ranges(cmd, &by, now)
                        } else {
                            self.sm.apply_as(cmd, &by, now)
                        };
                        if let Ok(applied) = &mut result {
                            self.auth.applied(tokens, index, now, &mut applied.response);
                            self.watches.publish(&applied.events, &self.sm.mvcc, member);
                            if let Some(revision) = compact {
                                member.config().events.notify(MemberEvent::Compacted { revision });
                            }
                        }
                        self.wake(id, result.map(|a| Some(a.response)));
                    }
                    Some((id, Payload::Internal(bytes))) => {
                        if let Some(record) = Internal::decode(&bytes) {
                            self.apply_internal(record);
                        }
                        self.wake(id, Ok(None));
                    }
                }
                self.raft.applied = index;
            }
            for rs in out.read_states {
                self.reads.index_known(rs);
            }
            self.reads.wake(self.raft.applied);
            if let Some(index) = out.snapshot_due {
                let data = self.sm.snapshot();
                if let Err(e) = self.raft.node.compact(index, data) {
                    tracing::warn!(error = %e, "snapshot skipped");
                }
            }
            if let Some(ss) = out.soft_state {
                self.role_changed(ss.leader, ss.role, member);
            }
            member.set_term(self.raft.node.term().0);
        }
    }

    /// Answers the client waiting for `id`, if this member proposed it.
    fn wake(&mut self, id: ProposalId, reply: Reply) {
        if id.member == self.raft.me {
            self.proposals.answer(id.seq, reply);
        }
    }

    fn apply_internal(&mut self, record: Internal) {
        match record {
            Internal::Publish { member, client_urls, .. } => {
                if MemberId(member) == self.raft.me {
                    self.raft.published = true;
                }
                self.raft.client_urls.insert(MemberId(member), client_urls);
            }
            Internal::ClusterVersion(_) => self.raft.cluster_version_set = true,
            Internal::Alarm => {}
        }
    }

    fn role_changed(&mut self, leader: Option<MemberId>, role: Role, member: &Member) {
        let was_leader = self.raft.role == Role::Leader;
        self.raft.leader = leader;
        self.raft.role = role;
        let term = self.raft.node.term().0;
        let config = member.config();
        if role == Role::Leader && !was_leader {
            // etcd's lessor.Promote: a new leader does not know when the old one last saw keep-alives, so it
            // gives every lease a fresh TTL plus an election timeout (kubernetes #65497).
            self.sm.lessor.promote(member.now(), config.election_timeout_ms());
            member.config().observer.emit(&format!("leader term={term}"));
            if !self.raft.cluster_version_set {
                self.raft.propose_internal(&Internal::ClusterVersion(CLUSTER_VERSION.to_string()));
            }
        } else if was_leader && role != Role::Leader {
            member.config().observer.emit(&format!("stepped down term={term}"));
        }
        if leader.is_some() && !self.raft.published {
            let record = Internal::publish(config.member_id, &config.name, &config.client_urls);
            self.raft.propose_internal(&record);
        }
    }
}

impl Member {
    /// One Raft tick (the heartbeat interval passed).
    pub(in crate::service) fn tick(&self) {
        let mut st = self.lock();
        st.raft.node.tick();
        st.drive(self);
    }
}
