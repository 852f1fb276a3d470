//! The member's lease work outside the state machine: picking the id of a grant before it is proposed,
//! keep-alives and time-to-live queries (answered by the leader without Raft, forwarded to it by a follower,
//! as etcd's are), and the leader's periodic revoke of expired leases. Grants and revokes themselves go
//! through the write path like any other command.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use super::config::MemberEvent;
use super::Member;
use crate::apply::{Command, CommandResponse};
use crate::error::EtcdError;
use crate::lease::TimeToLive;
use crate::service::peer::{self, PeerSpec};
use crate::types::{LeaseId, Revision};

impl Member {
    /// Picks the id for a LeaseGrant with ID = 0, before the grant is proposed.
    pub(crate) fn next_lease_id(&self) -> LeaseId {
        let mut st = self.lock();
        loop {
            let id = st.lease_ids.next_id();
            if !st.sm.lessor.contains(id) {
                return id;
            }
        }
    }

    /// Keep-alive: the leader renews without going through Raft; a follower forwards to the leader, as etcd
    /// does, because only the leader's deadlines decide expiry.
    pub async fn renew_lease(&self, id: LeaseId) -> Result<i64, EtcdError> {
        let cluster_id = self.config.cluster_id;
        self.at_leader(
            || self.renew_lease_as_leader(id),
            |leader, timeout| async move { peer::forward_lease_renew(&leader, cluster_id, id, timeout).await },
        )
        .await
    }

    /// The leader's side of a forwarded keep-alive; `None` when this member does not lead.
    pub(super) fn renew_lease_as_leader(&self, id: LeaseId) -> Option<Result<i64, EtcdError>> {
        let now = self.now();
        let mut st = self.lock();
        st.raft.node.is_leader().then(|| st.sm.lessor.renew(id, now))
    }

    /// LeaseTimeToLive: the leader answers from its own lessor; a follower asks the leader, as etcd 3.4 does,
    /// because only the leader's deadlines are current (keep-alives renew them there alone, and a new leader
    /// extends them). `Ok(None)` is an unknown or expired lease.
    pub(crate) async fn lease_time_to_live(&self, id: LeaseId) -> Result<Option<TimeToLive>, EtcdError> {
        let cluster_id = self.config.cluster_id;
        self.at_leader(
            || self.lease_time_to_live_as_leader(id).map(Ok),
            |leader, timeout| async move { peer::forward_lease_time_to_live(&leader, cluster_id, id, timeout).await },
        )
        .await
    }

    /// The leader's side of LeaseTimeToLive (also a forwarded one); `None` when this member does not lead.
    pub(super) fn lease_time_to_live_as_leader(&self, id: LeaseId) -> Option<Option<TimeToLive>> {
        let now = self.now();
        let st = self.lock();
        st.raft.node.is_leader().then(|| st.sm.lessor.time_to_live(id, now))
    }

    /// What etcd does with the lease requests that bypass Raft (`LeaseRenew`, `LeaseTimeToLive` in
    /// `v3_server.go`): `local` answers if this member leads; otherwise the request is forwarded to the
    /// leader, and while there is none, or the one asked stepped down or did not answer, it is asked again
    /// once a leader is known (waiting an election timeout at a time), until the request timeout: then "no
    /// leader" if none was ever known, else "request timed out". Any other answer is final.
    async fn at_leader<T, Fut>(
        &self,
        local: impl Fn() -> Option<Result<T, EtcdError>>,
        forward: impl Fn(PeerSpec, Duration) -> Fut,
    ) -> Result<T, EtcdError>
    where
        Fut: Future<Output = Result<T, EtcdError>>,
    {
        let deadline = Instant::now() + self.config.request_timeout;
        loop {
            let leader = match local() {
                Some(answer) => return answer,
                None => self.lock().raft.leader(),
            };
            let now = Instant::now();
            let wait = match leader.and_then(|l| self.peer(l).cloned()) {
                Some(peer) if now < deadline => match forward(peer, deadline - now).await {
                    Err(EtcdError::NotLeader | EtcdError::Timeout | EtcdError::NoLeader) => {
                        self.config.raft.tick_interval
                    }
                    answer => return answer,
                },
                Some(_) => self.config.raft.tick_interval,
                None => self.config.election_timeout,
            };
            if Instant::now() + wait >= deadline {
                return Err(if leader.is_some() { EtcdError::Timeout } else { EtcdError::NoLeader });
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// Revokes every lease whose deadline passed (what etcd's leader proposes every 500 ms; followers never
    /// expire leases themselves).
    pub async fn revoke_expired_leases(&self) {
        let now = self.now();
        let expired = {
            let st = self.lock();
            if !st.raft.node.is_leader() {
                return;
            }
            st.sm.lessor.expired(now)
        };
        for id in expired {
            self.config.events.notify(MemberEvent::LeaseExpired { id });
            match self.propose_as(Command::LeaseRevoke(id), &self.as_root()).await {
                Ok(resp) => {
                    if let CommandResponse::LeaseRevoke(r) = &resp {
                        let revision = Revision(r.header.as_ref().map_or(0, |h| h.revision));
                        self.config.events.notify(MemberEvent::LeaseRevoked { id, revision });
                    }
                    tracing::debug!(lease = %id, "lease expired and revoked")
                }
                // A client revoked it between the scan and the proposal.
                Err(EtcdError::LeaseNotFound) => {}
                Err(e) => tracing::warn!(lease = %id, error = %e, "revoking an expired lease failed"),
            }
        }
    }
}
