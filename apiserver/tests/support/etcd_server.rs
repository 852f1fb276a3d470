//! The etcd a test suite runs against: fake-etcd in-process on a loopback port, or Debian's real etcd
//! 3.4.23 as a child process with its data dir in a temp dir. [`start`] returns once the server answers a
//! read; dropping the [`Running`] stops it. Shared by the storage conformance and registry suites and the
//! registry benchmark, which puts real etcd's data dir on tmpfs ([`start_in`]).

use std::path::Path;
use std::time::Duration;

use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::RangeRequest;
use fake_etcd::service::{serve_listener, Member, MemberConfig};
use kubesim_testsupport::{free_port, RealEtcd};

/// Which etcd a suite runs against.
#[derive(Clone, Copy, Debug)]
pub enum Server {
    FakeEtcd,
    RealEtcd,
}

/// A server that stops when dropped.
pub struct Running {
    pub endpoint: String,
    _guard: Guard,
}

/// What stops the server when dropped: the fake's shutdown signal, or the real process (killed on drop).
enum Guard {
    Fake(#[allow(dead_code)] tokio::sync::oneshot::Sender<()>),
    Real(#[allow(dead_code)] RealEtcd),
}

/// Starts `server` as a one-member cluster named `name` and waits until it answers a read.
// The benchmark compiles this file too and uses only `start_in`.
#[allow(dead_code)]
pub async fn start(server: Server, name: &str) -> Running {
    start_in(server, name, &std::env::temp_dir()).await
}

/// [`start`], with real etcd's data dir under `root` (the benchmark passes /dev/shm, a tmpfs, so that
/// etcd pays no fsync cost, as fake-etcd keeps its in-process data in memory).
pub async fn start_in(server: Server, name: &str, root: &Path) -> Running {
    let (endpoint, guard) = match server {
        Server::FakeEtcd => {
            // The test binds the socket itself and hands it over, so no other program can take the port
            // between a probe and the server's bind (CI once lost a run to exactly that).
            let listener = bind_loopback().await;
            let endpoint = format!("http://{}", listener.local_addr().unwrap());
            let config =
                MemberConfig::single("fake", vec!["http://127.0.0.1:2380".into()], vec![endpoint.clone()], name);
            let member = Member::new(config, 0).expect("a fresh single member opens");
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            tokio::spawn(async move {
                serve_listener(member, listener, async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
            });
            (endpoint, Guard::Fake(stop))
        }
        Server::RealEtcd => {
            let root = root.to_path_buf();
            let name = name.to_owned();
            // Starting etcd waits on a blocking health probe (and retries with fresh ports if another
            // program took one first), so it runs off the async workers.
            let etcd = tokio::task::spawn_blocking(move || RealEtcd::start_in(&name, &root)).await.unwrap();
            (etcd.endpoint.clone(), Guard::Real(etcd))
        }
    };
    // Wait until the server answers a read.
    for _ in 0..200 {
        if let Ok(mut kv) = KvClient::connect(endpoint.clone()).await {
            if kv.range(RangeRequest { key: b"probe".to_vec(), ..RangeRequest::default() }).await.is_ok() {
                return Running { endpoint, _guard: guard };
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{server:?} never answered on {endpoint}");
}

/// A listener on a loopback port from [`free_port`], trying the next port when another program holds one.
async fn bind_loopback() -> tokio::net::TcpListener {
    for _ in 0..20 {
        match tokio::net::TcpListener::bind(("127.0.0.1", free_port())).await {
            Ok(listener) => return listener,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(e) => panic!("cannot bind a loopback port: {e}"),
        }
    }
    panic!("20 loopback ports in a row were taken");
}
