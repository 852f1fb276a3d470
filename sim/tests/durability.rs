//! The durability bug, caught: members whose disk skips fsync (the `skip-sync` bug switch) lose what they
//! acknowledged when the nemesis kills them, and a 3-member run under the nemesis must then fail, through a
//! member panic (raft-rs refuses a commit index beyond a log the member lost) or a checker. The same seeds
//! with a disk that syncs pass (`seeds.rs` runs 200 of them). This is the case that proves the harness can
//! see a lost fsync at all.
#![cfg(madsim)]

use sim::fault::nemesis::Pattern;
use sim::run::{run, RunConfig};

fn config(seed: u64, skip_sync: bool) -> RunConfig {
    let mut c = RunConfig::standard(seed);
    c.cluster.members = 3;
    if skip_sync {
        c.cluster.bugs.etcd.insert(fake_etcd::bug::Bug::SkipSync);
    }
    c.ops = 1000;
    // Kills are what lose unsynced writes; the other patterns only dilute them.
    c.nemesis_config.patterns = vec![Pattern::Kill];
    c
}

#[test]
fn skipping_fsync_is_caught_and_syncing_is_not() {
    let seeds = 1..=10;
    let mut caught = Vec::new();
    for seed in seeds.clone() {
        let report = run(&config(seed, true)).unwrap();
        if !report.passed() {
            caught
                .push((seed, report.verdict_lines().into_iter().filter(|l| !l.ends_with(" pass")).collect::<Vec<_>>()));
        }
    }
    assert!(!caught.is_empty(), "no seed of {seeds:?} caught the skipped fsync");
    for (seed, _) in &caught {
        let control = run(&config(*seed, false)).unwrap();
        assert!(control.passed(), "seed {seed} fails even with fsync: {:?}", control.verdict_lines());
    }
    println!("caught on {} of 10 seeds: {caught:?}", caught.len());
}
