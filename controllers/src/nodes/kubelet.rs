//! The pods of a fleet's nodes: what a kubelet's pod workers and status manager do, for every node of the
//! fleet at once. One subscription to the shared pod informer, filtered by `spec.nodeName`, feeds one
//! [`PodMachine`] per pod; a single loop advances them to their deadlines and sends what they ask for, in
//! key order: the status as a strategic merge patch of `pods/{name}/status` carrying the pod's UID (the
//! apiserver refuses it for another pod of the same name, as the kubelet's `PatchPodStatus` intends), and
//! the final deletion with grace period 0 and a UID precondition (`status_manager.go`, `canBeDeleted`).
//!
//! Pod IPs come from each node's /24, lowest free address first from `.2` (`.1` is the bridge's, `.255`
//! the broadcast), taken at admission and given back once the pod's sandbox is gone for good.
//!
//! No task per pod: a pod is a value with deadlines, and the loop sleeps until the earliest one or the next
//! informer event, whichever comes first.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use super::pod::{Now, PodMachine, Write};
use crate::client::resource::builtin;
use crate::client::STRATEGIC_MERGE_PATCH;
use crate::runtime::context::Context;
use crate::runtime::store::Notice;

/// What the pod runner knows of one node.
pub(crate) struct NodeSlot {
    pub(crate) name: String,
    pub(crate) host_ip: String,
    /// The first three octets of the node's pod CIDR.
    pub(crate) cidr: [u8; 3],
    /// The last octets handed out.
    used: BTreeSet<u8>,
}

impl NodeSlot {
    pub(crate) fn new(name: String, host_ip: String, cidr: [u8; 3]) -> NodeSlot {
        NodeSlot { name, host_ip, cidr, used: BTreeSet::new() }
    }

    fn ip(&self, last: u8) -> String {
        let [a, b, c] = self.cidr;
        format!("{a}.{b}.{c}.{last}")
    }

    /// `wanted` (the IP a pod taken over already shows) if it is this node's and free, else the lowest free.
    fn allocate(&mut self, wanted: Option<&str>) -> Option<u8> {
        let own = wanted.and_then(|ip| {
            let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
            match octets.as_slice() {
                [a, b, c, d] if [*a, *b, *c] == self.cidr && (2..=254).contains(d) && !self.used.contains(d) => {
                    Some(*d)
                }
                _ => None,
            }
        });
        let last = own.or_else(|| (2..=254).find(|d| !self.used.contains(d)))?;
        self.used.insert(last);
        Some(last)
    }
}

struct Tracked {
    node: usize,
    machine: PodMachine,
    ip: Option<u8>,
    /// The pod is gone or is another pod now: nothing more is sent for it.
    gone: bool,
}

/// How a write ended.
enum Sent {
    Done,
    /// The pod is gone, or its name now belongs to another pod.
    Gone,
    Retry,
}

/// A pod's seed: the fleet's, mixed with its UID (FNV-1a), so that each pod draws its own durations
/// whatever order the pods arrive in.
fn pod_seed(seed: u64, uid: &str) -> u64 {
    uid.bytes().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

struct Runner {
    ctx: Context,
    nodes: Vec<NodeSlot>,
    by_name: BTreeMap<String, usize>,
    pods: BTreeMap<String, Tracked>,
    seed: u64,
    start: Instant,
}

impl Runner {
    fn now(&self) -> Now {
        Now { at: self.start.elapsed(), unix_us: (self.ctx.now_unix_us)() }
    }

    fn release(&mut self, tracked: &mut Tracked) {
        if let Some(last) = tracked.ip.take() {
            self.nodes[tracked.node].used.remove(&last);
        }
    }

    fn forget(&mut self, key: &str) {
        if let Some(mut tracked) = self.pods.remove(key) {
            self.release(&mut tracked);
        }
    }

    fn handle(&mut self, notice: Notice, key: String, pod: Value, now: Now) {
        if matches!(notice, Notice::Delete | Notice::DeleteTombstone) {
            self.forget(&key);
            return;
        }
        let node_name = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or_default();
        let Some(&node) = self.by_name.get(node_name) else { return };
        let uid = pod.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default();
        match self.pods.get_mut(&key) {
            Some(tracked) if tracked.machine.uid() == uid => {
                tracked.machine.observe(&pod, now);
                return;
            }
            Some(_) => self.forget(&key),
            None => {}
        }
        let phase = pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or_default();
        let ip = if matches!(phase, "Succeeded" | "Failed") {
            None
        } else {
            self.nodes[node].allocate(pod.pointer("/status/podIP").and_then(Value::as_str))
        };
        let slot = &self.nodes[node];
        let machine = PodMachine::new(&pod, &slot.host_ip, ip.map(|last| slot.ip(last)), pod_seed(self.seed, uid), now);
        self.pods.insert(key, Tracked { node, machine, ip, gone: false });
    }

    async fn send(&self, key: &str, uid: &str, write: &Write) -> Sent {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let pods = builtin::pods();
        let result = match write {
            Write::Status(status) => {
                let patch = json!({"metadata": {"uid": uid}, "status": status});
                let path = pods.subresource_path(Some(namespace), name, "status");
                self.ctx.client.patch(&path, &patch, STRATEGIC_MERGE_PATCH).await
            }
            Write::Delete => {
                let options = json!({
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "gracePeriodSeconds": 0,
                    "preconditions": {"uid": uid},
                });
                self.ctx.client.delete(&pods.object_path(Some(namespace), name), Some(&options)).await
            }
        };
        match result {
            Ok(_) => Sent::Done,
            // Not found: deleted meanwhile. 409 and 422: the UID precondition, or the status patch's UID,
            // names a pod that is no longer the one under this name.
            Err(err) if err.is_not_found() || matches!(err.code(), Some(409 | 422)) => Sent::Gone,
            Err(err) => {
                tracing::debug!(pod = key, "writing for a simulated pod failed, will retry: {err}");
                Sent::Retry
            }
        }
    }

    /// Sends every write that is due, pod by pod in key order.
    async fn flush(&mut self) {
        let keys: Vec<String> = self.pods.keys().cloned().collect();
        for key in keys {
            loop {
                let now = self.now();
                let Some(tracked) = self.pods.get(&key).filter(|t| !t.gone) else { break };
                let Some(write) = tracked.machine.pending_write(now) else { break };
                let uid = tracked.machine.uid().to_string();
                let sent = self.send(&key, &uid, &write).await;
                let Some(tracked) = self.pods.get_mut(&key) else { break };
                match sent {
                    Sent::Done => tracked.machine.written(&write),
                    Sent::Gone => tracked.gone = true,
                    Sent::Retry => tracked.machine.write_failed(now),
                }
            }
        }
    }

    /// Advances every pod to `now`, giving back the IPs of sandboxes gone for good.
    fn advance(&mut self, now: Now) {
        let nodes = &mut self.nodes;
        for tracked in self.pods.values_mut() {
            tracked.machine.advance(now);
            if tracked.machine.released() {
                if let Some(last) = tracked.ip.take() {
                    nodes[tracked.node].used.remove(&last);
                }
            }
        }
    }

    fn next_deadline(&self) -> Option<Duration> {
        self.pods.values().filter(|t| !t.gone).filter_map(|t| t.machine.next_deadline()).min()
    }
}

/// Runs the pods bound to `nodes` for as long as the future lives.
pub(crate) async fn run(ctx: Context, nodes: Vec<NodeSlot>, seed: u64) {
    let informer = ctx.informers.get(&builtin::pods());
    let mut deltas = informer.subscribe();
    let by_name = nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();
    let mut runner = Runner { ctx, nodes, by_name, pods: BTreeMap::new(), seed, start: Instant::now() };
    loop {
        runner.flush().await;
        let wake = runner.next_deadline().map(|d| runner.start + d);
        let sleep = async {
            match wake {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            delta = deltas.recv() => {
                let Some(delta) = delta else { return };
                let now = runner.now();
                runner.handle(delta.notice, delta.key, delta.object, now);
                // Everything else already queued, before the next round of writes.
                while let Ok(delta) = deltas.try_recv() {
                    runner.handle(delta.notice, delta.key, delta.object, now);
                }
            }
            _ = sleep => {}
        }
        let now = runner.now();
        runner.advance(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_ips_are_the_lowest_free_of_the_nodes_cidr() {
        let mut slot = NodeSlot::new("node-1".into(), "10.0.0.1".into(), [10, 244, 1]);
        // (wanted, allocated last octet)
        let cases = [
            (None, Some(2)),
            (None, Some(3)),
            (Some("10.244.1.9"), Some(9)),
            (Some("10.244.1.9"), Some(4)),
            (Some("10.244.2.7"), Some(5)),
            (Some("10.244.1.255"), Some(6)),
        ];
        for (wanted, want) in cases {
            assert_eq!(slot.allocate(wanted), want, "{wanted:?}");
        }
        slot.used.remove(&3);
        assert_eq!(slot.allocate(None), Some(3), "a freed address is reused");
        assert_eq!(slot.ip(3), "10.244.1.3");
        let mut full = NodeSlot::new("n".into(), "h".into(), [10, 244, 2]);
        assert_eq!((2..=254).filter(|_| full.allocate(None).is_some()).count(), 253);
        assert_eq!(full.allocate(None), None);
    }

    #[test]
    fn pod_seeds_differ_by_uid_and_fleet() {
        assert_ne!(pod_seed(1, "a"), pod_seed(1, "b"));
        assert_ne!(pod_seed(1, "a"), pod_seed(2, "a"));
        assert_eq!(pod_seed(1, "a"), pod_seed(1, "a"));
    }
}
