//! etcd's require-leader option on streams (`v3rpc/interceptor.go`): a stream opened with `hasleader: true`
//! in its metadata is refused with `etcdserver: no leader` when the member knows no leader, and a member
//! that has known none for three election timeouts in a row cancels every such stream with the same error
//! (`monitorLeader`, `maxNoLeaderCnt`). It exists so that a client watching through a member cut off from
//! the rest hears of it instead of waiting on a stream that will never carry an event: kube-apiserver opens
//! all its watches this way.
//!
//! The member keeps a count of cancellation rounds; each stream remembers the round it was opened in, and
//! ends once the count moves past it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

use super::Member;

/// The metadata key and value a client sends to require a leader (`rpctypes.MetadataRequireLeaderKey`,
/// `rpctypes.MetadataHasLeader`).
pub const REQUIRE_LEADER_KEY: &str = "hasleader";
pub const HAS_LEADER: &str = "true";

/// Election timeouts in a row without a leader before require-leader streams are canceled
/// (`maxNoLeaderCnt`).
const MAX_NO_LEADER_CHECKS: u32 = 3;

/// The cancellation rounds. A `Notify`, not a `watch` channel: tokio's watch channel registers each waiter
/// on one of several notifiers picked at random, which would make the order streams end in differ between
/// runs of one seed.
#[derive(Default)]
pub(super) struct RequireLeader {
    round: Arc<AtomicU64>,
    canceled: Arc<Notify>,
}

impl Member {
    /// Whether the member knows a leader now.
    pub fn has_leader(&self) -> bool {
        self.lock().raft.leader().is_some()
    }

    /// A handle that resolves once the member cancels the require-leader streams open now.
    pub fn leaderless_cancel(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let opened_in = self.require_leader.round.load(Ordering::SeqCst);
        let canceled = self.require_leader.canceled.clone();
        let round = self.require_leader.round.clone();
        async move {
            loop {
                let notified = canceled.notified();
                if round.load(Ordering::SeqCst) != opened_in {
                    return;
                }
                notified.await;
            }
        }
    }

    /// One check of the monitor, run every election timeout: `checks_without_leader` counts the checks in a
    /// row that found no leader; at the third the open require-leader streams are canceled.
    pub fn check_leader(&self, checks_without_leader: &mut u32) {
        if self.has_leader() {
            *checks_without_leader = 0;
            return;
        }
        *checks_without_leader += 1;
        if *checks_without_leader >= MAX_NO_LEADER_CHECKS {
            self.require_leader.round.fetch_add(1, Ordering::SeqCst);
            self.require_leader.canceled.notify_waiters();
        }
    }
}
