//! The garbage collector's verdict (`checker::garbage_collector`): one finding, `garbage-collector:
//! DeletesOnlyWhenOwnersGone`, for a cluster with controller managers. A passing finding says how many of
//! the collector's deletes it judged and how many it could not (their revision compacted or unreadable); a
//! failing one names the deleted objects, their live owners and the revisions.

use super::list_first;
use super::Finding;
use crate::checker::garbage_collector::{deletes_only_when_owners_gone, STATEMENT};
use crate::scenario::execute::ScenarioRun;
use crate::scenario::plan::Scenario;

/// Who the finding is about.
pub const WHO: &str = "garbage-collector";

/// The finding on the run's garbage collector deletes; none without controller managers.
pub fn finding(scenario: &Scenario, run: &ScenarioRun) -> Option<Finding> {
    let record = run.gc_deletes.as_ref()?;
    let verdict = deletes_only_when_owners_gone(record);
    let found = &verdict.violations;
    let detail = if found.is_empty() {
        let mut out = format!("{} deletes judged, each after its owners were gone", verdict.judged);
        if let Some(first) = verdict.unjudged.first() {
            out.push_str(&format!("; {} not judgeable (first: {first})", verdict.unjudged.len()));
        }
        out
    } else {
        let mut out = format!("broken {} times (\"{STATEMENT}\"):", found.len());
        list_first(&mut out, found.iter().map(|v| v.details.as_str()));
        out
    };
    Some(Finding {
        who: WHO.to_string(),
        at: scenario.path.clone(),
        key: "",
        what: "DeletesOnlyWhenOwnersGone".to_string(),
        pass: found.is_empty(),
        detail,
    })
}
