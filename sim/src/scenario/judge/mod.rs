//! Judges a run: every step's expectations against what its client observed (each by its kind), every
//! failed wait, and the checkers' verdicts against the scenario's `[checks]`. Pure: it reads the run and the
//! scenario only.
//!
//! A finding names the step (`writer/create-a`), where the step is in the file, what was expected and what
//! was seen; for an exact sequence (a watch's events, a get's kvs) a failing finding lists both sequences
//! side by side, with the differing positions marked, which is what a reader needs to see at once.
//!
//! A testing tool must never pass what it did not check: every key of `expect` the author wrote must have
//! given at least one finding. A step whose findings all passed but left a written key unjudged gets a
//! failing finding that says so; `sim/tests/expect_keys.rs` proves, kind by kind and key by key, that a
//! wrong value fails.

pub mod apiserver;
mod cache_parity;
mod controllers;
mod garbage_collector;
mod namespace;
mod replicas;
mod writes_kept;

use super::execute::{Observed, ScenarioRun};
use super::plan::Scenario;
use crate::checker::{self, linearizable, Guarantee, Verdict};
pub use crate::scenario::steps::judging::{shown_leases, Finding, StepJudge};

/// How many violations a failing finding lists.
const SHOWN: usize = 5;

/// Appends the first [`SHOWN`] of a failing finding's violations to `out`, one per line, and how many more.
fn list_first<'a>(out: &mut String, details: impl ExactSizeIterator<Item = &'a str>) {
    let total = details.len();
    for detail in details.take(SHOWN) {
        out.push_str(&format!("\n  {detail}"));
    }
    if total > SHOWN {
        out.push_str(&format!("\n  and {} more", total - SHOWN));
    }
}

/// A checker's verdict against what the scenario requires of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFinding {
    pub guarantee: Guarantee,
    /// The scenario requires it to hold (`true`) or to fail (`false`).
    pub must_hold: bool,
    /// The scenario named it in `[checks] hold` (rather than holding every guarantee by default): then it
    /// must have judged something.
    pub explicit: bool,
    pub verdict: Verdict,
}

impl CheckFinding {
    pub fn pass(&self) -> bool {
        if self.must_hold {
            self.verdict.is_pass() || (self.verdict.is_skipped() && !self.explicit)
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
            let first = findings.len();
            let mut j = StepJudge {
                who: format!("{}/{}", script.name, plan.label),
                at: plan.at.clone(),
                env: &env,
                leases: &run.leases,
                history: &run.history,
                out: &mut findings,
            };
            match (&step.observed, &plan.expect) {
                (Observed::NotRun(reason), Some(_)) => j.fail("", "the step runs", reason.clone()),
                (Observed::NotRun(_), None) => {}
                (observed, expect) => {
                    plan.op.judge(&mut j, observed, expect.as_ref());
                    if let Some(e) = expect {
                        unjudged(&mut j, first, e);
                    }
                }
            }
        }
    }
    let observed: std::collections::BTreeMap<&str, &Observed> = scenario
        .clients
        .iter()
        .zip(&run.clients)
        .flat_map(|(script, record)| script.steps.iter().zip(&record.steps))
        .filter_map(|(plan, step)| plan.name.as_deref().map(|n| (n, &step.observed)))
        .collect();
    findings.extend(super::relations::judge(&scenario.relations, &observed, &run.revisions));
    findings.extend(apiserver::findings(scenario, run.api_history.as_ref()));
    findings.extend(cache_parity::finding(scenario, run));
    findings.extend(writes_kept::finding(scenario, run));
    findings.extend(controllers::finding(scenario, run));
    findings.extend(garbage_collector::finding(scenario, run));
    findings.extend(namespace::finding(scenario, run));
    findings.extend(replicas::finding(scenario, run));
    let mut checks = Vec::new();
    for (g, verdict) in &report.verdicts {
        let must_hold = if scenario.hold.contains(g) {
            true
        } else if scenario.fail.contains(g) {
            false
        } else {
            continue;
        };
        let verdict = match (&scenario.linearizable_skipped, g) {
            (Some(why), Guarantee::Linearizable) => Verdict::Skipped { reason: why.clone() },
            _ => verdict.clone(),
        };
        checks.push(CheckFinding { guarantee: *g, must_hold, explicit: scenario.hold_explicit, verdict });
    }
    Judgement { findings, checks, timed_out: run.timed_out, panics: run.panics.clone() }
}

/// The net under the kinds' judges: when every finding of a step passed, each key of `expect` the author
/// wrote must be among their keys; a key that is not was never judged, and the step fails for it. (A step
/// that already failed fails the run whatever else it left out.)
pub(crate) fn unjudged(j: &mut StepJudge<'_>, first: usize, e: &crate::scenario::lang::expectations::Expectations) {
    let mine = &j.out[first..];
    if mine.iter().any(|f| !f.pass) {
        return;
    }
    let judged: Vec<&str> = mine.iter().map(|f| f.key).collect();
    let missed: Vec<&'static str> = e.written.iter().copied().filter(|k| !judged.contains(k)).collect();
    for key in missed {
        j.fail(key, &format!("expect.{key}"), "was never judged: kubesim accepted a key it did not check".into());
    }
}
