//! The sweep: the standard run (1 member, 8 clients, Kubernetes-like traffic, random nemesis) passes every
//! checker for many seeds. `KUBESIM_SEEDS=n` sets how many (default 200), `KUBESIM_SEED=s` runs only seed s.
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
            failed.push(format!("seed {seed}: {:?} (replay: cargo kubesim run --seed {seed})", report.verdict_lines()));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn kubernetes_traffic_with_the_nemesis_passes_every_checker() {
    sweep(|seed| {
        let mut c = RunConfig::standard(seed);
        c.ops = 400;
        c
    });
}

#[test]
fn key_value_traffic_with_the_nemesis_passes_every_checker() {
    sweep(|seed| {
        let mut c = RunConfig::standard(seed);
        c.workload = Workload::KeyValue;
        c.ops = 200;
        c
    });
}
