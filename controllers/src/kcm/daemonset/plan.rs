//! What one sync of a DaemonSet does to its pods, and the status it reports (kube-controller-manager 1.32,
//! `pkg/controller/daemon/daemon_controller.go` `podsShouldBeOnNode`, `getUnscheduledPodsWithoutNode`,
//! `podByCreationTimestampAndPhase`, `updateDaemonSetStatus`'s counts, `failedPodsBackoffKey`;
//! `update.go` `rollingUpdate`, `findUpdatedPodsOnNode`, `updatedDesiredNodeCounts`; `util/daemonset_util.go`
//! `SurgeCount`, `UnavailableCount`; client-go's `flowcontrol.Backoff` as the failed-pod backoff). Sans-IO.
//!
//! Upstream walks the node-to-pods map in Go's random order; here it is a `BTreeMap`, walked by node name,
//! so that which nodes a rolling update takes first is the same every run.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::eligibility::{is_pod_updated, HASH_LABEL};
use crate::kcm::replicaset::pods::{creation_time_us, is_available, is_deleting, is_ready};

/// The pods of one DaemonSet grouped by the node they are (or are to be) on.
pub type NodePods = BTreeMap<String, Vec<Value>>;

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("")
}

fn scheduled(pod: &Value) -> bool {
    pod.pointer("/spec/nodeName").and_then(Value::as_str).is_some_and(|n| !n.is_empty())
}

/// `spec.minReadySeconds`.
pub fn min_ready_seconds(ds: &Value) -> i64 {
    ds.pointer("/spec/minReadySeconds").and_then(Value::as_i64).unwrap_or(0)
}

/// `podByCreationTimestampAndPhase`: scheduled pods first, then the oldest, then by name.
pub fn sort_pods(pods: &mut [Value]) {
    pods.sort_by(|a, b| {
        scheduled(b)
            .cmp(&scheduled(a))
            .then_with(|| creation_time_us(a).cmp(&creation_time_us(b)))
            .then_with(|| meta(a, "name").cmp(meta(b, "name")))
    });
}

/// client-go's `flowcontrol.Backoff` (1 s doubling to 15 min, no jitter), over a caller's clock.
#[derive(Clone, Debug)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    entries: BTreeMap<String, (Duration, Duration)>,
}

impl Default for Backoff {
    /// The DaemonSet controller's: `NewBackOff(1*time.Second, 15*time.Minute)`.
    fn default() -> Backoff {
        Backoff { initial: Duration::from_secs(1), max: Duration::from_secs(15 * 60), entries: BTreeMap::new() }
    }
}

impl Backoff {
    /// `Get`: the current delay of `id` (zero for none).
    pub fn get(&self, id: &str) -> Duration {
        self.entries.get(id).map_or(Duration::ZERO, |e| e.0)
    }

    /// `IsInBackOffSinceUpdate`: less than the delay has passed since the last `next`.
    pub fn in_backoff_since_update(&self, id: &str, now: Duration) -> bool {
        self.entries.get(id).is_some_and(|(delay, last)| now.saturating_sub(*last) < *delay)
    }

    /// `Next`: starts at the initial delay (again after twice the maximum without updates), else doubles.
    pub fn next(&mut self, id: &str, now: Duration) {
        let (initial, max) = (self.initial, self.max);
        let entry = self.entries.entry(id.to_string()).or_insert((Duration::ZERO, now));
        let expired = now.saturating_sub(entry.1) > max * 2;
        entry.0 = if entry.0.is_zero() || expired { initial } else { (entry.0 * 2).min(max) };
        entry.1 = now;
    }
}

/// `failedPodsBackoffKey`.
pub fn backoff_key(ds: &Value, node: &str) -> String {
    let observed = ds.pointer("/status/observedGeneration").and_then(Value::as_i64).unwrap_or(0);
    format!("{}/{observed}/{node}", meta(ds, "uid"))
}

/// An event one sync emits on the DaemonSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub warning: bool,
    pub reason: &'static str,
    pub message: String,
}

/// `FailedDaemonPodReason`.
pub const FAILED_DAEMON_POD: &str = "FailedDaemonPod";
/// `SucceededDaemonPodReason`.
pub const SUCCEEDED_DAEMON_POD: &str = "SucceededDaemonPod";

/// What `podsShouldBeOnNode` decides for one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeDecision {
    /// The node needs a new daemon pod.
    pub create: bool,
    /// The names of pods to delete.
    pub delete: Vec<String>,
    pub events: Vec<Event>,
    /// Look again after this long (a failed pod held back by the backoff).
    pub requeue_after: Option<Duration>,
}

/// `podsShouldBeOnNode` for the node `node` given `NodeShouldRunDaemonPod`'s answer, its pods (`None` when
/// the map has no entry), the DaemonSet's current `hash`, whether it `surges`, and the time: `now` on the
/// backoff's clock, `now_us` for availability.
#[allow(clippy::too_many_arguments)]
pub fn pods_should_be_on_node(
    ds: &Value,
    node: &str,
    (should_run, should_continue): (bool, bool),
    pods: Option<&[Value]>,
    hash: &str,
    surges: bool,
    backoff: &mut Backoff,
    now: Duration,
    now_us: i64,
) -> NodeDecision {
    let mut out = NodeDecision::default();
    match pods {
        None if should_run => out.create = true,
        _ if should_continue => {
            let mut running = Vec::new();
            for pod in pods.unwrap_or_default() {
                if is_deleting(pod) {
                    continue;
                }
                let (ns, name) = (meta(pod, "namespace"), meta(pod, "name"));
                match phase(pod) {
                    "Failed" => {
                        // The kubelet may keep rejecting the pod: deleting it again is paced per node.
                        let key = backoff_key(ds, node);
                        if backoff.in_backoff_since_update(&key, now) {
                            let delay = backoff.get(&key);
                            out.requeue_after = Some(out.requeue_after.map_or(delay, |d| d.min(delay)));
                            continue;
                        }
                        backoff.next(&key, now);
                        out.events.push(Event {
                            warning: true,
                            reason: FAILED_DAEMON_POD,
                            message: format!("Found failed daemon pod {ns}/{name} on node {node}, will try to kill it"),
                        });
                        out.delete.push(name.to_string());
                    }
                    "Succeeded" => {
                        out.events.push(Event {
                            warning: false,
                            reason: SUCCEEDED_DAEMON_POD,
                            message: format!(
                                "Found succeeded daemon pod {ns}/{name} on node {node}, will try to delete it"
                            ),
                        });
                        out.delete.push(name.to_string());
                    }
                    _ => running.push(pod.clone()),
                }
            }
            sort_pods(&mut running);
            if !surges {
                // Without surge one pod per node: all but the oldest go.
                out.delete.extend(running.iter().skip(1).map(|p| meta(p, "name").to_string()));
                return out;
            }
            if running.len() <= 1 {
                out.create = running.is_empty() && should_run;
                return out;
            }
            // Surging: keep the oldest new pod and the oldest old one; the old one goes once it is not
            // ready, or once the new one is available.
            let (mut oldest_new, mut oldest_old) = (None, None);
            for pod in &running {
                let slot = if pod.pointer("/metadata/labels").and_then(|l| l.get(HASH_LABEL)).and_then(Value::as_str)
                    == Some(hash)
                {
                    &mut oldest_new
                } else {
                    &mut oldest_old
                };
                if slot.is_none() {
                    *slot = Some(pod);
                } else {
                    out.delete.push(meta(pod, "name").to_string());
                }
            }
            if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
                if !is_ready(old) || is_available(new, min_ready_seconds(ds), now_us) {
                    out.delete.push(meta(old, "name").to_string());
                }
            }
        }
        Some(pods) if !should_continue => {
            out.delete.extend(pods.iter().filter(|p| !is_deleting(p)).map(|p| meta(p, "name").to_string()));
        }
        _ => {}
    }
    out
}

/// `getUnscheduledPodsWithoutNode`: unbound pods aimed at nodes that do not exist.
pub fn unscheduled_pods_without_node(node_names: &[String], node_pods: &NodePods) -> Vec<String> {
    node_pods
        .iter()
        .filter(|(node, _)| !node_names.contains(node))
        .flat_map(|(_, pods)| pods.iter().filter(|p| !scheduled(p)).map(|p| meta(p, "name").to_string()))
        .collect()
}

/// `GetScaledValueFromIntOrPercent(v, total, roundUp=true)`; `None` for no value, `Err` for a bad one.
fn scaled(value: Option<&Value>, total: usize) -> Result<Option<usize>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(Some(usize::try_from(n.as_i64().unwrap_or(0)).unwrap_or(0))),
        Some(Value::String(s)) => {
            let percent: usize = s
                .strip_suffix('%')
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| format!("invalid value for IntOrString: invalid value {s:?}"))?;
            Ok(Some((percent * total).div_ceil(100)))
        }
        Some(other) => Err(format!("invalid type: neither int nor percentage: {other}")),
    }
}

fn rolling(ds: &Value) -> Option<&Value> {
    (ds.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("RollingUpdate"))
        .then(|| ds.pointer("/spec/updateStrategy/rollingUpdate"))
        .flatten()
}

/// `SurgeCount` (the `DaemonSetUpdateSurge` feature is on in 1.32).
pub fn surge_count(ds: &Value, total: usize) -> Result<usize, String> {
    Ok(rolling(ds).map(|r| scaled(r.get("maxSurge"), total)).transpose()?.flatten().unwrap_or(0))
}

/// `UnavailableCount`.
pub fn unavailable_count(ds: &Value, total: usize) -> Result<usize, String> {
    Ok(rolling(ds).map(|r| scaled(r.get("maxUnavailable"), total)).transpose()?.flatten().unwrap_or(0))
}

/// `AllowsSurge`.
pub fn allows_surge(ds: &Value) -> bool {
    surge_count(ds, 1).is_ok_and(|n| n > 0)
}

/// `findUpdatedPodsOnNode`: the node's one new and one old live pod, `None` if it has more of either.
fn updated_pods_on_node<'a>(pods: &'a [Value], hash: &str) -> Option<(Option<&'a Value>, Option<&'a Value>)> {
    let (mut new, mut old) = (None, None);
    for pod in pods.iter().filter(|p| !is_deleting(p)) {
        let slot = if is_pod_updated(pod, hash) { &mut new } else { &mut old };
        if slot.is_some() {
            return None;
        }
        *slot = Some(pod);
    }
    Some((new, old))
}

/// What `rollingUpdate` hands to `syncNodes`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rollout {
    pub delete: Vec<String>,
    pub create: Vec<String>,
}

/// `rollingUpdate`'s choice. `should_run` answers `NodeShouldRunDaemonPod(node).0` for a node name (false
/// for a node that is gone); `node_pods` is the claimed pods by node.
pub fn rolling_update(
    ds: &Value,
    nodes: &[(String, bool)],
    node_pods: &NodePods,
    hash: &str,
    now_us: i64,
) -> Result<Rollout, String> {
    // `updatedDesiredNodeCounts`: every node that should run a pod counts, with or without one.
    let mut node_pods = node_pods.clone();
    let desired = nodes.iter().filter(|(_, run)| *run).count();
    for (name, _) in nodes.iter().filter(|(_, run)| *run) {
        node_pods.entry(name.clone()).or_default();
    }
    let mut max_unavailable =
        unavailable_count(ds, desired).map_err(|e| format!("invalid value for MaxUnavailable: {e}"))?;
    let max_surge = surge_count(ds, desired).map_err(|e| format!("invalid value for MaxSurge: {e}"))?;
    if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        max_unavailable = 1;
    }
    let min_ready = min_ready_seconds(ds);
    let available = |p: &Value| is_available(p, min_ready, now_us);
    let should_run = |node: &str| nodes.iter().any(|(n, run)| n == node && *run);
    let name = |p: &Value| meta(p, "name").to_string();
    let mut out = Rollout::default();

    if max_surge == 0 {
        // Delete just enough old pods to stay within maxUnavailable; the manage loop replaces them.
        let (mut unavailable, mut replacements, mut candidates) = (0, Vec::new(), Vec::new());
        for pods in node_pods.values() {
            match updated_pods_on_node(pods, hash) {
                None | Some((None, None)) | Some((Some(_), Some(_))) => unavailable += 1,
                Some((Some(new), None)) => unavailable += usize::from(!available(new)),
                Some((None, Some(old))) if !available(old) => {
                    replacements.push(name(old));
                    unavailable += 1;
                }
                Some((None, Some(_))) if unavailable >= max_unavailable => {}
                Some((None, Some(old))) => candidates.push(name(old)),
            }
        }
        let room = max_unavailable.saturating_sub(unavailable).min(candidates.len());
        out.delete = replacements;
        out.delete.extend(candidates.into_iter().take(room));
        return Ok(out);
    }

    // Surging: a new pod goes next to an old one, and the old one goes once the new one is available.
    let (mut should_not_run, mut candidates, mut allowed) = (Vec::new(), Vec::new(), Vec::new());
    let (mut surge, mut num_available) = (0, 0);
    for (node, pods) in &node_pods {
        let Some((new, old)) = updated_pods_on_node(pods, hash) else {
            surge += 1;
            continue;
        };
        if let Some(p) = old.or(new) {
            num_available += usize::from(available(p));
        }
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) if !available(old) => {
                if should_run(node) {
                    allowed.push(node.clone());
                } else {
                    out.delete.push(name(old));
                }
            }
            (None, Some(old)) => {
                if !should_run(node) {
                    should_not_run.push(old);
                } else if surge < max_surge {
                    candidates.push(node.clone());
                }
            }
            (Some(new), Some(old)) => {
                if available(new) {
                    out.delete.push(name(old));
                } else {
                    surge += 1;
                }
            }
        }
    }
    // Pods on nodes the DaemonSet left go only while enough pods elsewhere are available.
    let deletable = num_available.saturating_sub(desired).min(should_not_run.len());
    out.delete.extend(should_not_run[..deletable].iter().filter(|p| !is_deleting(p)).map(|p| name(p)));
    let room = max_surge.saturating_sub(surge).min(candidates.len());
    out.create = allowed;
    out.create.extend(candidates.into_iter().take(room));
    Ok(out)
}

/// The counts `updateDaemonSetStatus` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub desired_number_scheduled: i64,
    pub current_number_scheduled: i64,
    pub number_misscheduled: i64,
    pub number_ready: i64,
    pub updated_number_scheduled: i64,
    pub number_available: i64,
    pub number_unavailable: i64,
}

impl Counts {
    /// `updateDaemonSetStatus`'s loop: each node that should run a pod is desired; one with pods is
    /// scheduled, and its oldest pod says whether it is ready, available and updated. Pods on nodes that
    /// should not run one are misscheduled.
    pub fn of(ds: &Value, nodes: &[(String, bool)], node_pods: &NodePods, hash: &str, now_us: i64) -> Counts {
        let mut c = Counts::default();
        for (node, should_run) in nodes {
            let pods = node_pods.get(node).filter(|p| !p.is_empty());
            if !should_run {
                c.number_misscheduled += i64::from(pods.is_some());
                continue;
            }
            c.desired_number_scheduled += 1;
            let Some(pods) = pods else { continue };
            c.current_number_scheduled += 1;
            let mut pods = pods.clone();
            sort_pods(&mut pods);
            let pod = &pods[0];
            if is_ready(pod) {
                c.number_ready += 1;
                c.number_available += i64::from(is_available(pod, min_ready_seconds(ds), now_us));
            }
            c.updated_number_scheduled += i64::from(is_pod_updated(pod, hash));
        }
        c.number_unavailable = c.desired_number_scheduled - c.number_available;
        c
    }

    /// `storeDaemonSetStatus`'s shortcut: nothing to write when the counts are there and the generation
    /// observed.
    pub fn is_current(&self, ds: &Value) -> bool {
        let s = |f: &str| ds.pointer(&format!("/status/{f}")).and_then(Value::as_i64).unwrap_or(0);
        let generation = ds.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
        *self == Counts::from_status(ds) && s("observedGeneration") >= generation
    }

    /// The counts a DaemonSet's status holds.
    pub fn from_status(ds: &Value) -> Counts {
        let s = |f: &str| ds.pointer(&format!("/status/{f}")).and_then(Value::as_i64).unwrap_or(0);
        Counts {
            desired_number_scheduled: s("desiredNumberScheduled"),
            current_number_scheduled: s("currentNumberScheduled"),
            number_misscheduled: s("numberMisscheduled"),
            number_ready: s("numberReady"),
            updated_number_scheduled: s("updatedNumberScheduled"),
            number_available: s("numberAvailable"),
            number_unavailable: s("numberUnavailable"),
        }
    }

    /// Writes the counts into `ds.status` (other status fields, `collisionCount` and the conditions, stay).
    pub fn write_into(&self, ds: &mut Value) {
        if !ds.get("status").is_some_and(Value::is_object) {
            ds["status"] = serde_json::json!({});
        }
        let status = &mut ds["status"];
        status["desiredNumberScheduled"] = self.desired_number_scheduled.into();
        status["currentNumberScheduled"] = self.current_number_scheduled.into();
        status["numberMisscheduled"] = self.number_misscheduled.into();
        status["numberReady"] = self.number_ready.into();
        status["updatedNumberScheduled"] = self.updated_number_scheduled.into();
        status["numberAvailable"] = self.number_available.into();
        status["numberUnavailable"] = self.number_unavailable.into();
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
