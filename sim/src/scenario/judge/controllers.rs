//! The controller managers' verdict (`checker::controllers`): one finding, `controller-manager:
//! OneManagerActsAtATime`, for a cluster with controller managers. A passing finding says how many terms
//! and writes it judged; a failing one lists the first writes sent beside another manager's term.

use super::list_first;
use super::Finding;
use crate::checker::controllers::{one_manager_acts_at_a_time, STATEMENT};
use crate::history::controllers::ManagerAct;
use crate::scenario::execute::ScenarioRun;
use crate::scenario::plan::Scenario;

/// Who the finding is about.
pub const WHO: &str = "controller-manager";

/// The finding on the run's controller managers; none without them.
pub fn finding(scenario: &Scenario, run: &ScenarioRun) -> Option<Finding> {
    let log = run.controllers.as_ref()?;
    let found = one_manager_acts_at_a_time(log);
    let terms = log.iter().filter(|e| e.what == ManagerAct::Leading).count();
    let writes = log.iter().filter(|e| matches!(e.what, ManagerAct::Write { .. })).count();
    let detail = if found.is_empty() {
        format!("{terms} terms of leadership, {writes} writes, each by the manager that led when it was sent")
    } else {
        let mut out = format!("broken {} times (\"{STATEMENT}\"):", found.len());
        list_first(&mut out, found.iter().map(|v| v.details.as_str()));
        out
    };
    Some(Finding {
        who: WHO.to_string(),
        at: scenario.path.clone(),
        key: "",
        what: "OneManagerActsAtATime".to_string(),
        pass: found.is_empty(),
        detail,
    })
}
