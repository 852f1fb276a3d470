//! The controller managers' verdict (`checker::controllers`): one finding, `controller-manager:
//! OneManagerActsAtATime`, for a cluster with controller managers. A passing finding says how many terms
//! and writes it judged; a failing one lists the first writes sent beside another manager's term.

use super::Finding;
use crate::checker::controllers::{one_manager_acts_at_a_time, STATEMENT};
use crate::history::controllers::ManagerAct;
use crate::scenario::execute::ScenarioRun;
use crate::scenario::plan::Scenario;

/// Who the finding is about.
pub const WHO: &str = "controller-manager";

/// How many violations a failing finding lists.
const SHOWN: usize = 5;

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
        for v in found.iter().take(SHOWN) {
            out.push_str(&format!("\n  {}", v.details));
        }
        if found.len() > SHOWN {
            out.push_str(&format!("\n  and {} more", found.len() - SHOWN));
        }
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
