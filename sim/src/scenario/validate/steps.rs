//! Each scripted client and its steps: the member it talks to, and per step its one operation, what it
//! waits for (`after`, `at_ms`), its expectations ([`super::expect`]) and its label.

use toml::Spanned;

use super::expect::expectations;
use super::names::{Names, StepKind};
use super::ops::{delete_plan, get_plan, put_plan, span_of, txn_plan};
use super::{Result, Source};
use crate::cluster::ClusterSpec;
use crate::scenario::plan::{ClientScript, ControllerPlan, Op, StepPlan, WaitPlan, WatchCondition, WatchPlan};
use crate::scenario::syntax;
use apiserver::apis::Catalog;

/// An operation with the key that gave it, for the error of a step with several.
type Keyed = (&'static str, Op);

/// Every scripted client, in file order.
pub(super) fn scripts(
    src: &Source,
    names: &Names,
    file: &syntax::File,
    spec: &ClusterSpec,
    catalog: &Catalog,
) -> Result<Vec<ClientScript>> {
    let members = spec.member_names();
    let mut clients = Vec::new();
    for client in &file.clients {
        let kube = super::kube::target(src, client, spec)?;
        let member = match &client.member {
            None if kube.is_some() => String::new(),
            None => members[0].clone(),
            Some(m) => {
                if !members.contains(m.get_ref()) {
                    return Err(src.err(
                        m.span(),
                        format!("no member is named {:?}; expected one of {}", m.get_ref(), members.join(", ")),
                    ));
                }
                m.get_ref().clone()
            }
        };
        let mut plans = Vec::new();
        for (i, step) in client.steps.iter().enumerate() {
            let plan = step_plan(src, names, catalog, client.name.get_ref(), i, step)?;
            check_client_kind(src, step, &plan.op, kube.is_some())?;
            plans.push(plan);
        }
        clients.push(ClientScript { name: client.name.get_ref().clone(), member, kube, steps: plans });
    }
    Ok(clients)
}

/// A Kubernetes client sends `kube` steps, an etcd client etcd requests; waits and sleeps are either's.
fn check_client_kind(src: &Source, step: &Spanned<syntax::Step>, op: &Op, kube_client: bool) -> Result<()> {
    let neutral = matches!(op, Op::Sleep { .. } | Op::Wait(_) | Op::InformerRestart { .. });
    match (op, kube_client) {
        (Op::Kube(_) | Op::Informer(_) | Op::Controller(_), false) => Err(src.err(
            step.span(),
            format!("a `{}` step needs a Kubernetes client: give the client `apiserver` or `routing`", op.keyword()),
        )),
        (_, true) if !neutral && !matches!(op, Op::Kube(_) | Op::Informer(_) | Op::Controller(_)) => Err(src.err(
            step.span(),
            format!(
                "a Kubernetes client sends `kube` steps, not `{}`; etcd requests need a client of a member",
                op.keyword()
            ),
        )),
        _ => Ok(()),
    }
}

fn step_plan(
    src: &Source,
    names: &Names,
    catalog: &Catalog,
    client: &str,
    index: usize,
    step: &Spanned<syntax::Step>,
) -> Result<StepPlan> {
    let s = step.get_ref();
    let op = step_op(src, names, catalog, step)?;
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

/// The step's one operation, whichever key gives it.
fn step_op(src: &Source, names: &Names, catalog: &Catalog, step: &Spanned<syntax::Step>) -> Result<Op> {
    let s = step.get_ref();
    let mut ops: Vec<Keyed> = Vec::new();
    if let Some(k) = &s.kube {
        ops.push(("kube", Op::Kube(Box::new(super::kube::kube_plan(src, names, catalog, k)?))));
    }
    if let Some(name) = &s.informer_restart {
        if names.step(src, name, "`informer_restart`")? != StepKind::Informer {
            let msg = format!("`informer_restart` names step {:?}, which is not an `informer`", name.get_ref());
            return Err(src.err(name.span(), msg));
        }
        ops.push(("informer_restart", Op::InformerRestart { informer: name.get_ref().clone() }));
    }
    if let Some(c) = &s.controller {
        let c = c.get_ref();
        if names.step(src, &c.informer, "`controller.informer`")? != StepKind::Informer {
            let msg =
                format!("`controller.informer` names step {:?}, which is not an `informer`", c.informer.get_ref());
            return Err(src.err(c.informer.span(), msg));
        }
        let set = serde_json::to_value(c.set.get_ref())
            .map_err(|e| src.err(c.set.span(), format!("`set` is not JSON: {e}")))?;
        if !set.is_object() {
            return Err(src.err(c.set.span(), "`set` is a merge patch: expected a table"));
        }
        let plan = ControllerPlan { informer: c.informer.get_ref().clone(), name: c.name.get_ref().clone(), set };
        ops.push(("controller", Op::Controller(Box::new(plan))));
    }
    if let Some(i) = &s.informer {
        let list = Spanned::new(i.span(), i.get_ref().as_list());
        let mut plan = super::kube::kube_plan(src, names, catalog, &list)?;
        // A streaming informer's list is a watch-list; the plan says so as a `kube` watch step would.
        plan.send_initial_events = i.get_ref().streaming;
        ops.push(("informer", Op::Informer(Box::new(plan))));
    }
    kv_ops(src, names, s, &mut ops)?;
    lease_ops(src, names, s, &mut ops)?;
    if let Some(a) = &s.auth {
        ops.push(("auth", Op::Auth(super::auth::auth_plan(src, a.get_ref())?)));
    }
    watch_ops(src, names, step, &mut ops)?;
    if let Some(ms) = &s.sleep_ms {
        ops.push(("sleep_ms", Op::Sleep { ms: *ms.get_ref() }));
    }
    if let Some(w) = &s.wait {
        ops.push(("wait", Op::Wait(wait_plan(src, names, w)?)));
    }
    const ALL: &str = "get, put, delete, txn, compact, lease_grant, lease_revoke, lease_keep_alive, \
                       lease_time_to_live, lease_leases, watch, watch_progress, watch_cancel, sleep_ms, wait, kube, informer, informer_restart, controller, auth";
    match ops.len() {
        1 => Ok(ops.pop().expect("one").1),
        0 => Err(src.err(step.span(), format!("the step has no operation; expected exactly one of: {ALL}"))),
        _ => {
            let keys: Vec<&str> = ops.iter().map(|(k, _)| *k).collect();
            Err(src.err(
                step.span(),
                format!("the step has {} operations ({}); expected exactly one", keys.len(), keys.join(", ")),
            ))
        }
    }
}

/// The KV requests and compaction.
fn kv_ops(src: &Source, names: &Names, s: &syntax::Step, ops: &mut Vec<Keyed>) -> Result<()> {
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
    Ok(())
}

/// The lease requests.
fn lease_ops(src: &Source, names: &Names, s: &syntax::Step, ops: &mut Vec<Keyed>) -> Result<()> {
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
    Ok(())
}

/// A watch, and the requests sent on an open watch's stream.
fn watch_ops(src: &Source, names: &Names, step: &Spanned<syntax::Step>, ops: &mut Vec<Keyed>) -> Result<()> {
    let s = step.get_ref();
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
    Ok(())
}

/// What a `wait` step waits for: a leader, or exactly one condition on a watch.
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
