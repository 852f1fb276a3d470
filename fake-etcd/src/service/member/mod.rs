//! One running member: the cores and its Raft node behind one lock, the clock, the response headers, and
//! the queue of Raft messages for the peer transport. Each of the member's jobs has its own file:
//!
//! - `write`: the write path every mutating request takes ([`Member::propose`]) and the Ready loop task that
//!   batches proposals;
//! - `read`: serializable reads, and linearizable ones after a ReadIndex barrier;
//! - `lease`: lease ids, keep-alives and time-to-live queries (answered by the leader, forwarded to it by a
//!   follower), and the leader's expiry of leases;
//! - `watch` and `outbox`: the watch streams, their hub and the outboxes their responses wait in;
//! - `membership`: who the members are, who leads (and moving the leadership), the status facts;
//! - `replica`: the Raft side (the node, the ids of this life's proposals) and the drive loop that turns
//!   each Ready into effects on the other parts;
//! - `election_start`: etcd's initial election tick advance, once the peers are reachable;
//! - `require_leader`: refusing and canceling the streams that require a leader when there is none;
//! - `peer_link`: what the peer transport may do to the member, and nothing more;
//! - `auth`: simple tokens, who a request's token names, password hashing and logins;
//! - `internal`: the shell's own log records; `config`, `identity` and `data_dir`: what the member is
//!   started with.
//!
//! The lock is a plain mutex that is never held across an `.await`: every core call is synchronous and
//! short. Every member applies every committed entry (see `replica`), so watches and serializable reads
//! work on every member.

mod auth;
pub(super) mod config;
pub mod data_dir;
mod election_start;
pub mod identity;
pub(super) mod internal;
mod lease;
mod membership;
pub(super) mod outbox;
mod peer_link;
mod read;
mod replica;
pub mod require_leader;
mod watch;
mod write;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use etcd_proto::etcdserverpb::ResponseHeader;
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;

use self::auth::MemberAuth;
use self::config::MemberConfig;
use self::read::ReadWaiters;
use self::replica::Replica;
use self::watch::Watches;
use self::write::Proposals;
use crate::apply::StateMachine;
use crate::bug::Bug;
use crate::failpoint::Failpoints;
use crate::lease::LeaseIdGen;
use crate::mvcc::MvccConfig;
use crate::raft::{Message, RaftError};
use crate::types::{LogIndex, MemberId, Millis};
use crate::watch::HubConfig;

pub struct Member {
    config: MemberConfig,
    started: Instant,
    /// The current Raft term, kept outside the lock because every response header carries it and headers
    /// are stamped while the lock is held.
    term: AtomicU64,
    state: Mutex<State>,
    /// Raft messages for other members; the transport task takes the receiver when the member is served.
    peer_tx: mpsc::UnboundedSender<Message>,
    peer_rx: Mutex<Option<mpsc::UnboundedReceiver<Message>>>,
    tasks_started: AtomicBool,
    /// The peers a stream is open to (etcd's active peers; see `election_start`).
    active_peers: Mutex<BTreeSet<MemberId>>,
    /// Wakes the Ready loop task (see [`Member::run_ready_loop`]) after proposals were handed to Raft.
    ready: Notify,
    /// The require-leader streams' cancellations (`require_leader`).
    require_leader: require_leader::RequireLeader,
}

/// What the lock guards: the cores, and one part per job. Each part keeps its own fields private; only the
/// state machine and the Raft node are shared, because every part reads them.
struct State {
    sm: StateMachine,
    raft: Replica,
    /// Clients waiting for their proposals to apply (`write`).
    proposals: Proposals,
    /// Linearizable reads waiting for their read index to apply (`read`).
    reads: ReadWaiters,
    /// The watch hub and the streams' outboxes (`watch`).
    watches: Watches,
    /// The ids offered to a LeaseGrant without one (`lease`).
    lease_ids: LeaseIdGen,
    /// Simple tokens and the generator for salts and token prefixes (`auth`).
    auth: MemberAuth,
}

impl Member {
    /// Opens the member on `config.disk` (empty: a new cluster is bootstrapped; otherwise the log is replayed)
    /// and runs Raft until it has nothing more to do on its own. A cluster of one elects itself at once.
    ///
    /// `start_ms` seeds the lease id generator and the proposal ids (wall-clock milliseconds in the real
    /// build, simulated ones under madsim), so that a restarted member does not reuse ids of its past life.
    pub fn new(config: MemberConfig, start_ms: u64) -> Result<Arc<Member>, RaftError> {
        let hub_config = HubConfig {
            max_request_bytes: config.max_request_bytes,
            restore_lowers_watchers: config.bugs.has(Bug::RestoreLowersWatchers),
            slow_watcher_skips_compacted: config.bugs.has(Bug::SlowWatcherSkipsCompacted),
            progress_ignores_unsynced: config.bugs.has(Bug::ProgressBeforeUnsyncedEvents),
            ..HubConfig::default()
        };
        let mvcc_config = MvccConfig {
            compaction_drops_tombstone_at_revision: config.bugs.has(Bug::CompactionDropsDeleteTombstone),
            restore_drops_tombstones_at_compaction: config.bugs.has(Bug::WatchAtCompactionMissesDelete),
        };
        let raft = Replica::open(&config, start_ms)?;
        let on_disk = LogIndex(raft.node.disk().state().last_index());
        let state = State {
            sm: StateMachine::with_config(config.min_lease_ttl_s(), mvcc_config),
            raft,
            proposals: Proposals::default(),
            reads: ReadWaiters::default(),
            watches: Watches::new(hub_config),
            lease_ids: LeaseIdGen::new(config.member_id, start_ms),
            auth: MemberAuth::new(config.member_id, start_ms, config.auth_token_ttl_s, on_disk),
        };
        let (peer_tx, peer_rx) = mpsc::unbounded_channel();
        let member = Arc::new(Member {
            config,
            started: Instant::now(),
            term: AtomicU64::new(0),
            state: Mutex::new(state),
            peer_tx,
            peer_rx: Mutex::new(Some(peer_rx)),
            tasks_started: AtomicBool::new(false),
            active_peers: Mutex::new(BTreeSet::new()),
            ready: Notify::new(),
            require_leader: require_leader::RequireLeader::default(),
        });
        {
            let mut st = member.lock();
            if member.config.peers.len() == 1 {
                // A cluster of one needs no election timeout to know it wins; etcd's takes one, which only
                // delays start-up.
                st.raft.node.campaign()?;
            }
            st.drive(&member);
        }
        Ok(member)
    }

    pub fn config(&self) -> &MemberConfig {
        &self.config
    }

    pub(crate) fn failpoints(&self) -> &Failpoints {
        &self.config.failpoints
    }

    /// Milliseconds since the member started, on the runtime's clock (simulated under madsim).
    pub(crate) fn now(&self) -> Millis {
        Millis(self.started.elapsed().as_millis() as u64)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a core panicked mid-request, which is a bug; keep serving what is left is not
        // an option, so the panic propagates.
        self.state.lock().expect("member state lock poisoned")
    }

    fn set_term(&self, term: u64) {
        self.term.store(term, Ordering::SeqCst);
    }

    fn send_to_peer(&self, msg: Message) {
        // The receiver is gone only when the member is shutting down; Raft copes with lost messages.
        let _ = self.peer_tx.send(msg);
    }

    /// The receiving end of the outgoing Raft messages, once (for the transport task).
    pub(super) fn take_peer_queue(&self) -> Option<mpsc::UnboundedReceiver<Message>> {
        self.peer_rx.lock().expect("peer queue lock poisoned").take()
    }

    /// Whether the member's background tasks were started already (by the first `serve`).
    pub(super) fn claim_tasks(&self) -> bool {
        !self.tasks_started.swap(true, Ordering::SeqCst)
    }

    /// The header etcd puts on a response produced at `revision` (0 leaves it out, as etcd's JSON shows).
    pub(crate) fn header(&self, revision: i64) -> ResponseHeader {
        ResponseHeader {
            cluster_id: self.config.cluster_id.0,
            member_id: self.config.member_id.0,
            revision,
            raft_term: self.term.load(Ordering::SeqCst),
        }
    }

    /// Fills cluster id, member id and term into a header the cores left with only a revision.
    pub(crate) fn stamp(&self, header: &mut Option<ResponseHeader>) {
        let revision = header.as_ref().map_or(0, |h| h.revision);
        *header = Some(self.header(revision));
    }
}
