//! Who the members are and who leads: the initial cluster with the client URLs each member published, the
//! facts Maintenance.Status reports, this member's role, and etcd's MoveLeader. Membership changes are not
//! implemented (the Cluster service refuses them), so the members are those the member was started with.

use tokio::time::Instant;

use super::Member;
use crate::error::EtcdError;
use crate::service::peer::PeerSpec;
use crate::types::{LogIndex, MemberId};

/// What the member reports in Maintenance.Status.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StatusFacts {
    pub revision: i64,
    pub db_size_bytes: i64,
    pub leader: Option<MemberId>,
    /// The highest index known committed (etcd's `raftIndex`).
    pub commit_index: LogIndex,
    pub applied_index: LogIndex,
}

impl Member {
    pub(crate) fn status_facts(&self) -> StatusFacts {
        let st = self.lock();
        let status = st.raft.node.status();
        StatusFacts {
            revision: st.sm.mvcc.current_revision().0,
            db_size_bytes: st.sm.mvcc.size_bytes(),
            leader: st.raft.leader(),
            commit_index: status.commit,
            applied_index: st.raft.applied(),
        }
    }

    /// A member of the initial cluster by id.
    pub(crate) fn peer(&self, id: MemberId) -> Option<&PeerSpec> {
        self.config.peers.iter().find(|p| p.id == id)
    }

    /// Every member with the client URLs it published (or, before it has, the ones configured for it).
    pub(crate) fn members(&self) -> Vec<PeerSpec> {
        let st = self.lock();
        let mut members = self.config.peers.clone();
        for m in &mut members {
            if let Some(urls) = st.raft.client_urls(m.id) {
                m.client_urls = urls.to_vec();
            }
        }
        members
    }

    /// etcd's MoveLeader: only the leader transfers; the call returns once `target` leads, or times out.
    pub(crate) async fn move_leader(&self, target: MemberId) -> Result<(), EtcdError> {
        {
            let mut st = self.lock();
            if !st.raft.node.is_leader() {
                return Err(EtcdError::NotLeader);
            }
            if !self.config.peers.iter().any(|p| p.id == target) {
                return Err(EtcdError::BadLeaderTransferee);
            }
            if target == self.config.member_id {
                return Ok(());
            }
            st.raft.node.transfer_leader(target);
            st.drive(self);
        }
        let deadline = Instant::now() + self.config.request_timeout;
        while Instant::now() < deadline {
            if self.lock().raft.leader() == Some(target) {
                return Ok(());
            }
            tokio::time::sleep(self.config.raft.tick_interval).await;
        }
        Err(EtcdError::Timeout)
    }
}
