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
use crate::types::{ClusterId, LeaseId, LogIndex, MemberId};

/// Whether what `msg` carries for the state machine decodes: every normal entry's payload, and a snapshot's
/// data. Raft accepts whatever a peer sends, and the member applies committed entries and restores snapshots
/// with no way back (etcd, which trusts its peers, panics on them there); a member of this version proposes
/// nothing else, so anything that does not decode is dropped at the door, as a message lost on the wire.
/// Found by the `peer_frames` fuzz target.
fn well_formed(msg: &::raft::eraftpb::Message) -> bool {
    use ::raft::eraftpb::MessageType as T;
    let entries = msg.get_entries();
    let (run, payloads) = match msg.get_msg_type() {
        // A leader appends a run of consecutive indices after `index`, with terms that never go down and
        // never pass its own; raft-rs's log panics on anything else.
        T::MsgAppend => (
            entries.iter().enumerate().all(|(i, e)| e.index == msg.index + 1 + i as u64 && e.term <= msg.term)
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

/// Whether `msg` acknowledges entries past the end of this member's log (`last_index`). A correct follower
/// acknowledges only what the leader of its term sent it, and a leader's log only grows, so such a response
/// comes from a peer that breaks the protocol; raft-rs's leader would record the peer as matching
/// entries it does not have and slice its log past the end (`unstable.slice[..] out of bound`). Found by
/// the `peer_frames` fuzz target.
fn acknowledges_unsent(msg: &::raft::eraftpb::Message, last_index: LogIndex) -> bool {
    msg.get_msg_type() == ::raft::eraftpb::MessageType::MsgAppendResponse && !msg.reject && msg.index > last_index.0
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
            if !codec::from_a_peer(&msg, self.config.member_id.0)
                || !well_formed(&msg)
                || acknowledges_unsent(&msg, st.raft.node.status().last_index)
            {
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
