//! The random nemesis: a seeded schedule of faults over a run. Each round picks one pattern, applies it,
//! holds it for a while and undoes it, then leaves the cluster quiet for a while; every step is a fault
//! line in the trace. Patterns:
//! - a symmetric partition of all nodes into two random sides;
//! - a one-way partition between a member and some clients;
//! - one clogged node;
//! - swizzle-clogging (FoundationDB's pattern): clog a random subset of nodes one by one, hold, then
//!   unclog them one by one in a different random order;
//! - packet loss; added latency;
//! - kill a member and restart it; pause a member and resume it (a member or an apiserver, when the cluster
//!   has apiservers; or a controller manager or a node's kubelet, when it has those);
//! - only when a scenario lists them: a leader partition (the member that leads cut off from the other
//!   members, as the old apiserver simulation's nemesis did) and a compaction (at a revision a little below
//!   the newest, never past a [`Horizon`] such as the apiserver record's, so that the record is never cut).
//!
//! Apiservers, controller managers and kubelets are nodes like the others for the partitions, clogs and
//! swizzles. A cluster without them draws exactly what it drew before they existed, so that etcd-only runs
//! keep their schedules (and a cluster with apiservers only, its own).
//!
//! All randomness comes from the stream the caller derives from the root seed. [`NemesisConfig`] holds the
//! knobs a scenario can turn: which patterns to draw from, and how long to stay quiet between rounds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Fault, Injector};

/// One of the nemesis's fault patterns. The order is the draw order: with the default patterns, round `n`
/// picks `DEFAULT[random_range(0..8)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pattern {
    Partition,
    OneWay,
    Clog,
    Swizzle,
    Loss,
    Latency,
    Kill,
    Pause,
    LeaderPartition,
    Compact,
}

impl Pattern {
    /// Every pattern.
    pub const ALL: [Pattern; 10] = [
        Pattern::Partition,
        Pattern::OneWay,
        Pattern::Clog,
        Pattern::Swizzle,
        Pattern::Loss,
        Pattern::Latency,
        Pattern::Kill,
        Pattern::Pause,
        Pattern::LeaderPartition,
        Pattern::Compact,
    ];

    /// The patterns a nemesis draws from when a scenario names none: the network and process faults. The
    /// leader partition and the compaction came later and are drawn only when named, so that the default
    /// schedules (and every snapshot made from them) stay what they were.
    pub const DEFAULT: [Pattern; 8] = [
        Pattern::Partition,
        Pattern::OneWay,
        Pattern::Clog,
        Pattern::Swizzle,
        Pattern::Loss,
        Pattern::Latency,
        Pattern::Kill,
        Pattern::Pause,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Partition => "partition",
            Pattern::OneWay => "one-way",
            Pattern::Clog => "clog",
            Pattern::Swizzle => "swizzle",
            Pattern::Loss => "loss",
            Pattern::Latency => "latency",
            Pattern::Kill => "kill",
            Pattern::Pause => "pause",
            Pattern::LeaderPartition => "leader-partition",
            Pattern::Compact => "compact",
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Pattern, String> {
        Pattern::ALL.iter().copied().find(|p| p.name() == s).ok_or_else(|| {
            let known: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
            format!("no nemesis pattern is named {s:?}; expected one of: {}", known.join(", "))
        })
    }
}

/// The nemesis's knobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NemesisConfig {
    /// The patterns rounds draw from, in [`Pattern::ALL`] order, without repeats.
    pub patterns: Vec<Pattern>,
    /// The quiet time between rounds is drawn from `[min, max)` milliseconds.
    pub quiet_ms: (u64, u64),
    /// The client step after which the first round starts (`None`: at once). The scenario runner waits for
    /// it before starting [`run`].
    pub after: Option<String>,
}

impl Default for NemesisConfig {
    fn default() -> NemesisConfig {
        NemesisConfig { patterns: Pattern::DEFAULT.to_vec(), quiet_ms: (200, 1500), after: None }
    }
}

async fn sleep_ms(rng: &mut ChaCha8Rng, lo: u64, hi: u64) {
    madsim::time::sleep(Duration::from_millis(rng.random_range(lo..hi))).await;
}

/// The revision compactions must not pass (a record that watches etcd and must not be compacted away), read
/// when a compaction is drawn.
pub type Horizon = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Runs rounds until `stop` is set, then heals everything it broke. Compactions stay at or below `horizon`
/// when there is one.
pub async fn run(
    faults: Injector,
    config: NemesisConfig,
    mut rng: ChaCha8Rng,
    stop: Arc<AtomicBool>,
    horizon: Option<Horizon>,
) {
    assert!(!config.patterns.is_empty(), "a nemesis needs a pattern (validated)");
    // Let the clients get going before the first fault.
    sleep_ms(&mut rng, 100, 600).await;
    // The revision of the last compaction that took effect: the next must go further to be one.
    let mut compacted = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let pattern = config.patterns[rng.random_range(0..config.patterns.len())];
        match pattern {
            Pattern::LeaderPartition => leader_partition(&faults, &mut rng).await,
            Pattern::Compact => compact(&faults, &mut rng, horizon.as_ref(), &mut compacted).await,
            _ => round(&faults, pattern, &mut rng).await,
        }
        sleep_ms(&mut rng, config.quiet_ms.0, config.quiet_ms.1).await;
    }
    faults.apply(&Fault::Heal);
}

async fn round(faults: &Injector, pattern: Pattern, rng: &mut ChaCha8Rng) {
    let members = faults.cluster().member_names();
    let clients = faults.cluster().client_names();
    let apiservers = faults.cluster().apiserver_names();
    // The control plane's other processes: controller managers (with their schedulers) and kubelets.
    let mut agents = faults.cluster().controller_manager_names();
    agents.extend(faults.cluster().kubelet_names());
    let mut all = members.clone();
    all.extend(apiservers.iter().cloned());
    all.extend(clients.iter().cloned());
    all.extend(agents.iter().cloned());
    let member = members.choose(rng).expect("a cluster has members").clone();
    // The process a kill or a pause hits: a member, or with apiservers (and agents) in the cluster any of them.
    let server = |rng: &mut ChaCha8Rng| match apiservers.is_empty() && agents.is_empty() {
        true => member.clone(),
        false => members
            .iter()
            .chain(&apiservers)
            .chain(&agents)
            .collect::<Vec<_>>()
            .choose(rng)
            .map(|s| (*s).clone())
            .expect("servers"),
    };
    match pattern {
        Pattern::Partition => {
            all.shuffle(rng);
            let cut = rng.random_range(1..all.len().max(2));
            let (left, right) = all.split_at(cut.min(all.len()));
            let (mut left, mut right) = (left.to_vec(), right.to_vec());
            left.sort();
            right.sort();
            faults.apply(&Fault::Partition { left, right });
            sleep_ms(rng, 300, 3000).await;
            faults.apply(&Fault::Heal);
        }
        Pattern::OneWay => {
            let mut some: Vec<String> = clients.iter().filter(|_| rng.random_bool(0.5)).cloned().collect();
            if some.is_empty() {
                some.push(clients.choose(rng).expect("a run has clients").clone());
            }
            let fault = if rng.random_bool(0.5) {
                Fault::PartitionOneWay { from: vec![member], to: some }
            } else {
                Fault::PartitionOneWay { from: some, to: vec![member] }
            };
            faults.apply(&fault);
            sleep_ms(rng, 300, 3000).await;
            faults.apply(&Fault::Heal);
        }
        Pattern::Clog => {
            let node = all.choose(rng).expect("nodes").clone();
            faults.apply(&Fault::ClogNode(node.clone()));
            sleep_ms(rng, 300, 2000).await;
            faults.apply(&Fault::UnclogNode(node));
        }
        Pattern::Swizzle => swizzle(faults, rng, all).await,
        Pattern::Loss => {
            faults.apply(&Fault::PacketLoss { loss_permille: rng.random_range(50..400) });
            sleep_ms(rng, 300, 2000).await;
            faults.apply(&Fault::Heal);
        }
        Pattern::Latency => {
            let min_ms = rng.random_range(1..20);
            faults.apply(&Fault::Latency { min_ms, max_ms: min_ms + rng.random_range(10..300) });
            sleep_ms(rng, 300, 2000).await;
            faults.apply(&Fault::Heal);
        }
        Pattern::Kill => {
            let server = server(rng);
            faults.apply(&Fault::Kill(server.clone()));
            sleep_ms(rng, 200, 2000).await;
            faults.apply(&Fault::Restart(server));
        }
        Pattern::Pause => {
            let server = server(rng);
            faults.apply(&Fault::Pause(server.clone()));
            sleep_ms(rng, 200, 2000).await;
            faults.apply(&Fault::Resume(server));
        }
        Pattern::LeaderPartition | Pattern::Compact => unreachable!("drawn in `run`, which asks etcd for them"),
    }
}

/// The leader cut off from the other members for a while, then healed: the others elect a new leader and
/// the old one's clients stall. No leader known (an election under way): the round passes.
async fn leader_partition(faults: &Injector, rng: &mut ChaCha8Rng) {
    let cluster = faults.cluster();
    if let Some(leader) = super::etcd::leader(cluster).await {
        let others = cluster.member_names().into_iter().filter(|m| *m != leader).collect();
        faults.apply(&Fault::Partition { left: vec![leader], right: others });
        sleep_ms(rng, 300, 1200).await;
        faults.apply(&Fault::Heal);
    }
}

/// A compaction a few revisions below the newest (or below the horizon), leaving some history so that
/// watches from recent revisions still start and older ones must be refused.
async fn compact(faults: &Injector, rng: &mut ChaCha8Rng, horizon: Option<&Horizon>, compacted: &mut u64) {
    let cluster = faults.cluster();
    let newest = match horizon {
        Some(h) => h(),
        None => super::etcd::current_revision(cluster).await,
    };
    let target = newest.saturating_sub(rng.random_range(0..6));
    if target > *compacted && super::etcd::compact(cluster, target).await {
        *compacted = target;
    }
}

/// Clog a random subset one node at a time, hold, unclog one at a time in another random order.
async fn swizzle(faults: &Injector, rng: &mut ChaCha8Rng, mut nodes: Vec<String>) {
    nodes.shuffle(rng);
    let count = rng.random_range(1..=nodes.len());
    let mut chosen: Vec<String> = nodes.into_iter().take(count).collect();
    for n in &chosen {
        faults.apply(&Fault::ClogNode(n.clone()));
        sleep_ms(rng, 50, 500).await;
    }
    sleep_ms(rng, 200, 1500).await;
    chosen.shuffle(rng);
    for n in chosen {
        faults.apply(&Fault::UnclogNode(n));
        sleep_ms(rng, 50, 500).await;
    }
}
