//! Raft's safety properties over 200 seeds of chaos (random cluster size, pre-vote on or off, lossy and
//! reordering network, partitions, crashes, power loss, snapshots and compaction), checked by the harness:
//! - election safety: at most one leader per term;
//! - log matching: logs that agree on an entry's index and term agree on everything before it;
//! - leader completeness: a new leader holds every entry applied anywhere before it was elected;
//! - state-machine safety: every member applies the same entry at each index;
//! - durability: every acknowledged proposal is applied on the members that caught up.
//!
//! Also: the same seed gives the same run, which is what lets a failing seed replay.

mod raft_harness;

use raft_harness::workload::{self, Chaos};
use raft_harness::{Cluster, ClusterOptions, NetFaults};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SEEDS: u64 = 200;

fn chaos_cluster(seed: u64) -> Cluster {
    // The shape of the run is drawn from its own stream, so it does not shift the cluster's.
    let mut shape = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_5eed);
    let mut opts = ClusterOptions::new(if shape.random_bool(0.5) { 3 } else { 5 });
    opts.pre_vote = shape.random_bool(0.5);
    opts.net = NetFaults {
        drop_per_mille: shape.random_range(0..150),
        duplicate_per_mille: shape.random_range(0..100),
        max_delay_ticks: shape.random_range(0..4),
    };
    opts.snapshot_threshold_entries = shape.random_range(5..30);
    opts.snapshot_catch_up_entries = shape.random_range(0..5);
    let chaos = Chaos {
        ticks: 300,
        propose_per_mille: shape.random_range(100..500),
        fault_per_mille: shape.random_range(5..40),
        power_loss: shape.random_bool(0.3),
    };
    let mut c = Cluster::new(seed, opts);
    workload::run(&mut c, &chaos);
    c.check_acked_durable();
    c
}

#[test]
fn raft_safety_holds_over_200_seeds_of_chaos() {
    let mut acked = 0;
    let mut terms = 0;
    for seed in 0..SEEDS {
        let mut c = chaos_cluster(seed);
        c.assert_safe(seed);
        acked += c.acked.len();
        terms += c.leaders.len();
    }
    // The runs did real work: elections happened and proposals committed.
    assert!(acked > 10 * SEEDS as usize, "only {acked} acknowledged proposals over {SEEDS} seeds");
    assert!(terms > 2 * SEEDS as usize, "only {terms} leader terms over {SEEDS} seeds");
}

#[test]
fn the_same_seed_gives_the_same_run() {
    for seed in [3, 11] {
        let a = chaos_cluster(seed);
        let b = chaos_cluster(seed);
        assert_eq!(a.leaders, b.leaders, "seed {seed}: leaders differ");
        assert_eq!(a.committed, b.committed, "seed {seed}: committed entries differ");
        assert_eq!(a.acked, b.acked, "seed {seed}: acknowledged proposals differ");
        assert_eq!(a.now, b.now);
    }
    // And different seeds give different runs (the seed is actually used).
    assert_ne!(chaos_cluster(3).committed, chaos_cluster(4).committed);
}
