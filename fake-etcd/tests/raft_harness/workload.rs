//! A seeded chaos workload over a [`Cluster`]: proposals through random members, crashes of one member or
//! of all (power loss), restarts, partitions and heals, all drawn from the cluster's seeded RNG. After the
//! chaos the network heals, every member comes back, and the cluster runs until it has settled.

use fake_etcd::MemberId;
use rand::Rng;

use super::Cluster;

pub struct Chaos {
    pub ticks: u64,
    /// Chance per tick of a proposal, per mille.
    pub propose_per_mille: u32,
    /// Chance per tick of a fault event, per mille.
    pub fault_per_mille: u32,
    /// Whether a fault may crash every member at once.
    pub power_loss: bool,
}

pub fn run(c: &mut Cluster, chaos: &Chaos) {
    for _ in 0..chaos.ticks {
        if c.rng.random_range(0..1000) < chaos.propose_per_mille {
            let live: Vec<MemberId> = c.ids().into_iter().filter(|&id| c.is_up(id)).collect();
            if !live.is_empty() {
                let via = live[c.rng.random_range(0..live.len())];
                c.propose(via);
            }
        }
        if c.rng.random_range(0..1000) < chaos.fault_per_mille {
            fault(c, chaos.power_loss);
        }
        c.tick();
    }
    settle(c);
}

fn fault(c: &mut Cluster, power_loss: bool) {
    let ids = c.ids();
    let pick = ids[c.rng.random_range(0..ids.len())];
    match c.rng.random_range(0..8) {
        // A quick restart: the member comes back within the tick, while messages it sent or was sent in its
        // previous life are still in flight (this is what catches a vote or term that was not synced).
        6 | 7 => {
            if c.is_up(pick) {
                c.restart(pick);
            }
        }
        0 | 1 => {
            if c.is_up(pick) {
                c.crash(pick);
            } else {
                c.start(pick);
            }
        }
        2 if power_loss => {
            // Every member loses power at the same moment and comes back at once.
            for &id in &ids {
                if c.is_up(id) {
                    c.crash(id);
                }
            }
            for &id in &ids {
                c.start(id);
            }
        }
        3 => c.isolate(pick),
        4 => {
            let split = c.rng.random_range(1..ids.len());
            c.partition(&ids[..split], &ids[split..]);
        }
        2 => {}
        5 => c.heal(),
        _ => unreachable!(),
    }
}

/// Heals everything, restarts every member that is down, and runs until the cluster has a leader and every
/// member has applied the same prefix (or 600 ticks pass).
pub fn settle(c: &mut Cluster) {
    c.heal();
    for id in c.ids() {
        if !c.is_up(id) {
            c.start(id);
        }
    }
    c.run_until(600, |c| {
        let Some(leader) = c.leader() else { return false };
        let top = c.node(leader).status().commit;
        let live = c.ids().into_iter().filter(|&id| c.is_up(id));
        live.collect::<Vec<_>>()
            .iter()
            .all(|&id| c.node(id).status().applied == top && c.node(id).status().commit == top)
    });
    // A few proposals through the settled leader, so every run acknowledges something, and a few more
    // ticks so that they reach everyone.
    if let Some(leader) = c.leader() {
        for _ in 0..5 {
            c.propose(leader);
        }
    }
    c.run(20);
}
