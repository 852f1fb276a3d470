//! The node lifecycle controller (`node-lifecycle-controller`, kube-controller-manager 1.32,
//! `pkg/controller/nodelifecycle/node_lifecycle_controller.go`, with `scheduler/rate_limited_queue.go` and
//! the helpers of `pkg/controller/util/node` it uses): it watches every node's heartbeat (its Lease's
//! `renewTime` and its Ready condition) and
//!
//! - every `--node-monitor-period` (5 s), sets the conditions of a node silent past
//!   `--node-monitor-grace-period` (50 s in 1.32; `--node-startup-grace-period`, 60 s, for one that never
//!   posted a status) to Unknown, marks the pods on a node that stopped being Ready not ready, and queues an
//!   unhealthy node for its NoExecute taint (`node.kubernetes.io/not-ready` or `/unreachable`), taking
//!   both off again once it is Ready;
//! - every 100 ms, puts those NoExecute taints on at each zone's rate (`--node-eviction-rate` 0.1/s, the
//!   secondary rate in a large partially disrupted zone, none in a small one or when every zone is fully
//!   disrupted) — the taint eviction controller then deletes the pods that do not tolerate them;
//! - on every node change, keeps the NoSchedule taints in step with the node's conditions and
//!   `spec.unschedulable` (`doNoScheduleTaintingPass`) and the beta OS and arch labels with the stable ones.
//!
//! The rules are sans-IO in `health` (the health judgement, zone states), `taints` (which taints, how a
//! list changes) and `queue` (the rate-limited tainting queue); this file sends the requests. Everything
//! runs in one task, one step at a time, where upstream runs its loops side by side.
//!
//! Time: the health judgement and the tainting rate run on the controller's own clock ([`LocalClock`]:
//! tokio's, which is madsim's under simulation, anchored at `now_unix_us` when the controller starts), as
//! upstream judges on its local clock to keep skew out; timestamps written (conditions, `timeAdded`) come
//! from `now_unix_us`. Events go out as `node-controller`, upstream's component name.
//!
//! Left out: the DaemonSet informer (1.32 no longer uses it), metrics, and the built-in taint manager of a
//! cluster without `SeparateTaintEvictionController` (see `tainteviction`).

pub mod health;
pub mod queue;
pub mod taints;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use apiserver::registry::system::rfc3339;
use serde_json::{json, Value};
use tokio::time::{sleep, sleep_until, Instant};

use super::Context;
use crate::client::resource::builtin;
use crate::client::{ClientError, MERGE_PATCH};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::time::parse_time_us;
use health::{Grace, NodeHealth, Rates, ZoneState};
use queue::TaintQueue;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "node-lifecycle-controller", aliases: &["nodelifecycle"], disabled_by_default: false };

/// The event source upstream's recorder names.
pub const EVENT_COMPONENT: &str = "node-controller";
/// `scheduler.NodeEvictionPeriod`: how often the tainting queues are worked.
const NODE_EVICTION_PERIOD: Duration = Duration::from_millis(100);
/// `scheduler.NodeHealthUpdateRetry` and `retrySleepTime`.
const NODE_HEALTH_UPDATE_RETRY: usize = 5;
const RETRY_SLEEP: Duration = Duration::from_millis(20);
/// `UpdateTaintBackoff`: tries of a taint edit that meets a conflict, and the wait between.
const TAINT_UPDATE_TRIES: usize = 5;
const TAINT_UPDATE_BACKOFF: Duration = Duration::from_millis(100);
/// How long a queued node whose state could not be read waits before it is tried again.
const TAINT_RETRY_US: i64 = 50_000;

/// The controller's settings (`NodeLifecycleControllerConfiguration` and `--node-monitor-period`);
/// [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub node_monitor_period: Duration,
    pub node_monitor_grace_period: Duration,
    pub node_startup_grace_period: Duration,
    pub node_eviction_rate: f32,
    pub secondary_node_eviction_rate: f32,
    pub large_cluster_size_threshold: i32,
    pub unhealthy_zone_threshold: f32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            node_monitor_period: Duration::from_secs(5),
            node_monitor_grace_period: Duration::from_secs(50),
            node_startup_grace_period: Duration::from_secs(60),
            node_eviction_rate: 0.1,
            secondary_node_eviction_rate: 0.01,
            large_cluster_size_threshold: 50,
            unhealthy_zone_threshold: 0.55,
        }
    }
}

/// A controller's own clock in unix µs: tokio's, anchored at the context's time of day when it starts.
#[derive(Clone)]
pub struct LocalClock {
    origin: Instant,
    origin_us: i64,
}

impl LocalClock {
    pub fn start(ctx: &Context) -> LocalClock {
        LocalClock { origin: Instant::now(), origin_us: (ctx.now_unix_us)() }
    }

    pub fn now_us(&self) -> i64 {
        self.origin_us + self.origin.elapsed().as_micros() as i64
    }

    /// The tokio instant of `unix_us` on this clock.
    pub fn instant_of(&self, unix_us: i64) -> Instant {
        self.origin + Duration::from_micros(unix_us.saturating_sub(self.origin_us).max(0) as u64)
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, Options::default()).await
}

pub async fn run_with(ctx: Context, options: Options) {
    let mut controller = Controller::new(ctx, options);
    let mut node_events = controller.nodes.subscribe();
    let mut pod_events = controller.pods.subscribe();
    controller.nodes.wait_synced().await;
    controller.leases.wait_synced().await;
    controller.pods.wait_synced().await;
    let mut next_monitor = Instant::now();
    let mut next_tainting = Instant::now();
    loop {
        tokio::select! {
            biased;
            Some(delta) = node_events.recv() => {
                if !matches!(delta.notice, Notice::Delete | Notice::DeleteTombstone) {
                    controller.node_changed(&delta.key).await;
                }
            }
            Some(delta) = pod_events.recv() => {
                let node = |p: Option<&Value>| p.and_then(|p| p.pointer("/spec/nodeName")).and_then(Value::as_str)
                    .unwrap_or("").to_string();
                let now_on = node(Some(&delta.object));
                if delta.notice != Notice::Delete && delta.notice != Notice::DeleteTombstone && !now_on.is_empty()
                    && node(delta.old.as_ref()) != now_on
                {
                    controller.pod_assigned(&delta.key).await;
                }
            }
            _ = sleep_until(next_monitor) => {
                controller.monitor_node_health().await;
                next_monitor = Instant::now() + controller.options.node_monitor_period;
            }
            _ = sleep_until(next_tainting) => {
                controller.no_execute_tainting_pass().await;
                next_tainting = Instant::now() + NODE_EVICTION_PERIOD;
            }
        }
    }
}

struct Controller {
    ctx: Context,
    options: Options,
    clock: LocalClock,
    events: Recorder,
    nodes: Informer,
    leases: Informer,
    pods: Informer,
    /// `knownNodeSet`.
    known: BTreeMap<String, Value>,
    /// `nodeHealthMap`.
    health: BTreeMap<String, NodeHealth>,
    zone_states: BTreeMap<String, ZoneState>,
    /// `zoneNoExecuteTainter`.
    tainters: BTreeMap<String, TaintQueue>,
    /// `nodesToRetry`: nodes whose pods could not all be marked not ready.
    retry: BTreeSet<String>,
}

fn name_of(obj: &Value) -> String {
    obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string()
}

/// An ObjectReference to a Node, as `RecordNodeEvent` and `RecordNodeStatusChange` make.
fn node_ref(node: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name_of(node),
        "uid": node.pointer("/metadata/uid").cloned().unwrap_or(json!(""))}})
}

impl Controller {
    fn new(ctx: Context, options: Options) -> Controller {
        Controller {
            clock: LocalClock::start(&ctx),
            events: ctx.events.for_component(EVENT_COMPONENT),
            nodes: ctx.informers.get(&builtin::nodes()),
            leases: ctx.informers.get(&builtin::leases()),
            pods: ctx.informers.get(&builtin::pods()),
            ctx,
            options,
            known: BTreeMap::new(),
            health: BTreeMap::new(),
            zone_states: BTreeMap::new(),
            tainters: BTreeMap::new(),
            retry: BTreeSet::new(),
        }
    }

    fn stamp(&self) -> String {
        rfc3339((self.ctx.now_unix_us)().div_euclid(1_000_000))
    }

    fn grace(&self) -> Grace {
        Grace {
            monitor_us: self.options.node_monitor_grace_period.as_micros() as i64,
            startup_us: self.options.node_startup_grace_period.as_micros() as i64,
        }
    }

    fn rates(&self) -> Rates {
        Rates {
            eviction_qps: self.options.node_eviction_rate,
            secondary_eviction_qps: self.options.secondary_node_eviction_rate,
            large_cluster_threshold: self.options.large_cluster_size_threshold,
            unhealthy_zone_threshold: self.options.unhealthy_zone_threshold,
        }
    }

    fn pods_on(&self, node: &str) -> Vec<Value> {
        // Every node's pass walks every pod: over the cache's shared pods, copying only this node's.
        self.pods
            .list_shared()
            .into_iter()
            .filter(|p| p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node))
            .map(std::sync::Arc::unwrap_or_clone)
            .collect()
    }

    /// `doNoScheduleTaintingPass` and `reconcileNodeLabels` for one changed node.
    async fn node_changed(&mut self, name: &str) {
        let Some(node) = self.nodes.get(name) else { return };
        let (add, remove) = taints::no_schedule_diff(&node);
        if !(add.is_empty() && remove.is_empty()) {
            if let Err(err) = self.swap_taints(&node, &add, &remove).await {
                tracing::debug!(node = name, "failed to taint NoSchedule on the node: {err}");
            }
        }
        let fixes = taints::label_fixes(&node);
        if !fixes.is_empty() {
            let patch = json!({"metadata": {"labels": fixes}});
            if let Err(err) =
                self.ctx.client.patch(&builtin::nodes().object_path(None, name), &patch, MERGE_PATCH).await
            {
                tracing::debug!(node = name, "failed to reconcile the node's labels: {err}");
            }
        }
    }

    /// `processPod`: a pod newly bound to a node that is not Ready is marked not ready at once.
    async fn pod_assigned(&mut self, key: &str) {
        let Some(pod) = self.pods.get(key) else { return };
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("").to_string();
        let Some(health) = self.health.get(&node) else { return };
        if self.nodes.get(&node).is_none() {
            return;
        }
        let Some(ready) = health::condition(&health.status, "Ready") else { return };
        if ready["status"] != "True" {
            if let Err(err) = self.mark_pods_not_ready(&[pod], &node).await {
                tracing::debug!(pod = key, "unable to mark the pod not ready: {err}");
            }
        }
    }

    /// `SwapNodeControllerTaint` (`AddOrUpdateTaintOnNode` and `RemoveTaintOffNode` in one patch): retried
    /// on a conflict against the node read afresh.
    async fn swap_taints(&self, cached: &Value, add: &[Value], remove: &[Value]) -> Result<(), ClientError> {
        let name = name_of(cached);
        let path = builtin::nodes().object_path(None, &name);
        let stamp = self.stamp();
        let mut node = cached.clone();
        for attempt in 1..=TAINT_UPDATE_TRIES {
            let Some(new) = taints::swap(&taints::node_taints(&node), add, remove, &stamp) else { return Ok(()) };
            let taints = if new.is_empty() { Value::Null } else { Value::Array(new) };
            let rv = node.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null);
            let patch = json!({"metadata": {"resourceVersion": rv}, "spec": {"taints": taints}});
            match self.ctx.client.patch(&path, &patch, MERGE_PATCH).await {
                Ok(_) => return Ok(()),
                Err(err) if err.is_conflict() && attempt < TAINT_UPDATE_TRIES => {
                    sleep(TAINT_UPDATE_BACKOFF).await;
                    node = self.ctx.client.get(&path).await?;
                }
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// `markNodeAsReachable`: both NoExecute taints off, and the node out of its zone's queue.
    async fn mark_reachable(&mut self, node: &Value) -> Result<bool, ClientError> {
        self.swap_taints(node, &[], &[taints::unreachable_no_execute(), taints::not_ready_no_execute()]).await?;
        let zone = health::zone_key(node);
        Ok(self.tainters.get_mut(&zone).is_some_and(|q| q.remove(&name_of(node))))
    }

    /// `markNodeForTainting`: (re)queues the node unless it already carries the taint `status` calls for.
    fn mark_for_tainting(&mut self, node: &Value, status: &str) -> bool {
        let name = name_of(node);
        let now_us = self.clock.now_us();
        let Some(queue) = self.tainters.get_mut(&health::zone_key(node)) else { return false };
        let template =
            if status == "False" { taints::not_ready_no_execute() } else { taints::unreachable_no_execute() };
        if !taints::has_taint(node, &template) {
            queue.remove(&name);
        }
        queue.add(&name, now_us)
    }

    /// `addPodEvictorForNewZone`.
    fn add_zone(&mut self, node: &Value) {
        let zone = health::zone_key(node);
        if !self.zone_states.contains_key(&zone) {
            self.zone_states.insert(zone.clone(), ZoneState::Initial);
            self.tainters.insert(zone, TaintQueue::new(self.options.node_eviction_rate, self.clock.now_us()));
        }
    }

    /// `MarkPodsNotReady`: the Ready condition of each pod on `node` set False through `pods/{name}/status`,
    /// each with a `NodeNotReady` event.
    async fn mark_pods_not_ready(&self, pods: &[Value], node: &str) -> Result<(), ClientError> {
        let mut failure = None;
        for pod in pods {
            if pod.pointer("/spec/nodeName").and_then(Value::as_str) != Some(node) {
                continue;
            }
            let mut pod = pod.clone();
            let Some(ready) = pod
                .pointer_mut("/status/conditions")
                .and_then(Value::as_array_mut)
                .and_then(|cs| cs.iter_mut().find(|c| c["type"] == "Ready"))
            else {
                continue;
            };
            if ready["status"] == "False" {
                continue;
            }
            ready["status"] = json!("False");
            ready["lastTransitionTime"] = json!(self.stamp());
            let ns = pod.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("").to_string();
            let path = builtin::pods().subresource_path(Some(&ns), &name_of(&pod), "status");
            match self.ctx.client.update(&path, &pod).await {
                Err(err) if err.is_not_found() => continue,
                Err(err) => failure = Some(err),
                Ok(_) => {}
            }
            self.events.record(&pod, EventType::Warning, "NodeNotReady", "Node is not ready").await;
        }
        failure.map_or(Ok(()), Err)
    }

    /// `tryUpdateNodeHealth` with its retries: the observed and current Ready conditions, or `None` when
    /// the node's health could not be written.
    async fn update_health(&mut self, node: &Value) -> Option<(Value, Option<Value>, Value)> {
        let name = name_of(node);
        let path = builtin::nodes().subresource_path(None, &name, "status");
        let mut node = node.clone();
        for _ in 0..NODE_HEALTH_UPDATE_RETRY {
            let lease = self.leases.get(&format!("kube-node-lease/{name}"));
            let renew_us = lease
                .as_ref()
                .and_then(|l| l.pointer("/spec/renewTime"))
                .and_then(Value::as_str)
                .and_then(parse_time_us);
            let judged = health::judge(
                self.health.get(&name),
                &node,
                renew_us,
                self.clock.now_us(),
                &self.stamp(),
                self.grace(),
            );
            let Some(status) = judged.status_update.clone() else {
                self.health.insert(name.clone(), judged.health);
                return Some((judged.observed_ready, judged.current_ready, node));
            };
            let mut updated = node.clone();
            updated["status"] = status;
            match self.ctx.client.update(&path, &updated).await {
                Ok(stored) => {
                    self.health.insert(name.clone(), judged.health);
                    return Some((judged.observed_ready, judged.current_ready, stored));
                }
                Err(err) => {
                    tracing::debug!(node = %name, "error updating the node's health: {err}");
                    sleep(RETRY_SLEEP).await;
                    node = self.ctx.client.get(&builtin::nodes().object_path(None, &name)).await.ok()?;
                }
            }
        }
        None
    }

    /// `processTaintBaseEviction`.
    async fn process_taint_based_eviction(&mut self, node: &Value, observed: &Value) {
        let (swap_from, status) = match observed["status"].as_str().unwrap_or("") {
            "False" => (taints::unreachable_no_execute(), "False"),
            "Unknown" => (taints::not_ready_no_execute(), "Unknown"),
            "True" => {
                if let Err(err) = self.mark_reachable(node).await {
                    tracing::debug!(node = %name_of(node), "failed to remove taints from the node: {err}");
                }
                return;
            }
            _ => return,
        };
        // A node tainted for the other unhealthy state gets its taint swapped at once, unrated.
        if taints::has_taint(node, &swap_from) {
            let to = if status == "False" { taints::not_ready_no_execute() } else { taints::unreachable_no_execute() };
            if let Err(err) = self.swap_taints(node, &[to], &[swap_from]).await {
                tracing::debug!(node = %name_of(node), "failed to swap the NoExecute taint: {err}");
            }
        } else {
            self.mark_for_tainting(node, status);
        }
    }

    /// `monitorNodeHealth`.
    async fn monitor_node_health(&mut self) {
        let nodes = self.nodes.list();
        let listed: BTreeSet<String> = nodes.iter().map(name_of).collect();
        for node in &nodes {
            let name = name_of(node);
            if self.known.contains_key(&name) {
                self.add_zone(node);
                continue;
            }
            let message = format!("Registered Node {name} in Controller");
            self.events.record(&node_ref(node), EventType::Normal, "RegisteredNode", &message).await;
            self.known.insert(name, node.clone());
            self.add_zone(node);
            if let Err(err) = self.mark_reachable(node).await {
                tracing::debug!(node = %name_of(node), "failed to remove taints from the node: {err}");
            }
        }
        let gone: Vec<Value> =
            self.known.iter().filter(|(n, _)| !listed.contains(*n)).map(|(_, v)| v.clone()).collect();
        for node in gone {
            let message = format!("Removing Node {} from Controller", name_of(&node));
            self.events.record(&node_ref(&node), EventType::Normal, "RemovingNode", &message).await;
            self.known.remove(&name_of(&node));
        }

        let mut zone_ready: BTreeMap<String, Vec<Option<String>>> = BTreeMap::new();
        for node in &nodes {
            let name = name_of(node);
            let Some((observed, current, node)) = self.update_health(node).await else { continue };
            if !health::excluded_from_disruption(&node) {
                let status = current.as_ref().map(|c| health::ready_status(Some(c)).to_string());
                zone_ready.entry(health::zone_key(&node)).or_default().push(status);
            }
            if let Some(current) = &current {
                let pods = self.pods_on(&name);
                self.process_taint_based_eviction(&node, &observed).await;
                let went_down = current["status"] != "True" && observed["status"] == "True";
                if went_down {
                    let message = format!("Node {name} status is now: NodeNotReady");
                    self.events.record(&node_ref(&node), EventType::Normal, "NodeNotReady", &message).await;
                }
                if went_down || (self.retry.contains(&name) && observed["status"] != "True") {
                    if let Err(err) = self.mark_pods_not_ready(&pods, &name).await {
                        tracing::debug!(node = %name, "unable to mark all pods not ready, will retry: {err}");
                        self.retry.insert(name);
                        continue;
                    }
                }
            }
            self.retry.remove(&name);
        }
        self.handle_disruption(&zone_ready, &nodes).await;
    }

    /// `handleDisruption`: each zone's new state and tainting rate; when every zone is fully disrupted the
    /// trouble is taken to be the controller's own view, so all NoExecute taints come off and tainting stops.
    async fn handle_disruption(&mut self, zone_ready: &BTreeMap<String, Vec<Option<String>>>, nodes: &[Value]) {
        let mut new_states = BTreeMap::new();
        let mut all_are_fully_disrupted = true;
        for (zone, ready) in zone_ready {
            let statuses: Vec<Option<&str>> = ready.iter().map(|s| s.as_deref()).collect();
            let (_, state) = health::zone_state(&statuses, self.options.unhealthy_zone_threshold);
            all_are_fully_disrupted &= state == ZoneState::FullDisruption;
            new_states.insert(zone.clone(), state);
            self.zone_states.entry(zone.clone()).or_insert(ZoneState::Initial);
        }
        self.zone_states.retain(|zone, _| zone_ready.contains_key(zone));
        let all_were_fully_disrupted = self.zone_states.values().all(|s| *s == ZoneState::FullDisruption);
        if all_are_fully_disrupted && all_were_fully_disrupted {
            return;
        }
        let now_us = self.clock.now_us();
        if all_are_fully_disrupted {
            for node in nodes {
                if let Err(err) = self.mark_reachable(node).await {
                    tracing::debug!(node = %name_of(node), "failed to remove taints from the node: {err}");
                }
            }
            for (zone, state) in self.zone_states.iter_mut() {
                if let Some(q) = self.tainters.get_mut(zone) {
                    q.swap_limiter(0.0, now_us);
                }
                *state = ZoneState::FullDisruption;
            }
            return;
        }
        if all_were_fully_disrupted {
            // Leaving the controller-wide disruption: every node starts its grace period afresh.
            for health in self.health.values_mut() {
                health.probe_us = now_us;
                health.ready_transition_us = now_us;
            }
        }
        let rates = self.rates();
        for (zone, state) in self.zone_states.iter_mut() {
            let new = new_states.get(zone).copied().unwrap_or(ZoneState::Normal);
            if *state == new && !all_were_fully_disrupted {
                continue;
            }
            let size = zone_ready.get(zone).map_or(0, Vec::len);
            if let (Some(q), Some(qps)) = (self.tainters.get_mut(zone), health::zone_rate(new, size, &rates)) {
                q.swap_limiter(qps, now_us);
            }
            *state = new;
        }
    }

    /// `doNoExecuteTaintingPass`: each zone's due nodes, at its rate, get the NoExecute taint their Ready
    /// condition calls for (and lose the other).
    async fn no_execute_tainting_pass(&mut self) {
        let zones: Vec<String> = self.tainters.keys().cloned().collect();
        for zone in zones {
            loop {
                let now_us = self.clock.now_us();
                let Some(name) = self.tainters.get_mut(&zone).and_then(|q| q.next_due(now_us)) else { break };
                let (done, retry_us) = match self.nodes.get(&name) {
                    None => (true, 0),
                    Some(node) => match health::condition(node.get("status").unwrap_or(&Value::Null), "Ready") {
                        None => (false, TAINT_RETRY_US),
                        Some(ready) => {
                            let (add, remove) = match ready["status"].as_str() {
                                Some("False") => (taints::not_ready_no_execute(), taints::unreachable_no_execute()),
                                Some("Unknown") => (taints::unreachable_no_execute(), taints::not_ready_no_execute()),
                                _ => (Value::Null, Value::Null),
                            };
                            if add.is_null() {
                                (true, 0)
                            } else {
                                match self.swap_taints(&node, &[add], &[remove]).await {
                                    Ok(()) => (true, 0),
                                    Err(err) => {
                                        tracing::debug!(node = %name, "failed to taint the node NoExecute: {err}");
                                        (false, 0)
                                    }
                                }
                            }
                        }
                    },
                };
                if let Some(q) = self.tainters.get_mut(&zone) {
                    q.finish(&name, done, retry_us, self.clock.now_us());
                }
            }
        }
    }
}
