//! Simulated nodes: `[cluster] nodes = N` runs a kwok-like kubelet (`controllers::nodes`, the same code the
//! binary's `--nodes` runs) for Kubernetes Node `node-i` on a simulation node of the same name at
//! `10.0.5.i`, talking HTTP to one apiserver (`apiserver-((i-1) mod A)+1`) through the simulated network. It
//! registers its Node, heartbeats its Lease in `kube-node-lease` and runs the pods bound to it through
//! their phases, with durations drawn from the seed. Kills, pauses and partitions reach it like any node:
//! a dead or cut-off kubelet stops heartbeating and its pods stay as they were; a restart re-runs the init,
//! which takes the Node over again, as a restarted kubelet does.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use controllers::client::{Client, Transport};
use controllers::kcm::Context;
use controllers::nodes::{Fleet, NodeTemplate};
use controllers::runtime::events::Recorder;
use controllers::runtime::informer::Informers;
use madsim::runtime::Handle;
use rand::RngCore;

use super::agent::AgentNode;
use super::apiserver::APISERVER_PORT;
use super::{ClusterSpec, Seeds};
use crate::trace::Trace;

/// The name of simulated node `i` (1-based): the simulation node's and the Kubernetes Node's.
pub fn kubelet_name(i: usize) -> String {
    controllers::nodes::node::node_name(i)
}

fn kubelet_ip(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 5, i as u8))
}

/// The simulation's time of day in Unix microseconds, from the epoch the apiservers' clock starts at.
fn now_unix_us() -> i64 {
    1_750_000_000_000_000 + madsim::time::TimeHandle::current().elapsed().as_micros() as i64
}

/// Builds simulated node `i` of `spec` (1-based).
pub fn build_kubelet(
    handle: &Handle,
    spec: &ClusterSpec,
    i: usize,
    trace: &Trace,
    seeds: Seeds,
    panics: &Arc<Mutex<Vec<String>>>,
) -> AgentNode {
    let name = kubelet_name(i);
    let apiserver = (i - 1) % spec.apiservers.len().max(1) + 1;
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 2, apiserver as u8)), APISERVER_PORT);
    // Each life draws its seed from a stream that continues across restarts.
    let lives_rng = Arc::new(Mutex::new(seeds.rng(&format!("{name}/kubelet"))));
    let expected_starts = Arc::new(AtomicUsize::new(0));
    let lives = super::Lives::new(expected_starts.clone(), panics);
    let token = super::access::token_of(super::access::NODE_USER);
    let (node_name, trace) = (name.clone(), trace.clone());
    let node = handle
        .create_node()
        .name(name.clone())
        .ip(kubelet_ip(i))
        .restart_on_panic()
        .init(move || {
            lives.begin(&trace, &node_name);
            let seed = lives_rng.lock().expect("the generator lock is never poisoned").next_u64();
            let client = Arc::new(Client::new(Transport::Http(addr), Some(token.clone()), "kubelet"));
            let now: Arc<dyn Fn() -> i64 + Send + Sync> = Arc::new(now_unix_us);
            let ctx = Context {
                informers: Arc::new(Informers::new(client.clone(), seed)),
                events: Recorder::new(client.clone(), "kubelet", now.clone()),
                client,
                seed,
                root_ca: String::new(),
                now_unix_us: now,
                bugs: Default::default(),
            };
            controllers::nodes::run(ctx, Fleet { first: i, count: 1, template: NodeTemplate::default() })
        })
        .build();
    AgentNode { name, id: node.id(), node, expected_starts }
}
