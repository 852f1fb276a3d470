//! The apiserver checkers' verdicts on a run's apiserver workloads (`checker::apiserver`), one finding per
//! guarantee, named after it (`apiserver: WatchFromResourceVersion`): what the workloads' watches and
//! consistent reads saw against the etcd-side record of the registry prefix. A passing finding says how much
//! was checked; a failing one lists what broke the guarantee.

use super::list_first;
use super::Finding;
use crate::checker::apiserver::{consistent_read, watch_from_rv, ApiGuarantee, ApiViolation};
use crate::history::apiserver::{ApiHistory, ApiOutcome};
use crate::scenario::plan::{Scenario, WorkloadKind};

/// Who the findings are about.
pub const WHO: &str = "apiserver";

/// The findings on `history`, the apiserver workloads' record; none if the scenario has no such workload.
pub fn findings(scenario: &Scenario, history: Option<&ApiHistory>) -> Vec<Finding> {
    let Some(history) = history else { return Vec::new() };
    let at = scenario
        .workloads
        .iter()
        .find(|w| w.kind == WorkloadKind::Apiserver)
        .map_or_else(|| scenario.path.clone(), |w| w.at.clone());
    let events: usize = history.watches.iter().map(|w| w.events.len()).sum();
    let watched = format!(
        "{} watches delivered {events} events, each as etcd recorded it (record through rv={})",
        history.watches.len(),
        history.changes_through
    );
    let reads =
        history.ops.iter().filter(|o| matches!(o.outcome, ApiOutcome::Found { .. } | ApiOutcome::Listed { .. }));
    let read = format!("{} consistent reads answered, each seeing the writes acknowledged before it", reads.count());
    let verdicts = [
        (ApiGuarantee::WatchFromResourceVersion, watch_from_rv::check(history), watched),
        (ApiGuarantee::ConsistentReadSeesAcknowledgedWrites, consistent_read::check(history), read),
    ];
    verdicts
        .into_iter()
        .map(|(guarantee, found, passed)| Finding {
            who: WHO.to_string(),
            at: at.clone(),
            key: "",
            what: guarantee.to_string(),
            pass: found.is_empty(),
            detail: if found.is_empty() { passed } else { failed(guarantee, &found) },
        })
        .collect()
}

/// The guarantee, and the first few violations of it.
fn failed(guarantee: ApiGuarantee, found: &[ApiViolation]) -> String {
    let mut out = format!("broken {} times (\"{}\"):", found.len(), guarantee.statement());
    list_first(&mut out, found.iter().map(|v| v.details.as_str()));
    out
}
