//! `controller = { informer = "pods", name = "web", set = { .. } }`: one read-modify-write as a controller
//! built on client-go makes it, so that acting on an informer's stale view is visible. Each attempt reads
//! the object from the informer's store (the controller's lister, as behind as the informer is), merges the
//! step's change into it (RFC 7386), and updates it with the resourceVersion it read; a 409 Conflict sends it
//! back to the store after `RetryOnConflict`'s wait (`crate::kube::retry`), at most 5 attempts in all. The
//! last answer is the step's, judged as an update's (`code`, `reason`, `fields`, `rv`, ...), and `attempts`
//! counts the tries; each attempt is in the trace and in the report.

use std::fmt::{self, Formatter};

use http::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::kube::send::answer_rv;
use super::kube::judge as kube_judge;
use super::observed::{now_ms, Attempt, KubeResult, Observed};
use super::{ClientKind, PlanCx, StepKind};
use crate::apiserver::rest_client::ClientError;
use crate::kube::retry::RetryOnConflict;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::Result;

/// `controller = { informer = "pods", name = "web", set = { data = { mode = "b" } } }`: a controller's
/// read-modify-write, as client-go's `RetryOnConflict` runs it: read the object from the informer's store
/// (the controller's lister, possibly stale), merge `set` into it (RFC 7386), update it with the
/// resourceVersion it read, and on 409 Conflict wait 10 ms and try again from the store, at most 5 times.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    /// The `informer` step whose store the controller reads.
    pub informer: Spanned<String>,
    /// The object's name, in the informer's namespace.
    pub name: Spanned<String>,
    /// What the controller changes, as a JSON merge patch written in TOML.
    pub set: Spanned<toml::Value>,
}

/// A validated controller step.
#[derive(Clone, Debug)]
pub struct Controller {
    pub informer: String,
    pub name: String,
    /// The merge patch it applies to what it read.
    pub set: Value,
}

impl StepKind for Controller {
    const KEY: &'static str = "controller";
    const CLIENT: ClientKind = ClientKind::Kube;
    const GIVES: Gives = Gives::Revision;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[(
            "controller",
            &["outcome", "code", "reason", "message", "message_contains", "fields", "non_empty", "absent", "rv", "attempts"],
        )]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Controller> {
        let c = syntax.get_ref();
        let informer = cx.names.informer(cx.src, &c.informer, "`controller.informer`")?;
        let set = serde_json::to_value(c.set.get_ref())
            .map_err(|e| cx.src.err(c.set.span(), format!("`set` is not JSON: {e}")))?;
        if !set.is_object() {
            return Err(cx.src.err(c.set.span(), "`set` is a merge patch: expected a table"));
        }
        Ok(Controller { informer, name: c.name.get_ref().clone(), set })
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "controller {} from {} set {}", self.name, self.informer, self.set)
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        read_modify_write(cx, self).await
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        let (Observed::Kube(result), Some(e)) = (observed, expect) else { return };
        kube_judge::answer(j, result, e);
        if let Some(want) = &e.attempts {
            j.number("attempts", want, result.attempts.len() as i64);
        }
    }

    fn outcome(&self, observed: &Observed) -> Option<String> {
        let Observed::Kube(r) = observed else { return None };
        Some(match &r.answer {
            Ok((code, body)) => {
                let status = body.get("reason").and_then(Value::as_str).map(|s| format!(" {s}"));
                match answer_rv(body) {
                    Some(rv) if (200..300).contains(code) => format!("{}: {code} rv={rv}", r.apiserver),
                    _ => format!("{}: {code}{}", r.apiserver, status.unwrap_or_default()),
                }
            }
            Err(why) => why.clone(),
        })
    }
}

/// Runs the read-modify-write.
async fn read_modify_write(cx: &mut RunCx<'_>, plan: &Controller) -> Finished {
    let (ctx, label, client) = (cx.ctx, cx.label.to_string(), cx.client_name.to_string());
    let client = client.as_str();
    let step_started_ms = now_ms();
    let found = ctx.informers.lock().expect("informers lock").stores.get(&plan.informer).cloned();
    let Some((target, store)) = found else {
        return cx.not_run(format!("informer {} has not started", plan.informer));
    };
    let key = match &target.namespace {
        Some(ns) => format!("{ns}/{}", plan.name),
        None => plan.name.clone(),
    };
    let path = format!("{}/{}", target.collection, plan.name);
    // The jitter of the waits between attempts is the seed's, one stream per step.
    let mut rng = ctx.seeds.rng(&format!("controller/{label}"));
    let mut retry = RetryOnConflict::default();
    let mut attempt = 0;
    let mut last: Option<(String, std::result::Result<(u16, Value), String>)> = None;
    let mut attempts = Vec::new();
    let conn = cx.kube();
    while retry.start_attempt() {
        attempt += 1;
        let cached = store.lock().expect("store lock").get(&key).cloned();
        let started_ms = now_ms();
        let Some(mut obj) = cached else {
            let why = format!("{key} is not in informer {}'s store", plan.informer);
            ctx.trace.event(client, format_args!("{label} attempt {attempt}: {why}"));
            let shown = why.clone();
            attempts.push(Attempt { at_ms: started_ms, took_ms: 0, read_rv: None, apiserver: String::new(), shown });
            last = Some((String::new(), Err(why)));
            break;
        };
        let read_rv = answer_rv(&obj).unwrap_or(0);
        json_patch::merge(&mut obj, &plan.set);
        let (i, apiserver) = conn.pick_named();
        let call = conn.client(i).exchange(Method::PUT, &path, Some(&obj), "application/json");
        let answer = match tokio::time::timeout(ctx.request_timeout, call).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(ClientError::Transport(why))) => Err(why),
            Ok(Err(ClientError::Status(s))) => Ok((s.code.unwrap_or(0) as u16, serde_json::json!(*s))),
            Err(_) => Err(format!("no answer within {}ms", ctx.request_timeout.as_millis())),
        };
        let shown = match &answer {
            Ok((code, body)) => match answer_rv(body) {
                Some(rv) if (200..300).contains(code) => format!("{code} rv={rv}"),
                _ => code.to_string(),
            },
            Err(why) => format!("no answer ({why})"),
        };
        ctx.trace.event(
            client,
            format_args!("{label} attempt {attempt}: update {key} read at rv={read_rv} -> {apiserver}: {shown}"),
        );
        let took_ms = now_ms() - started_ms;
        attempts.push(Attempt { at_ms: started_ms, took_ms, read_rv: Some(read_rv), apiserver: apiserver.clone(), shown });
        let conflict = matches!(&answer, Ok((409, _)));
        last = Some((apiserver, answer));
        if !conflict {
            break;
        }
        match retry.after_conflict(&mut rng) {
            Some(wait) => tokio::time::sleep(wait).await,
            None => break,
        }
    }
    let (apiserver, answer) = last.expect("at least one attempt");
    let rv = match &answer {
        Ok((code, body)) if (200..300).contains(code) => answer_rv(body),
        _ => None,
    };
    let mut result = KubeResult::answer(apiserver, answer, step_started_ms);
    result.attempts = attempts;
    (Observed::Kube(result), rv, None)
}
