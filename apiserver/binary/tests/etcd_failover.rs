//! `kubesim-apiserver --etcd-servers` over three etcd members, as an operator runs it: three `fake-etcd`
//! processes, then three of Debian's etcd 3.4.23 with the same flags. Each member in turn is killed
//! (SIGKILL) under a steady stream of creates and consistent lists, then restarted on its data dir, while
//! a watch runs from the start. What must hold, as it does for kube-apiserver's etcd client:
//!
//! - no list fails (reads are retried on the next endpoint);
//! - a create fails only with etcd's own refusal while the survivors elect a leader (`etcdserver: ...`),
//!   which kube-apiserver does not retry either; none fails with a transport's words;
//! - the watch delivers every acknowledged create once, in order, with no error event and no 410;
//! - `/readyz` says `[+]etcd ok` with a member down.
//!
//! The figures it prints (requests failed during each member's death, against the same run with the dead
//! member as the only endpoint) are the README's.
#![cfg(not(madsim))]

#[path = "support/spawn.rs"]
mod spawn;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kubesim_testsupport::free_port;

/// A child process, killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Which etcd the members run.
#[derive(Clone, Copy, Debug)]
enum Etcd {
    Fake,
    Real,
}

impl Etcd {
    fn binary(self) -> PathBuf {
        match self {
            // Built beside this package's binary by the workspace's test build.
            Etcd::Fake => {
                let me = PathBuf::from(env!("CARGO_BIN_EXE_kubesim-apiserver"));
                let fake = me.with_file_name("fake-etcd");
                assert!(fake.exists(), "{} is missing: build it with `cargo build -p fake-etcd`", fake.display());
                fake
            }
            Etcd::Real => PathBuf::from(kubesim_testsupport::real_etcd::ETCD_BINARY),
        }
    }
}

/// Three members started with `--initial-cluster`, each on its data dir.
struct Cluster {
    etcd: Etcd,
    names: [&'static str; 3],
    client: Vec<String>,
    peer: Vec<String>,
    dir: tempfile::TempDir,
    procs: Vec<Option<Proc>>,
}

impl Cluster {
    fn start(etcd: Etcd) -> Cluster {
        let names = ["m1", "m2", "m3"];
        let client = names.iter().map(|_| format!("http://127.0.0.1:{}", free_port())).collect();
        let peer = names.iter().map(|_| format!("http://127.0.0.1:{}", free_port())).collect();
        let dir = tempfile::tempdir().unwrap();
        let mut cluster = Cluster { etcd, names, client, peer, dir, procs: Vec::new() };
        for i in 0..3 {
            let p = cluster.spawn(i);
            cluster.procs.push(Some(p));
        }
        for i in 0..3 {
            cluster.wait_listening(i);
        }
        cluster
    }

    fn spawn(&self, i: usize) -> Proc {
        let initial: Vec<String> = self.names.iter().zip(&self.peer).map(|(n, p)| format!("{n}={p}")).collect();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{}.log", self.names[i])))
            .unwrap();
        let child = Command::new(self.etcd.binary())
            .args(["--name", self.names[i], "--data-dir"])
            .arg(self.dir.path().join(format!("{}.data", self.names[i])))
            .args(["--listen-client-urls", &self.client[i], "--advertise-client-urls", &self.client[i]])
            .args(["--listen-peer-urls", &self.peer[i], "--initial-advertise-peer-urls", &self.peer[i]])
            .args(["--initial-cluster", &initial.join(","), "--initial-cluster-token", "failover"])
            .args(["--initial-cluster-state", "new", "--log-level", "error"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the etcd member starts");
        Proc(child)
    }

    fn wait_listening(&self, i: usize) {
        let addr = self.client[i].trim_start_matches("http://");
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "member {} never listened on {addr}", self.names[i]);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill(&mut self, i: usize) {
        self.procs[i] = None;
    }

    fn restart(&mut self, i: usize) {
        self.procs[i] = Some(self.spawn(i));
        self.wait_listening(i);
    }
}

/// The apiserver binary over `endpoints`; its address.
fn apiserver(endpoints: &[String]) -> (Proc, String) {
    let servers = endpoints.join(",");
    let spawn::Spawned { child, url, mut stdout } =
        spawn::spawn(&["--etcd-connect-wait-seconds", "30", "--etcd-servers", servers.as_str()]);
    let addr = url.trim_start_matches("http://").to_string();
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !request(&addr, "GET", "/readyz", "").0.eq(&200) {
        assert!(Instant::now() < deadline, "the apiserver never became ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Proc(child), addr)
}

/// One request with `Connection: close`: status and body (status 0 when nothing answered).
fn request(addr: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let answer = spawn::request(addr, method, path, body);
    let status = answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_string());
    (status, body)
}

/// A watch on the namespace's configmaps from `rv`, read by a thread: each event's type and name.
fn watch(addr: &str, namespace: &str, rv: &str) -> Arc<Mutex<Vec<(String, String)>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut stream = TcpStream::connect(addr).unwrap();
    let path = format!("/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=600");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let seen = events.clone();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        // The head, then chunks: a size line, that many bytes, CRLF.
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
            line.clear();
        }
        let mut pending = Vec::new();
        loop {
            line.clear();
            if !reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                return;
            }
            let Ok(size) = usize::from_str_radix(line.trim(), 16) else { return };
            if size == 0 {
                return;
            }
            let mut chunk = vec![0; size + 2];
            if reader.read_exact(&mut chunk).is_err() {
                return;
            }
            pending.extend_from_slice(&chunk[..size]);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let event: serde_json::Value = serde_json::from_slice(&pending[..end]).unwrap_or_default();
                pending.drain(..=end);
                let kind = event["type"].as_str().unwrap_or("?").to_string();
                let name = event["object"]["metadata"]["name"].as_str().unwrap_or("").to_string();
                let name = if kind == "ERROR" { event["object"].to_string() } else { name };
                seen.lock().unwrap().push((kind, name));
            }
        }
    });
    events
}

/// What a phase of traffic saw.
#[derive(Default, Debug)]
struct Tally {
    created: Vec<String>,
    /// Creates etcd itself refused during an election (kube-apiserver does not retry those either).
    refused_by_etcd: Vec<String>,
    /// Everything else that failed: must stay empty.
    failed: Vec<String>,
    requests: usize,
}

/// `n` rounds of a create and a consistent list in `namespace`, names prefixed with `tag`.
fn traffic(addr: &str, namespace: &str, tag: &str, n: usize, tally: &mut Tally) {
    for k in 0..n {
        let name = format!("{tag}-{k}");
        let body = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}}}"#);
        let (status, text) = request(addr, "POST", &format!("/api/v1/namespaces/{namespace}/configmaps"), &body);
        tally.requests += 1;
        match status {
            201 => tally.created.push(name.clone()),
            500 if text.contains("etcdserver: ") => tally.refused_by_etcd.push(format!("{name}: {text}")),
            _ => tally.failed.push(format!("create {name}: {status} {text}")),
        }
        let (status, text) = request(addr, "GET", &format!("/api/v1/namespaces/{namespace}/configmaps"), "");
        tally.requests += 1;
        if status != 200 {
            tally.failed.push(format!("list after {name}: {status} {text}"));
        }
    }
}

/// Kills each member in turn under traffic through an apiserver over all three; then the same with the
/// dead member as the only endpoint, for the figure.
fn failover(etcd: Etcd) {
    let mut cluster = Cluster::start(etcd);
    let (_apiserver, addr) = apiserver(&cluster.client);
    let namespace = "default";
    let (status, list) = request(&addr, "GET", &format!("/api/v1/namespaces/{namespace}/configmaps"), "");
    assert_eq!(status, 200, "{list}");
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    let events = watch(&addr, namespace, list["metadata"]["resourceVersion"].as_str().unwrap());

    let mut tally = Tally::default();
    traffic(&addr, namespace, "before", 10, &mut tally);
    for i in 0..3 {
        cluster.kill(i);
        let before = (tally.failed.len(), tally.refused_by_etcd.len(), tally.requests);
        traffic(&addr, namespace, &format!("without-m{}", i + 1), 20, &mut tally);
        let (status, ready) = request(&addr, "GET", "/readyz?verbose", "");
        assert_eq!(status, 200, "{etcd:?}, m{} down: {ready}", i + 1);
        assert!(ready.contains("[+]etcd ok"), "{ready}");
        println!(
            "{etcd:?}, all three endpoints, m{} killed: {} of {} requests failed ({} refused by etcd during the election)",
            i + 1,
            tally.failed.len() - before.0 + tally.refused_by_etcd.len() - before.1,
            tally.requests - before.2,
            tally.refused_by_etcd.len() - before.1,
        );
        cluster.restart(i);
        traffic(&addr, namespace, &format!("after-m{}", i + 1), 10, &mut tally);
    }
    assert!(
        tally.failed.is_empty(),
        "{etcd:?}: requests failed that kube-apiserver would have retried: {:#?}",
        tally.failed
    );

    // Every acknowledged create reaches the watch, once and in order, and nothing else does.
    let deadline = Instant::now() + Duration::from_secs(30);
    while events.lock().unwrap().len() < tally.created.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = events.lock().unwrap().clone();
    let added: Vec<String> = seen.iter().filter(|(k, _)| k == "ADDED").map(|(_, n)| n.clone()).collect();
    let others: Vec<&(String, String)> = seen.iter().filter(|(k, _)| k != "ADDED").collect();
    assert!(others.is_empty(), "{etcd:?}: the watch saw more than creates: {others:?}");
    assert_eq!(added, tally.created, "{etcd:?}: the watch missed, repeated or reordered creates");

    // The figure beside it: one apiserver given only m1, m1 killed.
    let (_single, single_addr) = apiserver(&cluster.client[..1]);
    cluster.kill(0);
    let mut single = Tally::default();
    traffic(&single_addr, namespace, "single-endpoint", 3, &mut single);
    println!(
        "{etcd:?}, m1 as the only endpoint, m1 killed: {} of {} requests failed",
        single.failed.len() + single.refused_by_etcd.len(),
        single.requests
    );
    assert!(!single.failed.is_empty(), "with its only endpoint dead an apiserver cannot serve");
}

#[test]
fn three_fake_etcd_processes_lose_each_member_in_turn_and_no_client_notices() {
    failover(Etcd::Fake);
}

#[test]
fn three_real_etcd_members_lose_each_member_in_turn_and_no_client_notices() {
    failover(Etcd::Real);
}
