//! Sending a `kube` step: the request built from the plan with the references resolved ([`Built`]), sent
//! to the apiserver the client's routing picks (asked again every 10 ms while `until_ms` lasts and the
//! answer does not meet the step's expectations), traced in [`crate::describe`]'s words; a watch's stream
//! handed to a task that collects its events until the run closes it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use serde_json::{json, Value};

use super::Kube;
use crate::apiserver::rest_client::{ClientError, KubeClient};
use crate::describe::{KubeAnswer, KubeRequest};
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::kube::{KubeRv, PatchType, Verb};
use crate::scenario::steps::board::Board;
use crate::scenario::steps::ctx::{Ctx, Finished, RunCx};
use crate::scenario::steps::board::Known;
use crate::scenario::steps::observed::{now_ms, KubeEvent, KubeResult, Observed};

/// Runs one `kube` step.
pub async fn run(cx: &mut RunCx<'_>, plan: &Kube) -> Finished {
    let ctx = cx.ctx;
    let started_ms = now_ms();
    let request = match Built::new(plan, &ctx.board) {
        Ok(r) => r,
        Err(reason) => return cx.not_run(reason),
    };
    let (label, client, expect) = (cx.label.to_string(), cx.client_name.to_string(), cx.expect);
    let conn = cx.kube();
    let described = request.describe(plan);
    let deadline = plan.until_ms.map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
    let (apiserver, answer) = loop {
        let i = conn.pick();
        let (apiserver, kube) = (conn.apiserver(i).to_string(), conn.client(i));
        let answer = if plan.verb == Verb::Watch {
            open_watch(ctx, kube, &request.path, &label, plan).await
        } else {
            let call =
                kube.exchange(request.method.clone(), &request.path, request.body.as_ref(), request.content_type);
            match tokio::time::timeout(ctx.request_timeout, call).await {
                Ok(Ok(answer)) => Ok(answer),
                Ok(Err(ClientError::Transport(why))) => Err(why),
                Ok(Err(ClientError::Status(status))) => Ok((status.code.unwrap_or(0) as u16, json!(status))),
                Err(_) => Err(format!("no answer within {}ms", ctx.request_timeout.as_millis())),
            }
        };
        let unavailable = match &answer {
            Ok((code, _)) => *code == 429 || *code >= 500,
            Err(_) => true,
        };
        if unavailable {
            conn.failed(i);
        }
        let shown = show(plan, &answer);
        ctx.trace.event(&client, format_args!("{label} -> {apiserver} {described} -> {shown}"));
        // `until_ms`: a condition the client waits on, polled as `kubectl wait` polls it.
        match deadline {
            Some(at) if !meets(expect, &answer) && tokio::time::Instant::now() < at => {
                tokio::time::sleep(Duration::from_millis(UNTIL_POLL_MS)).await;
            }
            _ => break (apiserver, answer),
        }
    };
    let rv = match &answer {
        Ok((code, body)) if (200..300).contains(code) => answer_rv(body),
        _ => None,
    };
    if let (Some(name), Ok((_, body))) = (cx.name, &answer) {
        if let Some(token) = body.pointer("/metadata/continue").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            ctx.board.set_continue(name, token);
        }
    }
    (Observed::Kube(KubeResult::answer(apiserver, answer, started_ms)), rv, None)
}

/// How often a step with `until_ms` asks again.
const UNTIL_POLL_MS: u64 = 10;

/// Whether an answer has the code and fields the step expects (what `until_ms` waits for).
fn meets(expect: Option<&Expectations>, answer: &Result<(u16, Value), String>) -> bool {
    let Ok((code, body)) = answer else { return false };
    let Some(expect) = expect.map(|e| &e.kube) else { return true };
    expect.code.as_ref().is_none_or(|codes| codes.contains(code))
        && expect.fields.iter().all(|(pointer, want)| body.pointer(pointer) == Some(want))
}

/// The resourceVersion of an answer (an object's, or a list's) as a number, for `rev_of`.
pub fn answer_rv(body: &Value) -> Option<i64> {
    body.pointer("/metadata/resourceVersion").and_then(Value::as_str).and_then(|rv| rv.parse().ok())
}

/// The answer as the trace and the report show it.
pub fn show(plan: &Kube, answer: &Result<(u16, Value), String>) -> String {
    let (code, body) = match answer {
        Err(why) => return KubeAnswer::None { why }.to_string(),
        Ok((code, body)) => (*code, body),
    };
    let rv = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).filter(|rv| !rv.is_empty());
    if body.get("kind").and_then(Value::as_str) == Some("Status") && !(200..300).contains(&code) {
        let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
        return KubeAnswer::Status { code, reason }.to_string();
    }
    match plan.verb {
        Verb::Watch => KubeAnswer::Watching { code }.to_string(),
        Verb::List | Verb::Deletecollection => {
            let items = body.get("items").and_then(Value::as_array).map_or(0, Vec::len);
            let more = body.pointer("/metadata/continue").and_then(Value::as_str).is_some_and(|c| !c.is_empty());
            KubeAnswer::List { code, items, rv, more }.to_string()
        }
        _ => KubeAnswer::Object { code, rv }.to_string(),
    }
}

/// Opens a watch and starts collecting its events; the answer is the stream's opening (200) or refusal.
async fn open_watch(
    ctx: &Ctx,
    kube: &KubeClient,
    path: &str,
    label: &str,
    plan: &Kube,
) -> Result<(u16, Value), String> {
    let opened = match tokio::time::timeout(ctx.request_timeout, kube.watch(path)).await {
        Err(_) => return Err(format!("no answer within {}ms", ctx.request_timeout.as_millis())),
        Ok(Err(ClientError::Transport(why))) => return Err(why),
        Ok(Err(ClientError::Status(status))) => return Ok((status.code.unwrap_or(0) as u16, json!(status))),
        Ok(Ok(stream)) => stream,
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let label_key = label.to_string();
    let (collected, trace, open_for) = (events.clone(), ctx.trace.clone(), plan.open_for_ms);
    let label = label.to_string();
    let task = madsim::task::spawn(async move {
        let mut stream = opened;
        let read = async {
            while let Some(event) = stream.next().await {
                let event = KubeEvent::of(&event);
                trace.event(&label, format_args!("event {}", event.describe()));
                collected.lock().expect("events lock").push(event);
            }
        };
        match open_for {
            Some(ms) => {
                let _ = tokio::time::timeout(Duration::from_millis(ms), read).await;
            }
            None => read.await,
        }
    });
    let mut watches = ctx.kube_watches.lock().expect("kube watches lock");
    watches.events.insert(label_key, events);
    watches.tasks.push(task);
    Ok((200, json!({})))
}

/// A request ready to send.
struct Built {
    method: Method,
    path: String,
    body: Option<Value>,
    content_type: &'static str,
    /// The resourceVersion it sends, resolved.
    rv: Option<String>,
    /// A delete's precondition, resolved.
    precondition: Option<String>,
}

impl Built {
    fn new(plan: &Kube, board: &Board) -> Result<Built, String> {
        let rv = match &plan.resource_version {
            None => None,
            Some(KubeRv::Text(t)) => Some(t.clone()),
            Some(KubeRv::Number(e)) => Some(e.value(&|s| board.revision(s))?.to_string()),
        };
        let precondition = match &plan.precondition_rv {
            None => None,
            Some(e) => Some(e.value(&|s| board.revision(s))?.to_string()),
        };
        let mut query: Vec<(&str, String)> = Vec::new();
        let object_path = |sub: bool| {
            let mut p = format!("{}/{}", plan.collection, plan.name.as_deref().unwrap_or(""));
            if let (true, Some(s)) = (sub, &plan.subresource) {
                p = format!("{p}/{s}");
            }
            p
        };
        if plan.dry_run {
            query.push(("dryRun", "All".into()));
        }
        if let Some(manager) = &plan.field_manager {
            query.push(("fieldManager", manager.clone()));
        }
        if plan.force {
            query.push(("force", "true".into()));
        }
        let (method, path, body, content_type) = match plan.verb {
            Verb::Create => (Method::POST, plan.collection.clone(), Some(with_type(plan, plan.object.clone())), JSON),
            Verb::Get => {
                if let Some(rv) = &rv {
                    query.push(("resourceVersion", rv.clone()));
                }
                (Method::GET, object_path(true), None, JSON)
            }
            Verb::List => {
                list_query(plan, rv.as_ref(), &mut query);
                if let Some(from) = &plan.continue_from {
                    let token =
                        board.continue_token(from).ok_or_else(|| format!("list step {from} left no continue token"))?;
                    query.push(("continue", token));
                }
                (Method::GET, plan.collection.clone(), None, JSON)
            }
            Verb::Update => {
                let mut obj = with_type(plan, plan.object.clone());
                if obj.pointer("/metadata/name").is_none() {
                    obj["metadata"]["name"] = Value::from(plan.name.clone());
                }
                if let Some(rv) = &rv {
                    obj["metadata"]["resourceVersion"] = Value::from(rv.clone());
                }
                (Method::PUT, object_path(true), Some(obj), JSON)
            }
            Verb::Patch => {
                let (kind, patch) = plan.patch.clone().expect("validated: a patch has one");
                let ct = match kind {
                    PatchType::Merge => "application/merge-patch+json",
                    PatchType::Json => "application/json-patch+json",
                    PatchType::Strategic => "application/strategic-merge-patch+json",
                    // JSON is YAML: the applied configuration goes as it is.
                    PatchType::Apply => "application/apply-patch+yaml",
                };
                // An applied configuration is a whole object: its kind and apiVersion are defaulted as a
                // create's are.
                let patch = if kind == PatchType::Apply { with_type(plan, Some(patch)) } else { patch };
                (Method::PATCH, object_path(true), Some(patch), ct)
            }
            Verb::Delete => {
                let mut options = json!({"kind": "DeleteOptions", "apiVersion": "v1"});
                if let Some(rv) = &precondition {
                    options["preconditions"] = json!({ "resourceVersion": rv });
                }
                if let Some(g) = plan.grace_period_s {
                    options["gracePeriodSeconds"] = json!(g);
                }
                if let Some(p) = &plan.propagation_policy {
                    options["propagationPolicy"] = json!(p);
                }
                (Method::DELETE, object_path(false), Some(options), JSON)
            }
            Verb::Deletecollection => {
                list_query(plan, None, &mut query);
                (Method::DELETE, plan.collection.clone(), None, JSON)
            }
            Verb::Watch => {
                query.push(("watch", "true".into()));
                list_query(plan, rv.as_ref(), &mut query);
                if let Some(name) = &plan.name {
                    query.push(("fieldSelector", format!("metadata.name={name}")));
                }
                if plan.allow_watch_bookmarks {
                    query.push(("allowWatchBookmarks", "true".into()));
                }
                if plan.send_initial_events {
                    query.push(("sendInitialEvents", "true".into()));
                    query.push(("resourceVersionMatch", "NotOlderThan".into()));
                }
                if let Some(t) = plan.timeout_s {
                    query.push(("timeoutSeconds", t.to_string()));
                }
                (Method::GET, plan.collection.clone(), None, JSON)
            }
        };
        let path = if query.is_empty() {
            path
        } else {
            let mut q = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &query {
                q.append_pair(k, v);
            }
            format!("{path}?{}", q.finish())
        };
        Ok(Built { method, path, body, content_type, rv, precondition })
    }

    /// The request as the trace shows it, with the values it sent.
    fn describe(&self, plan: &Kube) -> String {
        let rv = self.rv.as_ref().map(|r| if r.is_empty() { "\"\"".to_string() } else { r.clone() });
        let mut params = params(plan);
        if let Some(p) = &self.precondition {
            params.insert(0, format!("if-rv={p}"));
        }
        KubeRequest {
            verb: plan.verb.word(),
            resource: &plan.resource,
            namespace: plan.namespace.as_deref(),
            name: plan.name.as_deref(),
            subresource: plan.subresource.as_deref(),
            rv: rv.as_ref().map(|r| r as &dyn std::fmt::Display),
            params,
        }
        .to_string()
    }
}

const JSON: &str = "application/json";

/// A body with `apiVersion` and `kind` filled in where it names none, as typed clients send it.
fn with_type(plan: &Kube, obj: Option<Value>) -> Value {
    let mut obj = obj.unwrap_or_else(|| json!({}));
    if let Some(map) = obj.as_object_mut() {
        map.entry("apiVersion").or_insert_with(|| Value::from(plan.api_version.clone()));
        map.entry("kind").or_insert_with(|| Value::from(plan.kind.clone()));
    }
    obj
}

fn list_query(plan: &Kube, rv: Option<&String>, query: &mut Vec<(&str, String)>) {
    if let Some(rv) = rv {
        query.push(("resourceVersion", rv.clone()));
    }
    if let Some(m) = &plan.resource_version_match {
        query.push(("resourceVersionMatch", m.clone()));
    }
    if let Some(l) = plan.limit {
        query.push(("limit", l.to_string()));
    }
    if let Some(s) = &plan.label_selector {
        query.push(("labelSelector", s.clone()));
    }
    if let Some(s) = &plan.field_selector {
        query.push(("fieldSelector", s.clone()));
    }
}

/// The parameters besides the resourceVersion, as words (`limit=2`, `labels=app=web`, `bookmarks`).
pub fn params(plan: &Kube) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = &plan.resource_version_match {
        out.push(format!("match={m}"));
    }
    if let Some(l) = plan.limit {
        out.push(format!("limit={l}"));
    }
    if let Some(c) = &plan.continue_from {
        out.push(format!("continue={c}"));
    }
    if let Some(s) = &plan.label_selector {
        out.push(format!("labels={s}"));
    }
    if let Some(s) = &plan.field_selector {
        out.push(format!("fields={s}"));
    }
    if let Some((kind, _)) = &plan.patch {
        out.push(match kind {
            PatchType::Merge => "merge".into(),
            PatchType::Json => "json".into(),
            PatchType::Strategic => "strategic".into(),
            PatchType::Apply => "apply".into(),
        });
    }
    if let Some(manager) = &plan.field_manager {
        out.push(format!("manager={manager}"));
    }
    if plan.force {
        out.push("force".into());
    }
    if plan.allow_watch_bookmarks {
        out.push("bookmarks".into());
    }
    if plan.send_initial_events {
        out.push("initial-events".into());
    }
    if plan.dry_run {
        out.push("dry-run".into());
    }
    if let Some(g) = plan.grace_period_s {
        out.push(format!("grace={g}s"));
    }
    if let Some(p) = &plan.propagation_policy {
        out.push(format!("propagation={p}"));
    }
    out
}
