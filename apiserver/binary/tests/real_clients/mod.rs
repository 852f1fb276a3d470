//! What the real-client tests (`python_client.rs`, `kube_rs.rs`) share: a running `kubesim-apiserver` on a
//! free port with the kubeconfig it wrote, and a deadline for waits that must never hang a test.
#![cfg(not(madsim))]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A running binary on an in-memory embedded etcd, killed on drop; its kubeconfig lives in a temporary
/// directory of its own, which a test may also use and which is removed on drop.
pub struct Server {
    child: Child,
    /// The server's URL, as its start-up line printed it.
    pub url: String,
    /// The kubeconfig `--write-kubeconfig` wrote.
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
    // Kept open so that the binary's later lines never meet a closed pipe.
    _stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Starts the binary with `--secure-port 0 --write-kubeconfig DIR/kubeconfig` and waits until it is ready
    /// (its bootstrap has created the system namespaces), at most 30 seconds.
    pub fn start() -> Server {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kubeconfig = dir.path().join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubesim-apiserver"))
            .args(["--secure-port", "0", "--log-level", "error", "--write-kubeconfig"])
            .arg(&kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("a start-up line");
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http"))
            .unwrap_or_else(|| panic!("no URL in the start-up line {first:?}"))
            .to_string();
        let server = Server { child, url, kubeconfig, _dir: dir, _stdout: stdout };
        server.wait_ready();
        assert!(server.kubeconfig.exists(), "--write-kubeconfig wrote no file at {}", server.kubeconfig.display());
        server
    }

    /// Polls `/readyz` until it answers 200.
    fn wait_ready(&self) {
        let addr = self.url.trim_start_matches("http://").to_string();
        let deadline = Deadline::after(Duration::from_secs(30));
        loop {
            if http_status(&addr, "/readyz") == Some(200) {
                return;
            }
            deadline.check("the binary to become ready");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status code of a plain-HTTP GET, or None if nothing answered.
fn http_status(addr: &str, path: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split_whitespace().nth(1)?.parse().ok()
}

/// A point in time after which a wait fails its test with a message instead of hanging it.
pub struct Deadline {
    end: Instant,
}

impl Deadline {
    pub fn after(limit: Duration) -> Deadline {
        Deadline { end: Instant::now() + limit }
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.end
    }

    /// Panics, naming what was awaited, once the deadline has passed.
    pub fn check(&self, awaited: &str) {
        assert!(!self.passed(), "timed out waiting for {awaited}");
    }
}
