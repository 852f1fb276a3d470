//! The scheduler (kube-scheduler 1.32's default profile): binds pending pods to nodes.
//!
//! This module is the shell: shared informers on pods and nodes feed the sans-IO [`core::Core`], one
//! scheduling cycle runs at a time, and the requests it asks for go out concurrently with the next cycles,
//! as upstream's binding cycles do: `POST pods/{name}/binding` (a `v1.Binding`) followed by the `Scheduled`
//! event "Successfully assigned {ns}/{pod} to {node}"; for a pod no node fits, the `FailedScheduling`
//! warning and `PodScheduled=False` (reason `Unschedulable`, or `SchedulerError` for a failed binding) by
//! a strategic merge patch of `pods/{name}/status`, sent only when the condition changes (upstream's
//! `updatePod`). Backoffs are flushed every second and unschedulable pods checked every 30 s, on tokio's
//! clock (madsim's under simulation).
//!
//! The rules are in the other files: `resources` (quantities and pod requests), `facts` and `node_facts`
//! (what is read off pods and nodes), `affinity` (node selector terms), `filters` (the filter plugins),
//! `score` (scoring and `selectHost`), `diagnosis` (the failure message), `algorithm` (one cycle's decision
//! and the preemption diagnosis), `cache` (nodes with assumed pods), `queue` (the scheduling queue), `core`
//! (the state machine). Upstream: `pkg/scheduler/` in kubernetes/kubernetes 1.32.
//!
//! Left out: preemption itself (no pod is evicted and no node nominated; its diagnosis appears in the
//! message as upstream's would), volume, topology-spread and inter-pod-affinity plugins, BalancedAllocation
//! and ImageLocality scores, queueing hints, multiple profiles, extenders, and the retries upstream wraps
//! around a status patch. Leader election is the caller's.

pub mod affinity;
pub mod algorithm;
pub mod cache;
pub mod core;
pub mod diagnosis;
pub mod facts;
pub mod filters;
pub mod node_facts;
pub mod queue;
pub mod resources;
pub mod score;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use apiserver::registry::system::rfc3339;
use futures::stream::{FuturesUnordered, StreamExt};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use crate::client::resource::builtin;
use crate::client::STRATEGIC_MERGE_PATCH;
use crate::runtime::context::Context;
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use core::{Action, Core};
use diagnosis::truncate_message;
use queue::{QueuedPodInfo, FLUSH_BACKOFF_INTERVAL_MS, FLUSH_UNSCHEDULABLE_INTERVAL_MS};

pub use core::SCHEDULER_NAME;

/// What a finished request tells the core.
enum Done {
    Bound { pod: Value, info: Box<QueuedPodInfo>, cycle: u64, result: Result<(), String> },
    Reported,
}

type Pending = Pin<Box<dyn Future<Output = Done> + Send>>;

/// The scheduler, for as long as the future lives.
pub async fn run(ctx: Context) {
    let pods = ctx.informers.get(&builtin::pods());
    let nodes = ctx.informers.get(&builtin::nodes());
    let mut pod_events = pods.subscribe();
    let mut node_events = nodes.subscribe();
    pods.wait_synced().await;
    nodes.wait_synced().await;
    let events = ctx.events.for_component(SCHEDULER_NAME);
    let origin = tokio::time::Instant::now();
    let now_ms = || origin.elapsed().as_millis() as u64;
    let mut core = Core::new(ChaCha8Rng::seed_from_u64(ctx.seed ^ 0x5c4e_d01e));
    let mut pending: FuturesUnordered<Pending> = FuturesUnordered::new();
    let mut next_flush_ms = FLUSH_BACKOFF_INTERVAL_MS;
    let mut next_leftover_ms = FLUSH_UNSCHEDULABLE_INTERVAL_MS;
    let lookup = |key: &str| pods.get(key);
    loop {
        let action = tokio::select! {
            biased;
            Some(delta) = node_events.recv() => {
                core.on_node(&delta.notice, delta.old.as_ref(), &delta.object, now_ms());
                None
            }
            Some(delta) = pod_events.recv() => {
                core.on_pod(&delta.notice, delta.old.as_ref(), &delta.object, now_ms());
                None
            }
            Some(done) = pending.next(), if !pending.is_empty() => match done {
                Done::Bound { pod, info, cycle, result } => core.binding_done(pod, info, cycle, result, now_ms(), lookup),
                Done::Reported => None,
            },
            _ = tokio::time::sleep_until(origin + Duration::from_millis(next_flush_ms)) => {
                let now = now_ms();
                let leftover = now >= next_leftover_ms;
                if leftover {
                    next_leftover_ms = now + FLUSH_UNSCHEDULABLE_INTERVAL_MS;
                }
                core.flush(now, leftover);
                next_flush_ms = now + FLUSH_BACKOFF_INTERVAL_MS;
                None
            }
            _ = std::future::ready(()), if core.queue.has_active() => {
                let action = core.schedule_one(now_ms(), lookup);
                // One cycle at a time, without starving the informers and requests on this runtime.
                tokio::task::yield_now().await;
                action
            }
        };
        if let Some(action) = action {
            pending.push(perform(&ctx, &events, &pods, action));
        }
    }
}

/// The requests of one action, as a future the loop polls beside the next cycles.
fn perform(ctx: &Context, events: &Recorder, pods: &Informer, action: Action) -> Pending {
    let client = ctx.client.clone();
    let events = events.clone();
    match action {
        Action::Bind { pod, info, cycle, node } => Box::pin(async move {
            let (ns, name) = (info.pod.namespace.clone(), info.pod.name.clone());
            let binding = json!({
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name, "namespace": ns, "uid": info.pod.uid},
                "target": {"kind": "Node", "name": node},
            });
            let path = builtin::pods().subresource_path(Some(&ns), &name, "binding");
            let result = client.create(&path, &binding).await.map(|_| ()).map_err(|e| e.to_string());
            if result.is_ok() {
                let message = format!("Successfully assigned {ns}/{name} to {node}");
                events.record(&pod, EventType::Normal, "Scheduled", &message).await;
            }
            Done::Bound { pod, info, cycle, result }
        }),
        Action::ReportFailure { pod, reason, message } => {
            // The condition as the informer shows it now, to send a patch only when it changes.
            let key = format!("{}/{}", str_of(&pod, "namespace"), str_of(&pod, "name"));
            let current = pods.get(&key).unwrap_or_else(|| pod.clone());
            let now = rfc3339((ctx.now_unix_us)().div_euclid(1_000_000));
            let patch = condition_patch(&current, reason, &message, &now);
            Box::pin(async move {
                events.record(&pod, EventType::Warning, "FailedScheduling", &truncate_message(&message)).await;
                if let Some(patch) = patch {
                    let path = builtin::pods().subresource_path(
                        Some(&str_of(&pod, "namespace")),
                        &str_of(&pod, "name"),
                        "status",
                    );
                    if let Err(err) = client.patch(&path, &patch, STRATEGIC_MERGE_PATCH).await {
                        tracing::debug!(pod = %key, "updating the pod's PodScheduled condition failed: {err}");
                    }
                }
                Done::Reported
            })
        }
    }
}

fn str_of(pod: &Value, field: &str) -> String {
    pod.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("").to_string()
}

/// `updatePod` with `UpdatePodCondition`: the strategic merge patch setting `PodScheduled=False` with
/// `reason` and `message`, or `None` when the pod already carries that condition. The transition time
/// moves only when the status does.
pub fn condition_patch(pod: &Value, reason: &str, message: &str, now: &str) -> Option<Value> {
    let existing = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|list| list.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled")));
    let field = |c: &Value, f: &str| c.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let transition = match existing {
        Some(c) if field(c, "status") == "False" => {
            if field(c, "reason") == reason && field(c, "message") == message {
                return None;
            }
            c.get("lastTransitionTime").cloned().unwrap_or(Value::Null)
        }
        _ => json!(now),
    };
    Some(json!({"status": {"conditions": [{
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
        "lastProbeTime": null,
        "lastTransitionTime": transition,
    }]}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_condition_is_patched_only_when_it_changes() {
        let fresh = json!({"status": {"phase": "Pending"}});
        let patch = condition_patch(&fresh, "Unschedulable", "m1", "2023-11-14T22:13:20Z").unwrap();
        let c = &patch["status"]["conditions"][0];
        assert_eq!(
            (c["type"].as_str(), c["status"].as_str(), c["reason"].as_str(), c["message"].as_str()),
            (Some("PodScheduled"), Some("False"), Some("Unschedulable"), Some("m1"))
        );
        assert_eq!(c["lastTransitionTime"], "2023-11-14T22:13:20Z");
        let mut pod = fresh.clone();
        pod["status"]["conditions"] = patch["status"]["conditions"].clone();
        assert_eq!(condition_patch(&pod, "Unschedulable", "m1", "2023-11-14T22:14:00Z"), None);
        // A new message keeps the transition time: the status stayed False.
        let again = condition_patch(&pod, "Unschedulable", "m2", "2023-11-14T22:14:00Z").unwrap();
        assert_eq!(again["status"]["conditions"][0]["lastTransitionTime"], "2023-11-14T22:13:20Z");
    }
}
