//! Three `fake-etcd` processes started with `--initial-cluster` form one Raft cluster that real etcdctl
//! 3.4 uses through any member: writes through one member are read through the others, `member list` sees
//! all three with their published client URLs, `endpoint status --cluster` reaches each of them, and writes
//! still succeed after the leader is killed (the leader is the member whose log last says
//! "raft: leader term="). A follower answers LeaseTimeToLive with the leader's remaining TTL, and members
//! of two different clusters refuse each other's traffic with etcd's texts. With data dirs, a cluster whose
//! every member is killed with SIGKILL comes back with every acknowledged write. With auth enabled, a
//! permission granted or revoked through one member holds on every member, also after the leader is
//! killed and after a member restarts on its data dir.
#![cfg(not(madsim))]

use std::net::TcpStream;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use kubesim_testsupport::free_port;

/// How often a cluster start is tried with fresh ports when a member finds one of its ports taken between
/// our probe and its own bind (any other start failure is final at once).
const START_ATTEMPTS: usize = 3;

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn etcdctl(endpoints: &str, args: &[&str]) -> Output {
    Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", endpoints, "--command-timeout", "10s"])
        .args(args)
        .output()
        .expect("etcdctl 3.4 is installed")
}

fn ok(out: Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "etcdctl failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// Retries `f` until it succeeds or `within` passes (an election may be under way).
fn eventually(within: Duration, mut f: impl FnMut() -> Result<String, String>) -> String {
    let deadline = Instant::now() + within;
    loop {
        match f() {
            Ok(s) => return s,
            Err(e) if Instant::now() > deadline => panic!("never succeeded: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

fn try_etcdctl(endpoint: &str, args: &[&str]) -> Result<String, String> {
    let out = etcdctl(endpoint, args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
    }
}

/// Member processes started with `--initial-cluster`, one per name; dropping it kills them.
struct Cluster {
    names: Vec<&'static str>,
    client: Vec<String>,
    peer: Vec<String>,
    initial: String,
    tokens: Vec<String>,
    procs: Vec<Option<Proc>>,
    dir: std::path::PathBuf,
}

impl Cluster {
    /// Starts one member per name; member i uses `tokens[i]` as its `--initial-cluster-token` and its own
    /// data dir. Returns once every member accepts connections on its client port; a member that exits
    /// first fails the test with its log, unless a port was taken under it, which is retried on fresh ports.
    fn start(tag: &str, names: &[&'static str], tokens: &[&str]) -> Cluster {
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            let mut cluster = Cluster::spawn_all(tag, names, tokens);
            match cluster.wait_listening() {
                Ok(()) => return cluster,
                Err(failure) if failure.contains("in use") => failures.push(failure),
                Err(failure) => panic!("the cluster did not start: {failure}"),
            }
        }
        panic!("the cluster did not start in {START_ATTEMPTS} attempts:\n{}", failures.join("\n---\n"));
    }

    /// Waits until every member accepts TCP connections on its client URL, or one of them exits.
    fn wait_listening(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        for i in 0..self.names.len() {
            let addr = self.client[i].trim_start_matches("http://").to_string();
            while TcpStream::connect(&addr).is_err() {
                let proc = self.procs[i].as_mut().expect("every member was spawned");
                if let Ok(Some(status)) = proc.0.try_wait() {
                    return Err(format!("member {} exited ({status}):\n{}", self.names[i], self.log(i)));
                }
                if Instant::now() > deadline {
                    return Err(format!("member {} never listened on {addr}:\n{}", self.names[i], self.log(i)));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }

    /// Spawns every member on freshly probed ports.
    fn spawn_all(tag: &str, names: &[&'static str], tokens: &[&str]) -> Cluster {
        let client: Vec<String> = names.iter().map(|_| format!("http://127.0.0.1:{}", free_port())).collect();
        let peer: Vec<String> = names.iter().map(|_| format!("http://127.0.0.1:{}", free_port())).collect();
        let initial: Vec<String> = names.iter().zip(&peer).map(|(n, p)| format!("{n}={p}")).collect();
        let dir = std::env::temp_dir().join(format!("fake-etcd-cluster-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let tokens = tokens.iter().map(|t| t.to_string()).collect();
        let mut cluster =
            Cluster { names: names.to_vec(), client, peer, initial: initial.join(","), tokens, procs: Vec::new(), dir };
        for i in 0..names.len() {
            let member = cluster.spawn(i);
            cluster.procs.push(Some(member));
        }
        cluster
    }

    /// Runs member i's process with its flags, appending to its log.
    fn spawn(&self, i: usize) -> Proc {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.log_path(i)).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_fake-etcd"))
            .args(["--name", self.names[i], "--listen-client-urls", &self.client[i]])
            .args(["--advertise-client-urls", &self.client[i]])
            .args(["--listen-peer-urls", &self.peer[i], "--initial-advertise-peer-urls", &self.peer[i]])
            .args(["--initial-cluster", &self.initial, "--initial-cluster-token", &self.tokens[i]])
            .arg("--data-dir")
            .arg(self.dir.join(format!("{}.data", self.names[i])))
            .args(["--log-level", "info"])
            .stderr(log)
            .spawn()
            .unwrap();
        Proc(child)
    }

    fn log_path(&self, i: usize) -> std::path::PathBuf {
        self.dir.join(format!("{}.log", self.names[i]))
    }

    fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.log_path(i)).unwrap_or_default()
    }

    /// The leader of the highest term any member reached (terms only grow, one leader per term).
    fn leader_index(&self) -> usize {
        (0..self.names.len())
            .filter_map(|i| {
                let text = self.log(i);
                let term = text.lines().filter_map(|l| l.split("raft: leader term=").nth(1)).next_back()?;
                Some((term.trim().parse::<u64>().unwrap(), i))
            })
            .max()
            .expect("some member logged its election")
            .1
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.procs.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The lease id etcdctl printed for `lease grant` ("lease 694d7d0d1a2b3c4d granted with TTL(10s)").
fn granted_lease(out: &str) -> String {
    out.split_whitespace().nth(1).unwrap_or_else(|| panic!("no lease id in {out:?}")).to_string()
}

/// The remaining seconds etcdctl printed for `lease timetolive` ("... granted with TTL(10s), remaining(9s)").
fn remaining_s(out: &str) -> i64 {
    let rest = out.split("remaining(").nth(1).unwrap_or_else(|| panic!("no remaining TTL in {out:?}"));
    rest.split('s').next().unwrap().parse().unwrap()
}

#[test]
fn three_processes_form_a_cluster_that_survives_its_leader() {
    let names = ["a", "b", "c"];
    let mut cluster = Cluster::start("survive", &names, &["etcd-cluster"; 3]);
    let client = cluster.client.clone();
    let peer = cluster.peer.clone();

    eventually(Duration::from_secs(20), || try_etcdctl(&client[0], &["put", "k", "v1"]));
    assert_eq!(ok(etcdctl(&client[1], &["get", "k", "--print-value-only"])).trim(), "v1");
    assert_eq!(ok(etcdctl(&client[2], &["get", "k", "--print-value-only", "--consistency=s"])).trim(), "v1");

    let list = ok(etcdctl(&client[2], &["member", "list"]));
    for (i, name) in names.iter().enumerate() {
        let line = list.lines().find(|l| l.contains(&format!(", {name}, "))).unwrap_or_else(|| panic!("{list}"));
        assert!(line.contains(&peer[i]) && line.contains(&client[i]), "{line}");
    }

    // `--cluster` dials every member's published client URL as a URL, the case etcdctl sends an
    // `http://host:port` authority for; each member answers, and exactly one says it leads.
    let status = ok(etcdctl(&client[0], &["endpoint", "status", "--cluster"]));
    assert_eq!(status.lines().count(), 3, "{status}");
    for url in &client {
        assert!(status.contains(url.as_str()), "{url} missing from {status}");
    }
    assert_eq!(status.lines().filter(|l| l.contains(", true, false, ")).count(), 1, "one leader: {status}");
    // etcd's initial election tick advance: each member, once both its peers answered, fast-forwarded its
    // election clock to two ticks short of the timeout.
    for i in 0..3 {
        let line = "fast-forwarding 8 ticks (election ticks 10) with 2 active peer(s)";
        assert!(cluster.log(i).contains(line), "member {i} did not advance its ticks: {}", cluster.log(i));
    }

    let leader_index = cluster.leader_index();
    cluster.procs[leader_index] = None;
    let survivor = &client[(leader_index + 1) % 3];
    eventually(Duration::from_secs(30), || try_etcdctl(survivor, &["put", "k", "v2"]));
    let other = &client[(leader_index + 2) % 3];
    assert_eq!(ok(etcdctl(other, &["get", "k", "--print-value-only"])).trim(), "v2");
}

/// Keep-alives renew a lease on the leader only, so a follower's own lessor falls behind; etcd 3.4 forwards
/// LeaseTimeToLive to the leader, and so must fake-etcd: after a keep-alive the follower reports the renewed
/// TTL, and the keys attached on the leader.
#[test]
fn a_follower_answers_lease_time_to_live_with_the_leaders_ttl() {
    let cluster = Cluster::start("lease", &["a", "b", "c"], &["etcd-cluster"; 3]);
    let client = &cluster.client;
    eventually(Duration::from_secs(20), || try_etcdctl(&client[0], &["put", "warm-up", "1"]));
    let leader = &client[cluster.leader_index()];
    let follower = &client[(cluster.leader_index() + 1) % 3];

    let lease = granted_lease(&ok(etcdctl(leader, &["lease", "grant", "10"])));
    ok(etcdctl(leader, &["put", "owned", "x", "--lease", &lease]));
    std::thread::sleep(Duration::from_millis(3500));
    ok(etcdctl(leader, &["lease", "keep-alive", "--once", &lease]));
    let on_leader = remaining_s(&ok(etcdctl(leader, &["lease", "timetolive", &lease])));
    let out = ok(etcdctl(follower, &["lease", "timetolive", &lease, "--keys"]));
    let on_follower = remaining_s(&out);
    // Without forwarding the follower would still count down from the grant: about 6 s left.
    assert!(on_follower >= 8 && on_follower <= on_leader, "follower {on_follower} s, leader {on_leader} s: {out}");
    assert!(out.contains("granted with TTL(10s)") && out.contains("attached keys([owned])"), "{out}");

    // An unknown lease is TTL -1 on a follower too, which etcdctl prints as expired.
    let out = ok(etcdctl(follower, &["lease", "timetolive", "1234abcd"]));
    assert!(out.contains("already expired"), "{out}");
}

/// Two members started with different cluster tokens belong to different clusters (the token is part of
/// every id): each refuses the other's Raft traffic and says so with etcd 3.4's log texts, neither gets a
/// leader, and no write succeeds.
#[test]
fn members_of_different_clusters_refuse_each_other() {
    let cluster = Cluster::start("mismatch", &["a", "b"], &["cluster-one", "cluster-two"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let both_said_so = || {
        let (a, b) = (cluster.log(0), cluster.log(1));
        a.contains("rafthttp: request cluster ID mismatch (got ")
            && a.contains("rafthttp: request sent was ignored (cluster ID mismatch: peer[")
            && b.contains("rafthttp: request cluster ID mismatch (got ")
            && b.contains("rafthttp: request sent was ignored (cluster ID mismatch: peer[")
    };
    while !both_said_so() {
        assert!(Instant::now() < deadline, "no mismatch logged:\n{}\n---\n{}", cluster.log(0), cluster.log(1));
        std::thread::sleep(Duration::from_millis(200));
    }
    // The receiver names both cluster ids, the sender names the peer and both ids: they must agree.
    let a = cluster.log(0);
    let line = a.lines().find(|l| l.contains("request sent was ignored")).unwrap();
    let ids = line.split("cluster ID mismatch: peer[").nth(1).unwrap();
    let (remote, local) = ids.split_once(", local=").unwrap();
    let remote = remote.split("]=").nth(1).unwrap();
    let local = local.trim_end_matches(')');
    assert_ne!(remote, local, "{line}");
    let b = cluster.log(1);
    assert!(b.contains(&format!("request cluster ID mismatch (got {local} want {remote})")), "{b}");

    let out = etcdctl(&cluster.client[0], &["--command-timeout", "3s", "put", "k", "v"]);
    assert!(!out.status.success(), "a put succeeded without a quorum");
    for i in 0..2 {
        assert!(!cluster.log(i).contains("raft: leader term="), "member {i} elected itself: {}", cluster.log(i));
    }
}

/// Every member is killed with SIGKILL (no member survives to bring the others up to date) and started again
/// on its data dir: the cluster elects a leader from what the members had synced and serves every write it
/// acknowledged, through any member.
#[test]
fn a_cluster_killed_whole_comes_back_with_every_acknowledged_write() {
    let mut cluster = Cluster::start("restart", &["a", "b", "c"], &["etcd-cluster"; 3]);
    let client = cluster.client.clone();
    eventually(Duration::from_secs(20), || try_etcdctl(&client[0], &["put", "k0", "v0"]));
    for i in 1..20 {
        ok(etcdctl(&client[i % 3], &["put", &format!("k{i}"), &format!("v{i}")]));
    }
    for p in &mut cluster.procs {
        *p = None;
    }
    for i in 0..3 {
        let member = cluster.spawn(i);
        cluster.procs[i] = Some(member);
    }
    for (i, endpoint) in client.iter().enumerate() {
        let out =
            eventually(Duration::from_secs(30), || try_etcdctl(endpoint, &["get", "--prefix", "k", "--keys-only"]));
        let keys: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(keys.len(), 20, "member {i} after the restart: {keys:?}");
    }
    eventually(Duration::from_secs(20), || try_etcdctl(&client[1], &["put", "after", "restart"]));
}

/// Auth state travels through Raft: users, roles and a permission change made through one member hold on
/// every member, after a leader change, and on a member restarted from its data dir.
#[test]
fn a_permission_change_through_one_member_holds_on_every_member_after_a_leader_change() {
    let mut cluster = Cluster::start("auth", &["a", "b", "c"], &["etcd-cluster"; 3]);
    let client = cluster.client.clone();
    eventually(Duration::from_secs(20), || try_etcdctl(&client[0], &["user", "add", "root:pw"]));
    for args in [
        &["user", "add", "alice:apw"][..],
        &["role", "add", "reader"],
        &["role", "grant-permission", "reader", "read", "--prefix", "k/"],
        &["user", "grant-role", "alice", "reader"],
        &["auth", "enable"],
    ] {
        ok(etcdctl(&client[0], args));
    }
    ok(etcdctl(&client[1], &["--user=root:pw", "put", "k/1", "v"]));
    ok(etcdctl(&client[1], &["--user=root:pw", "put", "secret", "s"]));
    let alice = |i: usize, args: &[&str]| {
        let mut all = vec!["--user=alice:apw"];
        all.extend_from_slice(args);
        try_etcdctl(&client[i], &all)
    };
    for i in 0..3 {
        assert_eq!(alice(i, &["get", "k/1", "--print-value-only"]).unwrap().trim(), "v", "member {i}");
        let denied = alice(i, &["get", "secret"]).unwrap_err();
        assert!(denied.contains("etcdserver: permission denied"), "member {i}: {denied}");
    }

    // The change goes through a member that may or may not lead; then the leader dies.
    ok(etcdctl(&client[2], &["--user=root:pw", "role", "grant-permission", "reader", "readwrite", "secret"]));
    let leader = cluster.leader_index();
    cluster.procs[leader] = None;
    let survivors: Vec<usize> = (0..3).filter(|&i| i != leader).collect();
    for &i in &survivors {
        let value = eventually(Duration::from_secs(30), || alice(i, &["get", "secret", "--print-value-only"]));
        assert_eq!(value.trim(), "s", "member {i} after the leader change");
    }
    alice(survivors[0], &["put", "secret", "t"]).unwrap_or_else(|e| panic!("the new write permission: {e}"));
    // A revoke through one survivor is refused on the other at once (its apply checks the new state).
    ok(etcdctl(&client[survivors[0]], &["--user=root:pw", "role", "revoke-permission", "reader", "secret"]));
    let denied = alice(survivors[1], &["get", "secret"]).unwrap_err();
    assert!(denied.contains("etcdserver: permission denied"), "{denied}");

    // The old leader comes back from its data dir with the auth state it had and catches up on the rest.
    let member = cluster.spawn(leader);
    cluster.procs[leader] = Some(member);
    let value = eventually(Duration::from_secs(30), || alice(leader, &["get", "k/1", "--print-value-only"]));
    assert_eq!(value.trim(), "v");
    let denied = eventually(Duration::from_secs(30), || match alice(leader, &["get", "secret"]) {
        Ok(out) => Err(format!("still readable: {out}")),
        Err(e) => Ok(e),
    });
    assert!(denied.contains("etcdserver: permission denied"), "{denied}");
    let users = ok(etcdctl(&client[leader], &["--user=root:pw", "user", "list"]));
    assert_eq!(users.split_whitespace().collect::<Vec<_>>(), ["alice", "root"]);
}
