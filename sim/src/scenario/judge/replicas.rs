//! The workload controllers' verdict at quiescence (`checker::replicas`): one finding, `controllers:
//! PodsAsSpecifiedAtQuiescence`, for a cluster with controller managers. A passing finding says how many
//! objects it judged; a failing one names each object with the count it wanted and the one it found.

use super::list_first;
use super::Finding;
use crate::checker::replicas::STATEMENT;
use crate::scenario::execute::pods_settled::BOUND;
use crate::scenario::execute::ScenarioRun;
use crate::scenario::plan::Scenario;

/// Who the finding is about.
pub const WHO: &str = "controllers";

/// The finding on the workloads' pods; none without controller managers.
pub fn finding(scenario: &Scenario, run: &ScenarioRun) -> Option<Finding> {
    let settled = run.pods_settled.as_ref()?;
    let (pass, detail) = match settled {
        Err(why) => (false, format!("the registry could not be read: {why}")),
        Ok(verdict) if verdict.violations.is_empty() => (
            true,
            format!("{} ReplicaSets, Deployments, Jobs and Services judged, each as its spec asks", verdict.judged),
        ),
        Ok(verdict) => {
            let found = &verdict.violations;
            let mut out = format!(
                "broken by {} of {} objects still {} s after settling (\"{STATEMENT}\"):",
                found.len(),
                verdict.judged,
                BOUND.as_secs()
            );
            list_first(&mut out, found.iter().map(|v| v.details.as_str()));
            (false, out)
        }
    };
    Some(Finding {
        who: WHO.to_string(),
        at: scenario.path.clone(),
        key: "",
        what: "PodsAsSpecifiedAtQuiescence".to_string(),
        pass,
        detail,
    })
}
