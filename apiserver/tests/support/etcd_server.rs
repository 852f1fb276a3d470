//! The etcd a test suite runs against: fake-etcd in-process on a loopback port, or Debian's real etcd
//! 3.4.23 as a child process with its data dir in a temp dir. [`start`] returns once the server answers a
//! read; dropping the [`Running`] stops it. Shared by the storage conformance and registry suites and the
//! registry benchmark, which puts real etcd's data dir on tmpfs ([`start_in`]).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::RangeRequest;
use fake_etcd::service::{serve, Member, MemberConfig};

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

enum Guard {
    Fake(#[allow(dead_code)] tokio::sync::oneshot::Sender<()>),
    Real(Child, #[allow(dead_code)] tempfile::TempDir),
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Guard::Real(child, _) = self {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

use kubesim_testsupport::free_port;

/// Starts `server` as a one-member cluster named `name` and waits until it answers a read.
// The benchmark compiles this file too and uses only `start_in`.
#[allow(dead_code)]
pub async fn start(server: Server, name: &str) -> Running {
    start_in(server, name, &std::env::temp_dir()).await
}

/// [`start`], with real etcd's data dir under `root` (the benchmark passes /dev/shm, a tmpfs, so that
/// etcd pays no fsync cost, as fake-etcd keeps its in-process data in memory).
pub async fn start_in(server: Server, name: &str, root: &Path) -> Running {
    let port = free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let guard = match server {
        Server::FakeEtcd => {
            let config =
                MemberConfig::single("fake", vec!["http://127.0.0.1:2380".into()], vec![endpoint.clone()], name);
            let member = Member::new(config, 0).expect("a fresh single member opens");
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let addr = format!("127.0.0.1:{port}").parse().unwrap();
            tokio::spawn(async move {
                serve(member, addr, async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
            });
            Guard::Fake(stop)
        }
        Server::RealEtcd => {
            let binary = "/usr/bin/etcd";
            assert!(
                std::path::Path::new(binary).exists(),
                "{binary} is missing: install Debian's etcd-server package (apt-get install etcd-server), version 3.4.23"
            );
            let dir = tempfile::tempdir_in(root).unwrap();
            let peer = format!("http://127.0.0.1:{}", free_port());
            let child = Command::new(binary)
                .args(["--name", name, "--data-dir"])
                .arg(dir.path().join("data"))
                .args(["--listen-client-urls", &endpoint, "--advertise-client-urls", &endpoint])
                .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
                .args(["--initial-cluster", &format!("{name}={peer}"), "--log-level", "error"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            Guard::Real(child, dir)
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
