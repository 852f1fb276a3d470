//! Judges a run: every step's expectations against what its client observed, every failed wait, and the
//! checkers' verdicts against the scenario's `[checks]`. Pure: it reads the run and the scenario only.
//!
//! A finding names the step (`writer/create-a`), where the step is in the file, what was expected and
//! what was seen; for a watch's event sequence a failing finding lists both sequences side by side, with
//! the differing positions marked, which is what a reader needs to see at once.

pub mod apiserver;
mod cache_parity;
pub mod informer;
mod kube;

use std::collections::BTreeMap;

use super::execute::{AuthOutcome, KubeResult, Observed, ScenarioRun};
use super::expr::Expr;
use super::plan::{EventExpect, Expectations, KvExpect, Op, ResponseExpect, ResponseKind, Scenario};
use super::syntax::{EventType, ExpectOutcome};
use crate::checker::model::Refusal;
use crate::checker::{self, linearizable, Guarantee, Verdict};
use crate::describe;
use crate::history::{self as h, EventKind, GrpcCode, Outcome, ResponseBody, WatchRecord};

/// One expectation, judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// `client/step`.
    pub who: String,
    /// `file:line` of the step.
    pub at: String,
    /// The expectation, as written (`revision >= rev_of(create) + 1`).
    pub what: String,
    pub pass: bool,
    /// What was seen; for a failure, enough to see why.
    pub detail: String,
}

/// A checker's verdict against what the scenario requires of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFinding {
    pub guarantee: Guarantee,
    /// The scenario requires it to hold (`true`) or to fail (`false`).
    pub must_hold: bool,
    pub verdict: Verdict,
}

impl CheckFinding {
    pub fn pass(&self) -> bool {
        if self.must_hold {
            self.verdict.is_pass()
        } else {
            self.verdict.is_fail()
        }
    }
}

#[derive(Clone, Debug)]
pub struct Judgement {
    pub findings: Vec<Finding>,
    pub checks: Vec<CheckFinding>,
    pub timed_out: bool,
    /// Member panics: each fails the run.
    pub panics: Vec<String>,
}

impl Judgement {
    pub fn passed(&self) -> bool {
        !self.timed_out
            && self.panics.is_empty()
            && self.findings.iter().all(|f| f.pass)
            && self.checks.iter().all(CheckFinding::pass)
    }

    pub fn failures(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.pass)
    }
}

/// Judges `run`, a run of `scenario`.
pub fn judge(scenario: &Scenario, run: &ScenarioRun) -> Judgement {
    let report = checker::check_all(&run.history, &linearizable::Options::default());
    judge_with(scenario, run, &report)
}

/// Judges with the checkers' report already at hand.
pub fn judge_with(scenario: &Scenario, run: &ScenarioRun, report: &checker::Report) -> Judgement {
    let env = |s: &str| run.revisions.get(s).copied();
    let mut findings = Vec::new();
    for (script, record) in scenario.clients.iter().zip(&run.clients) {
        for (plan, step) in script.steps.iter().zip(&record.steps) {
            let mut j = StepJudge {
                who: format!("{}/{}", script.name, plan.label),
                at: plan.at.clone(),
                env: &env,
                leases: &run.leases,
                out: &mut findings,
            };
            if let (Op::Informer(_), Observed::Kube(KubeResult { informer: Some(log), .. })) =
                (&plan.op, &step.observed)
            {
                j.informer(log);
            }
            match (&step.observed, &plan.expect) {
                (Observed::Waited(Err(e)), _) => j.fail("wait", e.clone()),
                (Observed::Watch(Err(e)), _) => j.fail("watch created", e.clone()),
                (Observed::NotRun(reason), Some(_)) => j.fail("the step runs", reason.clone()),
                (_, None) => {}
                (Observed::Kv(outcome), Some(e)) => j.kv(outcome, e),
                (Observed::Ttl(ttl), Some(e)) => j.ttl(ttl, e),
                (Observed::Leases(ids), Some(e)) => j.leases(ids, e),
                (Observed::Auth(a), Some(e)) => j.auth(a, e),
                (Observed::Watch(Ok(id)), Some(e)) => j.watch(&run.history.watches[id.0], e),
                (Observed::Kube(result), Some(e)) => j.kube(result, e),
                (Observed::Waited(Ok(())) | Observed::Done, Some(_)) => {}
            }
        }
    }
    findings.extend(apiserver::findings(scenario, run.api_history.as_ref()));
    findings.extend(cache_parity::finding(scenario, run));
    let mut checks = Vec::new();
    for (g, verdict) in &report.verdicts {
        let must_hold = if scenario.hold.contains(g) {
            true
        } else if scenario.fail.contains(g) {
            false
        } else {
            continue;
        };
        checks.push(CheckFinding { guarantee: *g, must_hold, verdict: verdict.clone() });
    }
    Judgement { findings, checks, timed_out: run.timed_out, panics: run.panics.clone() }
}

struct StepJudge<'a> {
    who: String,
    at: String,
    env: &'a dyn Fn(&str) -> Option<i64>,
    leases: &'a BTreeMap<String, i64>,
    out: &'a mut Vec<Finding>,
}

impl StepJudge<'_> {
    fn push(&mut self, what: impl Into<String>, pass: bool, detail: impl Into<String>) {
        self.out.push(Finding {
            who: self.who.clone(),
            at: self.at.clone(),
            what: what.into(),
            pass,
            detail: detail.into(),
        });
    }

    fn fail(&mut self, what: &str, detail: String) {
        self.push(what, false, detail);
    }

    /// `name <expr>` against `actual`.
    fn number(&mut self, name: &str, e: &Expr, actual: i64) {
        let what = format!("{name} {}", shown(e));
        match e.matches(actual, self.env) {
            Ok(true) => self.push(what, true, format!("got {actual}")),
            Ok(false) => {
                let value = e.value(self.env).map(|v| format!(" (= {v})")).unwrap_or_default();
                self.push(what, false, format!("got {actual}, expected {}{value}", shown(e)))
            }
            Err(err) => self.push(what, false, err),
        }
    }

    fn text(&mut self, name: &str, want: &str, actual: &str) {
        self.push(format!("{name} {want:?}"), want == actual, format!("got {actual:?}"));
    }

    fn outcome(&mut self, want: ExpectOutcome, got: &str, ok: bool, unknown: bool, error: bool, not_sent: bool) {
        let pass = match want {
            ExpectOutcome::Ok => ok,
            ExpectOutcome::Error => error,
            ExpectOutcome::Unknown => unknown,
            ExpectOutcome::NotSent => not_sent,
            ExpectOutcome::OkOrUnknown => ok || unknown || not_sent,
        };
        let name = match want {
            ExpectOutcome::Ok => "ok",
            ExpectOutcome::Error => "error",
            ExpectOutcome::Unknown => "unknown",
            ExpectOutcome::NotSent => "not-sent",
            ExpectOutcome::OkOrUnknown => "ok-or-unknown",
        };
        self.push(format!("outcome {name}"), pass, format!("got {got}"));
    }

    /// `expect.error`: etcd's code and, if given, its text, against the refusal the step got (`None`: it got
    /// none, and `got` says what instead).
    fn error(&mut self, (code, message): &(GrpcCode, Option<String>), status: Option<&h::ErrorStatus>, got: &str) {
        match status {
            Some(status) => {
                self.push(format!("error code {code:?}"), status.code == *code, format!("got {:?}", status.code));
                if let Some(m) = message {
                    self.text("error message", m, &status.message);
                }
            }
            None => self.fail(&format!("error code {code:?}"), format!("got {got}")),
        }
    }

    fn kv(&mut self, outcome: &Outcome, e: &Expectations) {
        let got = describe::outcome(outcome).to_string();
        if let Some(want) = e.outcome {
            let (ok, err, unknown, not_sent) = match outcome {
                Outcome::Ok(_) => (true, false, false, false),
                // An availability error leaves the outcome as unknown as no answer does (the linearizability
                // checker reads it so too), so `ok-or-unknown` accepts it; `error` accepts every error.
                Outcome::Err(status) if Refusal::of(status).is_none() => (false, true, true, false),
                Outcome::Err(_) => (false, true, false, false),
                Outcome::Unknown { .. } => (false, false, true, false),
                Outcome::NotSent { .. } => (false, false, false, true),
            };
            self.outcome(want, &got, ok, unknown, err, not_sent);
        }
        if let Some(want) = &e.error {
            let status = match outcome {
                Outcome::Err(status) => Some(status),
                _ => None,
            };
            self.error(want, status, &got);
        }
        let Outcome::Ok(resp) = outcome else {
            // Body expectations need a response; the outcome finding above already says there was none.
            if has_body_expectations(e) && e.outcome.is_none() {
                self.fail("a response", format!("got {got}"));
            }
            return;
        };
        if let Some(r) = &e.revision {
            self.number("revision", r, resp.header_revision.0);
        }
        let got = match &resp.body {
            ResponseBody::Range(r) => Body::Range(r),
            ResponseBody::Put(p) => Body::Put(p),
            ResponseBody::DeleteRange(d) => Body::Delete(d),
            ResponseBody::Txn(t) => Body::Txn(t),
            ResponseBody::LeaseGrant(g) => {
                if let Some(t) = &e.ttl_s {
                    self.number("ttl_s", t, g.ttl_s);
                }
                return;
            }
            ResponseBody::Compact | ResponseBody::LeaseRevoke => return,
        };
        self.body("", &e.body, got);
        if let (Some(want), ResponseBody::Txn(t)) = (&e.responses, &resp.body) {
            self.responses(want, &t.responses);
        }
    }

    /// `want` against one response body; `at` prefixes each finding's name (empty for a step's own
    /// response, `responses[2].` for an operation in a txn's branch). Validation has made sure each key fits
    /// the operation; inside a txn it fits at least one branch, and [`Self::responses`] reports the branch
    /// that ran something else.
    fn body(&mut self, at: &str, want: &ResponseExpect, got: Body<'_>) {
        let prev_value = |kv: Option<&h::KeyValue>| kv.map(|kv| kv.value.escaped()).unwrap_or_default();
        match got {
            Body::Range(r) => {
                if let Some(c) = &want.count {
                    self.number(&format!("{at}count"), c, r.count);
                }
                if let Some(m) = want.more {
                    self.push(format!("{at}more {m}"), r.more == m, format!("got {}", r.more));
                }
                if let Some(kvs) = &want.kvs {
                    self.kvs(&format!("{at}kvs"), kvs, &r.kvs);
                }
            }
            Body::Put(p) => {
                if let Some(pv) = &want.prev_value {
                    self.text(&format!("{at}prev_value"), pv, &prev_value(p.prev_kv.as_ref()));
                }
            }
            Body::Delete(d) => {
                if let Some(c) = &want.count {
                    self.number(&format!("{at}count"), c, d.deleted);
                }
                if let Some(pv) = &want.prev_value {
                    self.text(&format!("{at}prev_value"), pv, &prev_value(d.prev_kvs.first()));
                }
            }
            Body::Txn(t) => {
                if let Some(s) = want.succeeded {
                    self.push(format!("{at}succeeded {s}"), t.succeeded == s, format!("got {}", t.succeeded));
                }
            }
        }
    }

    /// A txn's responses, position by position, each judged as a finding of its own (`responses[i].<key>`).
    fn responses(&mut self, want: &[ResponseExpect], got: &[h::TxnOpResult]) {
        if want.len() != got.len() {
            self.fail(&format!("responses: {}", want.len()), format!("got {} responses", got.len()));
        }
        for (i, (w, g)) in want.iter().zip(got).enumerate() {
            let at = format!("responses[{}]", i + 1);
            let body = match g {
                h::TxnOpResult::Range(r) => Body::Range(r),
                h::TxnOpResult::Put(p) => Body::Put(p),
                h::TxnOpResult::DeleteRange(d) => Body::Delete(d),
                h::TxnOpResult::Txn(t) => Body::Txn(t),
            };
            // The other branch's operation at this position may take keys this one cannot meet.
            if let Some(key) = w.misfit(body.kind()) {
                let kind = body.kind().keyword();
                self.fail(&at, format!("got a {kind} response, which cannot have the `{key}` expected of it"));
            }
            self.body(&format!("{at}."), w, body);
        }
    }

    fn kvs(&mut self, name: &str, want: &[KvExpect], got: &[h::KeyValue]) {
        let expected: Vec<String> = want.iter().map(|k| self.show_kv_expect(k)).collect();
        let actual: Vec<String> = got.iter().map(|kv| describe::kv(kv).to_string()).collect();
        let mut bad = Vec::new();
        for i in 0..want.len().max(got.len()) {
            let ok = match (want.get(i), got.get(i)) {
                (Some(w), Some(g)) => self.kv_matches(w, g),
                _ => false,
            };
            if !ok {
                bad.push(i);
            }
        }
        let pass = bad.is_empty();
        let detail = if pass { format!("got {} kvs", got.len()) } else { side_by_side(&expected, &actual, &bad) };
        self.push(name, pass, detail);
    }

    fn kv_matches(&self, w: &KvExpect, g: &h::KeyValue) -> bool {
        let num =
            |e: &Option<Expr>, actual: i64| e.as_ref().is_none_or(|e| e.matches(actual, self.env).unwrap_or(false));
        w.key.as_bytes() == g.key.as_slice()
            && w.value.as_ref().is_none_or(|v| v.as_bytes() == g.value.as_slice())
            && num(&w.create_revision, g.create_revision.0)
            && num(&w.mod_revision, g.mod_revision.0)
            && num(&w.version, g.version)
            && w.lease.as_ref().is_none_or(|l| self.leases.get(l) == Some(&g.lease.0))
    }

    fn show_kv_expect(&self, k: &KvExpect) -> String {
        let mut s = format!("{}={}", k.key, k.value.as_deref().unwrap_or("*"));
        self.show_num(&mut s, "create", &k.create_revision);
        self.show_num(&mut s, "mod", &k.mod_revision);
        self.show_num(&mut s, "ver", &k.version);
        if let Some(l) = &k.lease {
            s.push_str(&format!(" lease={l}"));
        }
        s
    }

    /// Appends ` name=value`, or for an expression ` name=rev_of(a)(=5)` / ` name>=7`: what was written,
    /// and what it came to in this run.
    fn show_num(&self, s: &mut String, name: &str, e: &Option<Expr>) {
        if let Some(e) = e {
            let value = e.value(self.env).map(|v| format!("{v}")).unwrap_or_else(|_| "?".into());
            let written = e.to_string().replace(' ', "");
            match (e.rel == crate::scenario::expr::Rel::Eq, e.step().is_some()) {
                (true, false) => s.push_str(&format!(" {name}={value}")),
                (true, true) => s.push_str(&format!(" {name}={written}(={value})")),
                (false, false) => s.push_str(&format!(" {name}{written}")),
                (false, true) => s.push_str(&format!(" {name}{written}(={value})")),
            }
        }
    }

    fn ttl(&mut self, ttl: &Result<(i64, Vec<h::Bytes>), String>, e: &Expectations) {
        let got = match ttl {
            Ok((t, _)) => format!("ok ttl={t}"),
            Err(err) => err.clone(),
        };
        if let Some(want) = e.outcome {
            let ok = ttl.is_ok();
            self.outcome(want, &got, ok, !ok, false, false);
        }
        if let Some(t) = &e.ttl_s {
            match ttl {
                Ok((actual, _)) => self.number("ttl_s", t, *actual),
                Err(err) => self.fail(&format!("ttl_s {}", shown(t)), err.clone()),
            }
        }
        if let Some(want) = &e.keys {
            let what = format!("keys {want:?}");
            match ttl {
                Ok((_, keys)) => {
                    let actual: Vec<String> = keys.iter().map(h::Bytes::escaped).collect();
                    self.push(what, *want == actual, format!("got {actual:?}"));
                }
                Err(err) => self.fail(&what, err.clone()),
            }
        }
    }

    /// An `auth` step's answer: its outcome, etcd's code and text for a refusal, the names a list returned.
    fn auth(&mut self, answer: &AuthOutcome, e: &Expectations) {
        let got = answer.to_string();
        if let Some(want) = e.outcome {
            let (ok, err, unknown) = match answer {
                AuthOutcome::Ok(_) => (true, false, false),
                AuthOutcome::Err(_) => (false, true, false),
                AuthOutcome::Unknown(_) => (false, false, true),
            };
            self.outcome(want, &got, ok, unknown, err, false);
        }
        if let Some(want) = &e.error {
            let status = match answer {
                AuthOutcome::Err(status) => Some(status),
                _ => None,
            };
            self.error(want, status, &got);
        }
        if let Some(want) = &e.names {
            let what = format!("names {want:?}");
            match answer {
                AuthOutcome::Ok(names) => self.push(what, names == want, format!("got {names:?}")),
                _ => self.fail(&what, got),
            }
        }
    }

    /// A lease listing against the `lease_grant` steps named: the same set of leases, no more, no fewer.
    fn leases(&mut self, ids: &Result<Vec<i64>, String>, e: &Expectations) {
        let got = match ids {
            Ok(ids) => format!("ok {} leases", ids.len()),
            Err(err) => err.clone(),
        };
        if let Some(want) = e.outcome {
            let ok = ids.is_ok();
            self.outcome(want, &got, ok, !ok, false, false);
        }
        let Some(want) = &e.leases else { return };
        let what = format!("leases {want:?}");
        let ids = match ids {
            Ok(ids) => ids,
            Err(err) => return self.fail(&what, err.clone()),
        };
        let mut expected: Vec<i64> = Vec::new();
        let mut missing_grant = Vec::new();
        for step in want {
            match self.leases.get(step) {
                Some(id) => expected.push(*id),
                None => missing_grant.push(step.clone()),
            }
        }
        expected.sort_unstable();
        let shown = shown_leases(ids, self.leases);
        if !missing_grant.is_empty() {
            return self.fail(&what, format!("got {shown}; no lease was granted to {missing_grant:?}"));
        }
        self.push(what, expected == *ids, format!("got {shown}"));
    }

    fn watch(&mut self, w: &WatchRecord, e: &Expectations) {
        if let Some(r) = &e.revision {
            match w.responses.iter().find(|r| r.response.created) {
                Some(c) => self.number("revision", r, c.response.header_revision.0),
                None => self.fail(&format!("revision {}", shown(r)), "the watch was never created".into()),
            }
        }
        if let Some(want) = &e.events {
            let got: Vec<&h::Event> = w.responses.iter().flat_map(|r| &r.response.events).collect();
            let expected: Vec<String> = want.iter().map(|x| self.show_event_expect(x)).collect();
            let actual: Vec<String> = got.iter().map(|ev| describe::event_in_full(ev).to_string()).collect();
            let bad: Vec<usize> = (0..want.len().max(got.len()))
                .filter(|&i| match (want.get(i), got.get(i)) {
                    (Some(x), Some(ev)) => !self.event_matches(x, ev),
                    _ => true,
                })
                .collect();
            let pass = bad.is_empty();
            let detail =
                if pass { format!("got {} events", got.len()) } else { side_by_side(&expected, &actual, &bad) };
            self.push("events", pass, detail);
        }
        let cancel = w.responses.iter().find(|r| r.response.canceled).map(|r| &r.response);
        if let Some(c) = e.canceled {
            let got = match cancel {
                Some(r) => describe::cancel(r).to_string(),
                None => "not canceled".into(),
            };
            self.push(format!("canceled {c}"), cancel.is_some() == c, format!("got {got}"));
        }
        if let Some(cr) = &e.compact_revision {
            match cancel {
                Some(r) => self.number("compact_revision", cr, r.compact_revision.0),
                None => self.fail(&format!("compact_revision {}", shown(cr)), "got no cancel".into()),
            }
        }
        if let Some(reason) = &e.cancel_reason {
            let actual = cancel.map(|r| r.cancel_reason.clone()).unwrap_or_default();
            self.text("cancel_reason", reason, &actual);
        }
        let progress: Vec<i64> = w
            .responses
            .iter()
            .filter(|r| r.response.is_progress_notify())
            .map(|r| r.response.header_revision.0)
            .collect();
        if let Some(c) = &e.progress_count {
            self.number("progress_count", c, progress.len() as i64);
        }
        if let Some(p) = &e.progress_revision {
            let bad: Vec<i64> =
                progress.iter().copied().filter(|r| !p.matches(*r, self.env).unwrap_or(false)).collect();
            let what = format!("progress_revision {}", shown(p));
            if bad.is_empty() {
                self.push(what, true, format!("{} progress notifications", progress.len()));
            } else {
                self.push(what, false, format!("progress notifications at {bad:?} do not satisfy it"));
            }
        }
    }

    fn event_matches(&self, x: &EventExpect, ev: &h::Event) -> bool {
        let kind = match x.kind {
            EventType::Put => EventKind::Put,
            EventType::Delete => EventKind::Delete,
        };
        let num =
            |e: &Option<Expr>, actual: i64| e.as_ref().is_none_or(|e| e.matches(actual, self.env).unwrap_or(false));
        let prev = ev.prev_kv.as_ref().map(|kv| kv.value.escaped()).unwrap_or_default();
        kind == ev.kind
            && x.key.as_bytes() == ev.kv.key.as_slice()
            && x.value.as_ref().is_none_or(|v| v.as_bytes() == ev.kv.value.as_slice())
            && num(&x.mod_revision, ev.kv.mod_revision.0)
            && num(&x.create_revision, ev.kv.create_revision.0)
            && num(&x.version, ev.kv.version)
            && x.prev_value.as_ref().is_none_or(|p| *p == prev)
    }

    fn show_event_expect(&self, x: &EventExpect) -> String {
        let mut s = match (x.kind, &x.value) {
            (EventType::Put, Some(v)) => format!("put {}={v}", x.key),
            (EventType::Put, None) => format!("put {}=*", x.key),
            (EventType::Delete, _) => format!("delete {}", x.key),
        };
        self.show_num(&mut s, "rev", &x.mod_revision);
        self.show_num(&mut s, "create", &x.create_revision);
        self.show_num(&mut s, "ver", &x.version);
        if let Some(p) = &x.prev_value {
            s.push_str(&format!(" prev={p}"));
        }
        s
    }
}

/// A response body the expectations of [`ResponseExpect`] apply to.
#[derive(Clone, Copy)]
enum Body<'a> {
    Range(&'a h::RangeResult),
    Put(&'a h::PutResult),
    Delete(&'a h::DeleteResult),
    Txn(&'a h::TxnResult),
}

impl Body<'_> {
    fn kind(self) -> ResponseKind {
        match self {
            Body::Range(_) => ResponseKind::Get,
            Body::Put(_) => ResponseKind::Put,
            Body::Delete(_) => ResponseKind::Delete,
            Body::Txn(_) => ResponseKind::Txn,
        }
    }
}

/// Lease ids as the report shows them: by the `lease_grant` step that got each, else the id.
pub fn shown_leases(ids: &[i64], by_step: &BTreeMap<String, i64>) -> String {
    let names: Vec<String> = ids
        .iter()
        .map(|id| match by_step.iter().find(|(_, l)| *l == id) {
            Some((step, _)) => step.clone(),
            None => format!("{}", h::LeaseId(*id)),
        })
        .collect();
    format!("[{}]", names.join(", "))
}

fn has_body_expectations(e: &Expectations) -> bool {
    e.revision.is_some()
        || e.body.kvs.is_some()
        || e.body.count.is_some()
        || e.body.more.is_some()
        || e.body.succeeded.is_some()
        || e.body.prev_value.is_some()
        || e.ttl_s.is_some()
        || e.responses.is_some()
}

/// An expression as the report shows it: relations spelled out, a bare number as `== n`.
fn shown(e: &Expr) -> String {
    let s = e.to_string();
    if e.rel == crate::scenario::expr::Rel::Eq {
        format!("== {s}")
    } else {
        s
    }
}

/// Two sequences in two columns, the positions in `bad` marked with `!`.
fn side_by_side(expected: &[String], actual: &[String], bad: &[usize]) -> String {
    let width = expected.iter().map(String::len).max().unwrap_or(0).max("expected".len());
    let mut out = format!("{} differ:\n      {:width$}   actual", bad.len(), "expected");
    for i in 0..expected.len().max(actual.len()) {
        let mark = if bad.contains(&i) { '!' } else { ' ' };
        let e = expected.get(i).map_or("(nothing)", String::as_str);
        let a = actual.get(i).map_or("(nothing)", String::as_str);
        out.push_str(&format!("\n  {mark} {:>2} {e:width$}   {a}", i + 1));
    }
    out
}
