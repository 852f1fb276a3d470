//! [`RunData`] from what a scenario run already holds: its trace and history, what its Kubernetes steps
//! and `apiserver` workloads recorded ([`scenario_kube`](super::scenario_kube)), its judgement (each
//! failing expectation placed at its step's request, watch, attempts or informer beliefs), the members'
//! and clients' names, and the member panics. Also from a generated traffic run (`kubesim traffic`), whose
//! checks must all hold.

use super::input::{CheckInput, FindingInput, KubeData, RunData, Target};
use super::scenario_kube::{self, KubeSteps};
use crate::history::{ClientId, OpId};
use crate::run::RunReport;
use crate::scenario::execute::{Observed, ScenarioRun};
use crate::scenario::judge::Judgement;
use crate::scenario::steps::informer::guarantees::{MATCHES_ETCD, NEVER_BACK_IN_TIME};
use crate::scenario::Scenario;

/// Client names in the order the run numbered them: scripted clients in file order, then every
/// workload's clients.
fn client_names(scenario: &Scenario) -> Vec<String> {
    let mut names: Vec<String> = scenario.clients.iter().map(|c| c.name.clone()).collect();
    names.extend(scenario.workloads.iter().flat_map(|w| w.clients.iter().cloned()));
    names
}

/// The data of a scenario run; `source` names the file it came from.
pub fn from_scenario<'a>(
    scenario: &'a Scenario,
    run: &'a ScenarioRun,
    judgement: &'a Judgement,
    source: &'a str,
) -> RunData<'a> {
    let checks = judgement
        .checks
        .iter()
        .map(|c| CheckInput { guarantee: c.guarantee.to_string(), must_hold: Some(c.must_hold), verdict: &c.verdict })
        .collect();
    let kube = scenario_kube::collect(run);
    let findings = judgement
        .failures()
        .map(|f| FindingInput {
            kind: finding_kind(f.key).to_string(),
            who: f.who.clone(),
            at: f.at.clone(),
            what: f.what.clone(),
            detail: f.detail.clone(),
            targets: targets(scenario, run, &kube, &f.who, f.key),
        })
        .collect();
    RunData {
        title: &scenario.name,
        source,
        seed: run.seed,
        trace: &run.trace,
        history: Some(&run.history),
        kube: kube.data,
        members: scenario.cluster.member_names(),
        clients: client_names(scenario),
        checks,
        findings,
        panics: run.panics.clone(),
        panic_messages: Vec::new(),
        aborted: None,
        timed_out: run.timed_out,
        passed: judgement.passed(),
    }
}

/// `expectation`, or for the informer guarantees every informer step is judged by, the guarantee.
fn finding_kind(key: &str) -> &str {
    match key {
        NEVER_BACK_IN_TIME | MATCHES_ETCD => key,
        _ => "expectation",
    }
}

/// What the step `who` (`client/label`) is on the timeline, for a failing finding on `key`: its request (a
/// client's KV steps and its history ops correspond one to one, in order), its watch, or what its
/// Kubernetes step recorded.
fn targets(
    scenario: &Scenario,
    run: &ScenarioRun,
    kube: &KubeSteps<'_>,
    who: &str,
    key: &str,
) -> Vec<(Target, String)> {
    let found = run.clients.iter().enumerate().find(|(_, r)| who.starts_with(&format!("{}/", r.name)));
    let Some((c, record)) = found else { return Vec::new() };
    let label = &who[record.name.len() + 1..];
    let Some(s) = record.steps.iter().position(|st| st.label == label) else { return Vec::new() };
    match &record.steps[s].observed {
        Observed::Watch(Ok(id)) => vec![(Target::Watch(*id), format!("{id}, the step's watch"))],
        Observed::Kv(_) => {
            let nth = record.steps[..s].iter().filter(|st| matches!(st.observed, Observed::Kv(_))).count();
            let client = ClientId(c as u32 + 1);
            debug_assert_eq!(client_names(scenario)[c], record.name);
            let op = run.history.ops.iter().enumerate().filter(|(_, o)| o.client == client).nth(nth);
            op.map(|(op, _)| (Target::Op(OpId(op)), format!("the step's request, {}", OpId(op)))).into_iter().collect()
        }
        Observed::Kube(_) => kube.targets(run, c, s, key),
        _ => Vec::new(),
    }
}

/// The data of a generated traffic run (`c1..cK` on `members` members); every check must hold.
pub fn from_traffic<'a>(report: &'a RunReport, members: usize, source: &'a str) -> RunData<'a> {
    let checks = report
        .checks
        .verdicts
        .iter()
        .map(|(g, v)| CheckInput { guarantee: g.to_string(), must_hold: Some(true), verdict: v })
        .collect();
    RunData {
        title: "traffic",
        source,
        seed: report.run.seed,
        trace: &report.run.trace,
        history: Some(&report.run.history),
        kube: KubeData::default(),
        members: (1..=members).map(|i| format!("etcd-{i}")).collect(),
        clients: Vec::new(),
        checks,
        findings: Vec::new(),
        panics: report.run.panics.clone(),
        panic_messages: Vec::new(),
        aborted: None,
        timed_out: false,
        passed: report.passed(),
    }
}
