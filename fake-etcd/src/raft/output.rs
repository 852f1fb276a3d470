//! What one turn of the Ready loop produced, as plain data for the shell: messages to send (already safe to
//! send: everything they depend on was synced first), a snapshot to restore, entries to apply in order,
//! read states, and the changes of role, leader, term and commit index.

use ::raft::eraftpb::{Entry, EntryType, Message};
use ::raft::{ReadState, StateRole};

use super::entry::{decode_payload, Payload, ProposalId};
use super::error::RaftError;
use crate::types::{LogIndex, MemberId, Term};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Follower,
    PreCandidate,
    Candidate,
    Leader,
}

impl Role {
    pub(crate) fn from_raft(role: StateRole) -> Role {
        match role {
            StateRole::Follower => Role::Follower,
            StateRole::PreCandidate => Role::PreCandidate,
            StateRole::Candidate => Role::Candidate,
            StateRole::Leader => Role::Leader,
        }
    }
}

/// Who leads (as far as this member knows) and what this member is. `leader == None` means no leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftStateView {
    pub leader: Option<MemberId>,
    pub role: Role,
}

/// The persistent Raft state: the term, the vote in it, and the highest index known committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HardStateView {
    pub term: Term,
    pub vote: Option<MemberId>,
    pub commit: LogIndex,
}

/// A snapshot of the state machine the shell must restore before applying the entries that follow it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotData {
    pub index: LogIndex,
    pub term: Term,
    /// What [`StateMachine::snapshot`](crate::apply::StateMachine) produced on the member that took it.
    pub data: Vec<u8>,
}

/// What a committed entry carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// The empty entry a new leader appends to commit entries of earlier terms (and to learn its commit
    /// index); nothing to apply.
    Empty,
    /// A proposal: its data and the context it was proposed with.
    Normal { data: Vec<u8>, context: Vec<u8> },
    /// A configuration change (not proposed by this layer yet; passed through so nothing is lost silently).
    ConfChange { data: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedEntry {
    pub index: LogIndex,
    pub term: Term,
    pub kind: EntryKind,
}

impl CommittedEntry {
    pub(crate) fn from_raft(entry: &Entry) -> CommittedEntry {
        let kind = match entry.get_entry_type() {
            EntryType::EntryNormal if entry.data.is_empty() => EntryKind::Empty,
            EntryType::EntryNormal => EntryKind::Normal { data: entry.data.to_vec(), context: entry.context.to_vec() },
            EntryType::EntryConfChange | EntryType::EntryConfChangeV2 => {
                EntryKind::ConfChange { data: entry.data.to_vec() }
            }
        };
        CommittedEntry { index: LogIndex(entry.index), term: Term(entry.term), kind }
    }
}

impl CommittedEntry {
    /// The proposal id and payload of a normal entry (a command or an internal record); `None` for the
    /// empty and configuration entries.
    pub(crate) fn payload(&self) -> Result<Option<(ProposalId, Payload)>, RaftError> {
        match &self.kind {
            EntryKind::Normal { data, context } => Ok(Some((ProposalId::decode(context)?, decode_payload(data)?))),
            EntryKind::Empty | EntryKind::ConfChange { .. } => Ok(None),
        }
    }
}

/// One turn of the loop. The shell handles the fields in this order: send `messages`, restore `snapshot`,
/// apply `committed` in order, answer `read_states` once applied reaches their index, take a snapshot if
/// `snapshot_due` says so, and report `soft_state`/`hard_state` changes.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// Messages for other members, in the order raft-rs produced them. Everything they promise (entries,
    /// votes, terms) is already synced.
    pub messages: Vec<Message>,
    /// A snapshot from the leader (or, after a restart, this member's own), to restore before `committed`.
    pub snapshot: Option<SnapshotData>,
    /// Entries committed and not yet handed out, in log order, each exactly once per incarnation.
    pub committed: Vec<CommittedEntry>,
    /// Answers to [`RaftNode::read_index`](super::RaftNode::read_index): serve the read once the state
    /// machine has applied `index`.
    pub read_states: Vec<ReadState>,
    /// Set when the leader or this member's role changed.
    pub soft_state: Option<SoftStateView>,
    /// Set when term, vote or commit index changed.
    pub hard_state: Option<HardStateView>,
    /// Set when enough entries were applied since the last snapshot: once `committed` is applied, call
    /// [`RaftNode::compact`](super::RaftNode::compact) with the state machine's snapshot at this index.
    pub snapshot_due: Option<LogIndex>,
}
