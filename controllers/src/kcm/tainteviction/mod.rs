//! The taint eviction controller (`taint-eviction-controller`, kube-controller-manager 1.32,
//! `pkg/controller/tainteviction/taint_eviction.go` and `timed_workers.go`; its own controller since 1.29
//! under `SeparateTaintEvictionController`): a pod on a node with NoExecute taints it does not tolerate is
//! deleted at once; one that tolerates them for `tolerationSeconds` is deleted that long after the
//! controller first saw it so (the shortest of the tolerations used); a taint removed in time, or a pod that
//! goes away, cancels its deletion.
//!
//! Before deleting, the pod gets the `DisruptionTarget` condition (reason `DeletionByTaintManager`) through
//! `pods/{name}/status`, and a `TaintManagerEviction` event "Marking for deletion Pod ns/name" goes out
//! (a cancelled deletion gets "Cancelling deletion of Pod ns/name"); events are sent as
//! `taint-eviction-controller`, as upstream's recorder names its source.
//!
//! The decisions are sans-IO in `evictions`; this file feeds it node and pod changes (nodes first, as
//! upstream's workers prefer them) and fires the deletions that come due, on the node lifecycle
//! controller's [`LocalClock`] (tokio's clock, madsim's under simulation). Upstream's eight sharded
//! workers are one task here. Left out: metrics.

pub mod evictions;

use std::collections::BTreeMap;
use std::time::Duration;

use apiserver::registry::system::rfc3339;
use serde_json::{json, Value};
use tokio::time::{sleep, sleep_until, Instant};

use super::nodelifecycle::LocalClock;
use super::Context;
use crate::client::resource::builtin;
use crate::client::{ClientError, STRATEGIC_MERGE_PATCH};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use evictions::Evictions;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "taint-eviction-controller", aliases: &[], disabled_by_default: false };

/// `retries` of a deletion, and the pause between.
const RETRIES: usize = 5;
const RETRY_PAUSE: Duration = Duration::from_millis(10);
/// How long the loop sleeps with nothing scheduled (it wakes earlier for any change).
const IDLE: Duration = Duration::from_secs(3600);

pub async fn run(ctx: Context) {
    let mut controller = Controller {
        clock: LocalClock::start(&ctx),
        events: ctx.events.for_component(DESCRIPTOR.name),
        nodes: ctx.informers.get(&builtin::nodes()),
        pods: ctx.informers.get(&builtin::pods()),
        ctx,
        tainted: BTreeMap::new(),
        evictions: Evictions::default(),
    };
    let mut node_events = controller.nodes.subscribe();
    let mut pod_events = controller.pods.subscribe();
    controller.pods.wait_synced().await;
    controller.nodes.wait_synced().await;
    loop {
        let wake = match controller.evictions.next_fire_us() {
            Some(fire_us) => controller.clock.instant_of(fire_us),
            None => Instant::now() + IDLE,
        };
        tokio::select! {
            biased;
            Some(delta) = node_events.recv() => {
                let gone = matches!(delta.notice, Notice::Delete | Notice::DeleteTombstone);
                let new_taints = if gone { Vec::new() } else { evictions::no_execute_taints(&delta.object) };
                let unchanged = delta.notice == Notice::Update
                    && delta.old.as_ref().map(evictions::no_execute_taints) == Some(new_taints);
                if !unchanged {
                    controller.node_updated(&delta.key).await;
                }
            }
            Some(delta) = pod_events.recv() => {
                let spec = |p: &Value, f: &str| p.pointer(&format!("/spec/{f}")).cloned().unwrap_or(Value::Null);
                let unchanged = delta.notice == Notice::Update
                    && delta.old.as_ref().is_some_and(|old| {
                        tolerations(old) == tolerations(&delta.object)
                            && spec(old, "nodeName") == spec(&delta.object, "nodeName")
                    });
                if !unchanged {
                    let node = spec(&delta.object, "nodeName").as_str().unwrap_or("").to_string();
                    controller.pod_updated(&delta.key, &node).await;
                }
            }
            _ = sleep_until(wake) => controller.fire_due().await,
        }
    }
}

fn tolerations(pod: &Value) -> Vec<Value> {
    pod.pointer("/spec/tolerations").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// An ObjectReference to the pod `namespace/name`.
fn pod_ref(key: &str) -> Value {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}})
}

struct Controller {
    ctx: Context,
    clock: LocalClock,
    events: Recorder,
    nodes: Informer,
    pods: Informer,
    /// `taintedNodes`: each node's NoExecute taints, for nodes that have any.
    tainted: BTreeMap<String, Vec<Value>>,
    evictions: Evictions,
}

impl Controller {
    async fn cancelled(&self, key: &str) {
        let message = format!("Cancelling deletion of Pod {key}");
        self.events.record(&pod_ref(key), EventType::Normal, "TaintManagerEviction", &message).await;
    }

    async fn process(&mut self, key: &str, pod: &Value, taints: &[Value], now_us: i64) {
        if self.evictions.process_pod(key, &tolerations(pod), taints, now_us).cancelled {
            self.cancelled(key).await;
        }
    }

    /// `handleNodeUpdate`.
    async fn node_updated(&mut self, name: &str) {
        let Some(node) = self.nodes.get(name) else {
            self.tainted.remove(name);
            return;
        };
        let taints = evictions::no_execute_taints(&node);
        if taints.is_empty() {
            self.tainted.remove(name);
        } else {
            self.tainted.insert(name.to_string(), taints.clone());
        }
        let pods: Vec<Value> = self
            .pods
            .list()
            .into_iter()
            .filter(|p| p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(name))
            .collect();
        let now_us = self.clock.now_us();
        for pod in pods {
            let key = crate::runtime::store::object_key(&pod);
            if taints.is_empty() {
                if self.evictions.cancel(&key) {
                    self.cancelled(&key).await;
                }
            } else {
                self.process(&key, &pod, &taints, now_us).await;
            }
        }
    }

    /// `handlePodUpdate`: the pod `key`, which the change put on `node`.
    async fn pod_updated(&mut self, key: &str, node: &str) {
        let Some(pod) = self.pods.get(key) else {
            if self.evictions.cancel(key) {
                self.cancelled(key).await;
            }
            return;
        };
        if pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("") != node || node.is_empty() {
            return;
        }
        let Some(taints) = self.tainted.get(node).cloned() else { return };
        let now_us = self.clock.now_us();
        self.process(key, &pod, &taints, now_us).await;
    }

    /// Fires every deletion that is due (`deletePodHandler`).
    async fn fire_due(&mut self) {
        for key in self.evictions.due(self.clock.now_us()) {
            let message = format!("Marking for deletion Pod {key}");
            self.events.record(&pod_ref(&key), EventType::Normal, "TaintManagerEviction", &message).await;
            let mut result = Ok(());
            for attempt in 1..=RETRIES {
                result = self.add_condition_and_delete(&key).await;
                if result.is_ok() || attempt == RETRIES {
                    break;
                }
                sleep(RETRY_PAUSE).await;
            }
            if let Err(err) = &result {
                tracing::debug!(pod = %key, "deleting the pod failed: {err}");
            }
            self.evictions.fired(&key, result.is_ok());
        }
    }

    /// `addConditionAndDeletePod`: the `DisruptionTarget` condition on (unless it is there already), then
    /// the delete.
    async fn add_condition_and_delete(&self, key: &str) -> Result<(), ClientError> {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let pods = builtin::pods();
        let pod = self.ctx.client.get(&pods.object_path(Some(ns), name)).await?;
        let reason = "DeletionByTaintManager";
        let message = "Taint manager: deleting due to NoExecute taint";
        let present = pod.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|cs| {
            cs.iter().any(|c| {
                c["type"] == "DisruptionTarget"
                    && c["status"] == "True"
                    && c["reason"] == reason
                    && c["message"] == message
            })
        });
        if !present {
            let stamp = rfc3339((self.ctx.now_unix_us)().div_euclid(1_000_000));
            let patch = json!({
                "metadata": {"uid": pod.pointer("/metadata/uid").cloned().unwrap_or(Value::Null)},
                "status": {"conditions": [{"type": "DisruptionTarget", "status": "True", "reason": reason,
                    "message": message, "lastTransitionTime": stamp}]},
            });
            self.ctx
                .client
                .patch(&pods.subresource_path(Some(ns), name, "status"), &patch, STRATEGIC_MERGE_PATCH)
                .await?;
        }
        self.ctx.client.delete(&pods.object_path(Some(ns), name), None).await?;
        Ok(())
    }
}
