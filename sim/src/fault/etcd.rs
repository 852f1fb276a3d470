//! What the nemesis asks of etcd itself, from the control node, for the patterns that need to know the
//! cluster's state or change its data rather than its network: which member leads (a leader partition cuts
//! that one off), and a compaction (which every watch and cache from an older revision must survive). Each
//! question has a short timeout and goes to the members in order, so a dead or cut-off member costs one
//! timeout, not the round.

use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::maintenance_client::MaintenanceClient;

use crate::client::channel;
use crate::cluster::Cluster;

const ASK_TIMEOUT: Duration = Duration::from_millis(300);

/// The member that says it is the leader (asked in member order); `None` if none answers so.
pub async fn leader(cluster: &Cluster) -> Option<String> {
    for (name, endpoint) in cluster.member_names().into_iter().zip(cluster.endpoints()) {
        let mut m = MaintenanceClient::new(channel(&endpoint));
        let Ok(Ok(status)) = madsim::time::timeout(ASK_TIMEOUT, m.status(pb::StatusRequest {})).await else {
            continue;
        };
        let status = status.into_inner();
        if status.leader != 0 && status.header.as_ref().is_some_and(|h| h.member_id == status.leader) {
            return Some(name);
        }
    }
    None
}

/// Who leads and who follows, by every member's Status: the members that say they lead (the one of the
/// highest term first: a leader cut off may not know yet that it was replaced), then those that answer and
/// do not. A member that does not answer is in neither list.
pub async fn roles(cluster: &Cluster) -> (Vec<String>, Vec<String>) {
    let mut leaders: Vec<(u64, String)> = Vec::new();
    let mut followers = Vec::new();
    for (name, endpoint) in cluster.member_names().into_iter().zip(cluster.endpoints()) {
        let mut m = MaintenanceClient::new(channel(&endpoint));
        let Ok(Ok(status)) = madsim::time::timeout(ASK_TIMEOUT, m.status(pb::StatusRequest {})).await else {
            continue;
        };
        let status = status.into_inner();
        if status.leader != 0 && status.header.as_ref().is_some_and(|h| h.member_id == status.leader) {
            leaders.push((status.raft_term, name));
        } else {
            followers.push(name);
        }
    }
    leaders.sort_by_key(|(term, _)| std::cmp::Reverse(*term));
    (leaders.into_iter().map(|(_, n)| n).collect(), followers)
}

/// etcd's current revision, from the first member that answers; 0 if none does.
pub async fn current_revision(cluster: &Cluster) -> u64 {
    for endpoint in cluster.endpoints() {
        let mut kv = KvClient::new(channel(&endpoint));
        let request = pb::RangeRequest { key: b"/".to_vec(), count_only: true, ..pb::RangeRequest::default() };
        if let Ok(Ok(r)) = madsim::time::timeout(ASK_TIMEOUT, kv.range(request)).await {
            return r.into_inner().header.map_or(0, |h| h.revision as u64);
        }
    }
    0
}

/// Compacts at `revision` through the first member that answers, with a trace line; whether one did.
pub async fn compact(cluster: &Cluster, revision: u64) -> bool {
    for endpoint in cluster.endpoints() {
        let mut kv = KvClient::new(channel(&endpoint));
        let request = pb::CompactionRequest { revision: revision as i64, physical: false };
        match madsim::time::timeout(ASK_TIMEOUT * 3, kv.compact(request)).await {
            Ok(Ok(_)) => {
                cluster.trace.event("nemesis", format_args!("compact rev={revision}"));
                return true;
            }
            // Already compacted further (a retried request that took effect): as good.
            Ok(Err(status)) if status.message().contains("compacted") => return true,
            _ => {}
        }
    }
    false
}
