//! Serving a member: the gRPC router over every client service (`api`), the peer listener (`peer`), and the
//! member's background tasks (Raft ticks, the Ready loop, the peer transport, lease expiry, progress
//! notifications). The same code runs on real sockets and on madsim's simulated network; it never names a
//! server type, because madsim-tonic's differ from tonic's.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use etcd_proto::etcdserverpb::auth_server::AuthServer;
use etcd_proto::etcdserverpb::cluster_server::ClusterServer;
use etcd_proto::etcdserverpb::kv_server::KvServer;
use etcd_proto::etcdserverpb::lease_server::LeaseServer;
use etcd_proto::etcdserverpb::maintenance_server::MaintenanceServer;
use etcd_proto::etcdserverpb::watch_server::WatchServer;
use etcd_proto::kubesimpeer::peer_server::PeerServer;
use tonic::transport::server::Router;
use tonic::transport::Server;

use super::api::auth::AuthService;
use super::api::cluster::ClusterService;
use super::api::kv::{KvService, KV_DECODE_LIMIT_BYTES};
use super::api::lease::LeaseService;
use super::api::maintenance::MaintenanceService;
use super::api::watch::WatchService;
use super::member::Member;
use super::peer::{self, PeerService};
use crate::failpoint::Point;

/// Serves `member`'s client API on `addr` until `shutdown` resolves, running its tickers meanwhile.
pub async fn serve(
    member: Arc<Member>,
    addr: SocketAddr,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    // A member served on several client URLs runs its background tasks once.
    let tickers = if member.claim_tasks() { spawn_tickers(member.clone()) } else { Vec::new() };
    let result = client_router(member).serve_with_shutdown(addr, shutdown).await;
    for t in tickers {
        t.abort();
    }
    result
}

/// The real binary's client listener: like [`serve`], on an already bound socket, with every connection
/// read through `authority::RewritingStream` so that etcdctl's `http://` authorities reach tonic in a form h2 takes.
#[cfg(not(madsim))]
pub async fn serve_listener(
    member: Arc<Member>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let tickers = if member.claim_tasks() { spawn_tickers(member.clone()) } else { Vec::new() };
    let incoming = futures::stream::unfold(listener, |listener| async move {
        let accepted = listener.accept().await.map(|(socket, _)| {
            // Small gRPC frames must not wait for Nagle's algorithm, as tonic's own listener also sets.
            let _ = socket.set_nodelay(true);
            super::authority::RewritingStream::new(socket)
        });
        Some((accepted, listener))
    });
    let result = client_router(member).serve_with_incoming_shutdown(incoming, shutdown).await;
    for t in tickers {
        t.abort();
    }
    result
}

/// Every client service of `member`.
fn client_router(member: Arc<Member>) -> Router {
    // gRPC itself accepts a little more than etcd's request limit, so that an oversized request reaches
    // etcd's own check and gets etcd's own "request is too large". The KV service decodes more still and
    // applies that gRPC limit itself, with grpc-go's words (`KvService::check_grpc_limit`): large values
    // come through KV. A lease or watch request over the limit gets tonic's words.
    let max = member.config().max_request_bytes + etcd_proto::GRPC_OVERHEAD_BYTES;
    let kv = KvServer::new(KvService { member: member.clone() }).max_decoding_message_size(KV_DECODE_LIMIT_BYTES);
    Server::builder()
        .add_service(kv)
        .add_service(WatchServer::new(WatchService { member: member.clone() }).max_decoding_message_size(max))
        .add_service(LeaseServer::new(LeaseService { member: member.clone() }).max_decoding_message_size(max))
        .add_service(MaintenanceServer::new(MaintenanceService { member: member.clone() }))
        .add_service(ClusterServer::new(ClusterService { member: member.clone() }))
        .add_service(AuthServer::new(AuthService { member }))
}

/// Serves `member`'s peer listener (Raft messages, forwarded keep-alives) on `addr` until `shutdown`.
pub async fn serve_peers(
    member: Arc<Member>,
    addr: SocketAddr,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    // Raft batches carry whole entries: allow the largest request plus the framing of a batch.
    let max = 4 * (member.config().max_request_bytes + etcd_proto::GRPC_OVERHEAD_BYTES);
    Server::builder()
        .add_service(PeerServer::new(PeerService::new(member)).max_decoding_message_size(max))
        .serve_with_shutdown(addr, shutdown)
        .await
}

/// The member's periodic work. Each ticker takes the member lock only briefly, like any request.
fn spawn_tickers(member: Arc<Member>) -> Vec<tokio::task::JoinHandle<()>> {
    let member_for_raft = member.clone();
    let lease_member = member.clone();
    let lease_every = member.config().lease_check_interval;
    let leases = tokio::spawn(async move {
        let mut tick = tokio::time::interval(lease_every);
        loop {
            tick.tick().await;
            lease_member.revoke_expired_leases().await;
        }
    });
    let progress_every = member.config().progress_notify_interval;
    let progress = tokio::spawn(async move {
        let mut tick = tokio::time::interval(progress_every);
        // The first tick of an interval fires at once; etcd's first notification comes one interval in.
        tick.tick().await;
        loop {
            tick.tick().await;
            if member.failpoints().eval(Point::BeforeProgressNotify).await.is_ok() {
                member.progress_tick();
            }
        }
    });
    // etcd's `monitorLeader`: every election timeout, count the checks in a row without a leader.
    let monitor_member = member_for_raft.clone();
    let monitor = tokio::spawn(async move {
        let every = monitor_member.config().election_timeout;
        let mut checks_without_leader = 0;
        loop {
            tokio::time::sleep(every).await;
            monitor_member.check_leader(&mut checks_without_leader);
        }
    });
    let mut tasks = vec![leases, progress, monitor];
    if let Some(queue) = member_for_raft.take_peer_queue() {
        tasks.push(tokio::spawn(peer::run(member_for_raft.clone(), queue)));
    }
    let starting_member = member_for_raft.clone();
    tasks.push(tokio::spawn(async move { starting_member.advance_election_ticks_when_peers_active().await }));
    let ready_member = member_for_raft.clone();
    tasks.push(tokio::spawn(async move { ready_member.run_ready_loop().await }));
    let tick_every = member_for_raft.config().raft.tick_interval;
    tasks.push(tokio::spawn(async move {
        let mut tick = tokio::time::interval(tick_every);
        tick.tick().await;
        loop {
            tick.tick().await;
            member_for_raft.tick();
        }
    }));
    tasks
}
