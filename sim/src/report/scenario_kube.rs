//! [`KubeData`] from a scenario run (simulation build): each Kubernetes step's `Observed::Kube` answer
//! copied into the report's plain terms (a `kube` step's request and watch events, a controller's
//! attempts, an informer's beliefs and store against etcd's), the `apiserver` workloads' history, and
//! what a failing finding of such a step points at: the request, the attempts, the watch's events, or for
//! an informer the belief that went back in time, its 410s or its store at the end.

use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::Value;

use super::input::Target;
use super::kube_input::{BeliefData, BeliefKind, InformerData, KubeCall, KubeData, KubeWatchEvent};
use crate::describe::KubeAnswer;
use crate::scenario::execute::{Observed, ScenarioRun};
use crate::scenario::steps::informer::guarantees::{self, MATCHES_ETCD, NEVER_BACK_IN_TIME};
use crate::scenario::steps::observed::{self as obs, KubeResult};

/// A failing `watch_events` finding points at no more than this many of the watch's events.
const EVENTS_POINTED: usize = 50;

/// Where a step's items are in [`KubeData`].
#[derive(Clone, Debug, Default)]
struct Items {
    calls: Range<usize>,
    events: Range<usize>,
    informer: Option<usize>,
}

/// The Kubernetes clients' record of a run, and where each step's items are in it.
pub struct KubeSteps<'a> {
    pub data: KubeData<'a>,
    /// By (client, step) index in `ScenarioRun::clients`.
    steps: BTreeMap<(usize, usize), Items>,
}

/// Copies what the run's Kubernetes steps and `apiserver` workloads recorded.
pub fn collect(run: &ScenarioRun) -> KubeSteps<'_> {
    let mut data = KubeData { api_history: run.api_history.as_ref(), ..KubeData::default() };
    let mut steps = BTreeMap::new();
    for (c, record) in run.clients.iter().enumerate() {
        for (s, step) in record.steps.iter().enumerate() {
            let Observed::Kube(r) = &step.observed else { continue };
            let (calls, events) = (data.calls.len(), data.events.len());
            let mut items = Items::default();
            let (client, label) = (record.name.clone(), step.label.clone());
            if let Some(log) = &r.informer {
                items.informer = Some(data.informers.len());
                data.informers.push(informer(client, label, &step.request, log));
            } else if !r.attempts.is_empty() {
                let last = r.attempts.len() - 1;
                for (n, a) in r.attempts.iter().enumerate() {
                    let body = if n == last { r.answer.as_ref().ok().map(|(_, body)| body.clone()) } else { None };
                    data.calls.push(attempt(&client, &label, &step.request, n as u32 + 1, a, body));
                }
            } else {
                data.calls.push(call(&client, &label, &step.request, r));
                for e in &r.events {
                    data.events.push(KubeWatchEvent {
                        client: client.clone(),
                        step: label.clone(),
                        at_ms: e.at_ms,
                        kind: e.kind.clone(),
                        rv: e.rv.parse().unwrap_or(0),
                        shown: e.describe(),
                    });
                }
            }
            items.calls = calls..data.calls.len();
            items.events = events..data.events.len();
            steps.insert((c, s), items);
        }
    }
    KubeSteps { data, steps }
}

/// A `kube` step's request, from its first request to its answer.
fn call(client: &str, label: &str, request: &str, r: &KubeResult) -> KubeCall {
    let watch = request.starts_with("watch ") || !r.events.is_empty();
    let (code, shown, body) = match &r.answer {
        Ok((code, body)) => (Some(*code), shown(*code, body, watch), Some(body.clone())),
        Err(why) => (None, KubeAnswer::None { why }.to_string(), None),
    };
    KubeCall {
        client: client.to_string(),
        step: label.to_string(),
        request: request.to_string(),
        apiserver: r.apiserver.clone(),
        start_ms: r.started_ms,
        end_ms: r.ended_ms,
        code,
        sent: true,
        shown,
        body,
        watch,
        attempt: None,
    }
}

/// An answer in one line, in the words the trace uses (`describe::KubeAnswer`).
fn shown(code: u16, body: &Value, watch: bool) -> String {
    let rv = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).filter(|rv| !rv.is_empty());
    if body.get("kind").and_then(Value::as_str) == Some("Status") && !(200..300).contains(&code) {
        let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
        return KubeAnswer::Status { code, reason }.to_string();
    }
    if watch {
        return KubeAnswer::Watching { code }.to_string();
    }
    match body.get("items").and_then(Value::as_array) {
        Some(items) => {
            let more = body.pointer("/metadata/continue").and_then(Value::as_str).is_some_and(|c| !c.is_empty());
            KubeAnswer::List { code, items: items.len(), rv, more }.to_string()
        }
        None => KubeAnswer::Object { code, rv }.to_string(),
    }
}

/// One attempt of a controller's read-modify-write: its code is the number its answer starts with.
fn attempt(client: &str, label: &str, request: &str, n: u32, a: &obs::Attempt, body: Option<Value>) -> KubeCall {
    let code = a.shown.split(' ').next().and_then(|c| c.parse().ok());
    KubeCall {
        client: client.to_string(),
        step: label.to_string(),
        request: request.to_string(),
        apiserver: a.apiserver.clone(),
        start_ms: a.at_ms,
        end_ms: a.at_ms + a.took_ms,
        code,
        sent: !a.apiserver.is_empty(),
        shown: a.shown.clone(),
        body,
        watch: false,
        attempt: Some((n, a.read_rv)),
    }
}

fn informer(client: String, step: String, request: &str, log: &obs::InformerLog) -> InformerData {
    let beliefs = log
        .beliefs
        .iter()
        .map(|b| BeliefData {
            at_ms: b.at_ms,
            apiserver: b.apiserver.clone(),
            rv: b.rv,
            kind: match &b.what {
                obs::BeliefKind::Listed { .. } => BeliefKind::Listed,
                obs::BeliefKind::Event(e) => BeliefKind::Event { bookmark: e.kind == "BOOKMARK" },
                obs::BeliefKind::Restarted => BeliefKind::Restarted,
            },
            shown: b.to_string(),
        })
        .collect();
    InformerData {
        client,
        step,
        request: request.to_string(),
        beliefs,
        store: log.store.clone(),
        etcd: log.etcd.clone(),
        differences: log.etcd.as_ref().map(|etcd| guarantees::store_diff(&log.store, etcd)).unwrap_or_default(),
        relists: log.relists,
        expired: log.expired,
        restarts: log.restarts,
        tombstones: log.tombstones.clone(),
    }
}

impl KubeSteps<'_> {
    /// What a failing finding of step `s` of client `c` (judging `key`) points at, each with its role.
    pub fn targets(&self, run: &ScenarioRun, c: usize, s: usize, key: &str) -> Vec<(Target, String)> {
        let Some(items) = self.steps.get(&(c, s)) else { return Vec::new() };
        if let Some(n) = items.informer {
            return self.informer_targets(run, c, s, n, key);
        }
        let calls = &self.data.calls[items.calls.clone()];
        if calls.iter().any(|c| c.attempt.is_some()) {
            // The last attempt is what the step's answer was; the others led to it.
            return items
                .calls
                .clone()
                .rev()
                .map(|k| (Target::KubeCall(k), format!("attempt {}", self.data.calls[k].attempt.map_or(0, |a| a.0))))
                .collect();
        }
        let mut out: Vec<(Target, String)> =
            items.calls.clone().map(|k| (Target::KubeCall(k), "the step's request".to_string())).collect();
        if key == "watch_events" {
            let events = items.events.clone().take(EVENTS_POINTED);
            out.extend(events.map(|e| (Target::KubeEvent(e), format!("event {}", self.data.events[e].shown))));
        }
        out
    }

    fn informer_targets(&self, run: &ScenarioRun, c: usize, s: usize, n: usize, key: &str) -> Vec<(Target, String)> {
        let inf = &self.data.informers[n];
        let lists: Vec<usize> = (0..inf.beliefs.len()).filter(|&j| inf.beliefs[j].kind == BeliefKind::Listed).collect();
        let store = (Target::Store(n), "the store at the end, against etcd's objects".to_string());
        let first_list = lists.first().map(|&j| (Target::Belief(n, j), "the first list".to_string()));
        match key {
            NEVER_BACK_IN_TIME => {
                let Observed::Kube(KubeResult { informer: Some(log), .. }) = &run.clients[c].steps[s].observed else {
                    return vec![store];
                };
                let Some((newer, older)) = guarantees::time_travels(&log.beliefs).first().copied() else {
                    return vec![store];
                };
                let index = |b: &obs::Belief| log.beliefs.iter().position(|x| std::ptr::eq(x, b)).unwrap_or(0);
                vec![
                    (Target::Belief(n, index(older)), format!("went back in time: {older}")),
                    (Target::Belief(n, index(newer)), format!("after it had seen rv={}: {newer}", newer.rv)),
                ]
            }
            "expired" if inf.expired > 0 => vec![(Target::Expired(n), "a 410 Gone".to_string())],
            "relists" if lists.len() > 1 => {
                lists[1..].iter().map(|&j| (Target::Belief(n, j), "a relist".to_string())).collect()
            }
            MATCHES_ETCD | "store" => vec![store],
            _ => first_list.into_iter().chain([store]).collect(),
        }
    }
}
