//! Simulated nodes, as kwok simulates them: a kubelet stand-in per node and no containers. A [`Fleet`] of
//! nodes `node-<first>` .. registers its Nodes (or takes over existing ones), keeps each one's heartbeat
//! Lease in `kube-node-lease` and reports its status, and runs every pod bound to one of its nodes through
//! the phases a kubelet would report (kubelet 1.32: `pkg/kubelet/kubelet_node_status.go`,
//! `pkg/kubelet/nodestatus/setters.go`, `pkg/kubelet/nodelease`, `pkg/kubelet/status`, `kubelet_pods.go`;
//! `staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go`).
//!
//! Files: `node` (the Node object and its status), `lease` (the heartbeat Lease), `pod` (one pod's life as
//! a sans-IO state machine) and `status` (the pod status it reports), `kubelet` (the loop that runs a
//! fleet's pods off one shared pod informer).
//!
//! Several fleets may run side by side (node 3 alone, say), so that one node can be stopped by itself:
//! dropping a fleet's future stops its heartbeats and its pods where they are, as a node that went away;
//! running it again takes its Nodes over.
//!
//! Left out: images, volumes, probes other than the readiness probe's initial delay, readiness gates,
//! resource accounting and admission (a pod is run whatever the node's capacity), evictions, node status
//! changes (a node is always healthy while it runs), and the kubelet's events.

mod kubelet;
pub mod lease;
pub mod node;
pub mod pod;
pub mod status;

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::client::resource::builtin;
use crate::client::{ClientError, MERGE_PATCH, STRATEGIC_MERGE_PATCH};
use crate::runtime::context::Context;

pub use pod::{EXIT_CODE, RUN_SECONDS, SHUTDOWN_SECONDS};

/// `nodeStatusReportFrequency`: with a lease, an unchanged node status is reported this often.
const NODE_STATUS_REPORT_FREQUENCY: std::time::Duration = std::time::Duration::from_secs(300);
/// `registerWithAPIServer`'s back-off: from 100 ms doubling to 7 s.
const REGISTER_BACKOFF_INITIAL: std::time::Duration = std::time::Duration::from_millis(100);
const REGISTER_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(7);

/// A taint every node of a fleet carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    /// "" for none.
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// What every node of a fleet looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeTemplate {
    /// Capacity by resource name (`cpu`, `memory`, `pods`, `ephemeral-storage`), as quantities;
    /// allocatable is the same.
    pub capacity: BTreeMap<String, String>,
    /// Labels besides the kubelet's own (`kubernetes.io/hostname`, `/os`, `/arch` and their `beta.` forms),
    /// which a template cannot override.
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
}

impl Default for NodeTemplate {
    /// A small real node: 8 CPUs, 32 GiB, 100 GiB of disk, the kubelet's default of 110 pods.
    fn default() -> NodeTemplate {
        let capacity = [("cpu", "8"), ("memory", "32Gi"), ("pods", "110"), ("ephemeral-storage", "100Gi")];
        NodeTemplate {
            capacity: capacity.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
        }
    }
}

/// Nodes `node-<first>` to `node-<first + count - 1>` (indices from 1), all alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fleet {
    pub first: usize,
    pub count: usize,
    pub template: NodeTemplate,
}

impl Fleet {
    /// The fleet's node names, in order.
    pub fn node_names(&self) -> Vec<String> {
        (self.first..self.first + self.count).map(node::node_name).collect()
    }
}

/// Runs `fleet` for as long as the future lives: registers its nodes, then heartbeats them and runs their
/// pods. Its random choices start from `ctx.seed` and the fleet's first index.
pub async fn run(ctx: Context, fleet: Fleet) {
    let seed = ctx.seed ^ (fleet.first as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut registered = Vec::new();
    for index in fleet.first..fleet.first + fleet.count {
        registered.push((index, register(&ctx, &fleet.template, index, seed).await));
    }
    let slots = registered
        .iter()
        .map(|(i, _)| kubelet::NodeSlot::new(node::node_name(*i), node::internal_ip(*i), node::pod_cidr_base(*i)))
        .collect();
    let heartbeats = futures::future::join_all(
        registered
            .into_iter()
            .map(|(index, stored)| heartbeat(ctx.clone(), fleet.template.clone(), index, stored, seed)),
    );
    futures::future::join(heartbeats, kubelet::run(ctx.clone(), slots, seed)).await;
}

/// Registers node `index` until it is registered (or taken over), as `registerWithAPIServer` keeps trying;
/// the stored Node.
async fn register(ctx: &Context, template: &NodeTemplate, index: usize, seed: u64) -> Value {
    let mut backoff = REGISTER_BACKOFF_INITIAL;
    loop {
        match try_register(ctx, template, index, seed).await {
            Ok(node) => return node,
            Err(err) => {
                tracing::debug!(node = %node::node_name(index), "registering the node failed, will retry: {err}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(REGISTER_BACKOFF_MAX);
            }
        }
    }
}

/// `tryRegisterWithAPIServer`: create the Node; if it exists, take it over (its default labels put
/// right, its status reported).
async fn try_register(ctx: &Context, template: &NodeTemplate, index: usize, seed: u64) -> Result<Value, ClientError> {
    let nodes = builtin::nodes();
    let name = node::node_name(index);
    let object = node::node_object(template, index, seed, (ctx.now_unix_us)());
    match ctx.client.create(&nodes.collection_path(None), &object).await {
        Ok(created) => Ok(created),
        Err(err) if err.is_already_exists() => {
            let existing = ctx.client.get(&nodes.object_path(None, &name)).await?;
            if let Some(patch) = node::label_patch(&existing, &name) {
                ctx.client.patch(&nodes.object_path(None, &name), &patch, MERGE_PATCH).await?;
            }
            report_status(ctx, template, index, seed, &existing).await
        }
        Err(err) => Err(err),
    }
}

/// Patches the node's status (`PatchNodeStatus`), its conditions' transition times carried on from
/// `stored`; the stored Node after it.
async fn report_status(
    ctx: &Context,
    template: &NodeTemplate,
    index: usize,
    seed: u64,
    stored: &Value,
) -> Result<Value, ClientError> {
    let status = node::status(template, index, seed, (ctx.now_unix_us)(), Some(stored));
    let path = builtin::nodes().subresource_path(None, &node::node_name(index), "status");
    ctx.client.patch(&path, &json!({"status": status}), STRATEGIC_MERGE_PATCH).await
}

/// One node's heartbeats: its lease renewed every 10 s (jittered), its status reported every 5 min.
async fn heartbeat(ctx: Context, template: NodeTemplate, index: usize, mut stored: Value, seed: u64) {
    let name = node::node_name(index);
    let uid = stored.pointer("/metadata/uid").and_then(Value::as_str).map(String::from);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9));
    let mut leases = lease::LeaseController::new(ctx.client.clone(), &name, uid, ctx.now_unix_us.clone());
    let mut reported = Instant::now();
    loop {
        leases.sync().await;
        if reported.elapsed() >= NODE_STATUS_REPORT_FREQUENCY {
            match report_status(&ctx, &template, index, seed, &stored).await {
                Ok(node) => {
                    stored = node;
                    reported = Instant::now();
                }
                Err(err) => tracing::debug!(node = %name, "reporting the node status failed, will retry: {err}"),
            }
        }
        let jitter = 1.0 + lease::RENEW_JITTER * rng.random::<f64>();
        tokio::time::sleep(lease::RENEW_INTERVAL.mul_f64(jitter)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleets_name_their_nodes_from_their_first_index() {
        // (first, count, names)
        let cases = [(1, 2, vec!["node-1", "node-2"]), (3, 1, vec!["node-3"]), (5, 0, vec![])];
        for (first, count, names) in cases {
            let fleet = Fleet { first, count, template: NodeTemplate::default() };
            assert_eq!(fleet.node_names(), names);
        }
        let template = NodeTemplate::default();
        assert_eq!(template.capacity["cpu"], "8");
        assert_eq!(template.capacity["memory"], "32Gi");
        assert_eq!(template.capacity["pods"], "110");
    }
}
