//! The member as the peer transport sees it ([`Link`]): Raft message batches from peers stepped into the
//! node, the transport's verdicts on what it could not deliver, and the leader's answers to the lease calls
//! followers forward. Everything else about the member stays out of the transport's reach.

use super::Member;
use crate::error::EtcdError;
use crate::lease::TimeToLive;
use crate::raft::codec;
use crate::service::peer::{Link, PeerSpec};
use crate::types::{ClusterId, LeaseId, MemberId};

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

    /// Messages that do not decode, or come from a member Raft does not know, are dropped: Raft retries what
    /// matters.
    fn deliver(&self, messages: &[Vec<u8>]) {
        let mut st = self.lock();
        for bytes in messages {
            let Ok(msg) = codec::decode_message(bytes) else { continue };
            if msg.to != self.config.member_id.0 {
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
