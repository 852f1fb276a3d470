//! The sweep: the standard run (1 member, 8 clients, 1,000 Kubernetes-like requests, random nemesis) passes
//! every checker for many seeds, and so do the same traffic on 3- and 5-member Raft clusters (the nemesis
//! then kills, restarts, pauses and partitions members, so leaders change mid-run) and the key-value traffic
//! (at 500 requests). Seeds per test by default: 200 for one member, 300 on three members and 200 on five
//! (500 multi-member seeds in CI, issue 4's requirement). `KUBESIM_SEEDS=n` sets every test's count (the
//! nightly raises it), `KUBESIM_SEED=s` runs only seed s.
#![cfg(madsim)]

use sim::run::{run, RunConfig};
use sim::workload::Workload;

fn seeds(default: u64) -> Vec<u64> {
    if let Some(s) = std::env::var("KUBESIM_SEED").ok().and_then(|s| s.parse().ok()) {
        return vec![s];
    }
    let n = std::env::var("KUBESIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(default);
    (1..=n).collect()
}

fn sweep(config: impl Fn(u64) -> RunConfig) {
    sweep_n(200, config)
}

fn sweep_n(default_seeds: u64, config: impl Fn(u64) -> RunConfig) {
    let mut failed = Vec::new();
    for seed in seeds(default_seeds) {
        let report = run(&config(seed)).unwrap();
        if !report.passed() {
            let c = config(seed);
            failed.push(format!(
                "seed {seed}: {:?} (replay: cargo kubesim traffic --seed {seed} --members {} --ops {})",
                report.verdict_lines(),
                c.cluster.members,
                c.ops
            ));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn kubernetes_traffic_with_the_nemesis_passes_every_checker() {
    sweep(RunConfig::standard);
}

#[test]
fn kubernetes_traffic_on_three_members_with_the_nemesis_passes_every_checker() {
    sweep_n(300, |seed| {
        let mut c = RunConfig::standard(seed);
        c.cluster.members = 3;
        c
    });
}

#[test]
fn kubernetes_traffic_on_five_members_with_the_nemesis_passes_every_checker() {
    sweep_n(200, |seed| {
        let mut c = RunConfig::standard(seed);
        c.cluster.members = 5;
        // 400 requests keep a seed near 0.1 s; at 1,000 a few seeds take over a second each, in the
        // linearizability search around the many unknown outcomes that two members down at once leave.
        c.ops = 400;
        c
    });
}

#[test]
fn key_value_traffic_with_the_nemesis_passes_every_checker() {
    sweep(|seed| {
        let mut c = RunConfig::standard(seed);
        c.workload = Workload::KeyValue;
        // At 1,000 requests a few seeds in 200 exhaust the linearizability search's budget (`Unknown`):
        // plain puts that time out leave the search more places to try than the Kubernetes txns do.
        c.ops = 500;
        c
    });
}
