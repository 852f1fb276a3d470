//! The scheduler's state machine, sans-IO: informer changes in, scheduling cycles run, and the requests
//! to send out as [`Action`]s (upstream's `eventhandlers.go`, `schedule_one.go`'s `scheduleOne`,
//! `handleSchedulingFailure` and binding cycle, 1.32).
//!
//! Pods: an unassigned pod this scheduler is responsible for (`spec.schedulerName: default-scheduler`)
//! and that is not being deleted waits in the queue; an assigned one counts in the cache, until deleted
//! or finished (the scheduler's informer leaves out `Succeeded` and `Failed` pods, so a pod turning
//! terminal counts as deleted here). Nodes: added, updated and removed in the cache; the changes that may
//! help waiting pods (a node added, its labels, taints, `unschedulable` or allocatable changed, an
//! assigned pod gone) move them. A cycle that picks a node assumes the pod there before binding it; a
//! failed binding forgets it and sends it back to the queue.

use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::algorithm::{failure_message, Algorithm};
use super::cache::Cache;
use super::facts::{NodeFacts, PodFacts};
use super::queue::{ClusterEvent, QueuedPodInfo, SchedulingQueue};
use crate::runtime::store::Notice;

/// The scheduler's name, which pods select it by.
pub const SCHEDULER_NAME: &str = "default-scheduler";
/// `v1.PodReasonUnschedulable`.
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";
/// `v1.PodReasonSchedulerError`.
pub const REASON_SCHEDULER_ERROR: &str = "SchedulerError";

/// A request the shell sends for the core.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Bind the pod (its informer object) to `node`; report the outcome with [`Core::binding_done`].
    Bind { pod: Value, info: Box<QueuedPodInfo>, cycle: u64, node: String },
    /// Record a `FailedScheduling` event and set `PodScheduled=False` with `reason` and `message`.
    ReportFailure { pod: Value, reason: &'static str, message: String },
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn is_assigned(pod: &Value) -> bool {
    !str_at(pod, "/spec/nodeName").is_empty()
}

fn is_terminal(pod: &Value) -> bool {
    matches!(str_at(pod, "/status/phase"), "Succeeded" | "Failed")
}

/// Whether this scheduler schedules the unassigned `pod`.
pub fn responsible_for(pod: &Value) -> bool {
    str_at(pod, "/spec/schedulerName") == SCHEDULER_NAME
        && str_at(pod, "/metadata/deletionTimestamp").is_empty()
        && !is_terminal(pod)
}

/// `isPodUpdated`: whether more than the status and bookkeeping changed.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |pod: &Value| {
        let mut pod = pod.clone();
        if let Some(map) = pod.as_object_mut() {
            map.remove("status");
        }
        if let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in ["resourceVersion", "generation", "managedFields", "finalizers"] {
                meta.remove(field);
            }
        }
        pod
    };
    strip(old) != strip(new)
}

/// The scheduler's state.
pub struct Core {
    pub queue: SchedulingQueue,
    pub cache: Cache,
    pub algorithm: Algorithm,
    pub rng: ChaCha8Rng,
}

impl Core {
    pub fn new(rng: ChaCha8Rng) -> Core {
        Core { queue: SchedulingQueue::new(), cache: Cache::default(), algorithm: Algorithm::default(), rng }
    }

    /// A pod informer change.
    pub fn on_pod(&mut self, notice: &Notice, old: Option<&Value>, object: &Value, now_ms: u64) {
        let facts = PodFacts::from_json(object);
        let deleted = matches!(notice, Notice::Delete | Notice::DeleteTombstone);
        if is_assigned(object) {
            // Bound: out of the queue, into the cache while it holds its node.
            self.queue.delete(&facts.key);
            if deleted || is_terminal(object) {
                let was_counted = self.cache.node(&facts.node_name).is_some_and(|n| n.pods.contains_key(&facts.key));
                self.cache.remove_pod(&facts.key);
                if was_counted {
                    self.queue.move_all_to_active_or_backoff(ClusterEvent::AssignedPodDelete, now_ms);
                }
            } else {
                self.cache.add_or_update_pod(facts);
            }
            return;
        }
        if deleted || !responsible_for(object) {
            self.queue.delete(&facts.key);
            return;
        }
        if self.cache.is_assumed(&facts.key) {
            // Its binding is under way; the bound pod arrives as an update with its node.
            return;
        }
        match (notice, old) {
            (Notice::Update, Some(old)) => self.queue.update(facts, spec_changed(old, object), now_ms),
            _ => self.queue.add(facts, now_ms),
        }
    }

    /// A node informer change.
    pub fn on_node(&mut self, notice: &Notice, old: Option<&Value>, object: &Value, now_ms: u64) {
        let facts = NodeFacts::from_json(object);
        match notice {
            Notice::Delete | Notice::DeleteTombstone => self.cache.remove_node(&facts.name),
            Notice::Update if old.is_some() => {
                let before = NodeFacts::from_json(old.expect("checked"));
                let labels_or_taints = before.labels != facts.labels
                    || before.taints != facts.taints
                    || before.unschedulable != facts.unschedulable;
                let allocatable = before.allocatable != facts.allocatable;
                self.cache.add_or_update_node(facts);
                if labels_or_taints {
                    self.queue.move_all_to_active_or_backoff(ClusterEvent::NodeLabelOrTaintChange, now_ms);
                }
                if allocatable {
                    self.queue.move_all_to_active_or_backoff(ClusterEvent::NodeAllocatableChange, now_ms);
                }
            }
            _ => {
                self.cache.add_or_update_node(facts);
                self.queue.move_all_to_active_or_backoff(ClusterEvent::NodeAdd, now_ms);
            }
        }
    }

    /// The periodic flushes: completed backoffs, and pods unschedulable for too long.
    pub fn flush(&mut self, now_ms: u64, leftover: bool) {
        self.queue.flush_backoff_completed(now_ms);
        if leftover {
            self.queue.flush_unschedulable_leftover(now_ms);
        }
    }

    /// `scheduleOne`: the next pod's cycle, given the informer's current view of pods (`lookup` by key).
    /// `None` when no pod waits or the popped one needs nothing (gone, bound, being deleted).
    pub fn schedule_one(&mut self, now_ms: u64, lookup: impl Fn(&str) -> Option<Value>) -> Option<Action> {
        let (mut info, cycle) = self.queue.pop(now_ms)?;
        let key = info.pod.key.clone();
        let current = lookup(&key);
        let Some(pod) = current.filter(|p| !is_assigned(p) && responsible_for(p)) else {
            self.queue.done(&key);
            return None;
        };
        if self.cache.is_assumed(&key) {
            self.queue.done(&key);
            return None;
        }
        info.pod = PodFacts::from_json(&pod);
        let snapshot = self.cache.snapshot();
        match self.algorithm.schedule_pod(&info.pod, &snapshot, &mut self.rng) {
            Ok(node) => {
                let assumed = PodFacts { node_name: node.clone(), ..info.pod.clone() };
                if let Err(err) = self.cache.assume_pod(assumed) {
                    tracing::debug!(pod = %key, "assuming the pod failed: {err:?}");
                    info.unschedulable_plugins.clear();
                    self.queue.add_unschedulable(info, cycle, now_ms);
                    return None;
                }
                Some(Action::Bind { pod, info: Box::new(info), cycle, node })
            }
            Err(error) => {
                let message = failure_message(&error, &info.pod, &snapshot);
                info.unschedulable_plugins = error.unschedulable_plugins();
                self.queue.add_unschedulable(info, cycle, now_ms);
                Some(Action::ReportFailure { pod, reason: REASON_UNSCHEDULABLE, message })
            }
        }
    }

    /// The binding of `info` ended: `Ok` confirms the assumed pod; an error forgets it and sends the pod
    /// back (after its backoff) if the informer still shows it pending, and reports the error.
    pub fn binding_done(
        &mut self,
        pod: Value,
        info: Box<QueuedPodInfo>,
        cycle: u64,
        result: Result<(), String>,
        now_ms: u64,
        lookup: impl Fn(&str) -> Option<Value>,
    ) -> Option<Action> {
        let key = info.pod.key.clone();
        match result {
            Ok(()) => {
                let _ = self.cache.finish_binding(&key);
                self.queue.done(&key);
                None
            }
            Err(message) => {
                let _ = self.cache.forget_pod(&key);
                match lookup(&key) {
                    Some(current) if !is_assigned(&current) && responsible_for(&current) => {
                        let mut info = *info;
                        info.pod = PodFacts::from_json(&current);
                        info.unschedulable_plugins.clear();
                        self.queue.add_unschedulable(info, cycle, now_ms);
                    }
                    _ => self.queue.done(&key),
                }
                Some(Action::ReportFailure { pod, reason: REASON_SCHEDULER_ERROR, message })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn node(name: &str, cpu: &str) -> Value {
        json!({"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "110"}}})
    }

    fn pod(name: &str, cpu: &str) -> Value {
        json!({"metadata": {"namespace": "ns", "name": name, "uid": name},
               "spec": {"schedulerName": SCHEDULER_NAME, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}})
    }

    struct World {
        core: Core,
        pods: BTreeMap<String, Value>,
    }

    impl World {
        fn new() -> World {
            World { core: Core::new(ChaCha8Rng::seed_from_u64(1)), pods: BTreeMap::new() }
        }

        fn add_pod(&mut self, p: Value) {
            self.core.on_pod(&Notice::Add, None, &p, 0);
            self.pods.insert(format!("ns/{}", p["metadata"]["name"].as_str().unwrap()), p);
        }

        fn step(&mut self, now_ms: u64) -> Option<Action> {
            let pods = self.pods.clone();
            self.core.schedule_one(now_ms, |k| pods.get(k).cloned())
        }
    }

    #[test]
    fn assumed_pods_keep_two_pods_off_a_full_node() {
        let mut w = World::new();
        w.core.on_node(&Notice::Add, None, &node("n1", "1"), 0);
        w.add_pod(pod("a", "600m"));
        w.add_pod(pod("b", "600m"));
        let Some(Action::Bind { node, info, cycle, pod: bound }) = w.step(0) else { panic!("a binds") };
        assert_eq!(node, "n1");
        // Before the binding's answer, b's cycle already counts a on n1.
        let Some(Action::ReportFailure { reason, message, .. }) = w.step(0) else { panic!("b fails") };
        assert_eq!(reason, REASON_UNSCHEDULABLE);
        assert_eq!(message, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
        assert_eq!(w.core.queue.place_of("ns/b"), Some("unschedulable"));
        // The binding fails: a is forgotten and backs off; nothing counts on n1 any more.
        let pods = w.pods.clone();
        let action = w.core.binding_done(bound, info, cycle, Err("boom".into()), 10, |k| pods.get(k).cloned());
        assert!(matches!(action, Some(Action::ReportFailure { reason: REASON_SCHEDULER_ERROR, .. })));
        assert_eq!(w.core.queue.place_of("ns/a"), Some("backoff"));
        assert_eq!(w.core.cache.node("n1").unwrap().requested.milli_cpu, 0);
    }

    #[test]
    fn bound_and_deleted_pods_move_waiting_ones() {
        let mut w = World::new();
        w.core.on_node(&Notice::Add, None, &node("n1", "1"), 0);
        let mut running = pod("running", "800m");
        running["spec"]["nodeName"] = json!("n1");
        w.core.on_pod(&Notice::Add, None, &running, 0);
        w.add_pod(pod("big", "500m"));
        assert!(matches!(w.step(0), Some(Action::ReportFailure { .. })));
        assert_eq!(w.core.queue.place_of("ns/big"), Some("unschedulable"));
        // A node heartbeat (status only) moves nothing; a deleted assigned pod does.
        let mut beat = node("n1", "1");
        beat["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        w.core.on_node(&Notice::Update, Some(&node("n1", "1")), &beat, 100);
        assert_eq!(w.core.queue.place_of("ns/big"), Some("unschedulable"));
        w.core.on_pod(&Notice::Delete, None, &running, 5_000);
        assert_eq!(w.core.queue.place_of("ns/big"), Some("active"));
        assert!(matches!(w.step(5_000), Some(Action::Bind { ref node, .. }) if node == "n1"));
    }

    #[test]
    fn only_responsible_live_pending_pods_are_queued() {
        let mut w = World::new();
        let mut other = pod("other", "1");
        other["spec"]["schedulerName"] = json!("my-scheduler");
        let mut deleting = pod("deleting", "1");
        deleting["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        w.add_pod(other);
        w.add_pod(deleting);
        assert!(!w.core.queue.has_active());
        w.add_pod(pod("mine", "1"));
        // No nodes at all: upstream's text, and a backoff rather than waiting for an event.
        let Some(Action::ReportFailure { message, .. }) = w.step(0) else { panic!("fails") };
        assert_eq!(message, "no nodes available to schedule pods");
        assert_eq!(w.core.queue.place_of("ns/mine"), Some("backoff"));
    }

    #[test]
    fn status_only_updates_are_not_spec_changes() {
        let a = pod("a", "1");
        let mut b = a.clone();
        b["status"] = json!({"conditions": [{"type": "PodScheduled", "status": "False"}]});
        b["metadata"]["resourceVersion"] = json!("9");
        assert!(!spec_changed(&a, &b));
        b["spec"]["tolerations"] = json!([{"operator": "Exists"}]);
        assert!(spec_changed(&a, &b));
    }
}
