//! The sweep: the standard run (1 member, 8 clients, 1,000 Kubernetes-like requests, random nemesis) passes
//! every checker for many seeds, and so do the same traffic on a 3-member Raft cluster (the nemesis then
//! kills, restarts, pauses and partitions members, so leaders change mid-run) and the key-value traffic
//! (at 500 requests). `KUBESIM_SEEDS=n` sets
//! how many (default 200, issue 3's requirement; nightly raises it), `KUBESIM_SEED=s` runs only seed s.
#![cfg(madsim)]

use sim::run::{run, RunConfig};
use sim::workload::Workload;

fn seeds() -> Vec<u64> {
    if let Some(s) = std::env::var("KUBESIM_SEED").ok().and_then(|s| s.parse().ok()) {
        return vec![s];
    }
    let n = std::env::var("KUBESIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    (1..=n).collect()
}

fn sweep(config: impl Fn(u64) -> RunConfig) {
    let mut failed = Vec::new();
    for seed in seeds() {
        let report = run(&config(seed)).unwrap();
        if !report.passed() {
            let c = config(seed);
            failed.push(format!(
                "seed {seed}: {:?} (replay: cargo kubesim traffic --seed {seed} --members {})",
                report.verdict_lines(),
                c.cluster.members
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
    sweep(|seed| {
        let mut c = RunConfig::standard(seed);
        c.cluster.members = 3;
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
