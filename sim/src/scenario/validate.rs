//! From parsed file to [`Scenario`]: resolves every name (nodes, steps, leases, watches, failpoints),
//! parses every expression, and refuses what cannot work, each time with the `file:line:col` of the
//! offending key and what was expected there. The first problem found is the one reported.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use fake_etcd::failpoint::{Action, Arm, Point};
use toml::Spanned;

use super::error::ScenarioError;
use super::expr::{Expr, Rel};
use super::plan::*;
use super::syntax::{self, EventType, ExpectOutcome, KeyFields, Value};
use crate::checker::Guarantee;
use crate::cluster::ClusterSpec;
use crate::fault::nemesis::{NemesisConfig, Pattern};
use crate::fault::Fault;
use crate::history::{GrpcCode, KeySpan};
use crate::run::FailpointSpec;
use crate::workload::Workload;

type Result<T> = std::result::Result<T, ScenarioError>;

/// Node names the harness itself uses in the trace; a client may not take them.
const RESERVED: [&str; 3] = ["sim", "fault", "control"];

/// Where errors point: the file's name and text.
struct Source<'a> {
    path: &'a str,
    text: &'a str,
}

impl Source<'_> {
    fn err(&self, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.path, self.text, span, message)
    }

    fn line_of(&self, span: &Range<usize>) -> String {
        format!("{}:{}", self.path, super::error::line_col(self.text, span.start).0)
    }
}

/// Validates a parsed file. `name` is the file stem.
pub fn validate(path: &str, text: &str, name: &str, file: syntax::File) -> Result<Scenario> {
    let src = Source { path, text };
    let s = &file.scenario;
    if *s.seeds.get_ref() == 0 {
        return Err(src.err(s.seeds.span(), "`seeds` is 0; expected at least 1 (seeds 1..=N run by default)"));
    }
    if *s.time_limit_s.get_ref() == 0 {
        return Err(src.err(s.time_limit_s.span(), "`time_limit_s` is 0; expected at least 1"));
    }
    let c = &file.cluster;
    let members = *c.members.get_ref();
    if !(1..=9).contains(&members) {
        return Err(src.err(c.members.span(), format!("`members` is {members}; expected 1 to 9")));
    }
    if *c.request_timeout_ms.get_ref() == 0 {
        return Err(src.err(c.request_timeout_ms.span(), "`request_timeout_ms` is 0; expected at least 1"));
    }
    if *c.progress_notify_interval_ms.get_ref() == 0 {
        return Err(
            src.err(c.progress_notify_interval_ms.span(), "`progress_notify_interval_ms` is 0; expected at least 1")
        );
    }
    if file.clients.is_empty() && file.workloads.is_empty() {
        return Err(ScenarioError::at(
            path,
            text,
            0..0,
            "the scenario has no `[[client]]` and no `[[workload]]`; expected at least one",
        ));
    }

    let mut spec = ClusterSpec::new(members, 0);
    spec.progress_notify_interval_ms = *c.progress_notify_interval_ms.get_ref();
    if let Some(count) = &c.snapshot_count {
        if *count.get_ref() == 0 {
            return Err(src.err(count.span(), "`snapshot_count` is 0; expected at least 1"));
        }
        spec.snapshot_count = Some(*count.get_ref());
    }
    for bug in &c.bugs {
        match bug.get_ref().as_str() {
            "restore-lowers-watchers" => spec.restore_lowers_watchers = true,
            "skip-sync" => spec.disk_options.skip_sync = true,
            "txn-ranges-checked-only-where-served" => spec.txn_ranges_checked_only_where_served = true,
            other => {
                return Err(src.err(
                    bug.span(),
                    format!(
                        "unknown bug {other:?}; expected one of \"restore-lowers-watchers\", \"skip-sync\", \
                         \"txn-ranges-checked-only-where-served\""
                    ),
                ))
            }
        }
    }
    let member_names = spec.member_names();

    // Client names: scripted clients first, then each workload's generated ones.
    let mut client_names: Vec<String> = Vec::new();
    let taken = |name: &Spanned<String>, names: &mut Vec<String>| -> Result<()> {
        let n = name.get_ref();
        let valid = !n.is_empty() && n.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
        if !valid {
            return Err(src.err(name.span(), format!("client name {n:?}: expected letters, digits, `-` and `_`")));
        }
        if member_names.contains(n) || RESERVED.contains(&n.as_str()) || names.contains(n) {
            return Err(src.err(
                name.span(),
                format!(
                    "the name {n:?} is already taken (members, clients and `sim`, `fault`, `control` are reserved)"
                ),
            ));
        }
        names.push(n.clone());
        Ok(())
    };
    for client in &file.clients {
        taken(&client.name, &mut client_names)?;
    }
    let mut workloads = Vec::new();
    for w in &file.workloads {
        let kind: Workload = w.kind.get_ref().parse().map_err(|e: String| src.err(w.kind.span(), e))?;
        let count = *w.clients.get_ref();
        if count == 0 || count > 64 {
            return Err(src.err(w.clients.span(), format!("`clients` is {count}; expected 1 to 64")));
        }
        let mut names = Vec::new();
        for i in 1..=count {
            let generated = Spanned::new(w.name.span(), format!("{}-{i}", w.name.get_ref()));
            taken(&generated, &mut client_names)?;
            names.push(generated.into_inner());
        }
        workloads.push(WorkloadPlan { name: w.name.get_ref().clone(), kind, clients: names, ops: w.ops });
    }
    spec.clients = client_names.len();
    spec.client_labels = client_names.clone();

    // Steps: names first, so that any step may refer to any other.
    let mut steps: BTreeMap<String, (Range<usize>, StepKind)> = BTreeMap::new();
    for client in &file.clients {
        for step in &client.steps {
            if let Some(name) = &step.get_ref().name {
                let kind = step_kind(step.get_ref());
                if steps.insert(name.get_ref().clone(), (name.span(), kind)).is_some() {
                    return Err(src.err(
                        name.span(),
                        format!("a step named {:?} already exists; step names must be unique", name.get_ref()),
                    ));
                }
            }
        }
    }
    let names = Names { steps: &steps };

    let mut clients = Vec::new();
    for client in &file.clients {
        let member = match &client.member {
            None => member_names[0].clone(),
            Some(m) => {
                if !member_names.contains(m.get_ref()) {
                    return Err(src.err(
                        m.span(),
                        format!("no member is named {:?}; expected one of {}", m.get_ref(), member_names.join(", ")),
                    ));
                }
                m.get_ref().clone()
            }
        };
        let mut plans = Vec::new();
        for (i, step) in client.steps.iter().enumerate() {
            plans.push(step_plan(&src, &names, client.name.get_ref(), i, step)?);
        }
        clients.push(ClientScript { name: client.name.get_ref().clone(), member, steps: plans });
    }
    check_no_deadlock(&src, &file, &clients)?;

    let node_check = |node: &str, span: Range<usize>, what: &str| -> Result<()> {
        if member_names.iter().chain(&client_names).any(|n| n == node) {
            return Ok(());
        }
        let known: Vec<&str> = member_names.iter().chain(&client_names).map(String::as_str).collect();
        Err(src.err(
            span,
            format!(
                "{what} names node {node:?}, which the scenario does not have; expected one of {}",
                known.join(", ")
            ),
        ))
    };
    let mut faults = Vec::new();
    for f in &file.faults {
        let fault = fault_of(&src, f)?;
        for n in fault.nodes() {
            node_check(n, f.span(), "the fault")?;
        }
        if let Fault::Release { node, point } = &fault {
            if !member_names.contains(node) {
                return Err(src.err(
                    f.span(),
                    format!("`release` names {node:?}; failpoints live in members ({})", member_names.join(", ")),
                ));
            }
            point.parse::<Point>().map_err(|e| src.err(f.span(), e.to_string()))?;
        }
        fault.validate(&spec).map_err(|e| src.err(f.span(), e.to_string()))?;
        let r = f.get_ref();
        let when = match (r.at_ms, &r.after) {
            (Some(ms), None) => {
                if r.delay_ms.is_some() {
                    return Err(src.err(f.span(), "`delay_ms` goes with `after`; with `at_ms` give the time directly"));
                }
                When::At { ms }
            }
            (None, Some(step)) => {
                names.step(&src, step, "`after`")?;
                When::After { step: step.get_ref().clone(), delay_ms: r.delay_ms.unwrap_or(0) }
            }
            _ => {
                return Err(src.err(f.span(), "a fault needs exactly one of `at_ms` (a time) or `after` (a step name)"))
            }
        };
        faults.push(FaultPlan { when, fault });
    }

    let mut failpoints = Vec::new();
    for fp in &file.failpoints {
        let r = fp.get_ref();
        if !member_names.contains(&r.node) {
            return Err(src.err(
                fp.span(),
                format!(
                    "failpoint on {:?}: failpoints live in members; expected one of {}",
                    r.node,
                    member_names.join(", ")
                ),
            ));
        }
        r.point.parse::<Point>().map_err(|e| src.err(fp.span(), e.to_string()))?;
        let action = match (r.action, r.delay_ms) {
            (syntax::FailpointAction::Delay, Some(ms)) => Action::Delay(std::time::Duration::from_millis(ms)),
            (syntax::FailpointAction::Delay, None) => {
                return Err(src.err(fp.span(), "`action = \"delay\"` needs `delay_ms`"))
            }
            (_, Some(_)) => return Err(src.err(fp.span(), "`delay_ms` goes only with `action = \"delay\"`")),
            (syntax::FailpointAction::Drop, None) => Action::Drop,
            (syntax::FailpointAction::Error, None) => Action::Error,
            (syntax::FailpointAction::Crash, None) => Action::Crash,
            (syntax::FailpointAction::Hold, None) => Action::Hold,
        };
        let arm = Arm { action, skip: r.skip.unwrap_or(0), times: r.times };
        failpoints.push(FailpointSpec { node: r.node.clone(), point: r.point.clone(), arm });
    }

    let nemesis = match &file.nemesis {
        Some(n) if n.get_ref().enabled => Some(nemesis_of(&src, n.get_ref())?),
        _ => None,
    };

    let hold: BTreeSet<Guarantee> = match &file.checks.hold {
        Some(list) => list.iter().copied().collect(),
        None => Guarantee::ALL.iter().copied().filter(|g| !file.checks.fail.contains(g)).collect(),
    };
    let fail: BTreeSet<Guarantee> = file.checks.fail.iter().copied().collect();
    if let Some(g) = hold.intersection(&fail).next() {
        return Err(ScenarioError::at(path, text, 0..0, format!("[checks] lists {g} both in `hold` and in `fail`")));
    }

    let summary =
        text.lines().next().and_then(|l| l.strip_prefix('#')).map(|l| l.trim().to_string()).unwrap_or_default();
    Ok(Scenario {
        name: name.to_string(),
        path: path.to_string(),
        summary,
        seeds: *s.seeds.get_ref(),
        canonical_seed: s.canonical_seed,
        time_limit_s: *s.time_limit_s.get_ref(),
        settle_ms: s.settle_ms,
        request_timeout_ms: *c.request_timeout_ms.get_ref(),
        cluster: spec,
        clients,
        workloads,
        faults,
        failpoints,
        nemesis,
        hold,
        fail,
        file,
    })
}

/// What kind of step a name stands for, for reference checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepKind {
    LeaseGrant,
    Watch,
    /// Has a response revision for `rev_of`.
    Revisioned,
    Other,
}

fn step_kind(s: &syntax::Step) -> StepKind {
    if s.lease_grant.is_some() {
        StepKind::LeaseGrant
    } else if s.watch.is_some() {
        StepKind::Watch
    } else if s.get.is_some()
        || s.put.is_some()
        || s.delete.is_some()
        || s.txn.is_some()
        || s.compact.is_some()
        || s.lease_revoke.is_some()
    {
        StepKind::Revisioned
    } else {
        StepKind::Other
    }
}

struct Names<'a> {
    steps: &'a BTreeMap<String, (Range<usize>, StepKind)>,
}

impl Names<'_> {
    fn step(&self, src: &Source, name: &Spanned<String>, what: &str) -> Result<StepKind> {
        match self.steps.get(name.get_ref()) {
            Some((_, kind)) => Ok(*kind),
            None => Err(src.err(
                name.span(),
                format!(
                    "{what} names step {:?}, which no client has; expected one of: {}",
                    name.get_ref(),
                    self.known()
                ),
            )),
        }
    }

    fn known(&self) -> String {
        if self.steps.is_empty() {
            return "(no named steps)".into();
        }
        self.steps.keys().cloned().collect::<Vec<_>>().join(", ")
    }

    fn lease(&self, src: &Source, name: &Spanned<String>) -> Result<String> {
        match self.step(src, name, "`lease`")? {
            StepKind::LeaseGrant => Ok(name.get_ref().clone()),
            _ => Err(src.err(
                name.span(),
                format!("`lease` names step {:?}, which is not a `lease_grant` step", name.get_ref()),
            )),
        }
    }

    fn watch(&self, src: &Source, name: &Spanned<String>) -> Result<String> {
        match self.step(src, name, "`watch`")? {
            StepKind::Watch => Ok(name.get_ref().clone()),
            _ => {
                Err(src
                    .err(name.span(), format!("`watch` names step {:?}, which is not a `watch` step", name.get_ref())))
            }
        }
    }

    /// Parses an expression and checks the step it reads has a revision.
    fn expr(&self, src: &Source, value: &Spanned<Value>) -> Result<Expr> {
        let e = match value.get_ref() {
            Value::Number(n) => Expr::exactly(*n),
            Value::Text(t) => Expr::parse(t).map_err(|m| src.err(value.span(), m))?,
        };
        if let Some(step) = e.step() {
            let kind = self.step(src, &Spanned::new(value.span(), step.to_string()), "`rev_of`")?;
            if kind == StepKind::Other {
                return Err(src.err(value.span(), format!("`rev_of({step})`: step {step:?} has no response revision (only get, put, delete, txn, compact, lease_grant, lease_revoke and watch steps do)")));
            }
        }
        Ok(e)
    }

    /// An expression in a place that gives a number: no relation.
    fn given(&self, src: &Source, value: &Spanned<Value>) -> Result<Expr> {
        let e = self.expr(src, value)?;
        if e.rel != Rel::Eq {
            return Err(src.err(
                value.span(),
                "this value is given, not compared: expected a number or `rev_of(step) [+|- n]` without `>=`, `<` etc.",
            ));
        }
        Ok(e)
    }
}

fn span_of(src: &Source, k: &KeyFields) -> Result<KeySpan> {
    let key = k.key.get_ref();
    let set = usize::from(k.prefix) + usize::from(k.from_key) + usize::from(k.range_end.is_some());
    if set > 1 {
        return Err(src.err(k.key.span(), "give at most one of `prefix`, `from_key` and `range_end`"));
    }
    if key.is_empty() && !k.from_key {
        return Err(src.err(
            k.key.span(),
            "`key` is empty; expected a key (use `from_key = true` with `key = \"\\u0000\"` for every key)",
        ));
    }
    Ok(if k.prefix {
        KeySpan::prefix(key.as_str())
    } else if k.from_key {
        KeySpan::range(key.as_str(), "\0")
    } else if let Some(end) = k.range_end {
        if end.get_ref().as_str() <= key.as_str() {
            return Err(src.err(
                end.span(),
                format!("`range_end` {:?} is not after `key` {key:?}; the range would be empty", end.get_ref()),
            ));
        }
        KeySpan::range(key.as_str(), end.get_ref().as_str())
    } else {
        KeySpan::single(key.as_str())
    })
}

fn get_plan(src: &Source, names: &Names, g: &syntax::Get) -> Result<GetPlan> {
    if g.limit.is_some_and(|l| l < 0) {
        return Err(src.err(g.key.span(), "`limit` is negative; expected 0 (no limit) or more"));
    }
    let given = |v: &Option<Spanned<Value>>| v.as_ref().map(|r| names.given(src, r)).transpose();
    Ok(GetPlan {
        span: span_of(src, &g.keys())?,
        limit: g.limit.unwrap_or(0),
        revision: given(&g.revision)?,
        serializable: g.serializable,
        keys_only: g.keys_only,
        count_only: g.count_only,
        sort_order: g.sort_order,
        sort_target: g.sort_target,
        min_mod_revision: given(&g.min_mod_revision)?,
        max_mod_revision: given(&g.max_mod_revision)?,
        min_create_revision: given(&g.min_create_revision)?,
        max_create_revision: given(&g.max_create_revision)?,
    })
}

/// `span` is the put table's, for the error of a put without a value.
fn put_plan(src: &Source, names: &Names, p: &syntax::Put, span: Range<usize>) -> Result<PutPlan> {
    if p.key.get_ref().is_empty() {
        return Err(src.err(p.key.span(), "`key` is empty; etcd refuses an empty key"));
    }
    // etcd itself refuses a value beside `ignore_value` (and a lease beside `ignore_lease`); a scenario may
    // send one to see that error, so only a put with neither is refused here.
    let value = match (&p.value, p.ignore_value) {
        (Some(v), _) => v.get_ref().clone(),
        (None, true) => String::new(),
        (None, false) => {
            return Err(src.err(span, "`put` needs a `value` (or `ignore_value = true`, which keeps the stored one)"))
        }
    };
    Ok(PutPlan {
        key: p.key.get_ref().clone(),
        value,
        lease: p.lease.as_ref().map(|l| names.lease(src, l)).transpose()?,
        prev_kv: p.prev_kv,
        ignore_value: p.ignore_value,
        ignore_lease: p.ignore_lease,
    })
}

fn delete_plan(src: &Source, d: &syntax::Delete) -> Result<DeletePlan> {
    Ok(DeletePlan { span: span_of(src, &d.keys())?, prev_kv: d.prev_kv })
}

fn txn_op(src: &Source, names: &Names, op: &Spanned<syntax::TxnOp>) -> Result<TxnOpPlan> {
    let o = op.get_ref();
    match (&o.get, &o.put, &o.delete, &o.txn) {
        (Some(g), None, None, None) => Ok(TxnOpPlan::Get(get_plan(src, names, g)?)),
        (None, Some(p), None, None) => Ok(TxnOpPlan::Put(put_plan(src, names, p, op.span())?)),
        (None, None, Some(d), None) => Ok(TxnOpPlan::Delete(delete_plan(src, d)?)),
        (None, None, None, Some(t)) => Ok(TxnOpPlan::Txn(txn_plan(src, names, t)?)),
        _ => Err(src.err(op.span(), "a txn operation needs exactly one of `get`, `put`, `delete`, `txn`")),
    }
}

fn txn_plan(src: &Source, names: &Names, t: &syntax::Txn) -> Result<TxnPlan> {
    let mut compare = Vec::new();
    for c in &t.compare {
        let r = c.get_ref();
        let value = match (r.target, r.value.get_ref()) {
            (syntax::CompareTarget::Value, Value::Text(s)) => CompareValue::Text(s.clone()),
            (syntax::CompareTarget::Value, Value::Number(_)) => {
                return Err(src.err(r.value.span(), "a `value` compare takes text; write the number in quotes"))
            }
            (syntax::CompareTarget::Lease, Value::Text(s)) => {
                CompareValue::Lease(names.lease(src, &Spanned::new(r.value.span(), s.clone()))?)
            }
            (syntax::CompareTarget::Lease, Value::Number(0)) => CompareValue::Number(Expr::exactly(0)),
            (syntax::CompareTarget::Lease, Value::Number(_)) => {
                return Err(
                    src.err(r.value.span(), "a `lease` compare takes a lease_grant step's name, or 0 for no lease")
                )
            }
            _ => CompareValue::Number(names.given(src, &r.value)?),
        };
        compare.push(ComparePlan { span: span_of(src, &r.keys())?, target: r.target, op: r.op, value });
    }
    let success = t.success.iter().map(|o| txn_op(src, names, o)).collect::<Result<_>>()?;
    let failure = t.failure.iter().map(|o| txn_op(src, names, o)).collect::<Result<_>>()?;
    Ok(TxnPlan { compare, success, failure })
}

fn step_plan(
    src: &Source,
    names: &Names,
    client: &str,
    index: usize,
    step: &Spanned<syntax::Step>,
) -> Result<StepPlan> {
    let s = step.get_ref();
    let mut ops: Vec<(&str, Op)> = Vec::new();
    if let Some(g) = &s.get {
        ops.push(("get", Op::Get(get_plan(src, names, g.get_ref())?)));
    }
    if let Some(p) = &s.put {
        ops.push(("put", Op::Put(put_plan(src, names, p.get_ref(), p.span())?)));
    }
    if let Some(d) = &s.delete {
        ops.push(("delete", Op::Delete(delete_plan(src, d.get_ref())?)));
    }
    if let Some(t) = &s.txn {
        ops.push(("txn", Op::Txn(txn_plan(src, names, t.get_ref())?)));
    }
    if let Some(c) = &s.compact {
        let revision = names.given(src, &c.get_ref().revision)?;
        ops.push(("compact", Op::Compact { revision, physical: c.get_ref().physical }));
    }
    if let Some(l) = &s.lease_grant {
        let g = l.get_ref();
        if g.ttl_s <= 0 {
            return Err(src.err(l.span(), format!("`ttl_s` is {}; expected a positive number of seconds", g.ttl_s)));
        }
        ops.push(("lease_grant", Op::LeaseGrant { ttl_s: g.ttl_s, id: g.id.unwrap_or(0) }));
    }
    if let Some(l) = &s.lease_revoke {
        ops.push(("lease_revoke", Op::LeaseRevoke { lease: names.lease(src, &l.get_ref().lease)? }));
    }
    if let Some(l) = &s.lease_keep_alive {
        ops.push(("lease_keep_alive", Op::LeaseKeepAlive { lease: names.lease(src, &l.get_ref().lease)? }));
    }
    if let Some(l) = &s.lease_time_to_live {
        let (lease, keys) = (names.lease(src, &l.get_ref().lease)?, l.get_ref().keys);
        ops.push(("lease_time_to_live", Op::LeaseTimeToLive { lease, keys }));
    }
    if s.lease_leases.is_some() {
        ops.push(("lease_leases", Op::LeaseLeases));
    }
    if let Some(w) = &s.watch {
        let r = w.get_ref();
        if s.name.is_none() {
            return Err(src.err(w.span(), "a `watch` step needs a `name`, by which waits and expectations refer to it"));
        }
        ops.push((
            "watch",
            Op::Watch(WatchPlan {
                span: span_of(src, &r.keys())?,
                start_revision: r.start_revision.as_ref().map(|v| names.given(src, v)).transpose()?,
                prev_kv: r.prev_kv,
                progress_notify: r.progress_notify,
                no_put: r.no_put,
                no_delete: r.no_delete,
                fragment: r.fragment,
                open_for_ms: r.open_for_ms,
            }),
        ));
    }
    if let Some(w) = &s.watch_progress {
        ops.push(("watch_progress", Op::WatchProgress { watch: names.watch(src, &w.get_ref().watch)? }));
    }
    if let Some(w) = &s.watch_cancel {
        ops.push(("watch_cancel", Op::WatchCancel { watch: names.watch(src, &w.get_ref().watch)? }));
    }
    if let Some(ms) = &s.sleep_ms {
        ops.push(("sleep_ms", Op::Sleep { ms: *ms.get_ref() }));
    }
    if let Some(w) = &s.wait {
        ops.push(("wait", Op::Wait(wait_plan(src, names, w)?)));
    }
    const ALL: &str = "get, put, delete, txn, compact, lease_grant, lease_revoke, lease_keep_alive, \
                       lease_time_to_live, lease_leases, watch, watch_progress, watch_cancel, sleep_ms, wait";
    let op = match ops.len() {
        1 => ops.pop().expect("one").1,
        0 => return Err(src.err(step.span(), format!("the step has no operation; expected exactly one of: {ALL}"))),
        _ => {
            let keys: Vec<&str> = ops.iter().map(|(k, _)| *k).collect();
            return Err(src.err(
                step.span(),
                format!("the step has {} operations ({}); expected exactly one", keys.len(), keys.join(", ")),
            ));
        }
    };
    let mut after = Vec::new();
    for a in &s.after {
        names.step(src, a, "`after`")?;
        if s.name.as_ref().is_some_and(|n| n.get_ref() == a.get_ref()) {
            return Err(src.err(a.span(), "a step cannot wait for itself"));
        }
        after.push(a.get_ref().clone());
    }
    let expect = s.expect.as_ref().map(|e| expectations(src, names, &op, e)).transpose()?;
    let name = s.name.as_ref().map(|n| n.get_ref().clone());
    Ok(StepPlan {
        label: name.clone().unwrap_or_else(|| format!("{client}#{}", index + 1)),
        name,
        at: src.line_of(&step.span()),
        after,
        at_ms: s.at_ms,
        op,
        expect,
    })
}

fn wait_plan(src: &Source, names: &Names, w: &Spanned<syntax::Wait>) -> Result<WaitPlan> {
    let r = w.get_ref();
    let timeout_ms = r.timeout_ms.unwrap_or(10_000);
    match (&r.watch, r.leader) {
        (None, true) => {
            if r.events.is_some() || r.revision.is_some() || r.canceled || r.progress {
                return Err(src.err(w.span(), "`wait` for `leader` takes no watch condition"));
            }
            Ok(WaitPlan::Leader { timeout_ms })
        }
        (Some(watch), false) => {
            let watch = names.watch(src, watch)?;
            let mut conditions = Vec::new();
            if let Some(n) = r.events {
                conditions.push(WatchCondition::Events(n));
            }
            if let Some(v) = &r.revision {
                conditions.push(WatchCondition::Revision(names.expr(src, v)?));
            }
            if r.canceled {
                conditions.push(WatchCondition::Canceled);
            }
            if r.progress {
                conditions.push(WatchCondition::Progress);
            }
            if conditions.len() != 1 {
                return Err(src.err(
                    w.span(),
                    "`wait` on a watch needs exactly one of `events`, `revision`, `canceled = true`, `progress = true`",
                ));
            }
            Ok(WaitPlan::Watch { watch, condition: conditions.pop().expect("one"), timeout_ms })
        }
        _ => Err(src.err(w.span(), "`wait` needs exactly one of `leader = true` or `watch = \"<watch step>\"`")),
    }
}

/// Which expectation keys each operation can meet.
fn allowed(op: &Op) -> &'static [&'static str] {
    const BASE: [&str; 3] = ["outcome", "error", "revision"];
    match op {
        Op::Get(_) => &["outcome", "error", "revision", "kvs", "count", "more"],
        Op::Put(_) => &["outcome", "error", "revision", "prev_value"],
        Op::Delete(_) => &["outcome", "error", "revision", "count", "prev_value"],
        Op::Txn(_) => &["outcome", "error", "revision", "succeeded", "responses"],
        Op::Compact { .. } | Op::LeaseRevoke { .. } => &BASE,
        Op::LeaseGrant { .. } => &["outcome", "error", "revision", "ttl_s"],
        Op::LeaseKeepAlive { .. } => &["outcome", "ttl_s"],
        Op::LeaseTimeToLive { .. } => &["outcome", "ttl_s", "keys"],
        Op::LeaseLeases => &["outcome", "leases"],
        Op::Watch(_) => &[
            "revision",
            "events",
            "canceled",
            "compact_revision",
            "cancel_reason",
            "progress_count",
            "progress_revision",
        ],
        Op::WatchProgress { .. } | Op::WatchCancel { .. } | Op::Sleep { .. } | Op::Wait(_) => &[],
    }
}

fn expectations(src: &Source, names: &Names, op: &Op, e: &Spanned<syntax::Expect>) -> Result<Expectations> {
    let r = e.get_ref();
    // Every key that is present, with its span, so that a key the operation cannot meet is pointed at.
    let present: Vec<(&str, Option<Range<usize>>)> = vec![
        ("outcome", r.outcome.as_ref().map(Spanned::span)),
        ("error", r.error.as_ref().map(Spanned::span)),
        ("revision", r.revision.as_ref().map(Spanned::span)),
        ("kvs", r.kvs.as_ref().map(Spanned::span)),
        ("count", r.count.as_ref().map(Spanned::span)),
        ("more", r.more.as_ref().map(Spanned::span)),
        ("succeeded", r.succeeded.as_ref().map(Spanned::span)),
        ("prev_value", r.prev_value.as_ref().map(Spanned::span)),
        ("ttl_s", r.ttl_s.as_ref().map(Spanned::span)),
        ("keys", r.keys.as_ref().map(Spanned::span)),
        ("leases", r.leases.as_ref().map(Spanned::span)),
        ("responses", r.responses.as_ref().map(Spanned::span)),
        ("events", r.events.as_ref().map(Spanned::span)),
        ("canceled", r.canceled.as_ref().map(Spanned::span)),
        ("compact_revision", r.compact_revision.as_ref().map(Spanned::span)),
        ("cancel_reason", r.cancel_reason.as_ref().map(Spanned::span)),
        ("progress_count", r.progress_count.as_ref().map(Spanned::span)),
        ("progress_revision", r.progress_revision.as_ref().map(Spanned::span)),
    ];
    let ok = allowed(op);
    for (key, span) in &present {
        if let Some(span) = span {
            if !ok.contains(key) {
                let can = if ok.is_empty() { "nothing".to_string() } else { ok.join(", ") };
                return Err(src.err(
                    span.clone(),
                    format!("`expect.{key}` does not apply to a `{}` step; it can expect: {can}", op.keyword()),
                ));
            }
        }
    }
    let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
    let error = match &r.error {
        None => None,
        Some(err) => {
            let code = grpc_code(err.get_ref().code.get_ref()).ok_or_else(|| {
                src.err(
                    err.get_ref().code.span(),
                    format!(
                        "no gRPC code is named {:?}; expected one of: {}",
                        err.get_ref().code.get_ref(),
                        GRPC_CODES.join(", ")
                    ),
                )
            })?;
            Some((code, err.get_ref().message.clone()))
        }
    };
    let outcome = match (&r.outcome, &error) {
        (Some(o), Some(_)) if *o.get_ref() != ExpectOutcome::Error => {
            return Err(src.err(o.span(), "`error` is given, so the outcome is `error`; drop `outcome` or the `error`"))
        }
        (Some(o), _) => Some(*o.get_ref()),
        (None, Some(_)) => Some(ExpectOutcome::Error),
        (None, None) if !matches!(op, Op::Watch(_)) => Some(ExpectOutcome::Ok),
        (None, None) => None,
    };
    if let (Some(pv), Op::Put(PutPlan { prev_kv: false, .. }) | Op::Delete(DeletePlan { prev_kv: false, .. })) =
        (&r.prev_value, op)
    {
        return Err(src.err(pv.span(), "`expect.prev_value` needs `prev_kv = true` on the operation"));
    }
    let kvs = match (&r.kvs, op) {
        (None, _) => None,
        (Some(list), Op::Get(g)) => Some(kvs_expect(src, names, g, list)?),
        (Some(_), _) => unreachable!("checked by `allowed`"),
    };
    if let (Some(k), Op::LeaseTimeToLive { keys: false, .. }) = (&r.keys, op) {
        return Err(src.err(k.span(), "`expect.keys` needs `keys = true` on the `lease_time_to_live`"));
    }
    let leases = match &r.leases {
        None => None,
        Some(list) => Some(list.get_ref().iter().map(|l| names.lease(src, l)).collect::<Result<Vec<_>>>()?),
    };
    let responses = match (&r.responses, op) {
        (None, _) => None,
        (Some(list), Op::Txn(t)) => {
            Some(responses_expect(src, names, t, r.succeeded.as_ref().map(|s| *s.get_ref()), list)?)
        }
        (Some(_), _) => unreachable!("checked by `allowed`"),
    };
    let events = match &r.events {
        None => None,
        Some(list) => {
            let Op::Watch(w) = op else { unreachable!("checked by `allowed`") };
            let mut out = Vec::new();
            for ev in list.get_ref() {
                let x = ev.get_ref();
                if !w.span.contains(x.key.get_ref().as_bytes()) {
                    return Err(src.err(
                        x.key.span(),
                        format!(
                            "the watch does not cover key {:?}, so it can never deliver this event",
                            x.key.get_ref()
                        ),
                    ));
                }
                let filtered = match x.kind {
                    EventType::Put => w.no_put,
                    EventType::Delete => w.no_delete,
                };
                if filtered {
                    return Err(src.err(
                        ev.span(),
                        format!("the watch filters out {:?} events, so it can never deliver this one", x.kind),
                    ));
                }
                if x.prev_value.is_some() && !w.prev_kv {
                    return Err(src.err(ev.span(), "`prev_value` needs `prev_kv = true` on the watch"));
                }
                out.push(EventExpect {
                    kind: x.kind,
                    key: x.key.get_ref().clone(),
                    value: x.value.clone(),
                    mod_revision: expr(&x.mod_revision)?,
                    create_revision: expr(&x.create_revision)?,
                    version: expr(&x.version)?,
                    prev_value: x.prev_value.clone(),
                });
            }
            Some(out)
        }
    };
    if let (Some(c), Some(_)) = (&r.canceled, &r.compact_revision) {
        if !*c.get_ref() {
            return Err(src.err(c.span(), "`canceled = false` contradicts `compact_revision`"));
        }
    }
    Ok(Expectations {
        outcome,
        error,
        revision: expr(&r.revision)?,
        body: ResponseExpect {
            kvs,
            count: expr(&r.count)?,
            more: r.more.as_ref().map(|b| *b.get_ref()),
            succeeded: r.succeeded.as_ref().map(|b| *b.get_ref()),
            prev_value: r.prev_value.as_ref().map(|p| p.get_ref().clone()),
        },
        ttl_s: expr(&r.ttl_s)?,
        keys: r.keys.as_ref().map(|k| k.get_ref().clone()),
        leases,
        responses,
        events,
        canceled: r.canceled.as_ref().map(|c| *c.get_ref()).or(r.compact_revision.as_ref().map(|_| true)),
        compact_revision: expr(&r.compact_revision)?,
        cancel_reason: r.cancel_reason.as_ref().map(|c| c.get_ref().clone()),
        progress_count: expr(&r.progress_count)?,
        progress_revision: expr(&r.progress_revision)?,
    })
}

/// `expect.kvs` of a get: every key listed must be one the get covers.
fn kvs_expect(
    src: &Source,
    names: &Names,
    g: &GetPlan,
    list: &Spanned<Vec<syntax::ExpectKv>>,
) -> Result<Vec<KvExpect>> {
    if g.count_only {
        return Err(
            src.err(list.span(), "`expect.kvs` on a `count_only` get, which returns no kvs; expect `count` instead")
        );
    }
    let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
    let mut out = Vec::new();
    for kv in list.get_ref() {
        if !g.span.contains(kv.key.as_bytes()) {
            return Err(
                src.err(list.span(), format!("`expect.kvs` lists key {:?}, which the get does not cover", kv.key))
            );
        }
        out.push(KvExpect {
            key: kv.key.clone(),
            value: kv.value.clone(),
            create_revision: expr(&kv.create_revision)?,
            mod_revision: expr(&kv.mod_revision)?,
            version: expr(&kv.version)?,
            lease: kv.lease.as_ref().map(|l| names.lease(src, l)).transpose()?,
        });
    }
    Ok(out)
}

/// `expect.responses` of a txn: entry i is judged against operation i of the branch that ran, so the list
/// must be as long as that branch and each entry must fit its operation: in the branch `succeeded` names, or,
/// without `succeeded`, in at least one branch.
fn responses_expect(
    src: &Source,
    names: &Names,
    t: &TxnPlan,
    succeeded: Option<bool>,
    list: &Spanned<Vec<Spanned<syntax::ExpectResponse>>>,
) -> Result<Vec<ResponseExpect>> {
    let branches: Vec<(&str, &[TxnOpPlan])> = match succeeded {
        Some(true) => vec![("success", &t.success)],
        Some(false) => vec![("failure", &t.failure)],
        None => vec![("success", &t.success), ("failure", &t.failure)],
    };
    // The list is the exact sequence of the branch's responses, as `kvs` and `events` are exact lists.
    let n = list.get_ref().len();
    if !branches.iter().any(|(_, ops)| ops.len() == n) {
        let which: Vec<String> = branches.iter().map(|(b, ops)| format!("{b}: {}", ops.len())).collect();
        return Err(src.err(
            list.span(),
            format!(
                "`expect.responses` lists {n} response{}; expected one per operation of the branch that runs ({})",
                if n == 1 { "" } else { "s" },
                which.join(", ")
            ),
        ));
    }
    let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
    let mut out = Vec::new();
    for (i, entry) in list.get_ref().iter().enumerate() {
        let x = entry.get_ref();
        // The entry as the judge will read it; its `kvs` are checked against the get they belong to below.
        let mut expect = ResponseExpect {
            kvs: x.kvs.as_ref().map(|_| Vec::new()),
            count: expr(&x.count)?,
            more: x.more.as_ref().map(|b| *b.get_ref()),
            prev_value: x.prev_value.as_ref().map(|p| p.get_ref().clone()),
            succeeded: x.succeeded.as_ref().map(|b| *b.get_ref()),
        };
        let fits = |op: &TxnOpPlan| -> std::result::Result<(), String> {
            let kind = op.kind();
            if let Some(key) = expect.misfit(kind) {
                return Err(format!("`{key}` does not apply to a `{}`", kind.keyword()));
            }
            let prev_kv = match op {
                TxnOpPlan::Put(p) => p.prev_kv,
                TxnOpPlan::Delete(d) => d.prev_kv,
                _ => true,
            };
            if x.prev_value.is_some() && !prev_kv {
                return Err(format!("`prev_value` needs `prev_kv = true` on the `{}`", kind.keyword()));
            }
            Ok(())
        };
        let mut why = Vec::new();
        let mut get = None;
        for (branch, ops) in &branches {
            match ops.get(i).map(|op| (op, fits(op))) {
                Some((op, Ok(()))) => {
                    if let TxnOpPlan::Get(g) = op {
                        get.get_or_insert(g);
                    }
                    why.clear();
                    break;
                }
                Some((_, Err(e))) => why.push(format!("{branch} operation {}: {e}", i + 1)),
                None => why.push(format!("{branch} has no operation {}", i + 1)),
            }
        }
        if !why.is_empty() {
            return Err(src.err(entry.span(), format!("response {} can never match: {}", i + 1, why.join("; "))));
        }
        expect.kvs = match (&x.kvs, get) {
            (Some(list), Some(g)) => Some(kvs_expect(src, names, g, list)?),
            _ => None,
        };
        out.push(expect);
    }
    Ok(out)
}

const GRPC_CODES: [&str; 16] = [
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];

fn grpc_code(name: &str) -> Option<GrpcCode> {
    GRPC_CODES.iter().position(|c| *c == name).map(|i| GrpcCode::from_i32(i as i32 + 1))
}

fn fault_of(src: &Source, f: &Spanned<syntax::Fault>) -> Result<Fault> {
    let r = f.get_ref();
    let mut found: Vec<Fault> = Vec::new();
    if let Some(p) = &r.partition {
        found.push(Fault::Partition { left: p.left.clone(), right: p.right.clone() });
    }
    if let Some(p) = &r.partition_one_way {
        found.push(Fault::PartitionOneWay { from: p.from.clone(), to: p.to.clone() });
    }
    match r.heal {
        Some(true) => found.push(Fault::Heal),
        Some(false) => {
            return Err(src.err(f.span(), "`heal = false` does nothing; write `heal = true` or leave it out"))
        }
        None => {}
    }
    let node = |v: &Option<String>, make: fn(String) -> Fault, found: &mut Vec<Fault>| {
        if let Some(n) = v {
            found.push(make(n.clone()));
        }
    };
    node(&r.clog, Fault::ClogNode, &mut found);
    node(&r.unclog, Fault::UnclogNode, &mut found);
    node(&r.kill, Fault::Kill, &mut found);
    node(&r.restart, Fault::Restart, &mut found);
    node(&r.pause, Fault::Pause, &mut found);
    node(&r.resume, Fault::Resume, &mut found);
    if let Some(l) = &r.clog_link {
        found.push(Fault::ClogLink { from: l.from.clone(), to: l.to.clone() });
    }
    if let Some(l) = &r.unclog_link {
        found.push(Fault::UnclogLink { from: l.from.clone(), to: l.to.clone() });
    }
    if let Some(p) = r.packet_loss_permille {
        found.push(Fault::PacketLoss { loss_permille: p });
    }
    if let Some(l) = &r.latency {
        found.push(Fault::Latency { min_ms: l.min_ms, max_ms: l.max_ms });
    }
    if let Some(rel) = &r.release {
        found.push(Fault::Release { node: rel.node.clone(), point: rel.point.clone() });
    }
    match found.len() {
        1 => Ok(found.pop().expect("one")),
        0 => Err(src.err(f.span(), "the fault has no action; expected exactly one of: partition, partition_one_way, heal, clog, unclog, clog_link, unclog_link, packet_loss_permille, latency, kill, restart, pause, resume, release")),
        n => Err(src.err(f.span(), format!("the fault has {n} actions; expected exactly one (write one `[[fault]]` per action)"))),
    }
}

fn nemesis_of(src: &Source, n: &syntax::Nemesis) -> Result<NemesisConfig> {
    let mut config = NemesisConfig::default();
    if let Some(list) = &n.patterns {
        let mut patterns = Vec::new();
        for p in list {
            let pattern: Pattern = p.get_ref().parse().map_err(|e: String| src.err(p.span(), e))?;
            if !patterns.contains(&pattern) {
                patterns.push(pattern);
            }
        }
        if patterns.is_empty() {
            return Err(src.err(0..0, "`[nemesis] patterns` is empty; expected at least one (or `enabled = false`)"));
        }
        patterns.sort();
        config.patterns = patterns;
    }
    if let Some(q) = &n.quiet_ms {
        let [lo, hi] = *q.get_ref();
        if lo >= hi {
            return Err(
                src.err(q.span(), format!("`quiet_ms` is [{lo}, {hi}]; expected [min, max] with min below max"))
            );
        }
        config.quiet_ms = (lo, hi);
    }
    Ok(config)
}

/// Refuses `after` chains that can never start: a step that waits, directly or through others, for a
/// step that can only run after it.
fn check_no_deadlock(src: &Source, file: &syntax::File, clients: &[ClientScript]) -> Result<()> {
    // Node (client, step); edges from what must finish first to what waits for it.
    let mut index: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (c, client) in clients.iter().enumerate() {
        for (s, step) in client.steps.iter().enumerate() {
            if let Some(n) = &step.name {
                index.insert(n, (c, s));
            }
        }
    }
    // A step (c, s) can start only when (c, s-1) and its `after` steps are done. Depth-first search for a
    // cycle through those "waits for" edges.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let mut marks: Vec<Vec<Mark>> = clients.iter().map(|c| vec![Mark::New; c.steps.len()]).collect();
    fn visit(
        node: (usize, usize),
        clients: &[ClientScript],
        index: &BTreeMap<&str, (usize, usize)>,
        marks: &mut Vec<Vec<Mark>>,
    ) -> Option<(usize, usize)> {
        match marks[node.0][node.1] {
            Mark::Done => return None,
            Mark::Active => return Some(node),
            Mark::New => {}
        }
        marks[node.0][node.1] = Mark::Active;
        let step = &clients[node.0].steps[node.1];
        let mut deps: Vec<(usize, usize)> = step.after.iter().filter_map(|a| index.get(a.as_str()).copied()).collect();
        if node.1 > 0 {
            deps.push((node.0, node.1 - 1));
        }
        for d in deps {
            if let Some(cycle) = visit(d, clients, index, marks) {
                return Some(cycle);
            }
        }
        marks[node.0][node.1] = Mark::Done;
        None
    }
    for c in 0..clients.len() {
        for s in 0..clients[c].steps.len() {
            if let Some((cc, ss)) = visit((c, s), clients, &index, &mut marks) {
                let span = file.clients[cc].steps[ss].span();
                return Err(src.err(span, format!("step {} can never start: its `after` steps wait, directly or through others, for steps that run after it", clients[cc].steps[ss].label)));
            }
        }
    }
    Ok(())
}
