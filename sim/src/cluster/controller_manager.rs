//! Controller managers: `[cluster] controller_managers = N` runs kube-controller-manager's controllers
//! (`kubesim-controllers`, the same code the binary runs in-process), and kube-scheduler beside them when
//! the cluster has nodes (`[cluster] nodes`, `cluster::kubelet`), on N control-plane nodes of their own,
//! `controller-manager-1..N` at `10.0.4.i`, each talking HTTP to one apiserver (`apiserver-((i-1) mod A)+1`)
//! through the simulated network, so that kills, pauses and partitions reach them like any node. They are
//! leader-elected over the `kube-system/kube-controller-manager` Lease (the schedulers over
//! `kube-scheduler`) with upstream's timings (15 s lease, 10 s renew deadline, 2 s retry period); a kill and
//! restart re-runs the node's init, which starts a new manager from nothing, as a restarted process does.
//!
//! What they do is recorded in a [`ManagerLog`] outside the nodes (it survives their restarts): each start
//! and end of a manager's leadership and each write its controllers sent, in simulated time, for the
//! `OneManagerActsAtATime` checker (`checker::controllers`), and each delete the garbage collector made,
//! for `DeletesOnlyWhenOwnersGone` (`checker::garbage_collector`). Their leadership also becomes trace lines.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use controllers::client::observe::Observer;
use controllers::client::{Client, Transport};
use controllers::kcm::garbagecollector::graph::EVENT_COMPONENT as GARBAGE_COLLECTOR;
use controllers::manager::{self, Config, Role};
use controllers::runtime::leader::ElectorConfig;
use controllers::runtime::selection::Selection;
use madsim::runtime::Handle;
use rand::RngCore;

use super::agent::AgentNode;
use super::apiserver::APISERVER_PORT;
use super::{ClusterSpec, Seeds};
use crate::checker::controllers::CONTROLLER_MANAGER;
use crate::history::controllers::{ManagerAct, ManagerEvent, ManagerLog};
use crate::trace::Trace;

/// The name of controller manager `i` (1-based).
pub fn controller_manager_name(i: usize) -> String {
    format!("controller-manager-{i}")
}

fn controller_manager_ip(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 4, i as u8))
}

/// The simulation's time of day in Unix microseconds, from the epoch the apiservers' clock starts at.
fn now_unix_us() -> i64 {
    1_750_000_000_000_000 + madsim::time::TimeHandle::current().elapsed().as_micros() as i64
}

/// What one manager tells the log and the trace.
struct Recorder {
    name: String,
    /// The lease the component is elected by.
    role: &'static str,
    log: ManagerLog,
    trace: Trace,
}

impl Recorder {
    fn push(&self, what: ManagerAct) {
        let at_ms = madsim::time::TimeHandle::current().elapsed().as_millis() as u64;
        self.log.lock().expect("the manager log is never poisoned").push(ManagerEvent {
            at_ms,
            manager: self.name.clone(),
            role: self.role.to_string(),
            what,
        });
    }
}

impl Observer for Recorder {
    fn write_sent(&self, method: &str, path: &str) {
        self.push(ManagerAct::Write { method: method.to_string(), path: path.to_string() });
    }

    fn leading(&self, leading: bool) {
        // The controller manager's lines read as they did before schedulers ran beside it.
        let who = if self.role == CONTROLLER_MANAGER { "" } else { "scheduler " };
        self.trace.event(&self.name, format!("{who}{}", if leading { "leading" } else { "stopped leading" }));
        self.push(if leading { ManagerAct::Leading } else { ManagerAct::Stopped });
    }

    fn deleted(&self, component: &str, path: &str, answer: &serde_json::Value) {
        // Only the garbage collector's deletes are judged (`checker::garbage_collector`).
        if component != GARBAGE_COLLECTOR {
            return;
        }
        let text = |pointer: &str| answer.pointer(pointer).and_then(serde_json::Value::as_str).unwrap_or_default();
        let owner_uids = answer
            .pointer("/metadata/ownerReferences")
            .and_then(serde_json::Value::as_array)
            .map(|refs| refs.iter().filter_map(|r| r.get("uid").and_then(serde_json::Value::as_str)))
            .into_iter()
            .flatten()
            .map(str::to_string)
            .collect();
        self.push(ManagerAct::Deleted {
            path: path.to_string(),
            uid: text("/metadata/uid").to_string(),
            owner_uids,
            rv: text("/metadata/resourceVersion").parse().unwrap_or(0),
        });
    }
}

/// Builds controller manager `i` of `spec` (1-based); its acts go to `log`.
pub fn build_controller_manager(
    handle: &Handle,
    spec: &ClusterSpec,
    i: usize,
    trace: &Trace,
    seeds: Seeds,
    panics: &Arc<Mutex<Vec<String>>>,
    log: &ManagerLog,
) -> AgentNode {
    let name = controller_manager_name(i);
    let apiserver = (i - 1) % spec.apiservers.len().max(1) + 1;
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 2, apiserver as u8)), APISERVER_PORT);
    // Each life draws its seed from a stream that continues across restarts.
    let lives_rng = Arc::new(Mutex::new(seeds.rng(&format!("{name}/manager"))));
    let expected_starts = Arc::new(AtomicUsize::new(0));
    let lives = super::Lives::new(expected_starts.clone(), panics);
    let token = super::access::token_of(super::access::CONTROLLER_MANAGER_USER);
    let recorder = |role: &'static str| -> Arc<dyn Observer> {
        Arc::new(Recorder { name: name.clone(), role, log: log.clone(), trace: trace.clone() })
    };
    let (manager_recorder, scheduler_recorder) = (recorder(CONTROLLER_MANAGER), recorder(Role::Scheduler.lease_name()));
    // The scheduler runs beside the controllers when there are nodes to schedule onto.
    let with_scheduler = spec.nodes > 0;
    let scheduler_token = super::access::token_of(super::access::SCHEDULER_USER);
    let bugs = spec.bugs.controllers.clone();
    let selection = Selection::parse(&["*".to_string()], &controllers::kcm::descriptors())
        .expect("every controller is known by its own name");
    let (node_name, trace) = (name.clone(), trace.clone());
    let restarts = Arc::new(AtomicUsize::new(0));
    let node = handle
        .create_node()
        .name(name.clone())
        .ip(controller_manager_ip(i))
        .restart_on_panic()
        .init(move || {
            lives.begin(&trace, &node_name);
            let life = restarts.fetch_add(1, Ordering::SeqCst);
            let seed = lives_rng.lock().expect("the generator lock is never poisoned").next_u64();
            let component = |token: &str, agent: &str, role: Role, recorder: &Arc<dyn Observer>, seed: u64| {
                let client = Client::new(Transport::Http(addr), Some(token.to_string()), agent)
                    .with_observer(Some(recorder.clone()));
                let config = Config {
                    role,
                    leader_elect: true,
                    // Upstream's identity is the host name and a uuid; the life number keeps restarts apart.
                    election: ElectorConfig::new(format!("{node_name}_{life}")),
                    seed,
                    root_ca: String::new(),
                    now_unix_us: Arc::new(now_unix_us),
                    observer: Some(recorder.clone()),
                    bugs: bugs.clone(),
                };
                manager::run(Arc::new(client), config)
            };
            let controllers = component(
                &token,
                "kube-controller-manager",
                Role::ControllerManager(selection.clone()),
                &manager_recorder,
                seed,
            );
            let scheduler = with_scheduler.then(|| {
                component(&scheduler_token, "kube-scheduler", Role::Scheduler, &scheduler_recorder, seed ^ 0x5c4e_d01e)
            });
            async move {
                match scheduler {
                    Some(scheduler) => {
                        futures::future::join(controllers, scheduler).await;
                    }
                    None => controllers.await,
                }
            }
        })
        .build();
    AgentNode { name, id: node.id(), node, expected_starts }
}
