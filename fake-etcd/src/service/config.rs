//! A member's configuration: identity, limits and intervals, as etcd's flags set them.

use std::time::Duration;

use crate::apply::validate::DEFAULT_MAX_TXN_OPS;
use crate::failpoint::Failpoints;
use crate::types::{ClusterId, MemberId, Term};

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
        }
    }

    /// etcd's minimum lease TTL: ceil(1.5 × election timeout), in whole seconds (2 s with the defaults).
    pub fn min_lease_ttl_s(&self) -> i64 {
        let ms = self.election_timeout.as_millis() as i64 * 3 / 2;
        (ms + 999) / 1000
    }
}
