//! `[checks]`: the guarantees that must hold (by default every history guarantee not listed as failing) and
//! those that must fail, and whether `WriteOutcomesSameWithoutWatchCache` is asked for, which needs a watch
//! cache to turn off and writes to compare.

use std::collections::BTreeSet;
use std::ops::Range;

use super::{Result, Source};
use crate::checker::Guarantee;
use crate::cluster::ClusterSpec;
use crate::scenario::plan::{ClientScript, Op, WorkloadPlan};
use crate::scenario::syntax::{self, CheckName};
use toml::Spanned;

/// What `[checks]` asks of a run.
pub(super) struct Wanted {
    pub hold: BTreeSet<Guarantee>,
    pub fail: BTreeSet<Guarantee>,
    /// `WriteOutcomesSameWithoutWatchCache`: must hold (`Some(true)`), must fail, or not asked.
    pub cache_parity: Option<bool>,
}

/// The checks `[checks]` names; none may be both in `hold` and in `fail`. Errors point at the name.
pub(super) fn checks(
    src: &Source,
    checks: &syntax::Checks,
    spec: &ClusterSpec,
    clients: &[ClientScript],
    workloads: &[WorkloadPlan],
) -> Result<Wanted> {
    let names = |list: &[Spanned<String>]| -> Result<Vec<(CheckName, Range<usize>)>> {
        list.iter()
            .map(|c| c.get_ref().parse::<CheckName>().map(|n| (n, c.span())).map_err(|e| src.err(c.span(), e)))
            .collect()
    };
    let history = |list: &[(CheckName, Range<usize>)]| -> BTreeSet<Guarantee> {
        list.iter()
            .filter_map(|(c, _)| match c {
                CheckName::History(g) => Some(*g),
                CheckName::WriteOutcomesSameWithoutWatchCache => None,
            })
            .collect()
    };
    let held = names(checks.hold.as_deref().unwrap_or_default())?;
    let failed = names(&checks.fail)?;
    let fail = history(&failed);
    let hold = match &checks.hold {
        Some(_) => history(&held),
        None => Guarantee::ALL.iter().copied().filter(|g| !fail.contains(g)).collect(),
    };
    if let Some((both, at)) = failed.iter().find(|(f, _)| held.iter().any(|(h, _)| h == f)) {
        return Err(src.err(at.clone(), format!("[checks] lists {both} both in `hold` and in `fail`")));
    }
    let parity = CheckName::WriteOutcomesSameWithoutWatchCache;
    let named = held.iter().map(|c| (c, true)).chain(failed.iter().map(|c| (c, false)));
    let Some(((_, at), must_hold)) = named.into_iter().find(|((c, _), _)| *c == parity) else {
        return Ok(Wanted { hold, fail, cache_parity: None });
    };
    if !spec.apiservers.iter().any(|a| a.watch_cache) {
        return Err(src.err(
            at.clone(),
            format!("{parity} compares a run with watch caches and one without, and no apiserver has a watch cache; set `[cluster] apiservers`"),
        ));
    }
    let script = workloads.iter().any(|w| w.script.is_some());
    let kube_writes = clients.iter().flat_map(|c| &c.steps).any(|s| matches!(&s.op, Op::Kube(k) if k.verb.is_write()));
    if !script && !kube_writes {
        return Err(src.err(
            at.clone(),
            format!(
                "{parity} compares write outcomes, and the scenario has no writes to compare: expected `kube` write \
                 steps or an `apiserver` workload with `script_steps`"
            ),
        ));
    }
    Ok(Wanted { hold, fail, cache_parity: Some(must_hold) })
}
