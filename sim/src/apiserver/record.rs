//! The apiserver run's recorder: stamps every HTTP request into the [`ApiHistory`] at invocation and
//! return, turns the server's answer into an [`ApiOutcome`], writes one trace line per request, and
//! records watches event by event.
//!
//! A request without an answer within the client's timeout is `Unknown`, as in the KV recorder: under
//! madsim a partitioned member stalls rather than fails. Errors are sorted by what they say about the state:
//! 404, 409 and 422 are refusals the state decides; everything else (5xx, 429, 504) is unavailability, after
//! which a write may or may not have happened.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde_json::Value;

use super::rest_client::{ClientError, WatchStream};
use crate::history::apiserver::{
    ApiCall, ApiHistory, ApiOp, ApiOutcome, ApiWatch, Refusal, WatchEnd, WatchedEvent, WatchedKind,
};
use crate::trace::Trace;

/// The etcd key prefix of every apiserver object.
pub const REGISTRY_PREFIX: &str = "/registry/";

/// The etcd key of a configmap.
pub fn configmap_key(namespace: &str, name: &str) -> String {
    format!("{REGISTRY_PREFIX}configmaps/{namespace}/{name}")
}

/// The history every client of a run records into, with the recording sequence. Clones share it.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Mutex<Inner>>,
    trace: Trace,
    timeout: Duration,
}

struct Inner {
    history: ApiHistory,
    seq: u64,
}

/// What a registry call answered, in the terms the history keeps.
pub enum Answer {
    Object(Value),
    Deleted(u64),
    List(u64, BTreeMap<String, u64>),
}

impl Recorder {
    pub fn new(trace: Trace, timeout: Duration) -> Recorder {
        Recorder { inner: Arc::new(Mutex::new(Inner { history: ApiHistory::default(), seq: 0 })), trace, timeout }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("apiserver history lock poisoned")
    }

    fn next_seq(&self) -> u64 {
        let mut inner = self.lock();
        inner.seq += 1;
        inner.seq
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Runs one request, records it and traces it; returns its outcome.
    pub async fn call(
        &self,
        client: &str,
        call: ApiCall,
        request: impl Future<Output = Result<Answer, ClientError>>,
    ) -> ApiOutcome {
        let invoked = self.next_seq();
        let invoked_at = Trace::now();
        let outcome = match tokio::time::timeout(self.timeout, request).await {
            Err(_) => ApiOutcome::Unknown,
            Ok(Err(e)) => classify(&e.to_status()),
            Ok(Ok(Answer::Deleted(rv))) => ApiOutcome::Deleted { rv },
            Ok(Ok(Answer::List(rv, items))) => ApiOutcome::Listed { rv, items },
            Ok(Ok(Answer::Object(obj))) => {
                let (rv, data) = (resource_version(&obj), data_of(&obj));
                match call {
                    ApiCall::Get { .. } => ApiOutcome::Found { rv, data },
                    _ => ApiOutcome::Written { rv, data },
                }
            }
        };
        let returned = self.next_seq();
        self.trace.event(client, format_args!("{call} -> {outcome}"));
        let (client, returned_at) = (client.to_string(), Trace::now());
        let op = ApiOp { client, invoked, returned, invoked_at, returned_at, call, outcome: outcome.clone() };
        self.lock().history.ops.push(op);
        outcome
    }

    /// Reads `watcher` until it ends or `duration` passes, and records what it delivered.
    pub async fn watch(
        &self,
        client: &str,
        namespace: &str,
        from: u64,
        start: impl Future<Output = Result<WatchStream, ClientError>>,
        duration: Duration,
    ) {
        let prefix = format!("{REGISTRY_PREFIX}configmaps/{namespace}/");
        let mut record = ApiWatch {
            client: client.to_string(),
            prefix: prefix.clone(),
            from,
            events: Vec::new(),
            end: WatchEnd::Stopped,
            opened_at: Trace::now(),
            ended_at: Trace::now(),
        };
        match tokio::time::timeout(self.timeout, start).await {
            Err(_) => record.end = WatchEnd::Failed("no answer".into()),
            Ok(Err(e)) => record.end = watch_error(&e.to_status()),
            Ok(Ok(mut watcher)) => {
                let deadline = tokio::time::Instant::now() + duration;
                loop {
                    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                    let next = tokio::time::timeout(left, watcher.next()).await;
                    let event = match next {
                        Err(_) => break,
                        Ok(None) => {
                            record.end = WatchEnd::Closed;
                            break;
                        }
                        Ok(Some(event)) => event,
                    };
                    let (kind, obj) = match event.kind.as_str() {
                        "ADDED" => (WatchedKind::Added, event.object),
                        "MODIFIED" => (WatchedKind::Modified, event.object),
                        "DELETED" => (WatchedKind::Deleted, event.object),
                        "ERROR" => {
                            let status: Status = serde_json::from_value(event.object).unwrap_or_default();
                            record.end = watch_error(&status);
                            break;
                        }
                        _ => continue,
                    };
                    let key = configmap_key(str_at(&obj, "namespace"), str_at(&obj, "name"));
                    record.events.push(WatchedEvent { kind, key, rv: resource_version(&obj), at: Trace::now() });
                }
            }
        }
        record.ended_at = Trace::now();
        self.trace.event(
            client,
            format_args!("watch {prefix} from rv={from} -> {} events, {:?}", record.events.len(), record.end),
        );
        self.lock().history.watches.push(record);
    }

    /// Takes the history out (the end of a run).
    pub fn take(&self) -> ApiHistory {
        std::mem::take(&mut self.lock().history)
    }
}

/// What a failed request's status says about the state.
fn classify(status: &Status) -> ApiOutcome {
    let reason = status.reason.as_deref().unwrap_or_default();
    match status.code {
        Some(404) => ApiOutcome::Refused(Refusal::NotFound),
        Some(409) if reason == "AlreadyExists" => ApiOutcome::Refused(Refusal::AlreadyExists),
        Some(409) => ApiOutcome::Refused(Refusal::Conflict),
        Some(422) => ApiOutcome::Refused(Refusal::Invalid),
        code => ApiOutcome::Unavailable(format!("{} {}", code.unwrap_or(0), status.message.as_deref().unwrap_or(""))),
    }
}

fn watch_error(status: &Status) -> WatchEnd {
    match status.code {
        Some(410) => WatchEnd::Expired,
        code => WatchEnd::Failed(format!("{} {}", code.unwrap_or(0), status.message.as_deref().unwrap_or(""))),
    }
}

fn str_at<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj["metadata"][field].as_str().unwrap_or_default()
}

/// An object's resourceVersion as a revision (0 if it has none).
pub fn resource_version(obj: &Value) -> u64 {
    str_at(obj, "resourceVersion").parse().unwrap_or(0)
}

/// A configmap's `data.v`.
pub fn data_of(obj: &Value) -> String {
    obj["data"]["v"].as_str().unwrap_or_default().to_string()
}
