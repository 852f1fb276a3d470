//! The client-visible outcome of a run as text: what each scripted client's steps returned, what each
//! watch delivered, a summary of each workload, every expectation's finding and every required check.
//! This is what a scenario's insta snapshot keeps, so it holds no simulated times, no trace hash and no
//! scheduling detail: a refactor that keeps what clients saw keeps the snapshot.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::execute::{KubeResult, Observed, ScenarioRun};
use super::judge::{shown_leases, Judgement};
use super::plan::{Scenario, WorkloadKind, WorkloadPlan};
use super::steps::observed::BeliefKind;
use crate::describe;
use crate::history::apiserver::{ApiHistory, ApiOutcome, Refusal, WatchEnd};
use crate::history::{Bytes, ClientId, Outcome, ResponseBody, TxnOpResult};

/// The outcome text for one run.
pub fn outcome(scenario: &Scenario, run: &ScenarioRun, judgement: &Judgement) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# {}", scenario.summary);
    let _ = writeln!(w, "scenario {} seed {}", scenario.name, run.seed);
    for (script, client) in scenario.clients.iter().zip(&run.clients) {
        let _ = writeln!(w, "\nclient {} -> {}", client.name, client.member);
        for (plan, step) in script.steps.iter().zip(&client.steps) {
            let result = plan.op.outcome(&step.observed).unwrap_or_default();
            let result = match &step.observed {
                Observed::Kube(_) => result,
                Observed::Kv(o) => describe::outcome(o).to_string(),
                Observed::Ttl(Ok((ttl, keys))) if keys.is_empty() => format!("ok ttl={ttl}"),
                Observed::Ttl(Ok((ttl, keys))) => {
                    let keys: Vec<String> = keys.iter().map(Bytes::escaped).collect();
                    format!("ok ttl={ttl} keys=[{}]", keys.join(", "))
                }
                Observed::Ttl(Err(e)) => e.clone(),
                Observed::Leases(Ok(ids)) => format!("ok leases={}", shown_leases(ids, &run.leases)),
                Observed::Leases(Err(e)) => e.clone(),
                Observed::Auth(a) => a.to_string(),
                Observed::Answer(a) => a.to_string(),
                Observed::Watch(Ok(id)) => {
                    let created = run.history.watches[id.0].responses.iter().find(|r| r.response.created);
                    created.map_or("created".into(), |c| format!("created rev={}", c.response.header_revision))
                }
                Observed::Watch(Err(e)) => e.clone(),
                Observed::Waited(Ok(())) => "holds".into(),
                Observed::Waited(Err(e)) => e.clone(),
                Observed::Done => "done".into(),
                Observed::NotRun(reason) => format!("not run: {reason}"),
            };
            let _ = writeln!(w, "  {}: {} -> {result}", step.label, step.request);
            if let Observed::Kv(Outcome::Ok(resp)) = &step.observed {
                match &resp.body {
                    ResponseBody::Range(r) => {
                        for kv in &r.kvs {
                            let _ = writeln!(w, "      {}", describe::kv(kv));
                        }
                    }
                    // What a txn's reads returned, by their position in the branch that ran.
                    ResponseBody::Txn(t) => {
                        for (i, r) in t.responses.iter().enumerate() {
                            if let TxnOpResult::Range(r) = r {
                                for kv in &r.kvs {
                                    let _ = writeln!(w, "      [{}] {}", i + 1, describe::kv(kv));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            if let Observed::Kube(r) = &step.observed {
                kube_details(w, r);
            }
            if let Observed::Watch(Ok(id)) = &step.observed {
                for r in &run.history.watches[id.0].responses {
                    let resp = &r.response;
                    for ev in &resp.events {
                        let _ = writeln!(w, "      {}", describe::event_in_full(ev));
                    }
                    if resp.is_progress_notify() {
                        let _ = writeln!(w, "      progress rev={}", resp.header_revision);
                    }
                    if resp.canceled {
                        let _ = writeln!(w, "      {}", describe::cancel(resp));
                    }
                }
            }
        }
    }
    for hook in &run.webhooks {
        let _ = writeln!(w, "\nwebhook {} ({})", hook.name, hook.config);
        if hook.seen.is_empty() {
            let _ = writeln!(w, "  (no reviews)");
        }
        for line in &hook.seen {
            let _ = writeln!(w, "  {line}");
        }
    }
    let mut first = scenario.clients.len() + 1;
    for wl in &scenario.workloads {
        let ids: Vec<ClientId> = (first..first + wl.clients.len()).map(|i| ClientId(i as u32)).collect();
        first += wl.clients.len();
        if wl.kind == WorkloadKind::Apiserver {
            api_workload_summary(w, wl, run.api_history.as_ref());
            continue;
        }
        let (mut ok, mut err, mut unknown) = (0, 0, 0);
        for op in run.history.ops.iter().filter(|o| ids.contains(&o.client)) {
            match op.outcome() {
                Outcome::Ok(_) => ok += 1,
                Outcome::Err(_) => err += 1,
                Outcome::Unknown { .. } | Outcome::NotSent { .. } => unknown += 1,
            }
        }
        let watches = run.history.watches.iter().filter(|x| ids.contains(&x.client)).count();
        let _ = writeln!(
            w,
            "\nworkload {} ({}, {} clients): {} requests: {ok} ok, {err} errors, {unknown} unknown; {watches} watches",
            wl.name,
            wl.kind,
            wl.clients.len(),
            ok + err + unknown
        );
    }
    if !run.applied_faults.is_empty() {
        let _ = writeln!(w, "\nfaults: {}", run.applied_faults.len());
    }
    if !scenario.notes.is_empty() {
        let _ = writeln!(w, "\nnotes");
        for n in &scenario.notes {
            let _ = writeln!(w, "  {n}");
        }
    }
    let _ = writeln!(w, "\nexpectations");
    if judgement.findings.is_empty() {
        let _ = writeln!(w, "  (none)");
    }
    for f in &judgement.findings {
        let mark = if f.pass { "pass" } else { "FAIL" };
        let _ = writeln!(w, "  {mark} {}: {}: {}", f.who, f.what, f.detail.replace('\n', "\n      "));
    }
    let _ = writeln!(w, "\nchecks");
    for c in &judgement.checks {
        let want = if c.must_hold { "holds" } else { "must fail" };
        let mark = if c.pass() { "pass" } else { "FAIL" };
        let _ = writeln!(w, "  {mark} {} {want}: {}", c.guarantee, c.verdict);
    }
    for p in &judgement.panics {
        let _ = writeln!(w, "\nFAIL {p}");
    }
    if judgement.timed_out {
        let _ = writeln!(w, "\nFAIL the time limit of {}s ran out", scenario.time_limit_s);
    }
    let _ = writeln!(w, "\nverdict {}", if judgement.passed() { "pass" } else { "FAIL" });
    out
}

/// An apiserver workload's line: its requests by outcome (refusals by reason, the status codes of the
/// unavailable), and its watches by how they ended.
fn api_workload_summary(w: &mut String, wl: &WorkloadPlan, history: Option<&ApiHistory>) {
    let Some(h) = history else { return };
    let ops: Vec<_> = h.ops.iter().filter(|o| wl.clients.contains(&o.client)).collect();
    let (mut ok, mut unknown) = (0, 0);
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for op in &ops {
        match &op.outcome {
            ApiOutcome::Written { .. }
            | ApiOutcome::Deleted { .. }
            | ApiOutcome::Found { .. }
            | ApiOutcome::Listed { .. } => ok += 1,
            ApiOutcome::Refused(r) => {
                let code = match r {
                    Refusal::NotFound => "404",
                    Refusal::AlreadyExists | Refusal::Conflict => "409",
                    Refusal::Invalid => "422",
                };
                *errors.entry(format!("{code} {r:?}")).or_default() += 1;
            }
            // The status code of an unavailability (`503 ...`); a transport failure shows as a 503 too.
            ApiOutcome::Unavailable(why) => {
                *errors.entry(why.split(' ').next().unwrap_or("?").to_string()).or_default() += 1;
            }
            ApiOutcome::Unknown => unknown += 1,
        }
    }
    let err: usize = errors.values().sum();
    let shown: Vec<String> = errors.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let watches: Vec<_> = h.watches.iter().filter(|x| wl.clients.contains(&x.client)).collect();
    let mut ends: BTreeMap<&str, usize> = BTreeMap::new();
    for x in &watches {
        let end = match x.end {
            WatchEnd::Expired => "410",
            WatchEnd::Failed(_) => "failed",
            WatchEnd::Closed => "closed",
            WatchEnd::Stopped => "stopped",
        };
        *ends.entry(end).or_default() += 1;
    }
    let ends: Vec<String> = ends.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let events: usize = watches.iter().map(|x| x.events.len()).sum();
    let _ = writeln!(
        w,
        "\nworkload {} ({}, {} clients): {} requests: {ok} ok, {err} errors ({}), {unknown} unknown; {} watches \
         ({}), {events} events",
        wl.name,
        wl.kind,
        wl.clients.len(),
        ops.len(),
        shown.join(", "),
        watches.len(),
        ends.join(", "),
    );
}

/// What a `kube` step's answer held beyond its code: a list's names in order, a watch's events.
fn kube_details(w: &mut String, r: &KubeResult) {
    if let Some(log) = &r.informer {
        // What the informer was told, bookmarks aside (they only move its resourceVersion), then its store.
        let mut bookmarks = 0;
        for b in &log.beliefs {
            match &b.what {
                BeliefKind::Event(e) if e.kind == "BOOKMARK" => bookmarks += 1,
                _ => {
                    let _ = writeln!(w, "      {b}");
                }
            }
        }
        let store: Vec<String> = log.store.iter().map(|(name, rv)| format!("{name}@{rv}")).collect();
        let _ = writeln!(w, "      {bookmarks} bookmarks, {} relists; store [{}]", log.relists, store.join(", "));
        return;
    }
    if let Ok((_, body)) = &r.answer {
        if let Some(items) = body.get("items").and_then(serde_json::Value::as_array) {
            let names: Vec<&str> = items
                .iter()
                .map(|i| i.pointer("/metadata/name").and_then(serde_json::Value::as_str).unwrap_or("?"))
                .collect();
            let _ = writeln!(w, "      items [{}]", names.join(", "));
        }
    }
    for e in &r.events {
        let _ = writeln!(w, "      {}", e.describe());
    }
}
