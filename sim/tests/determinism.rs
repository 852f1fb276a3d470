//! The determinism guard (ARCHITECTURE.md, Determinism): a seed run twice in this process, and once in a separate process
//! (the `kubesim` binary), gives the same trace, byte for byte, for a run with faults and failpoints.
#![cfg(madsim)]

use std::process::Command;

use fake_etcd::failpoint::Action;
use sim::run::{failpoint, simulate, RunConfig};

fn faulty(seed: u64) -> RunConfig {
    let mut c = RunConfig::standard(seed);
    c.ops = 300;
    c.failpoints = vec![failpoint(
        "etcd-1",
        "before-write-ack",
        Action::Delay(std::time::Duration::from_millis(30)),
        10,
        Some(20),
    )];
    c
}

#[test]
fn same_seed_twice_in_one_process_gives_the_same_trace() {
    for seed in [3, 17] {
        let a = simulate(&faulty(seed)).unwrap();
        let b = simulate(&faulty(seed)).unwrap();
        assert!(a.trace.iter().any(|l| l.contains(" fault ")), "seed {seed}: the run must include faults");
        assert!(a.trace.iter().any(|l| l.contains("failpoint")), "seed {seed}: the failpoint must fire");
        assert_eq!(a.trace, b.trace, "seed {seed}: traces differ");
        assert_eq!(a.history, b.history, "seed {seed}: histories differ");
    }
}

#[test]
fn different_seeds_give_different_traces() {
    let a = simulate(&faulty(5)).unwrap();
    let b = simulate(&faulty(6)).unwrap();
    assert_ne!(a.trace_hash(), b.trace_hash());
}

#[test]
fn a_separate_process_gives_the_same_trace_hash() {
    let seed = 23;
    let here = simulate(&faulty(seed)).unwrap().trace_hash();
    let hash_in_new_process = || {
        let out = Command::new(env!("CARGO_BIN_EXE_kubesim"))
            .args(["traffic", "--seed", &seed.to_string(), "--ops", "300", "--hash-only"])
            .args(["--failpoint", "etcd-1:before-write-ack:delay-30:10:20"])
            .output()
            .expect("run kubesim");
        assert!(out.status.success(), "kubesim failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let first = hash_in_new_process();
    assert_eq!(first, hash_in_new_process(), "two processes disagree");
    assert_eq!(first, here, "a separate process disagrees with this one");
}
