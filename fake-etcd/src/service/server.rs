//! Serving a member: the gRPC router over every service, and the member's tickers (lease expiry, progress
//! notifications). The same code runs on real sockets and on madsim's simulated network; it never names
//! a server type, because madsim-tonic's differ from tonic's.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use etcd_proto::etcdserverpb::auth_server::AuthServer;
use etcd_proto::etcdserverpb::cluster_server::ClusterServer;
use etcd_proto::etcdserverpb::kv_server::KvServer;
use etcd_proto::etcdserverpb::lease_server::LeaseServer;
use etcd_proto::etcdserverpb::maintenance_server::MaintenanceServer;
use etcd_proto::etcdserverpb::watch_server::WatchServer;
use tonic::transport::Server;

use super::auth::AuthService;
use crate::failpoint::Point;
use super::cluster::ClusterService;
use super::kv::KvService;
use super::lease::LeaseService;
use super::maintenance::MaintenanceService;
use super::member::Member;
use super::watch::WatchService;

/// Serves `member`'s client API on `addr` until `shutdown` resolves, running its tickers meanwhile.
pub async fn serve(
    member: Arc<Member>,
    addr: SocketAddr,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let tickers = spawn_tickers(member.clone());
    // gRPC itself accepts a little more than etcd's request limit, so that an oversized request reaches
    // etcd's own check and gets etcd's own "request is too large".
    let max = member.config().max_request_bytes + etcd_proto::GRPC_OVERHEAD_BYTES;
    let result = Server::builder()
        .add_service(KvServer::new(KvService { member: member.clone() }).max_decoding_message_size(max))
        .add_service(WatchServer::new(WatchService { member: member.clone() }).max_decoding_message_size(max))
        .add_service(LeaseServer::new(LeaseService { member: member.clone() }).max_decoding_message_size(max))
        .add_service(MaintenanceServer::new(MaintenanceService { member: member.clone() }))
        .add_service(ClusterServer::new(ClusterService { member: member.clone() }))
        .add_service(AuthServer::new(AuthService { member }))
        .serve_with_shutdown(addr, shutdown)
        .await;
    for t in tickers {
        t.abort();
    }
    result
}

/// The member's periodic work. Each ticker takes the member lock only briefly, like any request.
fn spawn_tickers(member: Arc<Member>) -> Vec<tokio::task::JoinHandle<()>> {
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
    vec![leases, progress]
}
