//! A follower's side of the lease calls that bypass Raft (keep-alive, time to live): they are asked of the
//! leader over the peer service, because only the leader's deadlines are current. The retrying around them,
//! until a leader answers or the request times out, is the member's (`member::lease`).

use std::time::Duration;

use etcd_proto::kubesimpeer::{LeaseRenewRequest, LeaseTtlRequest};

use super::link::PeerSpec;
use super::wire::client;
use crate::error::EtcdError;
use crate::lease::TimeToLive;
use crate::types::{ClusterId, LeaseId};

/// Forwards a keep-alive to the leader and returns the TTL it answered.
pub(crate) async fn forward_lease_renew(
    leader: &PeerSpec,
    cluster_id: ClusterId,
    id: LeaseId,
    timeout: Duration,
) -> Result<i64, EtcdError> {
    let Some(mut client) = client(leader) else { return Err(EtcdError::NoLeader) };
    let request = LeaseRenewRequest { cluster_id: cluster_id.0, id: id.0 };
    match tokio::time::timeout(timeout, client.lease_renew(request)).await {
        Ok(Ok(resp)) => {
            let resp = resp.into_inner();
            if resp.not_leader {
                return Err(EtcdError::NotLeader);
            }
            if resp.ttl <= 0 {
                return Err(EtcdError::LeaseNotFound);
            }
            Ok(resp.ttl)
        }
        _ => Err(EtcdError::Timeout),
    }
}

/// Asks the leader for a lease's time to live. `Ok(None)`: the leader knows no such live lease. Fails with
/// `NotLeader` when the peer no longer leads and with `Timeout` when it does not answer in time.
pub(crate) async fn forward_lease_time_to_live(
    leader: &PeerSpec,
    cluster_id: ClusterId,
    id: LeaseId,
    timeout: Duration,
) -> Result<Option<TimeToLive>, EtcdError> {
    let Some(mut client) = client(leader) else { return Err(EtcdError::NoLeader) };
    let request = LeaseTtlRequest { cluster_id: cluster_id.0, id: id.0 };
    match tokio::time::timeout(timeout, client.lease_time_to_live(request)).await {
        Ok(Ok(resp)) => {
            let resp = resp.into_inner();
            if resp.not_leader {
                return Err(EtcdError::NotLeader);
            }
            Ok(resp.found.then_some(TimeToLive { ttl_s: resp.ttl, granted_ttl_s: resp.granted_ttl, keys: resp.keys }))
        }
        _ => Err(EtcdError::Timeout),
    }
}
