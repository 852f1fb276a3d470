//! A member's configuration: identity, the initial cluster, limits and intervals, as etcd's flags set them,
//! plus what a harness hands in (the member's disk, its election timeout, an observer for trace lines).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::identity;
use crate::apply::validate::DEFAULT_MAX_TXN_OPS;
use crate::bug::Bugs;
use crate::failpoint::Failpoints;
use crate::raft::DurableDisk;
use crate::service::peer::PeerSpec;
use crate::types::{ClusterId, LeaseId, MemberId, Revision};

#[derive(Clone, Debug)]
pub struct MemberConfig {
    pub name: String,
    pub member_id: MemberId,
    pub cluster_id: ClusterId,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
    /// `--max-request-bytes`.
    pub max_request_bytes: usize,
    /// `--max-txn-ops`.
    pub max_txn_ops: usize,
    /// `--election-timeout`; the minimum lease TTL is derived from it as etcd does.
    pub election_timeout: Duration,
    /// `--experimental-watch-progress-notify-interval`. etcd adds up to 10 % random jitter; fake-etcd ticks
    /// exactly on the interval so that simulated runs stay reproducible.
    pub progress_notify_interval: Duration,
    /// How often the leader looks for expired leases (etcd: every 500 ms).
    pub lease_check_interval: Duration,
    /// This member's failpoint registry; nothing is armed unless a test harness arms it.
    pub failpoints: Failpoints,
    /// Every member of the initial cluster, this one included, ascending by id.
    pub peers: Vec<PeerSpec>,
    /// How this member runs Raft.
    pub raft: RaftSettings,
    /// How long a request waits for its proposal or read to complete (etcd: 5 s + 2 × election timeout).
    pub request_timeout: Duration,
    /// The member's disk. A harness keeps the handle across a restart; the real build starts empty.
    pub disk: DurableDisk,
    /// The bug switches on (`crate::bug`), none by default: each puts an etcd bug back for a negative test.
    pub bugs: Bugs,
    /// Told about role changes, for the simulation's trace.
    pub observer: RaftObserver,
    /// Told what the member does on its own (compaction applied, lease expired and revoked); empty unless
    /// a test harness fills it.
    pub events: EventObserver,
    /// `--bcrypt-cost`: the cost of the password hashes this member makes (etcd: 10; tests use 4, the
    /// lowest, to keep logins fast).
    pub bcrypt_cost: u32,
    /// `--auth-token-ttl`: seconds a simple token lives after its last use (etcd: 300).
    pub auth_token_ttl_s: i64,
}

/// etcd 3.4's Raft settings (`--heartbeat-interval`, `--election-timeout`, `--pre-vote`), in ticks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaftSettings {
    /// One Raft tick (etcd: the heartbeat interval, 100 ms).
    pub tick_interval: Duration,
    /// Election timeout in ticks (etcd: 1000 ms / 100 ms = 10).
    pub election_tick: usize,
    /// This member's first election timeout in `[election_tick, 2 * election_tick)`; a simulation draws
    /// it from the seed on every (re)start.
    pub election_timeout_tick: usize,
    /// Seeds the election timeouts drawn at each later election reset (`raft::timeout`).
    pub election_seed: u64,
    pub pre_vote: bool,
    /// `--initial-election-tick-advance` (etcd: on): once its peers are reachable, a starting member
    /// fast-forwards its election clock to two ticks short of the timeout (`member::election_start`).
    pub initial_election_tick_advance: bool,
    /// Entries applied between two snapshots (etcd: `--snapshot-count`).
    pub snapshot_threshold_entries: u64,
    /// Entries kept in the log behind a snapshot, so that a follower slightly behind catches up from the log
    /// rather than a snapshot (etcd: `SnapshotCatchUpEntries` = 5000).
    pub snapshot_catch_up_entries: u64,
}

impl Default for RaftSettings {
    fn default() -> RaftSettings {
        RaftSettings {
            tick_interval: Duration::from_millis(100),
            election_tick: 10,
            election_timeout_tick: 10,
            election_seed: 0,
            pre_vote: false,
            initial_election_tick_advance: true,
            snapshot_threshold_entries: 100_000,
            snapshot_catch_up_entries: 5000,
        }
    }
}

/// A callback for one-line descriptions of Raft role changes ("leader term=3"). Empty by default.
#[derive(Clone, Default)]
pub struct RaftObserver(Option<Arc<dyn Fn(&str) + Send + Sync>>);

impl RaftObserver {
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> RaftObserver {
        RaftObserver(Some(Arc::new(f)))
    }

    pub(crate) fn emit(&self, line: &str) {
        if let Some(f) = &self.0 {
            f(line);
        }
    }
}

impl fmt::Debug for RaftObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "RaftObserver(set)" } else { "RaftObserver(none)" })
    }
}

impl MemberConfig {
    /// A single member named `name` with etcd's defaults, its ids derived from `peer_urls` and `cluster_token`.
    pub fn single(name: &str, peer_urls: Vec<String>, client_urls: Vec<String>, cluster_token: &str) -> MemberConfig {
        let member_id = identity::member_id(&peer_urls, cluster_token);
        let me = PeerSpec {
            id: member_id,
            name: name.to_string(),
            peer_urls: peer_urls.clone(),
            client_urls: client_urls.clone(),
        };
        MemberConfig {
            name: name.to_string(),
            member_id,
            cluster_id: identity::cluster_id(&[member_id]),
            peer_urls,
            client_urls,
            peers: vec![me],
            raft: RaftSettings::default(),
            request_timeout: Duration::from_millis(7000),
            disk: DurableDisk::new(),
            bugs: Bugs::none(),
            observer: RaftObserver::default(),
            events: EventObserver::default(),
            bcrypt_cost: crate::auth::password::DEFAULT_BCRYPT_COST,
            auth_token_ttl_s: crate::auth::SIMPLE_TOKEN_TTL_S,
            max_request_bytes: etcd_proto::DEFAULT_MAX_REQUEST_BYTES,
            max_txn_ops: DEFAULT_MAX_TXN_OPS,
            election_timeout: Duration::from_millis(1000),
            progress_notify_interval: Duration::from_secs(600),
            lease_check_interval: Duration::from_millis(500),
            failpoints: Failpoints::new(),
        }
    }

    /// Member `name` of the initial cluster `peers` (every member's name and peer URLs, this one included),
    /// ids derived as etcd derives them. Fails when `name` is missing or two members have the same id.
    pub fn member_of(
        name: &str,
        peers: &[(String, Vec<String>, Vec<String>)],
        cluster_token: &str,
    ) -> Result<MemberConfig, String> {
        let mut specs: Vec<PeerSpec> = peers
            .iter()
            .map(|(n, peer_urls, client_urls)| PeerSpec {
                id: identity::member_id(peer_urls, cluster_token),
                name: n.clone(),
                peer_urls: peer_urls.clone(),
                client_urls: client_urls.clone(),
            })
            .collect();
        specs.sort_by_key(|p| p.id);
        if let Some(w) = specs.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(format!(
                "members {:?} and {:?} have the same member id {} (the same peer URLs?)",
                w[0].name, w[1].name, w[0].id
            ));
        }
        let me = specs
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| format!("couldn't find local name {name:?} in the initial cluster configuration"))?;
        let mut config = MemberConfig::single(name, me.peer_urls.clone(), me.client_urls.clone(), cluster_token);
        config.cluster_id = identity::cluster_id(&specs.iter().map(|p| p.id).collect::<Vec<_>>());
        config.peers = specs;
        Ok(config)
    }

    /// The heartbeat-derived election timeout in milliseconds, what a new leader adds to every lease (E1).
    pub(crate) fn election_timeout_ms(&self) -> u64 {
        self.election_timeout.as_millis() as u64
    }

    /// etcd's minimum lease TTL: ceil(1.5 × election timeout), in whole seconds (2 s with the defaults).
    pub(crate) fn min_lease_ttl_s(&self) -> i64 {
        let ms = self.election_timeout.as_millis() as i64 * 3 / 2;
        (ms + 999) / 1000
    }
}

/// Something a member did that no client response shows: the harness's trace and history need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberEvent {
    /// A compaction was applied on this member; the store's compact revision is now `revision`.
    Compacted { revision: Revision },
    /// The lease's deadline passed and the leader is about to revoke it (reported before the revoke is
    /// proposed, so that the report always precedes the revoke's effect).
    LeaseExpired { id: LeaseId },
    /// The revoke of an expired lease was applied; `revision` is its response's header revision. Not
    /// reported when the revoke failed (a client revoked the lease first, or it never committed).
    LeaseRevoked { id: LeaseId, revision: Revision },
}

/// A slot for a callback that hears [`MemberEvent`]s. Clones share the slot, so a harness can keep a clone
/// of the config's slot and fill it after the member is built. fake-etcd itself never fills it (the real
/// binary reports nothing); it exists so that the simulation harness can trace and record what the member
/// did without fake-etcd depending on the harness.
#[derive(Clone, Default)]
pub struct EventObserver(Arc<Mutex<Option<Arc<EventFn>>>>);

type EventFn = dyn Fn(MemberEvent) + Send + Sync;

impl EventObserver {
    /// Installs `f`, replacing any callback installed before.
    pub fn set(&self, f: impl Fn(MemberEvent) + Send + Sync + 'static) {
        *self.0.lock().expect("observer lock poisoned") = Some(Arc::new(f));
    }

    /// Tells the callback, if there is one. It may be called with the member lock held: it must not call
    /// back into the member.
    pub(crate) fn notify(&self, event: MemberEvent) {
        let f = self.0.lock().expect("observer lock poisoned").clone();
        if let Some(f) = f {
            f(event);
        }
    }
}

impl fmt::Debug for EventObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.0.lock().map(|s| s.is_some()).unwrap_or(false);
        f.write_str(if set { "EventObserver(set)" } else { "EventObserver(empty)" })
    }
}
