//! Faults aimed at roles: a scenario's fault may name a node by what it is when the fault applies, not by
//! name: `leader` (the member that leads then, by etcd's Status), `follower` (a member that does not, drawn
//! from the seed), and, for an isolation, `rest` (every node not on the other side), for a cut from peers,
//! `peers` (every member not on the other side). [`resolve`] turns them
//! into names at that instant; [`undo`] is what ends a fault given a duration (`for_ms`).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Fault;
use crate::cluster::Cluster;

/// The member that leads when the fault applies.
pub const LEADER: &str = "leader";
/// A member that does not lead when the fault applies, drawn from the seed.
pub const FOLLOWER: &str = "follower";
/// Every node not named on the other side of a partition (an isolation's other side).
pub const REST: &str = "rest";
/// Every member not named on the other side (the other side of a cut from peers).
pub const PEERS: &str = "peers";
/// The roles a fault may name.
pub const ROLES: [&str; 2] = [LEADER, FOLLOWER];

impl Fault {
    /// The fault with every node name passed through `f`.
    pub fn map_nodes(&self, f: &mut dyn FnMut(&str) -> Vec<String>) -> Fault {
        let mut one = |n: &String| f(n).into_iter().next().unwrap_or_else(|| n.clone());
        match self {
            Fault::Partition { left, right } => Fault::Partition { left: side(left, f), right: side(right, f) },
            Fault::PartitionOneWay { from, to } => Fault::PartitionOneWay { from: side(from, f), to: side(to, f) },
            Fault::ClogNode(n) => Fault::ClogNode(one(n)),
            Fault::UnclogNode(n) => Fault::UnclogNode(one(n)),
            Fault::ClogLink { from, to } => Fault::ClogLink { from: one(from), to: one(to) },
            Fault::UnclogLink { from, to } => Fault::UnclogLink { from: one(from), to: one(to) },
            Fault::Kill(n) => Fault::Kill(one(n)),
            Fault::Restart(n) => Fault::Restart(one(n)),
            Fault::Pause(n) => Fault::Pause(one(n)),
            Fault::Resume(n) => Fault::Resume(one(n)),
            Fault::Release { node, point } => Fault::Release { node: one(node), point: point.clone() },
            Fault::Heal | Fault::PacketLoss { .. } | Fault::Latency { .. } => self.clone(),
        }
    }

    /// Whether the fault names a role rather than nodes.
    pub fn names_a_role(&self) -> bool {
        self.nodes().iter().any(|n| ROLES.contains(n) || *n == REST || *n == PEERS)
    }

    /// Whether it names the leader's role (and so may change the leader).
    pub fn aims_at_leader(&self) -> bool {
        self.nodes().contains(&LEADER)
    }
}

fn side(names: &[String], f: &mut dyn FnMut(&str) -> Vec<String>) -> Vec<String> {
    names.iter().flat_map(|n| f(n)).collect()
}

/// The fault with its roles made names, as the cluster stands now; `Err` when a role has no holder (no
/// member reports a leader, or every member leads).
pub async fn resolve(fault: &Fault, cluster: &Cluster, rng: &mut ChaCha8Rng) -> Result<Fault, String> {
    if !fault.names_a_role() {
        return Ok(fault.clone());
    }
    let (leaders, followers) = super::etcd::roles(cluster).await;
    // A follower is a member that answers and does not lead; an old leader that has not heard it was
    // replaced is a follower too.
    let followers: Vec<String> = followers.into_iter().chain(leaders.iter().skip(1).cloned()).collect();
    let leader = leaders.into_iter().next();
    if fault.nodes().contains(&LEADER) && leader.is_none() {
        return Err("no member reports a leader".into());
    }
    let follower = match followers.len() {
        0 => None,
        n => Some(followers[rng.random_range(0..n)].clone()),
    };
    if fault.nodes().contains(&FOLLOWER) && follower.is_none() {
        return Err("no member answers as a follower".into());
    }
    let named = fault.map_nodes(&mut |n| match n {
        LEADER => vec![leader.clone().expect("checked above")],
        FOLLOWER => vec![follower.clone().expect("checked above")],
        other => vec![other.to_string()],
    });
    // `rest`: every node not on the other side, in the cluster's order.
    let all: Vec<String> = cluster
        .member_names()
        .into_iter()
        .chain(cluster.apiserver_names())
        .chain(cluster.client_names())
        .chain(cluster.webhook_names())
        .chain(cluster.controller_manager_names())
        .chain(cluster.kubelet_names())
        .collect();
    Ok(match named {
        Fault::Partition { left, right } if right.iter().any(|n| n == REST) => {
            let rest = all.into_iter().filter(|n| !left.contains(n)).collect();
            Fault::Partition { left, right: rest }
        }
        Fault::Partition { left, right } if right.iter().any(|n| n == PEERS) => {
            let peers = cluster.member_names().into_iter().filter(|n| !left.contains(n)).collect();
            Fault::Partition { left, right: peers }
        }
        other => other,
    })
}

/// What ends a fault that lasts `for_ms`: a kill is restarted, a pause resumed, a clog unclogged, anything
/// of the network healed; `None` for a fault that is itself an ending.
pub fn undo(fault: &Fault) -> Option<Fault> {
    match fault {
        Fault::Kill(n) => Some(Fault::Restart(n.clone())),
        Fault::Pause(n) => Some(Fault::Resume(n.clone())),
        Fault::ClogNode(n) => Some(Fault::UnclogNode(n.clone())),
        Fault::ClogLink { from, to } => Some(Fault::UnclogLink { from: from.clone(), to: to.clone() }),
        Fault::Partition { .. } | Fault::PartitionOneWay { .. } | Fault::PacketLoss { .. } | Fault::Latency { .. } => {
            Some(Fault::Heal)
        }
        Fault::Heal
        | Fault::UnclogNode(_)
        | Fault::UnclogLink { .. }
        | Fault::Restart(_)
        | Fault::Resume(_)
        | Fault::Release { .. } => None,
    }
}
