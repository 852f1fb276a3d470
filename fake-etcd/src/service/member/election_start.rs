//! etcd's `--initial-election-tick-advance` (on by default): a member that has just started fast-forwards
//! its election clock once its peers are reachable, so that a fresh cluster elects its first leader about
//! one heartbeat-pair after the members can talk rather than a whole election timeout later.
//!
//! etcd 3.4 (`etcdserver.adjustTicks`) polls its transport every 50 ms for up to rafthttp's connection
//! read timeout (5 s); once more than one remote member is active it advances `election_tick - 2` ticks,
//! leaving two ticks for a leader's heartbeat to arrive before this member campaigns. A cluster of two
//! never has more than one active peer, so it never advances, exactly as in etcd. A cluster of one needs
//! no advance here: it campaigns as it opens (`Member::new`).

use std::time::Duration;

use super::Member;
use crate::types::MemberId;

/// How often the member asks whether its peers are reachable (etcd: 50 ms).
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How long it keeps asking before it gives up and lets the election clock run its course (etcd:
/// `rafthttp.ConnReadTimeout`, 5 s).
const GIVE_UP_AFTER: Duration = Duration::from_secs(5);

impl Member {
    /// The transport's verdict on its stream to `to`.
    pub(super) fn set_peer_active(&self, to: MemberId, active: bool) {
        let mut peers = self.active_peers.lock().expect("active peers lock poisoned");
        if active {
            peers.insert(to);
        } else {
            peers.remove(&to);
        }
    }

    fn active_peer_count(&self) -> usize {
        self.active_peers.lock().expect("active peers lock poisoned").len()
    }

    /// Runs once per start, beside the Raft ticker: waits for more than one active peer, then advances the
    /// election clock by `election_tick - 2` ticks. Returns without advancing when the setting is off, the
    /// cluster has fewer than three members, or the peers stay unreachable for [`GIVE_UP_AFTER`].
    pub(in crate::service) async fn advance_election_ticks_when_peers_active(&self) {
        let raft = &self.config.raft;
        if !raft.initial_election_tick_advance || self.config.peers.len() < 3 {
            return;
        }
        let polls = GIVE_UP_AFTER.as_millis() / POLL_INTERVAL.as_millis();
        for _ in 0..polls {
            tokio::time::sleep(POLL_INTERVAL).await;
            let active = self.active_peer_count();
            if active > 1 {
                let ticks = raft.election_tick.saturating_sub(2);
                let mut st = self.lock();
                for _ in 0..ticks {
                    st.raft.node.tick();
                }
                st.drive(self);
                drop(st);
                // etcd 3.4's line (capnslog, its spelling included).
                tracing::info!(
                    "etcdserver: {} initialzed peer connection; fast-forwarding {ticks} ticks (election ticks {}) \
                     with {active} active peer(s)",
                    self.config.member_id,
                    raft.election_tick
                );
                return;
            }
        }
    }
}
