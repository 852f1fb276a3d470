//! The apiserver run's nemesis, on the control node: rounds of a leader partition (the leader cut off from
//! the other members), a member killed and restarted, or a compaction, each drawn from the seed and each a
//! trace line, with quiet time between rounds. Compactions go no further than the reference record
//! ([`super::reference::Reference::through`]) and leave a few revisions of history, so that watches from
//! recent resourceVersions still start and older ones get 410.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::maintenance_client::MaintenanceClient;
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::reference::Reference;
use crate::client::channel;
use crate::cluster::Cluster;
use crate::fault::{Fault, Injector};

const ASK_TIMEOUT: Duration = Duration::from_millis(300);

async fn sleep_ms(rng: &mut ChaCha8Rng, lo: u64, hi: u64) {
    tokio::time::sleep(Duration::from_millis(rng.random_range(lo..hi))).await;
}

/// Runs rounds from the moment `ready` is set until `stop` is, then heals.
pub async fn run(
    faults: Injector,
    reference: Reference,
    mut rng: ChaCha8Rng,
    ready: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) {
    let cluster = faults.cluster().clone();
    let mut compacted = 0u64;
    while !ready.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sleep_ms(&mut rng, 200, 1000).await;
    while !stop.load(Ordering::SeqCst) {
        match rng.random_range(0..3) {
            0 => {
                if let Some(leader) = leader(&cluster).await {
                    let others = cluster.member_names().into_iter().filter(|m| *m != leader).collect();
                    faults.apply(&Fault::Partition { left: vec![leader], right: others });
                    sleep_ms(&mut rng, 300, 1200).await;
                    faults.apply(&Fault::Heal);
                }
            }
            1 => {
                let member = cluster.member_names().choose(&mut rng).expect("members").clone();
                faults.apply(&Fault::Kill(member.clone()));
                sleep_ms(&mut rng, 300, 1200).await;
                faults.apply(&Fault::Restart(member));
            }
            _ => {
                let target = reference.through().saturating_sub(rng.random_range(0..6));
                if target > compacted {
                    if compact(&cluster, target).await {
                        compacted = target;
                    }
                }
            }
        }
        sleep_ms(&mut rng, 500, 2000).await;
    }
    faults.apply(&Fault::Heal);
}

/// The member that a member reporting a leader names (asked in member order).
async fn leader(cluster: &Cluster) -> Option<String> {
    for (name, endpoint) in cluster.member_names().into_iter().zip(cluster.endpoints()) {
        let mut m = MaintenanceClient::new(channel(&endpoint));
        let Ok(Ok(status)) = tokio::time::timeout(ASK_TIMEOUT, m.status(pb::StatusRequest {})).await else { continue };
        let status = status.into_inner();
        if status.leader != 0 && status.header.as_ref().is_some_and(|h| h.member_id == status.leader) {
            return Some(name);
        }
    }
    None
}

/// Compacts at `revision` through the first member that answers; whether one did.
async fn compact(cluster: &Cluster, revision: u64) -> bool {
    for endpoint in cluster.endpoints() {
        let mut kv = KvClient::new(channel(&endpoint));
        let request = pb::CompactionRequest { revision: revision as i64, physical: false };
        match tokio::time::timeout(ASK_TIMEOUT * 3, kv.compact(request)).await {
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
