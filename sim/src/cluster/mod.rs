//! The cluster builder: N fake-etcd members and K clients as madsim nodes with stable names and addresses.
//! Each member serves its gRPC API over the simulated network through the same `serve` as the real build.
//!
//! Naming and addressing: members are `etcd-1..N` at `10.0.0.i:2379`, clients `c1..cK` at `10.0.1.i`, and a
//! `control` node at `10.0.9.1` runs the harness's own tasks (nemesis, restarts), so that killing a member
//! or a client never kills the harness. Nothing here assumes one member: the member list is what the Raft
//! work will turn into a real cluster (peer URLs are already distinct per member).
//!
//! Durability model until fake-etcd has its storage layer: a member's `Member` (its applied state) is
//! created once and survives kill and restart, as if every write were synced before it was acknowledged
//! (etcd syncs its WAL before applying). What a restart loses is everything volatile: connections, watch
//! streams, in-flight requests.

pub mod seeds;

use std::future::pending;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fake_etcd::failpoint::Failpoints;
use fake_etcd::service::{serve, Member, MemberConfig};
use madsim::runtime::{Handle, NodeHandle};
use madsim::task::NodeId;

use crate::error::SimError;
use crate::history::ClientId;
use crate::trace::Trace;

pub use seeds::Seeds;

/// The shape of a cluster, checked by [`ClusterSpec::validate`] before anything runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSpec {
    pub members: usize,
    pub clients: usize,
    /// How often each member sends progress notifications to watches that asked for them.
    pub progress_notify_interval_ms: u64,
}

impl ClusterSpec {
    pub fn new(members: usize, clients: usize) -> ClusterSpec {
        ClusterSpec { members, clients, progress_notify_interval_ms: 1000 }
    }

    pub fn validate(&self) -> Result<(), SimError> {
        if self.members == 0 {
            return Err(SimError::NoMembers);
        }
        if self.clients == 0 {
            return Err(SimError::NoClients);
        }
        if self.members > 200 || self.clients > 200 {
            return Err(SimError::OutOfRange {
                what: "the node count".into(),
                value: format!("{} members, {} clients", self.members, self.clients),
                allowed: "at most 200 of each".into(),
            });
        }
        if self.progress_notify_interval_ms == 0 {
            return Err(SimError::OutOfRange {
                what: "progress_notify_interval_ms".into(),
                value: "0".into(),
                allowed: "at least 1".into(),
            });
        }
        Ok(())
    }

    pub fn member_names(&self) -> Vec<String> {
        (1..=self.members).map(member_name).collect()
    }

    pub fn client_names(&self) -> Vec<String> {
        (1..=self.clients).map(|i| ClientId(i as u32).to_string()).collect()
    }

    /// Every node a fault may name, members first.
    pub fn node_names(&self) -> Vec<String> {
        let mut names = self.member_names();
        names.extend(self.client_names());
        names
    }

    /// Checks that `name` is a node of this cluster; `context` says who named it.
    pub fn check_node(&self, name: &str, context: &str) -> Result<(), SimError> {
        let known = self.node_names();
        if known.iter().any(|n| n == name) {
            return Ok(());
        }
        Err(SimError::UnknownNode { name: name.to_string(), context: context.to_string(), known })
    }
}

pub fn member_name(i: usize) -> String {
    format!("etcd-{i}")
}

fn member_ip(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, i as u8))
}

fn client_ip(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 1, i as u8))
}

pub const CLIENT_PORT: u16 = 2379;
pub const PEER_PORT: u16 = 2380;

/// A running member node.
pub struct MemberNode {
    pub name: String,
    pub id: NodeId,
    pub addr: SocketAddr,
    pub failpoints: Failpoints,
}

/// A client node; workloads spawn their tasks on it.
pub struct ClientNode {
    pub name: String,
    pub client: ClientId,
    pub id: NodeId,
    pub node: NodeHandle,
}

/// The nodes of a running simulation.
pub struct Cluster {
    pub members: Vec<MemberNode>,
    pub clients: Vec<ClientNode>,
    /// The harness's own node (nemesis, restarts): never faulted.
    pub control: NodeHandle,
    pub trace: Trace,
    /// Restarts scheduled by crash hooks that have not happened yet; a run waits for them before it ends.
    pending_restarts: Arc<AtomicUsize>,
}

impl Cluster {
    /// Builds the nodes of `spec` on the current madsim runtime. `spec` must have passed `validate`.
    pub fn build(spec: &ClusterSpec, trace: &Trace) -> Cluster {
        let handle = Handle::current();
        let control = handle.create_node().name("control").ip(IpAddr::V4(Ipv4Addr::new(10, 0, 9, 1))).build();
        let members = (1..=spec.members).map(|i| build_member(&handle, spec, i, trace)).collect();
        let clients = (1..=spec.clients)
            .map(|i| {
                let name = ClientId(i as u32).to_string();
                let node = handle.create_node().name(name.clone()).ip(client_ip(i)).build();
                ClientNode { name, client: ClientId(i as u32), id: node.id(), node }
            })
            .collect();
        let cluster = Cluster { members, clients, control, trace: trace.clone(), pending_restarts: Arc::default() };
        cluster.install_crash_hooks();
        cluster
    }

    /// Client endpoints of every member, `http://ip:port`.
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| format!("http://{}", m.addr)).collect()
    }

    /// The madsim node id of the member or client called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        let member = self.members.iter().find(|m| m.name == name).map(|m| m.id);
        member.or_else(|| self.clients.iter().find(|c| c.name == name).map(|c| c.id))
    }

    pub fn member(&self, name: &str) -> Option<&MemberNode> {
        self.members.iter().find(|m| m.name == name)
    }

    /// `Action::Crash` kills the member's node at once, and the control node restarts it a second later:
    /// a crashed process comes back, as a supervisor would bring it back.
    fn install_crash_hooks(&self) {
        for m in &self.members {
            let (id, name, trace, control) = (m.id, m.name.clone(), self.trace.clone(), self.control.clone());
            let pending = self.pending_restarts.clone();
            m.failpoints.set_crash_hook(move || {
                trace.event(&name, "crash");
                Handle::current().kill(id);
                let (trace, name, pending) = (trace.clone(), name.clone(), pending.clone());
                pending.fetch_add(1, Ordering::SeqCst);
                control.spawn(async move {
                    madsim::time::sleep(Duration::from_secs(1)).await;
                    trace.event(&name, "restart");
                    Handle::current().restart(id);
                    pending.fetch_sub(1, Ordering::SeqCst);
                });
            });
            let (name, trace) = (m.name.clone(), self.trace.clone());
            m.failpoints.set_observer(move |point, action| trace.event(&name, format!("failpoint {point} {action}")));
        }
    }
}

fn build_member(handle: &Handle, spec: &ClusterSpec, i: usize, trace: &Trace) -> MemberNode {
    let name = member_name(i);
    let ip = member_ip(i);
    let addr = SocketAddr::new(ip, CLIENT_PORT);
    let mut config = MemberConfig::single(
        &name,
        vec![format!("http://{ip}:{PEER_PORT}")],
        vec![format!("http://{addr}")],
        "kubesim-cluster",
    );
    config.progress_notify_interval = Duration::from_millis(spec.progress_notify_interval_ms);
    let failpoints = config.failpoints.clone();
    let start_ms = madsim::time::TimeHandle::current().elapsed().as_millis() as u64;
    let member = Member::new(config, start_ms);
    let term = member.config().single_member_term.0;
    let (trace, node_name) = (trace.clone(), name.clone());
    let node = handle
        .create_node()
        .name(name.clone())
        .ip(ip)
        .init(move || {
            let (member, trace, node_name) = (member.clone(), trace.clone(), node_name.clone());
            async move {
                // One member elects itself; with Raft this line comes from the member's state changes.
                trace.event(&node_name, format!("leader term={term}"));
                if let Err(e) = serve(member, addr, pending()).await {
                    trace.event(&node_name, format!("serve failed: {e}"));
                }
            }
        })
        .build();
    MemberNode { name, id: node.id(), addr, failpoints }
}

impl Cluster {
    /// Waits until every member a crash hook killed has been restarted.
    pub async fn wait_for_restarts(&self) {
        while self.pending_restarts.load(Ordering::SeqCst) > 0 {
            madsim::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Every member and client node, members first.
    pub fn all_node_ids(&self) -> Vec<NodeId> {
        self.members.iter().map(|m| m.id).chain(self.clients.iter().map(|c| c.id)).collect()
    }

    pub fn member_names(&self) -> Vec<String> {
        self.members.iter().map(|m| m.name.clone()).collect()
    }

    pub fn client_names(&self) -> Vec<String> {
        self.clients.iter().map(|c| c.name.clone()).collect()
    }
}
