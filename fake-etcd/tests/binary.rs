//! The `fake-etcd` binary as an operator runs it: it refuses flags that cannot work before serving anything,
//! it stops cleanly (exit 0) on SIGTERM and SIGINT, and with `--data-dir` a member killed with SIGKILL in the
//! middle of a stream of writes comes back with every write it acknowledged, also from a snapshot
//! (`--snapshot-count`).
#![cfg(not(madsim))]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kubesim_testsupport::free_port;

fn fake_etcd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fake-etcd"))
}

/// (flags, a phrase the error must contain). Each must exit 1 at once, naming the problem.
#[test]
fn refuses_flags_that_cannot_work() {
    let cases: &[(&[&str], &str)] = &[
        (&["--listen-client-urls", "https://127.0.0.1:1"], "TLS is not supported"),
        (&["--listen-client-urls", "127.0.0.1:1"], "must start with http://"),
        (&["--listen-client-urls", ""], "names no URL"),
        (&["--name", "a", "--initial-cluster", "b=http://127.0.0.1:2380"], "couldn't find local name \"a\""),
        (
            &[
                "--name",
                "a",
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:2380",
                "--initial-cluster",
                "a=http://127.0.0.1:9",
            ],
            "must match",
        ),
        (
            &["--name", "a", "--initial-cluster", "a=http://localhost:2380,b=http://localhost:2380"],
            "more than one member",
        ),
        (&["--name", "a", "--initial-cluster", "a=localhost:2380"], "must start with http://"),
        (&["--name", "a", "--initial-cluster", "a"], "name=url"),
    ];
    for (flags, phrase) in cases {
        let out = fake_etcd().args(*flags).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flags:?} should be refused; stderr: {stderr}");
        assert!(stderr.contains(phrase), "{flags:?}: expected {phrase:?} in {stderr}");
    }
}

#[test]
fn unknown_flags_are_usage_errors() {
    let out = fake_etcd().arg("--no-such-flag").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}

/// Starts the binary, waits until it logs that it serves, sends `signal`, and expects exit 0 with the signal
/// named in the shutdown log line.
fn stops_cleanly_on(signal: &str, name: &str) {
    let port = free_port();
    let mut child = fake_etcd()
        .args(["--listen-client-urls", &format!("http://127.0.0.1:{port}")])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let serving = lines.by_ref().map_while(Result::ok).any(|l| l.contains("serving client requests"));
    assert!(serving, "fake-etcd never said it was serving");
    // The listener is bound once the server future runs; wait until the port accepts.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "port {port} never accepted a connection");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(0), "exit after {signal}; log: {rest:#?}");
    assert!(rest.iter().any(|l| l.contains("shutting down") && l.contains(name)), "log: {rest:#?}");
}

#[test]
fn stops_cleanly_on_sigterm() {
    stops_cleanly_on("-TERM", "SIGTERM");
}

#[test]
fn stops_cleanly_on_sigint() {
    stops_cleanly_on("-INT", "SIGINT");
}

/// Starts a single member on `port` with `dir` as its data dir and waits until it answers.
fn start_with_data_dir(port: u16, dir: &Path, log: &Path) -> Child {
    start_with_flags(port, dir, log, &[])
}

fn start_with_flags(port: u16, dir: &Path, log: &Path, flags: &[&str]) -> Child {
    let child = fake_etcd()
        .args(["--listen-client-urls", &format!("http://127.0.0.1:{port}"), "--data-dir"])
        .arg(dir)
        .args(flags)
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !etcdctl(port, &["endpoint", "health"]).status.success() {
        assert!(Instant::now() < deadline, "fake-etcd never answered: {}", std::fs::read_to_string(log).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

fn etcdctl(port: u16, args: &[&str]) -> std::process::Output {
    Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", &format!("127.0.0.1:{port}"), "--dial-timeout", "1s", "--command-timeout", "2s"])
        .args(args)
        .output()
        .expect("etcdctl 3.4 is installed")
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fake-etcd-binary-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn acknowledged_writes_survive_sigkill_with_a_data_dir() {
    let root = scratch_dir("sigkill");
    let (data, log) = (root.join("data"), root.join("member.log"));
    let port = free_port();
    let mut child = start_with_data_dir(port, &data, &log);
    // Writes flow while the process is killed: a writer thread puts keys one after another and records each
    // acknowledged one with the revision it got; the kill lands wherever the writer happens to be.
    let writer = std::thread::spawn(move || {
        let mut acked = Vec::new();
        for i in 0.. {
            let out = etcdctl(port, &["put", &format!("k{i:04}"), &format!("v{i}"), "-w", "json"]);
            if !out.status.success() {
                break;
            }
            let json = String::from_utf8_lossy(&out.stdout).to_string();
            let revision: i64 =
                json.split("\"revision\":").nth(1).unwrap().split([',', '}']).next().unwrap().parse().unwrap();
            acked.push((i, revision));
        }
        acked
    });
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let acked = writer.join().unwrap();
    assert!(acked.len() >= 5, "too few writes before the kill to mean anything: {acked:?}");

    let mut child = start_with_data_dir(port, &data, &log);
    let out = etcdctl(port, &["get", "--prefix", "k", "--keys-only"]);
    let keys: Vec<String> = String::from_utf8_lossy(&out.stdout).split_whitespace().map(String::from).collect();
    for (i, _) in &acked {
        assert!(keys.contains(&format!("k{i:04}")), "acknowledged write k{i:04} lost after SIGKILL; have {keys:?}");
    }
    // The store's revision never goes back behind what a client was told.
    let (last, revision) = acked.last().copied().unwrap();
    let out = etcdctl(port, &["get", &format!("k{last:04}"), "-w", "json"]);
    let json = String::from_utf8_lossy(&out.stdout).to_string();
    let now: i64 = json.split("\"revision\":").nth(1).unwrap().split([',', '}']).next().unwrap().parse().unwrap();
    assert!(now >= revision, "revision went back from {revision} to {now}");
    // And the member keeps serving writes on top of what it recovered.
    assert!(etcdctl(port, &["put", "after", "restart"]).status.success());
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&root);
}

/// With `--snapshot-count 10` the member snapshots its state machine every ten entries, which rewrites the
/// data dir's image (a new WAL generation): a restart restores that snapshot and replays the entries after
/// it, compactions, deletes and leases included.
#[test]
fn a_restart_restores_the_snapshot_in_the_data_dir() {
    let root = scratch_dir("snapshot");
    let (data, log) = (root.join("data"), root.join("member.log"));
    let port = free_port();
    let flags = ["--snapshot-count", "10"];
    let mut child = start_with_flags(port, &data, &log, &flags);
    for i in 0..45 {
        assert!(etcdctl(port, &["put", &format!("k{i:02}"), &format!("v{i}")]).status.success());
    }
    assert!(etcdctl(port, &["del", "k00"]).status.success());
    assert!(etcdctl(port, &["compaction", "20"]).status.success());
    let before = etcdctl(port, &["get", "--prefix", "k", "-w", "json"]);
    child.kill().unwrap();
    child.wait().unwrap();
    let generations: Vec<String> = std::fs::read_dir(data.join("fake-etcd"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("wal-"))
        .collect();
    assert!(generations.iter().all(|g| g != "wal-0"), "no snapshot rewrote the image: {generations:?}");

    let mut child = start_with_flags(port, &data, &log, &flags);
    let after = etcdctl(port, &["get", "--prefix", "k", "-w", "json"]);
    // The same keys, values and revisions (the header differs only in the term, which a restart bumps).
    let kvs =
        |out: &std::process::Output| String::from_utf8_lossy(&out.stdout).split("\"kvs\"").nth(1).map(String::from);
    assert_eq!(kvs(&after), kvs(&before));
    assert!(kvs(&after).is_some_and(|k| k.contains("\"count\":44")), "{:?}", kvs(&after));
    let old = etcdctl(port, &["get", "k01", "--rev", "19"]);
    assert!(String::from_utf8_lossy(&old.stderr).contains("required revision has been compacted"));
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_data_dir_of_another_member_is_refused_before_anything_is_written() {
    let root = scratch_dir("identity");
    let (data, log) = (root.join("data"), root.join("member.log"));
    let mut child = start_with_data_dir(free_port(), &data, &log);
    child.kill().unwrap();
    child.wait().unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(data.join("fake-etcd"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    // Another name and peer URL make another member id (and cluster id).
    let out = fake_etcd()
        .args(["--name", "other", "--initial-advertise-peer-urls", "http://127.0.0.1:9"])
        .args(["--initial-cluster", "other=http://127.0.0.1:9", "--data-dir"])
        .arg(&data)
        .args(["--listen-client-urls", &format!("http://127.0.0.1:{}", free_port())])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains("belongs to member") && stderr.contains("--data-dir"), "{stderr}");
    for (path, bytes) in before {
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{} changed", path.display());
    }
    let _ = std::fs::remove_dir_all(&root);
}
