//! The verdict of `WriteOutcomesSameWithoutWatchCache` (`checker::apiserver::cache_parity`) on a run and
//! its twin, the same seed with every apiserver's watch cache off: the code and reason of every `kube`
//! write step, and every outcome of the apiserver workloads' scripted clients, must be the same in both,
//! except where an ambiguous outcome (no answer, a 5xx, a 429) leaves the object's later writes open.
//! One finding, named after the guarantee; a failing one names each differing step with both outcomes.

use super::list_first;
use serde_json::Value;

use super::apiserver::WHO;
use super::Finding;
use crate::checker::apiserver::cache_parity::{compare_steps, steps_of, Step};
use crate::checker::apiserver::ApiGuarantee;
use crate::scenario::execute::{KubeResult, Observed, ScenarioRun};
use crate::scenario::plan::Scenario;
use crate::scenario::steps::Op;

/// The finding, if the scenario asks for the check.
pub fn finding(scenario: &Scenario, run: &ScenarioRun) -> Option<Finding> {
    let must_hold = scenario.cache_parity?;
    let what = ApiGuarantee::WriteOutcomesSameWithoutWatchCache.to_string();
    let Some(twin) = run.without_watch_cache.as_deref() else {
        let detail = "the run has no twin without watch caches to compare with".to_string();
        return Some(Finding { who: WHO.into(), at: scenario.path.clone(), key: "", what, pass: false, detail });
    };
    let (cached, uncached) = (steps(scenario, run), steps(scenario, twin));
    let (found, compared) = compare_steps(&cached, &uncached);
    let detail = if found.is_empty() {
        format!(
            "{compared} of {} write and scripted outcomes compared with the run without watch caches, all the same",
            cached.len()
        )
    } else {
        let mut out = format!(
            "differs {} times (\"{}\"):",
            found.len(),
            ApiGuarantee::WriteOutcomesSameWithoutWatchCache.statement()
        );
        list_first(&mut out, found.iter().map(|v| v.details.as_str()));
        out
    };
    let what = if must_hold { what } else { format!("{what} fails") };
    Some(Finding {
        who: WHO.into(),
        at: scenario.path.clone(),
        key: "",
        what,
        pass: found.is_empty() == must_hold,
        detail,
    })
}

/// The steps one run compares: the scripted clients' `kube` writes in file order, then each apiserver
/// workload's scripted client.
fn steps(scenario: &Scenario, run: &ScenarioRun) -> Vec<Step> {
    let mut out = Vec::new();
    for (script, record) in scenario.clients.iter().zip(&run.clients) {
        for (plan, step) in script.steps.iter().zip(&record.steps) {
            let Op::Kube(k) = &plan.op else { continue };
            if !k.verb.is_write() {
                continue;
            }
            let name = k.name.clone().or_else(|| {
                k.object.as_ref().and_then(|o| o.pointer("/metadata/name")).and_then(Value::as_str).map(String::from)
            });
            let (semantic, shown) = match &step.observed {
                Observed::Kube(result) => kube_outcome(result),
                other => (None, format!("{other:?}")),
            };
            out.push(Step {
                label: format!("{}/{} `{}`", script.name, plan.label, step.request),
                key: format!("{}/{}", k.collection, name.unwrap_or_default()),
                write: true,
                semantic,
                shown,
            });
        }
    }
    if let Some(history) = &run.api_history {
        for w in &scenario.workloads {
            if let Some((client, _)) = &w.script {
                let ops: Vec<_> = history.ops.iter().filter(|o| &o.client == client).cloned().collect();
                out.extend(steps_of(&ops));
            }
        }
    }
    out
}

/// A `kube` write's outcome without revisions: its code and, for a refusal, its reason; `None` when it says
/// nothing about the state (no answer, a 5xx, a 429).
fn kube_outcome(result: &KubeResult) -> (Option<String>, String) {
    match &result.answer {
        Err(why) => (None, format!("no answer: {why}")),
        Ok((code, body)) => {
            let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
            let shown = if reason.is_empty() { format!("{code}") } else { format!("{code} {reason}") };
            let semantic = (*code < 500 && *code != 429).then(|| shown.clone());
            (semantic, format!("{shown} from {}", result.apiserver))
        }
    }
}
