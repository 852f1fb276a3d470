//! The sending side of the peer transport: one task per peer that batches the Raft messages queued for it
//! into one `kubesimpeer.Peer/Deliver` call at a time, over the same (madsim-)tonic transport as the client
//! API. A batch that cannot be delivered within the timeout is dropped and reported to Raft (unreachable;
//! a snapshot in it failed), and Raft retries; a batch refused because the peer belongs to another cluster is
//! reported the same way and logged with etcd's text. Also the follower's side of the lease requests it
//! forwards to the leader (keep-alive, time to live).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use etcd_proto::kubesimpeer::peer_client::PeerClient;
use etcd_proto::kubesimpeer::{LeaseRenewRequest, LeaseTtlRequest, RaftBatch};
use tokio::sync::mpsc;
use tonic::transport::{Channel, Endpoint};

use super::config::PeerSpec;
use super::member::Member;
use super::peer::{CLUSTER_ID_METADATA, CLUSTER_ID_MISMATCH};
use crate::error::EtcdError;
use crate::lease::TimeToLive;
use crate::raft::{codec, Message, MessageType};
use crate::types::{ClusterId, LeaseId, MemberId};

/// How long one batch may take before the peer counts as unreachable: a few heartbeats.
const SEND_TIMEOUT: Duration = Duration::from_millis(500);

/// Most messages in one batch, so that one slow batch does not hold back a whole backlog.
const MAX_BATCH: usize = 64;

/// Runs until the member's queue closes: fans the queue out to one sender task per peer.
pub async fn run(member: Arc<Member>, mut queue: mpsc::UnboundedReceiver<Message>) {
    let mut senders: BTreeMap<MemberId, mpsc::UnboundedSender<Message>> = BTreeMap::new();
    while let Some(msg) = queue.recv().await {
        let to = MemberId(msg.to);
        let sender = senders.entry(to).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            if let Some(peer) = member.peer(to).cloned() {
                tokio::spawn(send_loop(member.clone(), peer, rx));
            }
            tx
        });
        let _ = sender.send(msg);
    }
}

async fn send_loop(member: Arc<Member>, peer: PeerSpec, mut rx: mpsc::UnboundedReceiver<Message>) {
    let Some(mut client) = client(&peer) else {
        tracing::warn!(peer = %peer.name, "no usable peer URL; messages to it are dropped");
        return;
    };
    let from = member.config().member_id;
    let cluster_id = member.config().cluster_id;
    // A peer of another cluster refuses every batch; saying so once per run of refusals keeps the log useful.
    let mut refused = false;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(msg) => batch.push(msg),
                Err(_) => break,
            }
        }
        let snapshot = batch.iter().any(|m| m.get_msg_type() == MessageType::MsgSnapshot);
        let request = RaftBatch {
            cluster_id: cluster_id.0,
            from: from.0,
            to: peer.id.0,
            messages: batch.iter().map(codec::encode_message).collect(),
        };
        let sent = tokio::time::timeout(SEND_TIMEOUT, client.deliver(request)).await;
        match sent {
            Ok(Ok(_)) => {
                refused = false;
                if snapshot {
                    member.report_snapshot_delivered(peer.id);
                }
            }
            Ok(Err(status)) if is_cluster_mismatch(&status) => {
                if !refused {
                    refused = true;
                    let remote = status.metadata().get(CLUSTER_ID_METADATA).and_then(|v| v.to_str().ok());
                    // etcd 3.4's text (capnslog), from its stream and pipeline senders.
                    tracing::error!(
                        "rafthttp: request sent was ignored (cluster ID mismatch: peer[{}]={}, local={:x})",
                        peer.id,
                        remote.unwrap_or("unknown"),
                        cluster_id.0
                    );
                }
                member.report_undelivered(peer.id, snapshot);
            }
            _ => member.report_undelivered(peer.id, snapshot),
        }
    }
}

/// Whether a peer refused a request because it belongs to another cluster.
fn is_cluster_mismatch(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::FailedPrecondition && status.message() == CLUSTER_ID_MISMATCH
}

fn client(peer: &PeerSpec) -> Option<PeerClient<Channel>> {
    let url = peer.peer_urls.first()?;
    let endpoint = Endpoint::from_shared(url.clone()).ok()?;
    Some(PeerClient::new(endpoint.connect_lazy()))
}

/// Forwards a keep-alive to the leader and returns the TTL it answered.
pub async fn forward_lease_renew(
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
pub async fn forward_lease_time_to_live(
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
