//! The namespace controller's verdict (`checker::namespace`): one finding, `namespace-controller:
//! DeletedNamespacesGone`, for a run with controller managers. A passing finding says how many namespaces
//! it judged and how long the slowest took; a failing one names the namespaces still there, with their
//! conditions, and those gone with objects left, with the objects' keys.

use super::list_first;
use super::Finding;
use crate::checker::namespace::{deleted_namespaces_gone, slowest_ms, STATEMENT};
use crate::scenario::execute::ScenarioRun;
use crate::scenario::plan::Scenario;

/// Who the finding is about.
pub const WHO: &str = "namespace-controller";

/// The finding on the run's deleted namespaces; none without controller managers.
pub fn finding(scenario: &Scenario, run: &ScenarioRun) -> Option<Finding> {
    let watch = run.namespaces.as_ref()?;
    let found = deleted_namespaces_gone(watch);
    let detail = if found.is_empty() {
        let slowest = slowest_ms(watch).map_or(String::new(), |ms| format!(", the slowest gone after {ms} ms"));
        format!(
            "{} namespaces still being deleted once the faults stopped{slowest}; no object left of a namespace that is gone",
            watch.deleting.len()
        )
    } else {
        let mut out = format!("broken {} times (\"{STATEMENT}\"):", found.len());
        list_first(&mut out, found.iter().map(|v| v.details.as_str()));
        out
    };
    Some(Finding {
        who: WHO.to_string(),
        at: scenario.path.clone(),
        key: "",
        what: "DeletedNamespacesGone".to_string(),
        pass: found.is_empty(),
        detail,
    })
}
