//! A member's configuration: identity, limits and intervals, as etcd's flags set them.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::apply::validate::DEFAULT_MAX_TXN_OPS;
use crate::failpoint::Failpoints;
use crate::types::{ClusterId, LeaseId, MemberId, Revision, Term};

use super::identity;

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
    /// The term a member without Raft reports: a fresh single-member etcd elects itself in term 2.
    pub single_member_term: Term,
    /// This member's failpoint registry; nothing is armed unless a test harness arms it.
    pub failpoints: Failpoints,
    /// Told what the member does on its own (compaction applied, lease expired); empty unless a test
    /// harness fills it.
    pub observer: Observer,
}

impl MemberConfig {
    /// A single member named `name` with etcd's defaults, its ids derived from `peer_urls` and `cluster_token`.
    pub fn single(name: &str, peer_urls: Vec<String>, client_urls: Vec<String>, cluster_token: &str) -> MemberConfig {
        let member_id = identity::member_id(&peer_urls, cluster_token);
        MemberConfig {
            name: name.to_string(),
            member_id,
            cluster_id: identity::cluster_id(&[member_id]),
            peer_urls,
            client_urls,
            max_request_bytes: etcd_proto::DEFAULT_MAX_REQUEST_BYTES,
            max_txn_ops: DEFAULT_MAX_TXN_OPS,
            election_timeout: Duration::from_millis(1000),
            progress_notify_interval: Duration::from_secs(600),
            lease_check_interval: Duration::from_millis(500),
            single_member_term: Term(2),
            failpoints: Failpoints::new(),
            observer: Observer::default(),
        }
    }

    /// etcd's minimum lease TTL: ceil(1.5 × election timeout), in whole seconds (2 s with the defaults).
    pub fn min_lease_ttl_s(&self) -> i64 {
        let ms = self.election_timeout.as_millis() as i64 * 3 / 2;
        (ms + 999) / 1000
    }
}

/// Something a member did that no client response shows: the harness's trace and history need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberEvent {
    /// A compaction was applied; the store's compact revision is now `revision`.
    Compacted { revision: Revision },
    /// The lease's deadline passed and the member is about to revoke it (reported before the revoke is
    /// proposed, so that the report always precedes the revoke's effect).
    LeaseExpired { id: LeaseId },
    /// The revoke of an expired lease was applied; `revision` is its response's header revision. Not
    /// reported when the revoke failed (a client revoked the lease first).
    LeaseRevoked { id: LeaseId, revision: Revision },
}

/// A slot for a callback that hears [`MemberEvent`]s. Clones share the slot, so a harness can keep a clone
/// of the config's observer and fill it after the member is built. fake-etcd itself never fills it (the
/// real binary reports nothing); it exists so that the simulation harness can trace and record what the
/// member did without fake-etcd depending on the harness.
#[derive(Clone, Default)]
pub struct Observer(Arc<Mutex<Option<Arc<ObserverFn>>>>);

type ObserverFn = dyn Fn(MemberEvent) + Send + Sync;

impl Observer {
    /// Installs `f`, replacing any callback installed before.
    pub fn set(&self, f: impl Fn(MemberEvent) + Send + Sync + 'static) {
        *self.0.lock().expect("observer lock poisoned") = Some(Arc::new(f));
    }

    /// Tells the callback, if there is one. The slot's lock is not held during the call, so the callback
    /// may do anything but call back into this member.
    pub fn notify(&self, event: MemberEvent) {
        let f = self.0.lock().expect("observer lock poisoned").clone();
        if let Some(f) = f {
            f(event);
        }
    }
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.0.lock().map(|s| s.is_some()).unwrap_or(false);
        write!(f, "Observer({})", if set { "set" } else { "empty" })
    }
}
