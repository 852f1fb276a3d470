//! Three `fake-etcd` processes started with `--initial-cluster` form one Raft cluster that real etcdctl
//! 3.4 uses through any member: writes through one member are read through the others, `member list` sees
//! all three with their published client URLs, and writes still succeed after the leader is killed (the
//! leader is the member whose log last says "raft: leader term=").
#![cfg(not(madsim))]

use std::fs::File;
use std::net::TcpListener;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

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

#[test]
fn three_processes_form_a_cluster_that_survives_its_leader() {
    let names = ["a", "b", "c"];
    let client: Vec<String> = names.iter().map(|_| format!("http://127.0.0.1:{}", free_port())).collect();
    let peer: Vec<String> = names.iter().map(|_| format!("http://127.0.0.1:{}", free_port())).collect();
    let initial: Vec<String> = names.iter().zip(&peer).map(|(n, p)| format!("{n}={p}")).collect();
    let initial = initial.join(",");
    let dir = std::env::temp_dir().join(format!("fake-etcd-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = |i: usize| dir.join(format!("{}.log", names[i]));
    let mut procs: Vec<Option<Proc>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let child = Command::new(env!("CARGO_BIN_EXE_fake-etcd"))
                .args(["--name", name, "--listen-client-urls", &client[i], "--advertise-client-urls", &client[i]])
                .args(["--listen-peer-urls", &peer[i], "--initial-advertise-peer-urls", &peer[i]])
                .args(["--initial-cluster", &initial, "--log-level", "info"])
                .stderr(File::create(log(i)).unwrap())
                .spawn()
                .unwrap();
            Some(Proc(child))
        })
        .collect();

    eventually(Duration::from_secs(20), || try_etcdctl(&client[0], &["put", "k", "v1"]));
    assert_eq!(ok(etcdctl(&client[1], &["get", "k", "--print-value-only"])).trim(), "v1");
    assert_eq!(ok(etcdctl(&client[2], &["get", "k", "--print-value-only", "--consistency=s"])).trim(), "v1");

    let list = ok(etcdctl(&client[2], &["member", "list"]));
    for (i, name) in names.iter().enumerate() {
        let line = list.lines().find(|l| l.contains(&format!(", {name}, "))).unwrap_or_else(|| panic!("{list}"));
        assert!(line.contains(&peer[i]) && line.contains(&client[i]), "{line}");
    }

    // The leader of the highest term any member reached leads now (terms only grow, one leader per term).
    let leader_index = (0..3)
        .filter_map(|i| {
            let text = std::fs::read_to_string(log(i)).unwrap();
            let term = text.lines().filter_map(|l| l.split("raft: leader term=").nth(1)).last()?;
            Some((term.trim().parse::<u64>().unwrap(), i))
        })
        .max()
        .expect("some member logged its election")
        .1;
    procs[leader_index] = None;
    let survivor = &client[(leader_index + 1) % 3];
    eventually(Duration::from_secs(30), || try_etcdctl(survivor, &["put", "k", "v2"]));
    let other = &client[(leader_index + 2) % 3];
    assert_eq!(ok(etcdctl(other, &["get", "k", "--print-value-only"])).trim(), "v2");
}
