//! The cluster builder: N fake-etcd members, M apiservers and K clients as madsim nodes with stable names
//! and addresses. Each member serves its gRPC API over the simulated network through the same `serve` as the
//! real build; each apiserver ([`apiserver`]) serves HTTP through the real binary's server.
//!
//! Naming and addressing: members are `etcd-1..N` at `10.0.0.i:2379`, apiservers `apiserver-1..M` at
//! `10.0.2.i:6443`, clients `c1..cK` at `10.0.1.i`, admission webhooks ([`webhook`]) by their names at
//! `10.0.3.i:8443`, controller managers ([`controller_manager`]) `controller-manager-1..N` at `10.0.4.i`,
//! simulated nodes' kubelets ([`kubelet`]) `node-1..N` at `10.0.5.i`, and a `control` node at `10.0.9.1`
//! runs the harness's own tasks (nemesis, restarts), so that killing a member, an apiserver or a client
//! never kills the harness.
//!
//! Members form one Raft cluster: peers are addressed like the client endpoints (`10.0.0.i:2380`). Each
//! member's disk (`DurableDisk`) is kept here, outside the node, so that a madsim kill and restart re-runs the
//! node's init, which reopens the disk: what was synced survives, the rest is lost, and the member replays its
//! log. Each (re)start draws the member's election timeout from the seed, in `[election_tick,
//! 2 * election_tick)`. Role changes become trace lines ("leader term=3", "stepped down term=4").

pub mod access;
pub mod agent;
pub mod apiserver;
pub mod controller_manager;
pub mod kubelet;
pub mod seeds;
pub mod webhook;

use std::collections::BTreeSet;
use std::future::pending;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fake_etcd::failpoint::Failpoints;
use fake_etcd::raft::DurableDisk;
use fake_etcd::service::{serve, serve_peers, EventObserver, Member, MemberConfig, RaftObserver};
use madsim::runtime::{Handle, NodeHandle};
use madsim::task::NodeId;
use rand::Rng;

use crate::bugs::Bugs;

pub use self::access::UserSpec;
use self::agent::AgentNode;
use self::apiserver::build_apiserver;
pub use self::apiserver::{apiserver_name, ApiserverNode, ApiserverSpec};
use self::controller_manager::{build_controller_manager, controller_manager_name};
use self::kubelet::{build_kubelet, kubelet_name};
use self::webhook::build_webhook;
pub use self::webhook::{WebhookNode, WebhookSpec};
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
    /// Raft entries applied between two snapshots, and kept in the log behind one; `None` keeps fake-etcd's
    /// defaults (etcd's 100,000 and 5,000).
    pub snapshot_count: Option<u64>,
    /// How long a simple auth token lives without use; `None` keeps etcd's 300 s.
    pub auth_token_ttl_s: Option<u64>,
    /// The bug switches on, per component (`crate::bugs`); none by default.
    pub bugs: Bugs,
    /// Client names (a scenario's); empty means `c1..cK`. When given, there is one per client.
    pub client_labels: Vec<String>,
    /// The apiservers, `apiserver-1..N`, each on its own node (none: an etcd-only cluster).
    pub apiservers: Vec<ApiserverSpec>,
    /// The resources the apiservers serve besides namespaces (`configmaps`, `deployments.apps`); empty
    /// serves every built-in resource.
    pub api_resources: Vec<String>,
    /// The apiservers' `--authorization-mode` (`AlwaysAllow`, `RBAC`, `Node,RBAC`).
    pub authorization_mode: String,
    /// The users every apiserver trusts, each through a static token (`access`).
    pub users: Vec<UserSpec>,
    /// The admission webhooks, each on a node of its own (`webhook`).
    pub webhooks: Vec<WebhookSpec>,
    /// kube-controller-manager replicas, each on a node of its own, leader-elected (`controller_manager`).
    pub controller_managers: usize,
    /// Simulated nodes, `node-1..N`, each a kwok-like kubelet on a node of its own (`kubelet`); with any, a
    /// scheduler runs beside each controller manager.
    pub nodes: usize,
}

impl ClusterSpec {
    pub fn new(members: usize, clients: usize) -> ClusterSpec {
        ClusterSpec {
            members,
            clients,
            progress_notify_interval_ms: 1000,
            snapshot_count: None,
            auth_token_ttl_s: None,
            bugs: Bugs::default(),
            client_labels: Vec::new(),
            apiservers: Vec::new(),
            api_resources: Vec::new(),
            authorization_mode: "AlwaysAllow".into(),
            users: Vec::new(),
            webhooks: Vec::new(),
            controller_managers: 0,
            nodes: 0,
        }
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
        if !self.client_labels.is_empty() && self.client_labels.len() != self.clients {
            return Err(SimError::OutOfRange {
                what: "the client names".into(),
                value: format!("{} names for {} clients", self.client_labels.len(), self.clients),
                allowed: "one name per client".into(),
            });
        }
        if let Some(api) = self
            .apiservers
            .iter()
            .find(|a| a.members.is_empty() || a.members.iter().any(|&m| m == 0 || m > self.members))
        {
            return Err(SimError::OutOfRange {
                what: "an apiserver's etcd members".into(),
                value: format!("{:?}", api.members),
                allowed: format!("1 to {}", self.members),
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
        (1..=self.clients).map(|i| self.client_name(i)).collect()
    }

    /// The name of client `i` (1-based).
    pub fn client_name(&self, i: usize) -> String {
        match self.client_labels.get(i - 1) {
            Some(label) => label.clone(),
            None => ClientId(i as u32).to_string(),
        }
    }

    pub fn apiserver_names(&self) -> Vec<String> {
        (1..=self.apiservers.len()).map(apiserver_name).collect()
    }

    pub fn webhook_names(&self) -> Vec<String> {
        self.webhooks.iter().map(|w| w.name.clone()).collect()
    }

    pub fn controller_manager_names(&self) -> Vec<String> {
        (1..=self.controller_managers).map(controller_manager_name).collect()
    }

    pub fn kubelet_names(&self) -> Vec<String> {
        (1..=self.nodes).map(kubelet_name).collect()
    }

    /// Whether the harness talks to the apiservers as its own user before the clients start: to create the
    /// webhooks' configurations, or to wait for the RBAC bootstrap policy under an authorization mode other
    /// than the default.
    pub fn harness_acts(&self) -> bool {
        !self.webhooks.is_empty() || self.authorization_mode != "AlwaysAllow"
    }

    /// Every node a fault may name: members, apiservers, clients, webhooks, controller managers, nodes.
    pub fn node_names(&self) -> Vec<String> {
        let mut names = self.member_names();
        names.extend(self.apiserver_names());
        names.extend(self.client_names());
        names.extend(self.webhook_names());
        names.extend(self.controller_manager_names());
        names.extend(self.kubelet_names());
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

/// Waits until one of `endpoints` reports a leader in etcd's Status (the named condition a control plane
/// starts on, as kubeadm waits for a healthy etcd before kube-apiserver), asking each in turn every 50ms
/// of simulated time; `false` if none has within `limit` (`Duration::MAX`: no limit).
pub async fn leader_elected(endpoints: &[String], limit: Duration) -> bool {
    use etcd_proto::etcdserverpb::{maintenance_client::MaintenanceClient, StatusRequest};
    let deadline = madsim::time::Instant::now().checked_add(limit);
    loop {
        for endpoint in endpoints {
            let mut maintenance = MaintenanceClient::new(crate::client::channel(endpoint));
            let status = madsim::time::timeout(Duration::from_millis(100), maintenance.status(StatusRequest {})).await;
            if matches!(status, Ok(Ok(s)) if s.get_ref().leader != 0) {
                return true;
            }
        }
        if deadline.is_some_and(|d| madsim::time::Instant::now() >= d) {
            return false;
        }
        madsim::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `endpoint` answers a linearizable read, as `etcdctl endpoint health` checks a member (a
/// `get health`): only then has the leader committed an entry of its term, and serves read indexes. A
/// kube-apiserver started as soon as a leader is known can send its first reads into the gap after the
/// election, where etcd 3.4's Raft drops a read index without a word and the read waits out etcd's 7 s
/// request timeout. Each try waits at most 100 ms of simulated time, 50 ms apart.
pub async fn member_healthy(endpoint: &str) {
    use etcd_proto::etcdserverpb::{kv_client::KvClient, RangeRequest};
    loop {
        let mut kv = KvClient::new(crate::client::channel(endpoint));
        let read = RangeRequest { key: b"health".to_vec(), ..RangeRequest::default() };
        if matches!(madsim::time::timeout(Duration::from_millis(100), kv.range(read)).await, Ok(Ok(_))) {
            return;
        }
        madsim::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn member_name(i: usize) -> String {
    format!("etcd-{i}")
}

pub(crate) fn member_ip(i: usize) -> IpAddr {
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
    /// The member's event slot (compactions, lease expiry); `run` fills it.
    pub events: EventObserver,
    /// Restarts the harness has asked for and the node has not yet begun; see [`MemberNode::restart`].
    expected_starts: Arc<AtomicUsize>,
}

impl MemberNode {
    /// Restarts the member's node (kill and re-run its init), as the harness means to. A start the harness
    /// did not ask for is madsim restarting a node that panicked, which the run reports as a bug.
    pub fn restart(&self) {
        self.expected_starts.fetch_add(1, Ordering::SeqCst);
        restart_node(self.id);
    }
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
    /// The apiservers, in order (`apiserver-1` first).
    pub apiservers: Vec<ApiserverNode>,
    pub clients: Vec<ClientNode>,
    /// The admission webhooks, in file order.
    pub webhooks: Vec<WebhookNode>,
    /// The controller managers, in order (`controller-manager-1` first).
    pub controller_managers: Vec<AgentNode>,
    /// The simulated nodes' kubelets, in order (`node-1` first).
    pub kubelets: Vec<AgentNode>,
    /// What the controller managers did: leadership and writes, in simulated time.
    pub manager_log: crate::history::controllers::ManagerLog,
    /// The harness's own node (nemesis, restarts): never faulted.
    pub control: NodeHandle,
    pub trace: Trace,
    /// Restarts scheduled by crash hooks that have not happened yet; a run waits for them before it ends.
    pending_restarts: Arc<AtomicUsize>,
    /// One line per member start nobody asked for: a panic that madsim recovered by restarting the node.
    panics: Arc<std::sync::Mutex<Vec<String>>>,
    /// Nodes a `kill` fault took down and no `restart` has brought back: the only nodes that may be down
    /// when a run ends. Any other server that is down then panicked, and madsim's restart (1 to 10 s
    /// later) was still pending.
    down: std::sync::Mutex<BTreeSet<String>>,
}

impl Cluster {
    /// Builds the nodes of `spec` on the current madsim runtime. `spec` must have passed `validate`.
    /// Election timeouts are drawn from `seeds`.
    pub fn build(spec: &ClusterSpec, trace: &Trace, seeds: Seeds) -> Cluster {
        let handle = Handle::current();
        let control = handle.create_node().name("control").ip(IpAddr::V4(Ipv4Addr::new(10, 0, 9, 1))).build();
        let panics: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let members = (1..=spec.members).map(|i| build_member(&handle, spec, i, trace, seeds, &panics)).collect();
        let apiservers =
            (1..=spec.apiservers.len()).map(|i| build_apiserver(&handle, spec, i, trace, seeds, &panics)).collect();
        let clients = (1..=spec.clients)
            .map(|i| {
                let name = spec.client_name(i);
                let node = handle.create_node().name(name.clone()).ip(client_ip(i)).build();
                ClientNode { name, client: ClientId(i as u32), id: node.id(), node }
            })
            .collect();
        let webhooks = spec.webhooks.iter().enumerate().map(|(i, w)| build_webhook(&handle, w, i + 1, trace)).collect();
        let manager_log = crate::history::controllers::ManagerLog::default();
        let controller_managers = (1..=spec.controller_managers)
            .map(|i| build_controller_manager(&handle, spec, i, trace, seeds, &panics, &manager_log))
            .collect();
        let kubelets = (1..=spec.nodes).map(|i| build_kubelet(&handle, spec, i, trace, seeds, &panics)).collect();
        let cluster = Cluster {
            members,
            apiservers,
            clients,
            webhooks,
            controller_managers,
            kubelets,
            manager_log,
            control,
            trace: trace.clone(),
            pending_restarts: Arc::default(),
            panics,
            down: std::sync::Mutex::default(),
        };
        cluster.install_crash_hooks();
        cluster
    }

    /// Client endpoints of every member, `http://ip:port`.
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| format!("http://{}", m.addr)).collect()
    }

    /// The madsim node id of the member, apiserver, client or webhook called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        let member = self.members.iter().find(|m| m.name == name).map(|m| m.id);
        let apiserver = || self.apiservers.iter().find(|a| a.name == name).map(|a| a.id);
        let webhook = || self.webhooks.iter().find(|w| w.spec.name == name).map(|w| w.id);
        member
            .or_else(apiserver)
            .or_else(|| self.clients.iter().find(|c| c.name == name).map(|c| c.id))
            .or_else(webhook)
            .or_else(|| self.agent(name).map(|c| c.id))
    }

    pub fn apiserver(&self, name: &str) -> Option<&ApiserverNode> {
        self.apiservers.iter().find(|a| a.name == name)
    }

    /// The controller manager or simulated node called `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentNode> {
        self.controller_managers.iter().chain(&self.kubelets).find(|c| c.name == name)
    }

    /// Waits until every apiserver is ready (caches listed, system namespaces created): the named
    /// condition a scenario's Kubernetes clients start on.
    pub async fn wait_for_apiservers(&self) {
        while !self.apiservers.iter().all(ApiserverNode::is_ready) {
            madsim::time::sleep(Duration::from_millis(5)).await;
        }
    }

    pub fn member(&self, name: &str) -> Option<&MemberNode> {
        self.members.iter().find(|m| m.name == name)
    }

    /// `Action::Crash` kills the member's node at once, and the control node restarts it a second later:
    /// a crashed process comes back, as a supervisor would bring it back.
    fn install_crash_hooks(&self) {
        for m in &self.members {
            let (id, name, trace, control) = (m.id, m.name.clone(), self.trace.clone(), self.control.clone());
            let (pending, expected) = (self.pending_restarts.clone(), m.expected_starts.clone());
            m.failpoints.set_crash_hook(move || {
                trace.event(&name, "crash");
                Handle::current().kill(id);
                let (trace, name, pending, expected) = (trace.clone(), name.clone(), pending.clone(), expected.clone());
                pending.fetch_add(1, Ordering::SeqCst);
                control.spawn(async move {
                    madsim::time::sleep(Duration::from_secs(1)).await;
                    trace.event(&name, "restart");
                    expected.fetch_add(1, Ordering::SeqCst);
                    Handle::current().restart(id);
                    pending.fetch_sub(1, Ordering::SeqCst);
                });
            });
            let (name, trace) = (m.name.clone(), self.trace.clone());
            m.failpoints.set_observer(move |point, action| trace.event(&name, format!("failpoint {point} {action}")));
        }
        for a in &self.apiservers {
            let (id, name, trace, control) = (a.id, a.name.clone(), self.trace.clone(), self.control.clone());
            let pending = self.pending_restarts.clone();
            let node = a.restarter();
            a.failpoints.set_crash_hook(move || {
                trace.event(&name, "crash");
                Handle::current().kill(id);
                let (trace, name, pending, node) = (trace.clone(), name.clone(), pending.clone(), node.clone());
                pending.fetch_add(1, Ordering::SeqCst);
                control.spawn(async move {
                    madsim::time::sleep(Duration::from_secs(1)).await;
                    trace.event(&name, "restart");
                    node();
                    pending.fetch_sub(1, Ordering::SeqCst);
                });
            });
        }
    }
}

/// Restarts a node as a process restart does: its sockets close, then its first task runs again. madsim's
/// `restart` alone keeps the old life's sockets bound (only `kill` resets the node's network), so the new
/// life could not bind its ports.
pub fn restart_node(id: NodeId) {
    Handle::current().kill(id);
    Handle::current().restart(id);
}

/// A node's lives: which start is its first, and whether a later one is a restart the harness asked for
/// (a fault, a crash hook: counted in `expected`) or madsim's restart after a panic, which is traced and
/// filed as a failure.
pub(crate) struct Lives {
    started: AtomicUsize,
    expected: Arc<AtomicUsize>,
    panics: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Lives {
    pub(crate) fn new(expected: Arc<AtomicUsize>, panics: &Arc<std::sync::Mutex<Vec<String>>>) -> Lives {
        Lives { started: AtomicUsize::new(0), expected, panics: panics.clone() }
    }

    /// A life of `name` begins; true for its first.
    pub(crate) fn begin(&self, trace: &Trace, name: &str) -> bool {
        let first = self.started.fetch_add(1, Ordering::SeqCst) == 0;
        let unasked =
            !first && self.expected.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_err();
        if unasked {
            trace.event(name, "restarted after a panic");
            self.panics.lock().expect("panics lock poisoned").push(format!("{name} panicked and was restarted"));
        }
        first
    }
}

fn peer_url(i: usize) -> String {
    format!("http://{}:{PEER_PORT}", member_ip(i))
}

fn build_member(
    handle: &Handle,
    spec: &ClusterSpec,
    i: usize,
    trace: &Trace,
    seeds: Seeds,
    panics: &Arc<std::sync::Mutex<Vec<String>>>,
) -> MemberNode {
    let name = member_name(i);
    let ip = member_ip(i);
    let addr = SocketAddr::new(ip, CLIENT_PORT);
    let peer_addr = SocketAddr::new(ip, PEER_PORT);
    let peers: Vec<(String, Vec<String>, Vec<String>)> = (1..=spec.members)
        .map(|j| (member_name(j), vec![peer_url(j)], vec![format!("http://{}:{CLIENT_PORT}", member_ip(j))]))
        .collect();
    let mut config =
        MemberConfig::member_of(&name, &peers, "kubesim-cluster").expect("the harness names distinct members");
    config.progress_notify_interval = Duration::from_millis(spec.progress_notify_interval_ms);
    config.disk = DurableDisk::new();
    config.bugs = spec.bugs.etcd.clone();
    // A small snapshot count stands for etcd's compaction pressure scaled down: the log behind a snapshot
    // shrinks with it (etcd keeps 5,000 entries), or a lagging member would never need a snapshot.
    if let Some(count) = spec.snapshot_count {
        config.raft.snapshot_threshold_entries = count;
        config.raft.snapshot_catch_up_entries = count;
    }
    if let Some(ttl) = spec.auth_token_ttl_s {
        config.auth_token_ttl_s = ttl as i64;
    }
    let (observer_trace, observer_name) = (trace.clone(), name.clone());
    config.observer = RaftObserver::new(move |line| observer_trace.event(&observer_name, line));
    let failpoints = config.failpoints.clone();
    let events = config.events.clone();
    // One stream per member for its election timeouts; each start draws the next value from it.
    let timeouts = Arc::new(std::sync::Mutex::new(seeds.rng(&format!("election/{name}"))));
    let (trace, node_name) = (trace.clone(), name.clone());
    let expected_starts = Arc::new(AtomicUsize::new(0));
    let lives = Lives::new(expected_starts.clone(), panics);
    let node = handle
        .create_node()
        .name(name.clone())
        .ip(ip)
        // A panicking member is restarted (after 1 to 10 s of madsim's choosing) instead of ending the whole
        // simulation: the run then reports the panic as a failure beside everything else it saw.
        .restart_on_panic()
        .init(move || {
            let (mut config, trace, node_name) = (config.clone(), trace.clone(), node_name.clone());
            lives.begin(&trace, &node_name);
            let e = config.raft.election_tick;
            let mut stream = timeouts.lock().expect("timeout stream lock");
            config.raft.election_timeout_tick = stream.random_range(e..2 * e);
            config.raft.election_seed = stream.random();
            drop(stream);
            async move {
                let start_ms = madsim::time::TimeHandle::current().elapsed().as_millis() as u64;
                let member = match Member::new(config, start_ms) {
                    Ok(m) => m,
                    Err(e) => {
                        trace.event(&node_name, format!("open failed: {e}"));
                        return;
                    }
                };
                let peers = tokio::spawn(serve_peers(member.clone(), peer_addr, pending()));
                if let Err(e) = serve(member, addr, pending()).await {
                    trace.event(&node_name, format!("serve failed: {e}"));
                }
                peers.abort();
            }
        })
        .build();
    MemberNode { name, id: node.id(), addr, failpoints, events, expected_starts }
}

impl Cluster {
    /// Every member panic so far (each one madsim recovered by restarting the node).
    pub fn panics(&self) -> Vec<String> {
        self.panics.lock().expect("panics lock poisoned").clone()
    }

    /// Kills `name`'s node for a `kill` fault; it stays down, as the harness meant, until a restart.
    pub fn kill(&self, name: &str) {
        self.down.lock().expect("down lock poisoned").insert(name.to_string());
        Handle::current().kill(self.node_id(name).expect("faults name nodes of the cluster"));
    }

    /// A `restart` fault brings `name` back.
    pub fn mark_restarted(&self, name: &str) {
        self.down.lock().expect("down lock poisoned").remove(name);
    }

    /// Files every member or apiserver that is down though no fault took it down: it panicked too close to
    /// the end for madsim's delayed restart (which [`Lives::begin`] would have reported) to happen.
    pub fn file_pending_panic_restarts(&self) {
        let down = self.down.lock().expect("down lock poisoned").clone();
        let servers =
            self.members.iter().map(|m| (&m.name, m.id)).chain(self.apiservers.iter().map(|a| (&a.name, a.id)));
        for (name, id) in servers {
            if Handle::current().is_exit(id) && !down.contains(name) {
                self.trace.event(name, "panicked; the run ended before its restart");
                self.panics
                    .lock()
                    .expect("panics lock poisoned")
                    .push(format!("{name} panicked and was not yet restarted"));
            }
        }
    }

    /// Waits until every member a crash hook killed has been restarted.
    pub async fn wait_for_restarts(&self) {
        while self.pending_restarts.load(Ordering::SeqCst) > 0 {
            madsim::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Every member, apiserver, client, webhook, controller manager and simulated node, in that order.
    pub fn all_node_ids(&self) -> Vec<NodeId> {
        let apiservers = self.apiservers.iter().map(|a| a.id);
        let webhooks = self.webhooks.iter().map(|w| w.id);
        let managers = self.controller_managers.iter().chain(&self.kubelets).map(|c| c.id);
        let nodes = self.members.iter().map(|m| m.id).chain(apiservers);
        nodes.chain(self.clients.iter().map(|c| c.id)).chain(webhooks).chain(managers).collect()
    }

    pub fn member_names(&self) -> Vec<String> {
        self.members.iter().map(|m| m.name.clone()).collect()
    }

    pub fn client_names(&self) -> Vec<String> {
        self.clients.iter().map(|c| c.name.clone()).collect()
    }

    pub fn apiserver_names(&self) -> Vec<String> {
        self.apiservers.iter().map(|a| a.name.clone()).collect()
    }

    pub fn webhook_names(&self) -> Vec<String> {
        self.webhooks.iter().map(|w| w.spec.name.clone()).collect()
    }

    pub fn controller_manager_names(&self) -> Vec<String> {
        self.controller_managers.iter().map(|c| c.name.clone()).collect()
    }

    pub fn kubelet_names(&self) -> Vec<String> {
        self.kubelets.iter().map(|c| c.name.clone()).collect()
    }
}
