//! Faults: what can be done to the simulated network and nodes, how each is applied through
//! madsim, and how each prints in the trace (`t=2.000s fault partition [etcd-1] | [c1 c2]`). A fault is
//! applied and traced at the same instant.
//!
//! What madsim gives us, and so what each fault means: a clogged link drops datagrams and makes new
//! connections fail at once, while established streams stall until the link heals; loss and latency are
//! one global setting; kill drops every task of a node and restart re-runs its init. `Release` is the
//! other half of a failpoint armed with `hold`: it lets the held requests go.
//!
//! Faults are applied through an [`Injector`], which also keeps the record of what it applied and when;
//! the record belongs here, with the faults, so that the cluster knows nothing of them.

pub mod etcd;
mod failpoint;
mod injector;
pub mod nemesis;
pub mod roles;

use std::fmt;
use std::time::Duration;

use fake_etcd::failpoint::Point;
use madsim::net::NetSim;
use madsim::runtime::Handle;
use madsim::task::NodeId;

use crate::cluster::{Cluster, ClusterSpec};
use crate::error::SimError;

pub use failpoint::{failpoint, FailpointSpec};
pub use injector::Injector;

/// madsim's default per-message latency, restored by [`Fault::Heal`].
pub const DEFAULT_LATENCY_MS: (u64, u64) = (1, 10);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No traffic between the two sides, in either direction.
    Partition {
        left: Vec<String>,
        right: Vec<String>,
    },
    /// Traffic from `from` to `to` is lost; the other direction still flows.
    PartitionOneWay {
        from: Vec<String>,
        to: Vec<String>,
    },
    /// Undoes every network fault: links and nodes unclogged, loss and latency back to the defaults.
    Heal,
    ClogNode(String),
    UnclogNode(String),
    ClogLink {
        from: String,
        to: String,
    },
    UnclogLink {
        from: String,
        to: String,
    },
    /// Every message is lost with this probability, in thousandths.
    PacketLoss {
        loss_permille: u32,
    },
    /// Every message is delayed by a time drawn from this range.
    Latency {
        min_ms: u64,
        max_ms: u64,
    },
    Kill(String),
    Restart(String),
    Pause(String),
    Resume(String),
    /// Lets go of every request held at a failpoint armed with `hold` on a member (the point stays armed).
    Release {
        node: String,
        point: String,
    },
}

fn list(names: &[String]) -> String {
    format!("[{}]", names.join(" "))
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Partition { left, right } => write!(f, "partition {} | {}", list(left), list(right)),
            Fault::PartitionOneWay { from, to } => write!(f, "partition-one-way {} -> {}", list(from), list(to)),
            Fault::Heal => f.write_str("heal"),
            Fault::ClogNode(n) => write!(f, "clog {n}"),
            Fault::UnclogNode(n) => write!(f, "unclog {n}"),
            Fault::ClogLink { from, to } => write!(f, "clog-link {from} -> {to}"),
            Fault::UnclogLink { from, to } => write!(f, "unclog-link {from} -> {to}"),
            Fault::PacketLoss { loss_permille } => {
                write!(f, "packet-loss {}.{}%", loss_permille / 10, loss_permille % 10)
            }
            Fault::Latency { min_ms, max_ms } => write!(f, "latency {min_ms}..{max_ms}ms"),
            Fault::Kill(n) => write!(f, "kill {n}"),
            Fault::Restart(n) => write!(f, "restart {n}"),
            Fault::Pause(n) => write!(f, "pause {n}"),
            Fault::Resume(n) => write!(f, "resume {n}"),
            Fault::Release { node, point } => write!(f, "release {node} {point}"),
        }
    }
}

impl Fault {
    /// Every node the fault names.
    pub fn nodes(&self) -> Vec<&str> {
        match self {
            Fault::Partition { left: a, right: b } | Fault::PartitionOneWay { from: a, to: b } => {
                a.iter().chain(b).map(String::as_str).collect()
            }
            Fault::ClogLink { from, to } | Fault::UnclogLink { from, to } => vec![from, to],
            Fault::ClogNode(n)
            | Fault::UnclogNode(n)
            | Fault::Kill(n)
            | Fault::Restart(n)
            | Fault::Pause(n)
            | Fault::Resume(n)
            | Fault::Release { node: n, .. } => vec![n],
            Fault::Heal | Fault::PacketLoss { .. } | Fault::Latency { .. } => vec![],
        }
    }

    /// Checks the fault against the cluster before the run: known nodes, sane numbers.
    pub fn validate(&self, spec: &ClusterSpec) -> Result<(), SimError> {
        let context = format!("fault `{self}`");
        for n in self.nodes() {
            spec.check_node(n, &context)?;
        }
        match self {
            Fault::PacketLoss { loss_permille } if *loss_permille > 1000 => Err(SimError::OutOfRange {
                what: format!("the loss of {context}"),
                value: format!("{loss_permille}‰"),
                allowed: "0..=1000‰".into(),
            }),
            Fault::Latency { min_ms, max_ms } if min_ms >= max_ms => Err(SimError::OutOfRange {
                what: format!("the latency range of {context}"),
                value: format!("{min_ms}..{max_ms}ms"),
                allowed: "min below max".into(),
            }),
            // A held request is let go where it is held: fake-etcd's points on a member, the apiserver's
            // on an apiserver.
            Fault::Release { node, point } if spec.apiserver_names().contains(node) => {
                point.parse::<apiserver::failpoint::Point>().map(|_| ()).map_err(|e| SimError::UnknownFailpoint {
                    name: e.name,
                    known: apiserver::failpoint::Point::ALL.iter().map(|p| p.name().to_string()).collect(),
                })
            }
            Fault::Release { node, point } => {
                if !spec.member_names().contains(node) {
                    return Err(SimError::FailpointOnClient { node: node.clone(), failpoint: point.clone() });
                }
                point.parse::<Point>().map(|_| ()).map_err(|e| SimError::UnknownFailpoint {
                    name: e.name,
                    known: Point::ALL.iter().map(|p| p.name().to_string()).collect(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Does what the fault does to the cluster, now. Names were validated before the run. Only the
    /// [`Injector`] calls it, so that every fault applied is traced and recorded.
    fn act(&self, cluster: &Cluster) {
        let net = NetSim::current();
        let id = |n: &str| cluster.node_id(n).unwrap_or_else(|| panic!("fault names unknown node {n} (validated)"));
        let links = |a: &[String], b: &[String], f: &dyn Fn(NodeId, NodeId)| {
            for x in a {
                for y in b {
                    f(id(x), id(y));
                }
            }
        };
        match self {
            Fault::Partition { left, right } => {
                links(left, right, &|x, y| net.clog_link(x, y));
                links(right, left, &|x, y| net.clog_link(x, y));
            }
            Fault::PartitionOneWay { from, to } => links(from, to, &|x, y| net.clog_link(x, y)),
            Fault::Heal => {
                let all: Vec<NodeId> = cluster.all_node_ids();
                for &x in &all {
                    net.unclog_node(x);
                    for &y in &all {
                        net.unclog_link(x, y);
                    }
                }
                net.update_config(|c| {
                    c.packet_loss_rate = 0.0;
                    c.send_latency = ms(DEFAULT_LATENCY_MS.0)..ms(DEFAULT_LATENCY_MS.1);
                });
            }
            Fault::ClogNode(n) => net.clog_node(id(n)),
            Fault::UnclogNode(n) => net.unclog_node(id(n)),
            Fault::ClogLink { from, to } => net.clog_link(id(from), id(to)),
            Fault::UnclogLink { from, to } => net.unclog_link(id(from), id(to)),
            Fault::PacketLoss { loss_permille } => {
                net.update_config(|c| c.packet_loss_rate = f64::from(*loss_permille) / 1000.0)
            }
            Fault::Latency { min_ms, max_ms } => net.update_config(|c| c.send_latency = ms(*min_ms)..ms(*max_ms)),
            Fault::Kill(n) => cluster.kill(n),
            Fault::Restart(n) => {
                cluster.mark_restarted(n);
                match (cluster.member(n), cluster.apiserver(n), cluster.agent(n)) {
                    (Some(m), _, _) => m.restart(),
                    (None, Some(a), _) => a.restart(),
                    (None, None, Some(c)) => c.restart(),
                    (None, None, None) => crate::cluster::restart_node(id(n)),
                }
            }
            Fault::Pause(n) => Handle::current().pause(id(n)),
            Fault::Resume(n) => Handle::current().resume(id(n)),
            Fault::Release { node, point } => match (cluster.member(node), cluster.apiserver(node)) {
                (Some(m), _) => m.failpoints.release(point.parse().expect("validated before the run")),
                (None, Some(a)) => a.failpoints.release(point.parse().expect("validated before the run")),
                (None, None) => panic!("release names {node}, which has no failpoints"),
            },
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A fault at a fixed simulated time (milliseconds since the run started).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledFault {
    pub at_ms: u64,
    pub fault: Fault,
}
