//! The apiserver simulation over many seeds: the registry (with the watch cache, and without) over a
//! 3-member fake-etcd cluster under leader partitions, member kills and compactions. Per seed: the cached
//! run twice and the uncached run twice (each pair's traces must match byte for byte); every run's watches and
//! consistent reads are checked against etcd's record, and the scripted client's outcomes must agree
//! between the two modes. A negative test drops one cacher dispatch and expects the watch checker to notice.
//!
//! `KUBESIM_SEED=N cargo sim-test --test apiserver` runs seed N only; `KUBESIM_APISERVER_SEEDS=N` sets how
//! many seeds the sweep covers (default 200); `KUBESIM_TRACE=1` prints each seed's trace (with the cache).
#![cfg(madsim)]

use apiserver::failpoint::{Action, Arm, Point};
use sim::apiserver::{simulate, ApiRunConfig};
use sim::checker::apiserver::{cache_parity, ApiGuarantee};

/// What the checkers had to work with, summed over seeds, so that a sweep shows it checked something.
#[derive(Default)]
struct Coverage {
    seeds: u64,
    definite_writes: usize,
    consistent_reads: usize,
    watches_with_events: usize,
    watch_events: usize,
    expired_watches: usize,
    script_steps_compared: usize,
    script_steps: usize,
}

impl Coverage {
    fn add(&mut self, run: &sim::apiserver::ApiRun) {
        use sim::history::apiserver::{ApiOutcome as O, WatchEnd};
        let h = &run.history;
        self.definite_writes += h
            .ops
            .iter()
            .filter(|o| o.call.is_write() && matches!(o.outcome, O::Written { .. } | O::Deleted { .. }))
            .count();
        self.consistent_reads +=
            h.ops.iter().filter(|o| matches!(o.outcome, O::Found { .. } | O::Listed { .. })).count();
        self.watches_with_events += h.watches.iter().filter(|w| !w.events.is_empty()).count();
        self.watch_events += h.watches.iter().map(|w| w.events.len()).sum::<usize>();
        self.expired_watches += h.watches.iter().filter(|w| w.end == WatchEnd::Expired).count();
    }
}

/// Everything wrong with one seed: a trace difference between two identical runs, or a broken guarantee.
fn problems(seed: u64, coverage: &mut Coverage) -> Vec<String> {
    let config = ApiRunConfig::standard(seed);
    let cached = simulate(&config);
    let again = simulate(&config);
    if std::env::var("KUBESIM_TRACE").is_ok() {
        println!("{}", cached.trace.join("\n"));
    }
    let mut found = Vec::new();
    if cached.trace != again.trace {
        let at = cached
            .trace
            .iter()
            .zip(&again.trace)
            .position(|(a, b)| a != b)
            .unwrap_or(cached.trace.len().min(again.trace.len()));
        found.push(format!(
            "nondeterministic: traces differ at line {at}: {:?} vs {:?}",
            cached.trace.get(at),
            again.trace.get(at)
        ));
    }
    let uncached = simulate(&ApiRunConfig { cache: false, ..config.clone() });
    if uncached.trace != simulate(&ApiRunConfig { cache: false, ..config }).trace {
        found.push("nondeterministic: two runs without the cache gave different traces".into());
    }
    found.extend(cached.check().iter().map(|v| format!("with the cache: {v}")));
    found.extend(uncached.check().iter().map(|v| format!("without the cache: {v}")));
    let (parity, compared) = cache_parity::compare(&cached.script(), &uncached.script());
    found.extend(parity.iter().map(|v| v.to_string()));
    coverage.seeds += 1;
    coverage.add(&cached);
    coverage.add(&uncached);
    coverage.script_steps_compared += compared;
    coverage.script_steps += cached.script().len();
    found
}

fn seeds(range: std::ops::Range<u64>) -> Vec<u64> {
    if let Ok(seed) = std::env::var("KUBESIM_SEED") {
        let seed: u64 = seed.parse().expect("KUBESIM_SEED is a number");
        return if range.contains(&seed) { vec![seed] } else { vec![] };
    }
    let total: u64 = std::env::var("KUBESIM_APISERVER_SEEDS").map_or(200, |n| n.parse().expect("a seed count"));
    range.filter(|s| *s < total).collect()
}

/// Runs the seeds of one shard (the shards are separate tests so that libtest runs them in parallel).
fn sweep(shard: u64) {
    const SHARDS: u64 = 4;
    let total: u64 = std::env::var("KUBESIM_APISERVER_SEEDS").map_or(200, |n| n.parse().expect("a seed count"));
    let per = total.div_ceil(SHARDS).max(1);
    let mut failed = Vec::new();
    let mut c = Coverage::default();
    for seed in seeds(shard * per..(shard + 1) * per) {
        for p in problems(seed, &mut c) {
            failed.push(format!("seed {seed}: {p}\n  replay: KUBESIM_SEED={seed} cargo sim-test --test apiserver"));
        }
    }
    println!(
        "shard {shard}: {} seeds; {} acknowledged writes, {} consistent reads, {} watch events in {} watches ({} ended \
         410), {}/{} scripted steps compared",
        c.seeds,
        c.definite_writes,
        c.consistent_reads,
        c.watch_events,
        c.watches_with_events,
        c.expired_watches,
        c.script_steps_compared,
        c.script_steps
    );
    assert!(failed.is_empty(), "{} problems over {} seeds:\n{}", failed.len(), c.seeds, failed.join("\n"));
}

#[test]
fn apiserver_seeds_shard_0() {
    sweep(0);
}

#[test]
fn apiserver_seeds_shard_1() {
    sweep(1);
}

#[test]
fn apiserver_seeds_shard_2() {
    sweep(2);
}

#[test]
fn apiserver_seeds_shard_3() {
    sweep(3);
}

/// The bug switch: the cacher loses one event before dispatch. Some seed's watch must show the gap.
#[test]
fn a_dropped_cacher_dispatch_is_caught_by_the_watch_checker() {
    let mut caught = Vec::new();
    for seed in 0..10 {
        let mut config = ApiRunConfig::standard(seed);
        config.faults = false;
        config.failpoints = vec![(Point::BeforeCacherDispatch, Arm { action: Action::Drop, skip: 12, times: Some(1) })];
        let run = simulate(&config);
        assert!(
            run.trace.iter().any(|l| l.contains("failpoint before-cacher-dispatch drop")),
            "seed {seed}: the drop never fired"
        );
        let found: Vec<_> =
            run.check().into_iter().filter(|v| v.guarantee == ApiGuarantee::WatchFromResourceVersion).collect();
        if let Some(v) = found.first() {
            caught.push(format!("seed {seed}: {v}"));
        }
    }
    println!("{}", caught.join("\n"));
    assert!(!caught.is_empty(), "no seed's watch checker noticed the dropped event");
}

/// The bug switch of the spurious 409 (kubernetes #59848 and its kin): the etcd3 store reports what a stale
/// cached suggestion says instead of re-reading. Only runs with the cache have stale suggestions, so some
/// seed's scripted outcomes must differ between the two modes. The cache lags behind etcd by 200 ms per
/// event here (a delay at the cacher's dispatch), as a loaded apiserver's does: over HTTP a client's next
/// request rarely beats the watch event otherwise. The same lag without the bug switch keeps the outcomes
/// equal, so what the checker catches is the bug, not the lag.
#[test]
fn trusting_a_stale_cached_suggestion_is_caught_by_the_cache_parity_checker() {
    let lag = (Point::BeforeCacherDispatch, Arm::always(Action::Delay(std::time::Duration::from_millis(200))));
    let mut caught = Vec::new();
    for seed in 0..10 {
        let mut config = ApiRunConfig::standard(seed);
        config.faults = false;
        let uncached = simulate(&ApiRunConfig { cache: false, ..config.clone() });
        config.failpoints = vec![lag.clone()];
        let lagging = simulate(&config);
        let innocent = cache_parity::check(&lagging.script(), &uncached.script());
        assert!(innocent.is_empty(), "seed {seed}: a lagging cache alone changed an outcome: {innocent:?}");
        config.failpoints = vec![lag.clone(), (Point::BeforeUpdateReread, Arm::always(Action::Drop))];
        let buggy = simulate(&config);
        if let Some(v) = cache_parity::check(&buggy.script(), &uncached.script()).first() {
            caught.push(format!("seed {seed}: {v}"));
        }
    }
    println!("{}", caught.join("\n"));
    assert!(!caught.is_empty(), "no seed's scripted outcomes differed between the modes");
}
