//! Debian's real etcd 3.4.23 as a child process for tests and benchmarks that compare against it: a single
//! member on free loopback ports with its data dir in a temporary directory (on tmpfs when the caller asks,
//! so that it pays no fsync cost), ready once it answers `GET /health` on its client port (etcd serves HTTP
//! there beside gRPC). Dropping it kills the process and removes the directory.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::ports::free_port;

/// The binary the Debian package installs.
pub const ETCD_BINARY: &str = "/usr/bin/etcd";

/// A running etcd member.
pub struct RealEtcd {
    /// `http://127.0.0.1:PORT`, the client URL.
    pub endpoint: String,
    child: Child,
    _dir: tempfile::TempDir,
}

impl RealEtcd {
    /// Starts a member named `name` with its data dir under `root`, and waits (at most 20 s) until it is
    /// healthy. A port can be taken by another program between [`free_port`]'s probe and etcd's own bind;
    /// etcd then exits at once, and the member is started again on fresh ports (at most five times).
    pub fn start_in(name: &str, root: &Path) -> RealEtcd {
        assert!(
            Path::new(ETCD_BINARY).exists(),
            "{ETCD_BINARY} is missing: install Debian's etcd-server package (apt-get install etcd-server), version 3.4.23"
        );
        for _ in 0..5 {
            match RealEtcd::try_start(name, root) {
                Ok(etcd) => return etcd,
                Err(Exited(status)) => eprintln!("etcd exited at start ({status}), likely a port taken; retrying"),
            }
        }
        panic!("etcd exited at start five times in a row");
    }

    fn try_start(name: &str, root: &Path) -> Result<RealEtcd, Exited> {
        let dir = tempfile::tempdir_in(root).expect("a temporary directory for etcd's data");
        let port = free_port();
        let endpoint = format!("http://127.0.0.1:{port}");
        let peer = format!("http://127.0.0.1:{}", free_port());
        let child = Command::new(ETCD_BINARY)
            .args(["--name", name, "--data-dir"])
            .arg(dir.path().join("data"))
            .args(["--listen-client-urls", &endpoint, "--advertise-client-urls", &endpoint])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("{name}={peer}"), "--log-level", "error"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("etcd starts");
        let mut etcd = RealEtcd { endpoint, child, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if healthy(port) {
                return Ok(etcd);
            }
            if let Ok(Some(status)) = etcd.child.try_wait() {
                return Err(Exited(status));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("etcd never became healthy on port {port}");
    }
}

/// etcd ended before it became healthy.
struct Exited(std::process::ExitStatus);

/// Whether etcd on `port` answers its health endpoint with `"health":"true"`.
fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream.write_all(b"GET /health HTTP/1.1\r\nHost: etcd\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}

impl Drop for RealEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
