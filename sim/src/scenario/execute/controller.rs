//! A `controller` step: one read-modify-write as a controller built on client-go makes it, so that acting on
//! an informer's stale view is visible. Each attempt reads the object from the informer's store (the
//! controller's lister, as behind as the informer is), merges the step's change into it (RFC 7386), and
//! updates it with the resourceVersion it read; a 409 Conflict sends it back to the store after
//! `RetryOnConflict`'s wait (`crate::kube::retry`), at most 5 attempts in all. The last answer is the step's.

use http::Method;
use serde_json::Value;

use super::ctx::{Ctx, Finished};
use super::kube::{answer_rv, KubeConn};
use super::records::KubeResult;
use super::Observed;
use crate::apiserver::rest_client::ClientError;
use crate::kube::retry::RetryOnConflict;
use crate::scenario::plan::{ControllerPlan, StepPlan};

/// Runs the read-modify-write.
pub(super) async fn controller_step(
    ctx: &Ctx,
    conn: &mut KubeConn,
    client: &str,
    step: &StepPlan,
    plan: &ControllerPlan,
) -> Finished {
    let found = ctx.informers.lock().expect("informers lock").stores.get(&plan.informer).cloned();
    let Some((target, store)) = found else {
        let reason = format!("informer {} has not started", plan.informer);
        ctx.trace.event(client, format_args!("{} not sent: {reason}", step.label));
        return (Observed::NotRun(reason), None, None);
    };
    let key = match &target.namespace {
        Some(ns) => format!("{ns}/{}", plan.name),
        None => plan.name.clone(),
    };
    let path = format!("{}/{}", target.collection, plan.name);
    // The jitter of the waits between attempts is the seed's, one stream per step.
    let mut rng = ctx.seeds.rng(&format!("controller/{}", step.label));
    let mut retry = RetryOnConflict::default();
    let mut attempt = 0;
    let mut last: Option<(String, Result<(u16, Value), String>)> = None;
    while retry.start_attempt() {
        attempt += 1;
        let cached = store.lock().expect("store lock").get(&key).cloned();
        let Some(mut obj) = cached else {
            let why = format!("{key} is not in informer {}'s store", plan.informer);
            ctx.trace.event(client, format_args!("{} attempt {attempt}: {why}", step.label));
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
            format_args!("{} attempt {attempt}: update {key} read at rv={read_rv} -> {apiserver}: {shown}", step.label),
        );
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
    (Observed::Kube(KubeResult { apiserver, answer, events: Vec::new(), informer: None }), rv, None)
}
