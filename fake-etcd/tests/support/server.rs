//! Starts one etcd member, real or fake, on free loopback ports with a fresh data dir, and stops it on drop.
//!
//! The member runs as a child process with the same etcd-style flags on both sides, answers etcdctl before
//! `start` returns, and is killed (then its directory removed) when the [`Server`] is dropped, also during
//! a panic. As a second line of defence the child asks the kernel to kill it if the thread that started it
//! dies (PR_SET_PDEATHSIG), so not even a killed test process leaves an etcd behind. Keep a `Server` on the
//! thread that started it.

// Real processes, real sockets, real time: the simulation build never compiles this.
#![cfg(not(madsim))]

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use kubesim_testsupport::ports;

use super::{etcdctl, tools};

/// Which implementation a server runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Peer {
    /// Debian's etcd 3.4.23.
    RealEtcd,
    /// The `fake-etcd` binary at this path.
    FakeEtcd(PathBuf),
}

impl Peer {
    /// fake-etcd as built by cargo for this test or bench target.
    pub fn fake() -> Peer {
        Peer::FakeEtcd(PathBuf::from(env!("CARGO_BIN_EXE_fake-etcd")))
    }

    /// The implementation compared with real etcd: fake-etcd, unless `KUBESIM_UNDER_TEST=etcd` asks for real
    /// etcd on both sides, which checks the harness itself (real against real must always be equal).
    pub fn under_test() -> Peer {
        match std::env::var("KUBESIM_UNDER_TEST").as_deref() {
            Ok("etcd") => Peer::RealEtcd,
            Ok("fake-etcd") | Err(_) => Peer::fake(),
            Ok(other) => panic!("KUBESIM_UNDER_TEST={other}: expected `fake-etcd` (default) or `etcd`"),
        }
    }

    /// A short name for messages and tables.
    pub fn label(&self) -> &'static str {
        match self {
            Peer::RealEtcd => "etcd",
            Peer::FakeEtcd(_) => "fake-etcd",
        }
    }
}

/// Where a server keeps its data dir and log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disk {
    /// The system temp dir.
    Temp,
    /// /dev/shm, a tmpfs: no fsync cost, as the benchmark's real etcd must run.
    Tmpfs,
}

/// A running member; dropping it kills the process and removes its directory.
pub struct Server {
    pub peer: Peer,
    pub client_port: u16,
    pub peer_port: u16,
    /// The member name, the same for real and fake so outputs that show it compare equal.
    pub name: &'static str,
    root: PathBuf,
    child: Child,
}

/// The member name given to every single-member server.
pub const MEMBER_NAME: &str = "kubesim-1";

/// Member names of a cluster started with [`Server::start_cluster`], the first being [`MEMBER_NAME`].
const CLUSTER_NAMES: [&str; 5] = [MEMBER_NAME, "kubesim-2", "kubesim-3", "kubesim-4", "kubesim-5"];

/// How long a member may take to answer its first request (real etcd elects itself after about a second).
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a start is tried with fresh ports when the member fails because a port was taken between our
/// probe and its bind (any other failure is final at once).
const START_ATTEMPTS: usize = 3;

/// Numbers the directories of this process's servers.
static SERVER_SEQ: AtomicU32 = AtomicU32::new(0);

impl Server {
    /// Starts `peer` and waits until it answers etcdctl; panics with the member's log if it never does.
    pub fn start(peer: &Peer, disk: Disk) -> Server {
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            match Server::try_start(peer, disk) {
                Ok(server) => return server,
                Err(failure) => {
                    let port_taken = failure.to_lowercase().contains("already in use");
                    failures.push(failure);
                    if !port_taken {
                        break;
                    }
                }
            }
        }
        panic!("{} did not start:\n{}", peer.label(), failures.join("\n---\n"));
    }

    /// `127.0.0.1:<port>`, the endpoint as etcdctl is given it.
    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.client_port)
    }

    /// `http://127.0.0.1:<port>`, the client URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.endpoint())
    }

    /// What the member has logged so far, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.root.join("server.log")).unwrap_or_default()
    }

    /// Starts `members` members of one cluster (at most 5), all with the same `--initial-cluster`, and waits
    /// until every one answers; panics with the logs if one never does. A port taken between the probe and
    /// the bind is not retried here: a benchmark can simply be run again.
    pub fn start_cluster(peer: &Peer, disk: Disk, members: usize) -> Vec<Server> {
        assert!((1..=CLUSTER_NAMES.len()).contains(&members), "1 to {} members", CLUSTER_NAMES.len());
        let ports: Vec<(u16, u16)> = (0..members).map(|_| (ports::free_port(), ports::free_port())).collect();
        let initial: Vec<String> =
            ports.iter().zip(CLUSTER_NAMES).map(|((_, p), n)| format!("{n}=http://127.0.0.1:{p}")).collect();
        let initial = initial.join(",");
        // Every member must be running before any can elect a leader, so spawn all, then wait for each.
        let mut servers: Vec<Server> = ports
            .iter()
            .zip(CLUSTER_NAMES)
            .map(|(&(client_port, peer_port), name)| {
                Server::spawn(peer, disk, name, client_port, peer_port, &initial)
                    .unwrap_or_else(|e| panic!("{} {name} did not start: {e}", peer.label()))
            })
            .collect();
        for server in &mut servers {
            if let Err(e) = server.wait_ready() {
                panic!("{} {} did not become ready: {e}", peer.label(), server.name);
            }
        }
        servers
    }

    fn try_start(peer: &Peer, disk: Disk) -> Result<Server, String> {
        let (client_port, peer_port) = (ports::free_port(), ports::free_port());
        let initial = format!("{MEMBER_NAME}=http://127.0.0.1:{peer_port}");
        let mut server = Server::spawn(peer, disk, MEMBER_NAME, client_port, peer_port, &initial)?;
        server.wait_ready()?;
        Ok(server)
    }

    /// Runs one member process with etcd's flags; it is not ready yet.
    fn spawn(
        peer: &Peer,
        disk: Disk,
        name: &'static str,
        client_port: u16,
        peer_port: u16,
        initial_cluster: &str,
    ) -> Result<Server, String> {
        let base = match disk {
            Disk::Temp => std::env::temp_dir(),
            Disk::Tmpfs => PathBuf::from("/dev/shm"),
        };
        let seq = SERVER_SEQ.fetch_add(1, Ordering::Relaxed);
        if seq == 0 {
            remove_stale_dirs(&base);
        }
        let root = base.join(format!("kubesim-peer-{}-{seq}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        let log = File::create(root.join("server.log")).map_err(|e| format!("cannot create log: {e}"))?;
        let program = match peer {
            Peer::RealEtcd => tools::etcd(),
            Peer::FakeEtcd(path) => path.clone(),
        };
        let client_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let mut cmd = Command::new(&program);
        cmd.arg("--name")
            .arg(name)
            .arg("--data-dir")
            .arg(root.join("data"))
            .arg("--listen-client-urls")
            .arg(&client_url)
            .arg("--advertise-client-urls")
            .arg(&client_url)
            .arg("--listen-peer-urls")
            .arg(&peer_url)
            .arg("--initial-advertise-peer-urls")
            .arg(&peer_url)
            .arg("--initial-cluster")
            .arg(initial_cluster);
        // A panic's message and location are what a failure report needs; a backtrace would push them out of
        // the log tail that failure messages quote.
        cmd.env_remove("ETCD_NAME")
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        Ok(Server { peer: peer.clone(), client_port, peer_port, name, root, child })
    }

    /// Polls with `etcdctl endpoint health` (a linearizable read of key "health") until it succeeds, so the
    /// member has a leader and serves KV requests when the test begins.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let probe: Vec<String> =
            ["--dial-timeout=1s", "--command-timeout=2s", "endpoint", "health"].map(String::from).to_vec();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{} exited with {status} before answering; its log:\n{}",
                    self.peer.label(),
                    self.log()
                ));
            }
            let out = etcdctl::run(&self.endpoint(), &probe, None, Some("5"));
            if out.code == 0 {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not answer `etcdctl endpoint health` within {READY_TIMEOUT:?}; last probe: {out:?}; its log:\n{}",
                    self.peer.label(),
                    self.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGKILL: nothing of the member's state is needed afterwards, and it cannot be ignored.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Removes the directories of servers whose test process is gone: a test killed with SIGKILL takes its
/// members with it (PR_SET_PDEATHSIG) but cannot run their drops.
fn remove_stale_dirs(base: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("kubesim-peer-")) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
