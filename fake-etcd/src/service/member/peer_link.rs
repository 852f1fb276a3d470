//! The member as the peer transport sees it ([`Link`]): Raft message batches from peers stepped into the
//! node, the transport's verdicts on what it could not deliver, and the leader's answers to the lease calls
//! followers forward. Everything else about the member stays out of the transport's reach.

use super::Member;
use crate::apply::StateMachine;
use crate::error::EtcdError;
use crate::lease::TimeToLive;
use crate::raft::codec;
use crate::raft::CommittedEntry;
use crate::service::peer::{Link, PeerSpec};
use crate::types::{ClusterId, LeaseId, MemberId};

/// Whether what `msg` carries for the state machine decodes: every normal entry's payload, and a snapshot's
/// data. Raft accepts whatever a peer sends, and the member applies committed entries and restores snapshots
/// with no way back (etcd, which trusts its peers, panics on them there); a member of this version proposes
/// nothing else, so anything that does not decode is dropped at the door, as a message lost on the wire.
/// Found by the `peer_frames` fuzz target.
fn well_formed(msg: &::raft::eraftpb::Message) -> bool {
    use ::raft::eraftpb::MessageType as T;
    let entries = msg.get_entries();
    let (run, payloads) = match msg.get_msg_type() {
        // A leader appends a run of consecutive indices after `index`, with terms that never go down, never
        // pass its own and never fall below that of the entry at `index`, which has a term unless it is the
        // start of the log (raft-rs reads the term of an index past its log as 0, so an append claiming term
        // 0 for index 144 "matches" a log of 3 entries and is appended past its end); raft-rs's log panics
        // on anything else.
        T::MsgAppend => (
            (msg.index == 0) == (msg.log_term == 0)
                && msg.log_term <= msg.term
                && entries.first().is_none_or(|e| e.term >= msg.log_term.max(1))
                && entries.iter().enumerate().all(|(i, e)| e.index == msg.index + 1 + i as u64 && e.term <= msg.term)
                && entries.windows(2).all(|w| w[0].term <= w[1].term),
            true,
        ),
        // A forwarded proposal's entries are not in any log yet (no index, no term), but will be applied.
        T::MsgPropose => (true, true),
        // Anything else carries no entries for the state machine (a read-index request's one entry is its
        // context, opaque to Raft).
        _ => (true, false),
    };
    let decodes = !payloads || entries.iter().all(|e| CommittedEntry::from_raft(e).payload().is_ok());
    let snapshot = !msg.has_snapshot() || StateMachine::snapshot_decodes(msg.get_snapshot().get_data());
    run && decodes && snapshot
}

impl Link for Member {
    fn cluster_id(&self) -> ClusterId {
        self.config.cluster_id
    }

    fn member_id(&self) -> MemberId {
        self.config.member_id
    }

    fn peer(&self, id: MemberId) -> Option<PeerSpec> {
        Member::peer(self, id).cloned()
    }

    fn peer_ids(&self) -> Vec<MemberId> {
        self.config.peers.iter().map(|p| p.id).filter(|&id| id != self.config.member_id).collect()
    }

    fn set_peer_active(&self, to: MemberId, active: bool) {
        Member::set_peer_active(self, to, active);
    }

    /// Messages that do not decode, are not for this member, or no correct peer sends
    /// ([`codec::from_a_peer`]) are dropped: Raft retries what matters.
    fn deliver(&self, messages: &[Vec<u8>]) {
        let mut st = self.lock();
        for bytes in messages {
            let Ok(msg) = codec::decode_message(bytes) else { continue };
            if !codec::from_a_peer(&msg, self.config.member_id.0) || !well_formed(&msg) {
                continue;
            }
            let _ = st.raft.node.step(msg);
        }
        st.drive(self);
    }

    fn report_undelivered(&self, to: MemberId, snapshot: bool) {
        let mut st = self.lock();
        st.raft.node.report_unreachable(to);
        if snapshot {
            st.raft.node.report_snapshot(to, false);
        }
        st.drive(self);
    }

    fn report_snapshot_delivered(&self, to: MemberId) {
        let mut st = self.lock();
        st.raft.node.report_snapshot(to, true);
        st.drive(self);
    }

    fn renew_lease_as_leader(&self, id: LeaseId) -> Option<Result<i64, EtcdError>> {
        Member::renew_lease_as_leader(self, id)
    }

    fn lease_time_to_live_as_leader(&self, id: LeaseId) -> Option<Option<TimeToLive>> {
        Member::lease_time_to_live_as_leader(self, id)
    }
}

#[cfg(test)]
mod tests {
    use ::raft::eraftpb::{Entry, Message, MessageType};

    use super::well_formed;

    /// An append from a leader of term 3 after (`index`, `log_term`), carrying empty entries (a leader's
    /// no-op) with these (index, term) pairs.
    fn append(index: u64, log_term: u64, entries: &[(u64, u64)]) -> Message {
        let mut msg = Message::default();
        msg.set_msg_type(MessageType::MsgAppend);
        (msg.term, msg.index, msg.log_term) = (3, index, log_term);
        msg.entries = entries
            .iter()
            .map(|&(index, term)| {
                let mut e = Entry::default();
                (e.index, e.term) = (index, term);
                e
            })
            .collect();
        msg
    }

    #[test]
    fn appends_no_leader_sends_are_refused() {
        let cases: &[(&str, Message, bool)] = &[
            ("the first append of a log", append(0, 0, &[(1, 2), (2, 3)]), true),
            ("an append after a known entry", append(5, 2, &[(6, 2), (7, 3)]), true),
            ("a heartbeat-like empty append", append(5, 2, &[]), true),
            ("term 0 for an index past the start (fuzz: crash-51d3f4b5)", append(144, 0, &[(145, 3)]), false),
            ("a term for index 0", append(0, 1, &[(1, 1)]), false),
            ("a previous term above the leader's", append(5, 4, &[]), false),
            ("an entry older than the entry it follows", append(5, 2, &[(6, 1)]), false),
            ("an entry with term 0", append(0, 0, &[(1, 0)]), false),
            ("an index skipped", append(5, 2, &[(7, 2)]), false),
            ("terms going down", append(5, 2, &[(6, 3), (7, 2)]), false),
            ("an entry of a later term than the leader's", append(5, 2, &[(6, 4)]), false),
        ];
        for (what, msg, kept) in cases {
            assert_eq!(well_formed(msg), *kept, "{what}");
        }
    }
}
