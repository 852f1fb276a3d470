//! `[checks]`: the guarantees that must hold (by default every history guarantee not listed as failing) and
//! those that must fail, and whether `WriteOutcomesSameWithoutWatchCache` is asked for, which needs a watch
//! cache to turn off and writes to compare.

use std::collections::BTreeSet;
use std::ops::Range;

use super::{Result, Source};
use crate::checker::Guarantee;
use crate::cluster::ClusterSpec;
use crate::scenario::plan::{ClientScript, WorkloadPlan};
use crate::scenario::steps::Op;
use crate::scenario::syntax::{self, CheckName};
use toml::Spanned;

/// What `[checks]` asks of a run.
pub(super) struct Wanted {
    pub hold: BTreeSet<Guarantee>,
    pub fail: BTreeSet<Guarantee>,
    /// `WriteOutcomesSameWithoutWatchCache`: must hold (`Some(true)`), must fail, or not asked.
    pub cache_parity: Option<bool>,
    /// `AcknowledgedWritesKept`: must hold, must fail, or not asked.
    pub writes_kept: Option<bool>,
    pub hold_explicit: bool,
    /// Why `Linearizable` cannot judge the KV history, if it cannot.
    pub linearizable_skipped: Option<String>,
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
                CheckName::WriteOutcomesSameWithoutWatchCache | CheckName::AcknowledgedWritesKept => None,
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
    let linearizable_skipped = linearizable_blind_spot(spec, clients, workloads);
    if let (Some(why), Some((_, at))) =
        (&linearizable_skipped, held.iter().find(|(c, _)| *c == CheckName::History(Guarantee::Linearizable)))
    {
        return Err(src.err(
            at.clone(),
            format!("`Linearizable` cannot judge this scenario: {why}; leave it out of `hold`, or keep those clients off the apiservers' keys"),
        ));
    }
    let hold_explicit = checks.hold.is_some();
    for (name, at) in &held {
        if let CheckName::History(g) = name {
            if let Some(why) = nothing_to_judge(*g, clients, workloads) {
                return Err(src.err(at.clone(), format!("[checks] holds {g}, which would judge nothing: {why}")));
            }
        }
    }
    let named: Vec<(&(CheckName, Range<usize>), bool)> =
        held.iter().map(|c| (c, true)).chain(failed.iter().map(|c| (c, false))).collect();
    let kube_writes = clients.iter().flat_map(|c| &c.steps).any(|s| matches!(&s.op, Op::Kube(k) if k.verb.is_write()));
    let kept = CheckName::AcknowledgedWritesKept;
    let writes_kept = match named.iter().find(|((c, _), _)| *c == kept) {
        Some(((_, at), _)) if !kube_writes => {
            return Err(src.err(
                at.clone(),
                format!("{kept} judges the scenario's `kube` writes, and it has none: expected `kube` write steps"),
            ))
        }
        Some((_, must_hold)) => Some(*must_hold),
        None => None,
    };
    let parity = CheckName::WriteOutcomesSameWithoutWatchCache;
    let Some(((_, at), must_hold)) = named.iter().find(|((c, _), _)| *c == parity).copied() else {
        return Ok(Wanted { hold, fail, cache_parity: None, writes_kept, hold_explicit, linearizable_skipped });
    };
    if !spec.apiservers.iter().any(|a| a.watch_cache) {
        return Err(src.err(
            at.clone(),
            format!("{parity} compares a run with watch caches and one without, and no apiserver has a watch cache; set `[cluster] apiservers`"),
        ));
    }
    let script = workloads.iter().any(|w| w.script.is_some());
    if !script && !kube_writes {
        return Err(src.err(
            at.clone(),
            format!(
                "{parity} compares write outcomes, and the scenario has no writes to compare: expected `kube` write \
                 steps or an `apiserver` workload with `script_steps`"
            ),
        ));
    }
    Ok(Wanted { hold, fail, cache_parity: Some(must_hold), writes_kept, hold_explicit, linearizable_skipped })
}

/// Beside apiservers, the KV history holds only the etcd clients' requests, while the apiservers' writes take
/// revisions it never sees: an etcd client that writes, compacts or reads under `/registry/` gets answers no
/// model of that history explains. Which clients do, if any, as the reason `Linearizable` cannot judge.
fn linearizable_blind_spot(spec: &ClusterSpec, clients: &[ClientScript], workloads: &[WorkloadPlan]) -> Option<String> {
    if spec.apiservers.is_empty() {
        return None;
    }
    let mut names: Vec<String> = clients
        .iter()
        .filter(|c| c.kube.is_none() && c.steps.iter().any(|s| s.op.touches_registry()))
        .map(|c| c.name.clone())
        .collect();
    for w in workloads.iter().filter(|w| matches!(w.kind, crate::scenario::plan::WorkloadKind::Etcd(_))) {
        names.extend(w.clients.iter().cloned());
    }
    if names.is_empty() {
        return None;
    }
    Some(format!(
        "etcd clients beside apiservers ({}) write, compact or read the registry, and the apiservers' writes take revisions the KV history never sees",
        names.join(", ")
    ))
}

/// Why a history guarantee has nothing to judge in this scenario, if it has nothing: `Linearizable` needs an
/// etcd KV request, the watch guarantees an etcd watch, from a scripted client or an etcd workload.
fn nothing_to_judge(g: Guarantee, clients: &[ClientScript], workloads: &[WorkloadPlan]) -> Option<&'static str> {
    let etcd_workload = workloads.iter().any(|w| matches!(w.kind, crate::scenario::plan::WorkloadKind::Etcd(_)));
    if etcd_workload {
        return None;
    }
    let ops = clients.iter().flat_map(|c| &c.steps).map(|s| &s.op);
    match g {
        Guarantee::Linearizable => {
            let kv = ops.into_iter().any(|op| {
                matches!(
                    op,
                    Op::Get(_)
                        | Op::Put(_)
                        | Op::Delete(_)
                        | Op::Txn(_)
                        | Op::Compact(_)
                        | Op::LeaseGrant(_)
                        | Op::LeaseRevoke(_)
                )
            });
            (!kv).then_some("no client sends an etcd KV request (no get, put, delete, txn, compact or lease step, no etcd workload)")
        }
        _ => {
            let watch = ops.into_iter().any(|op| matches!(op, Op::Watch(_)));
            (!watch).then_some("no client watches etcd (no `watch` step, no etcd workload)")
        }
    }
}
