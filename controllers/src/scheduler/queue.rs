//! The scheduling queue (`pkg/scheduler/internal/queue/scheduling_queue.go`, 1.32, the PrioritySort
//! plugin's order): three places a pending pod waits in.
//!
//! - activeQ: pods to try now, highest `spec.priority` first, then the earliest queue timestamp;
//! - backoffQ: pods that failed an attempt and wait out their backoff, 1 s after the first attempt
//!   doubling per attempt up to 10 s, counted from the time the attempt failed;
//! - unschedulablePods: pods no node fits, until a cluster event that may help one of the plugins that
//!   rejected them (a node added, or one whose labels, taints or allocatable changed; an assigned pod
//!   deleted), or until they have waited 5 minutes (the leftover flush, every 30 s upstream). A moved pod
//!   goes to backoffQ while its backoff lasts, to activeQ after.
//!
//! A pod that failed while an event arrived during its attempt (the move request cycle is at or past its
//! attempt's cycle), or that failed for no plugin's reason (an error, or no nodes at all), goes straight
//! to backoffQ: nothing would move it otherwise. Time is passed in (milliseconds on the caller's clock).
//!
//! Left out: queueing hints (1.32 enables them; this queue acts as with `SchedulerQueueingHints` off,
//! matching events to plugins by their registered events, without the per-node pre-check), scheduling
//! gates, and nominated pods (no preemption).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use super::facts::PodFacts;
use super::filters::{NODE_AFFINITY, NODE_NAME, NODE_PORTS, NODE_RESOURCES_FIT, NODE_UNSCHEDULABLE, TAINT_TOLERATION};

/// `DefaultPodInitialBackoffDuration`.
pub const POD_INITIAL_BACKOFF_MS: u64 = 1_000;
/// `DefaultPodMaxBackoffDuration`.
pub const POD_MAX_BACKOFF_MS: u64 = 10_000;
/// `DefaultPodMaxInUnschedulablePodsDuration`.
pub const POD_MAX_IN_UNSCHEDULABLE_PODS_MS: u64 = 5 * 60 * 1_000;
/// How often completed backoffs are flushed to activeQ.
pub const FLUSH_BACKOFF_INTERVAL_MS: u64 = 1_000;
/// How often unschedulable pods are checked for the 5-minute limit.
pub const FLUSH_UNSCHEDULABLE_INTERVAL_MS: u64 = 30_000;

/// A cluster event that may make an unschedulable pod schedulable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterEvent {
    NodeAdd,
    /// A node's labels, taints or `spec.unschedulable` changed.
    NodeLabelOrTaintChange,
    /// A node's allocatable resources changed.
    NodeAllocatableChange,
    /// A pod bound to a node was deleted (or finished).
    AssignedPodDelete,
    /// The 5-minute leftover flush, which matches every pod.
    UnschedulableTimeout,
}

impl ClusterEvent {
    /// Whether a pod rejected by `plugin` may fit after this event (the plugins' `EventsToRegister`
    /// without queueing hints, where every plugin registering node additions also takes label and taint
    /// changes).
    fn may_help(self, plugin: &str) -> bool {
        match self {
            ClusterEvent::NodeAdd | ClusterEvent::NodeLabelOrTaintChange | ClusterEvent::UnschedulableTimeout => true,
            ClusterEvent::NodeAllocatableChange => plugin == NODE_RESOURCES_FIT,
            ClusterEvent::AssignedPodDelete => plugin == NODE_RESOURCES_FIT || plugin == NODE_PORTS,
        }
    }
}

/// Every plugin a node event concerns (for tests and callers that want the set).
pub const NODE_PLUGINS: &[&str] =
    &[NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, NODE_PORTS, NODE_RESOURCES_FIT];

/// A pod in the queue (`QueuedPodInfo`).
#[derive(Clone, Debug, PartialEq)]
pub struct QueuedPodInfo {
    pub pod: PodFacts,
    /// When it was added or last failed.
    pub timestamp_ms: u64,
    /// Scheduling attempts so far.
    pub attempts: u32,
    pub initial_attempt_ms: Option<u64>,
    /// The plugins that rejected it in its last attempt.
    pub unschedulable_plugins: BTreeSet<&'static str>,
}

/// Where a pod waits, with its key in that queue's order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Slot {
    Active((Reverse<i64>, u64, u64)),
    Backoff((u64, u64)),
    Unschedulable,
}

/// The scheduling queue.
#[derive(Debug, Default)]
pub struct SchedulingQueue {
    infos: BTreeMap<String, (QueuedPodInfo, Slot)>,
    active: BTreeMap<(Reverse<i64>, u64, u64), String>,
    backoff: BTreeMap<(u64, u64), String>,
    in_flight: BTreeSet<String>,
    seq: u64,
    scheduling_cycle: u64,
    /// The cycle at the last move request; `None` before any.
    move_request_cycle: Option<u64>,
}

/// `calculateBackoffDuration`: none before the first attempt, then 1 s doubling per attempt, up to 10 s.
pub fn backoff_duration_ms(attempts: u32) -> u64 {
    if attempts == 0 {
        return 0;
    }
    let mut duration = POD_INITIAL_BACKOFF_MS;
    for _ in 1..attempts {
        if duration > POD_MAX_BACKOFF_MS - duration {
            return POD_MAX_BACKOFF_MS;
        }
        duration += duration;
    }
    duration
}

fn backoff_until_ms(info: &QueuedPodInfo) -> u64 {
    info.timestamp_ms + backoff_duration_ms(info.attempts)
}

impl SchedulingQueue {
    pub fn new() -> SchedulingQueue {
        SchedulingQueue::default()
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn take(&mut self, key: &str) -> Option<QueuedPodInfo> {
        let (info, slot) = self.infos.remove(key)?;
        match slot {
            Slot::Active(k) => {
                self.active.remove(&k);
            }
            Slot::Backoff(k) => {
                self.backoff.remove(&k);
            }
            Slot::Unschedulable => {}
        }
        Some(info)
    }

    fn put_active(&mut self, info: QueuedPodInfo) {
        let k = (Reverse(info.pod.priority), info.timestamp_ms, self.next_seq());
        self.active.insert(k, info.pod.key.clone());
        self.infos.insert(info.pod.key.clone(), (info, Slot::Active(k)));
    }

    fn put_backoff(&mut self, info: QueuedPodInfo) {
        let k = (backoff_until_ms(&info), self.next_seq());
        self.backoff.insert(k, info.pod.key.clone());
        self.infos.insert(info.pod.key.clone(), (info, Slot::Backoff(k)));
    }

    /// `requeuePodViaQueueingHint(queueAfterBackoff)`: backoffQ while backing off, activeQ after.
    fn put_after_backoff(&mut self, info: QueuedPodInfo, now_ms: u64) {
        if backoff_until_ms(&info) > now_ms {
            self.put_backoff(info);
        } else {
            self.put_active(info);
        }
    }

    /// `Add`: a new pending pod goes to activeQ (an already queued one is updated instead).
    pub fn add(&mut self, pod: PodFacts, now_ms: u64) {
        if self.infos.contains_key(&pod.key) || self.in_flight.contains(&pod.key) {
            self.update(pod, false, now_ms);
            return;
        }
        let info = QueuedPodInfo {
            pod,
            timestamp_ms: now_ms,
            attempts: 0,
            initial_attempt_ms: None,
            unschedulable_plugins: BTreeSet::new(),
        };
        self.put_active(info);
    }

    /// `Update`: the pod changed; `spec_changed` says whether more than its status did, which gives an
    /// unschedulable pod another chance.
    pub fn update(&mut self, pod: PodFacts, spec_changed: bool, now_ms: u64) {
        if self.in_flight.contains(&pod.key) {
            return;
        }
        let Some((_, slot)) = self.infos.get(&pod.key) else {
            self.add(pod, now_ms);
            return;
        };
        let slot = slot.clone();
        let mut info = self.take(&pod.key).expect("just found");
        info.pod = pod;
        match slot {
            Slot::Active(_) => self.put_active(info),
            Slot::Backoff(_) => self.put_backoff(info),
            Slot::Unschedulable if spec_changed => self.put_after_backoff(info, now_ms),
            Slot::Unschedulable => {
                self.infos.insert(info.pod.key.clone(), (info, Slot::Unschedulable));
            }
        }
    }

    /// `Delete`.
    pub fn delete(&mut self, key: &str) {
        self.take(key);
        self.in_flight.remove(key);
    }

    /// `Pop`: the head of activeQ, counted as an attempt in a new scheduling cycle (returned with it).
    pub fn pop(&mut self, now_ms: u64) -> Option<(QueuedPodInfo, u64)> {
        let (_, key) = self.active.pop_first()?;
        let (mut info, _) = self.infos.remove(&key).expect("activeQ and infos agree");
        info.attempts += 1;
        info.initial_attempt_ms.get_or_insert(now_ms);
        self.scheduling_cycle += 1;
        self.in_flight.insert(key);
        Some((info, self.scheduling_cycle))
    }

    /// `Done`: the pod's attempt ended in a binding (or the pod went away).
    pub fn done(&mut self, key: &str) {
        self.in_flight.remove(key);
    }

    /// `AddUnschedulableIfNotPresent`: the attempt of cycle `pod_cycle` failed at `now_ms`.
    pub fn add_unschedulable(&mut self, mut info: QueuedPodInfo, pod_cycle: u64, now_ms: u64) {
        self.in_flight.remove(&info.pod.key);
        if self.infos.contains_key(&info.pod.key) {
            return;
        }
        info.timestamp_ms = now_ms;
        let moved_since = self.move_request_cycle.is_some_and(|c| c >= pod_cycle);
        if moved_since || info.unschedulable_plugins.is_empty() {
            self.put_after_backoff(info, now_ms);
        } else {
            self.infos.insert(info.pod.key.clone(), (info, Slot::Unschedulable));
        }
    }

    /// `flushBackoffQCompleted`: pods whose backoff ended go to activeQ.
    pub fn flush_backoff_completed(&mut self, now_ms: u64) {
        while let Some((&(until, seq), _)) = self.backoff.first_key_value() {
            if until > now_ms {
                break;
            }
            let key = self.backoff.remove(&(until, seq)).expect("just seen");
            let (info, _) = self.infos.remove(&key).expect("backoffQ and infos agree");
            self.put_active(info);
        }
    }

    /// `flushUnschedulablePodsLeftover`: pods unschedulable for longer than 5 minutes move.
    pub fn flush_unschedulable_leftover(&mut self, now_ms: u64) {
        let stale: Vec<String> = self
            .infos
            .iter()
            .filter(|(_, (info, slot))| {
                *slot == Slot::Unschedulable
                    && now_ms.saturating_sub(info.timestamp_ms) > POD_MAX_IN_UNSCHEDULABLE_PODS_MS
            })
            .map(|(k, _)| k.clone())
            .collect();
        self.move_pods(stale, ClusterEvent::UnschedulableTimeout, now_ms);
    }

    /// `MoveAllToActiveOrBackoffQueue`: every unschedulable pod `event` may help moves.
    pub fn move_all_to_active_or_backoff(&mut self, event: ClusterEvent, now_ms: u64) {
        let keys: Vec<String> =
            self.infos.iter().filter(|(_, (_, slot))| *slot == Slot::Unschedulable).map(|(k, _)| k.clone()).collect();
        self.move_pods(keys, event, now_ms);
        self.move_request_cycle = Some(self.scheduling_cycle);
    }

    fn move_pods(&mut self, keys: Vec<String>, event: ClusterEvent, now_ms: u64) {
        for key in keys {
            let worth = {
                let (info, _) = &self.infos[&key];
                info.unschedulable_plugins.is_empty() || info.unschedulable_plugins.iter().any(|p| event.may_help(p))
            };
            if worth {
                let info = self.take(&key).expect("listed");
                self.put_after_backoff(info, now_ms);
            }
        }
    }

    /// Whether a pod waits in activeQ.
    pub fn has_active(&self) -> bool {
        !self.active.is_empty()
    }

    /// When the earliest backoff ends, if any pod backs off.
    pub fn next_backoff_ms(&self) -> Option<u64> {
        self.backoff.first_key_value().map(|(&(until, _), _)| until)
    }

    /// Which queue holds `key`: `"active"`, `"backoff"`, `"unschedulable"`, `"in-flight"`, or `None`.
    pub fn place_of(&self, key: &str) -> Option<&'static str> {
        match self.infos.get(key) {
            Some((_, Slot::Active(_))) => Some("active"),
            Some((_, Slot::Backoff(_))) => Some("backoff"),
            Some((_, Slot::Unschedulable)) => Some("unschedulable"),
            None if self.in_flight.contains(key) => Some("in-flight"),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, priority: i64) -> PodFacts {
        PodFacts::from_json(
            &json!({"metadata": {"namespace": "ns", "name": name}, "spec": {"priority": priority, "containers": []}}),
        )
    }

    fn fail(q: &mut SchedulingQueue, now_ms: u64, plugins: &[&'static str]) -> String {
        let (mut info, cycle) = q.pop(now_ms).expect("a pod to pop");
        info.unschedulable_plugins = plugins.iter().copied().collect();
        let key = info.pod.key.clone();
        q.add_unschedulable(info, cycle, now_ms);
        key
    }

    #[test]
    fn backoff_doubles_per_attempt_up_to_ten_seconds() {
        let cases = [(0, 0), (1, 1_000), (2, 2_000), (3, 4_000), (4, 8_000), (5, 10_000), (6, 10_000), (60, 10_000)];
        for (attempts, want) in cases {
            assert_eq!(backoff_duration_ms(attempts), want, "attempt {attempts}");
        }
    }

    #[test]
    fn active_pods_pop_by_priority_then_time() {
        let mut q = SchedulingQueue::new();
        q.add(pod("low-early", 0), 0);
        q.add(pod("high", 10), 5);
        q.add(pod("low-late", 0), 7);
        let order: Vec<String> = std::iter::from_fn(|| q.pop(10).map(|(i, _)| i.pod.name)).collect();
        assert_eq!(order, ["high", "low-early", "low-late"]);
    }

    #[test]
    fn unschedulable_pods_move_on_events_that_may_help_them() {
        let mut q = SchedulingQueue::new();
        q.add(pod("fit", 0), 0);
        q.add(pod("taint", 0), 0);
        let fit = fail(&mut q, 0, &[NODE_RESOURCES_FIT]);
        let taint = fail(&mut q, 0, &[TAINT_TOLERATION]);
        assert_eq!(q.place_of(&fit), Some("unschedulable"));
        assert_eq!(q.place_of(&taint), Some("unschedulable"));
        // A deleted assigned pod frees resources, not taints; the pod still backs off (1 s from 0).
        q.move_all_to_active_or_backoff(ClusterEvent::AssignedPodDelete, 500);
        assert_eq!(q.place_of(&fit), Some("backoff"));
        assert_eq!(q.place_of(&taint), Some("unschedulable"));
        q.flush_backoff_completed(999);
        assert_eq!(q.place_of(&fit), Some("backoff"));
        q.flush_backoff_completed(1_000);
        assert_eq!(q.place_of(&fit), Some("active"));
        // A node added may help any plugin; past the backoff the pod goes straight to activeQ.
        q.move_all_to_active_or_backoff(ClusterEvent::NodeAdd, 2_000);
        assert_eq!(q.place_of(&taint), Some("active"));
        // Allocatable changes help only NodeResourcesFit.
        let _ = fail(&mut q, 2_000, &[TAINT_TOLERATION]);
        let _ = fail(&mut q, 2_000, &[TAINT_TOLERATION]);
        q.move_all_to_active_or_backoff(ClusterEvent::NodeAllocatableChange, 9_000);
        assert_eq!(q.place_of(&taint), Some("unschedulable"));
    }

    #[test]
    fn a_failure_during_a_move_request_or_without_plugins_backs_off() {
        let mut q = SchedulingQueue::new();
        q.add(pod("a", 0), 0);
        q.add(pod("b", 0), 0);
        let (mut a, cycle_a) = q.pop(0).unwrap();
        // An event arrives while `a` is being scheduled.
        q.move_all_to_active_or_backoff(ClusterEvent::NodeAdd, 100);
        a.unschedulable_plugins.insert(NODE_RESOURCES_FIT);
        q.add_unschedulable(a, cycle_a, 200);
        assert_eq!(q.place_of("ns/a"), Some("backoff"));
        assert_eq!(q.next_backoff_ms(), Some(1_200));
        // No plugin rejected `b` (no nodes at all): backoffQ, not unschedulablePods.
        let b = fail(&mut q, 300, &[]);
        assert_eq!(q.place_of(&b), Some("backoff"));
        // The second failure of `b` waits 2 s.
        q.flush_backoff_completed(1_300);
        assert_eq!(q.place_of(&b), Some("active"));
        let (mut a, _) = q.pop(1_300).unwrap();
        assert_eq!(a.pod.name, "a");
        a.unschedulable_plugins.clear();
        let b = fail(&mut q, 1_300, &[]);
        assert_eq!(q.place_of(&b), Some("backoff"));
        assert_eq!(q.next_backoff_ms(), Some(3_300));
        assert_eq!(q.place_of("ns/a"), Some("in-flight"));
        q.done("ns/a");
        assert_eq!(q.place_of("ns/a"), None);
    }

    #[test]
    fn unschedulable_pods_are_flushed_after_five_minutes() {
        let mut q = SchedulingQueue::new();
        q.add(pod("a", 0), 0);
        let a = fail(&mut q, 1_000, &[TAINT_TOLERATION]);
        q.flush_unschedulable_leftover(1_000 + POD_MAX_IN_UNSCHEDULABLE_PODS_MS);
        assert_eq!(q.place_of(&a), Some("unschedulable"));
        q.flush_unschedulable_leftover(1_001 + POD_MAX_IN_UNSCHEDULABLE_PODS_MS);
        assert_eq!(q.place_of(&a), Some("active"));
    }

    #[test]
    fn updates_and_deletes_reach_every_queue() {
        let mut q = SchedulingQueue::new();
        q.add(pod("a", 0), 0);
        let a = fail(&mut q, 0, &[NODE_AFFINITY]);
        // A status-only update leaves it; a spec change gives it another chance after its backoff.
        q.update(pod("a", 0), false, 5_000);
        assert_eq!(q.place_of(&a), Some("unschedulable"));
        q.update(pod("a", 0), true, 5_000);
        assert_eq!(q.place_of(&a), Some("active"));
        q.delete(&a);
        assert_eq!(q.place_of(&a), None);
        assert!(!q.has_active());
        // An update of an unknown pod adds it.
        q.update(pod("b", 0), true, 0);
        assert_eq!(q.place_of("ns/b"), Some("active"));
    }
}
