//! A step as the report and the trace show it, in [`crate::describe`]'s words: the request it sends
//! (`put /a=1`, `txn [mod(/a)==5] ? put /a=2 : get /a`), with every number or lease it takes from another
//! step shown by that step's name (`get /a rev=rev_of(read)+1`, `put /a=1 lease=grant`), so that the
//! report never depends on values a seed chose. A step whose numbers are all given reads exactly as the
//! trace shows the request it sends.

use std::fmt::{self, Display, Formatter};

use super::execute::kube::params as kube_params;
use super::expr::Expr;
use super::plan::{
    ComparePlan, CompareValue, GetPlan, KubePlan, KubeRv, Op, PutPlan, StepPlan, TxnOpPlan, TxnPlan, WaitPlan,
    WatchCondition,
};
use super::request::{self, Known};
use super::syntax::{CompareOp, CompareTarget};
use crate::describe::{self, FromFn, Range, Text, WatchTarget};
use crate::history::{self as h, CompareResult, LeaseId};

/// The step's request, or what it waits for.
pub fn step_text(step: &StepPlan) -> String {
    FromFn(|f: &mut Formatter<'_>| op(f, &step.op)).to_string()
}

fn op(f: &mut Formatter<'_>, op: &Op) -> fmt::Result {
    match op {
        Op::Get(g) => get(f, g),
        Op::Put(p) => put(f, p),
        Op::Delete(d) => describe::write_del(f, &d.span),
        Op::Txn(t) => txn(f, t),
        Op::Compact { revision, .. } => describe::write_compact(f, &Named(revision)),
        Op::LeaseGrant { ttl_s, id } => {
            let id = LeaseId(*id);
            describe::write_lease_grant(f, *ttl_s, (!id.is_none()).then_some(&id as &dyn Display))
        }
        Op::LeaseRevoke { lease } => describe::write_lease_revoke(f, lease),
        Op::LeaseKeepAlive { lease } => describe::write_lease_keep_alive(f, lease),
        Op::LeaseTimeToLive { lease, keys } => describe::write_lease_time_to_live(f, lease, *keys),
        Op::LeaseLeases => f.write_str(describe::LEASE_LEASES),
        Op::Kube(k) => kube(f, k),
        Op::InformerRestart { informer } => write!(f, "informer-restart {informer}"),
        Op::Controller(c) => write!(f, "controller {} from {} set {}", c.name, c.informer, c.set),
        Op::Auth(a) => write!(f, "{a}"),
        Op::Informer(k) => {
            write!(f, "informer {}", k.resource)?;
            if let Some(ns) = &k.namespace {
                write!(f, " {ns}")?;
            }
            if k.send_initial_events {
                f.write_str(" streaming")?;
            }
            Ok(())
        }
        Op::Watch(w) => {
            let from = w.start_revision.as_ref().map(Named).filter(|n| !n.is_zero());
            write!(f, "watch {}", WatchTarget { span: &w.span, from: from.as_ref().map(|n| n as &dyn Display) })
        }
        Op::WatchProgress { watch } => write!(f, "watch-progress {watch}"),
        Op::WatchCancel { watch } => write!(f, "watch-cancel {watch}"),
        Op::Sleep { ms } => write!(f, "sleep {ms}ms"),
        Op::Wait(WaitPlan::Leader { .. }) => f.write_str("wait leader"),
        Op::Wait(WaitPlan::Watch { watch, condition, .. }) => match condition {
            WatchCondition::Events(n) => write!(f, "wait {watch} events>={n}"),
            WatchCondition::Revision(e) => write!(f, "wait {watch} revision {e}"),
            WatchCondition::Canceled => write!(f, "wait {watch} canceled"),
            WatchCondition::Progress => write!(f, "wait {watch} progress"),
        },
    }
}

/// An expression as a request shows it: without spaces (`rev_of(a)+1`), so that it stays one word.
struct Named<'a>(&'a Expr);

impl Named<'_> {
    /// A plain 0, which a request leaves out as the wire does.
    fn is_zero(&self) -> bool {
        self.0.step().is_none() && self.0.value(&|_| None) == Ok(0)
    }
}

impl Display for Named<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_string().replace(' ', ""))
    }
}

/// Resolves nothing: a step's request is built for its text with its names left out.
struct NoneKnown;

impl Known for NoneKnown {
    fn revision(&self, _: &str) -> Option<i64> {
        None
    }
    fn lease(&self, _: &str) -> Option<i64> {
        None
    }
}

/// The get as it is sent, but with each revision that names a step shown by the name.
fn get(f: &mut Formatter<'_>, g: &GetPlan) -> fmt::Result {
    let numeric = |e: &Option<Expr>| e.clone().filter(|e| e.step().is_none());
    let given = GetPlan {
        revision: numeric(&g.revision),
        min_mod_revision: numeric(&g.min_mod_revision),
        max_mod_revision: numeric(&g.max_mod_revision),
        min_create_revision: numeric(&g.min_create_revision),
        max_create_revision: numeric(&g.max_create_revision),
        ..g.clone()
    };
    let sent: h::RangeRequest = (&request::range(&given, &NoneKnown).expect("a get of numbers names no step")).into();
    let [revision, min_mod, max_mod, min_create, max_create] = [
        named(&g.revision),
        named(&g.min_mod_revision),
        named(&g.max_mod_revision),
        named(&g.min_create_revision),
        named(&g.max_create_revision),
    ];
    let shown = Range::of(&sent);
    let shown = Range {
        revision: either(&revision, shown.revision),
        min_mod_revision: either(&min_mod, shown.min_mod_revision),
        max_mod_revision: either(&max_mod, shown.max_mod_revision),
        min_create_revision: either(&min_create, shown.min_create_revision),
        max_create_revision: either(&max_create, shown.max_create_revision),
        ..shown
    };
    write!(f, "{shown}")
}

/// A revision that names a step, by the name; `None` for a number, which the request carries.
fn named(e: &Option<Expr>) -> Option<Named<'_>> {
    e.as_ref().filter(|e| e.step().is_some()).map(Named)
}

/// The name if there is one, else what the request sent.
fn either<'a>(name: &'a Option<Named<'a>>, sent: Option<&'a dyn Display>) -> Option<&'a dyn Display> {
    name.as_ref().map(|n| n as &dyn Display).or(sent)
}

/// A `kube` request as the trace shows it, its resourceVersion by the step it names (`rv=rev_of(create)`).
fn kube(f: &mut Formatter<'_>, k: &KubePlan) -> fmt::Result {
    let rv: Option<Box<dyn Display + '_>> = match &k.resource_version {
        None => None,
        Some(KubeRv::Text(t)) if t.is_empty() => Some(Box::new("\"\"")),
        Some(KubeRv::Text(t)) => Some(Box::new(t.as_str())),
        Some(KubeRv::Number(e)) => Some(Box::new(Named(e))),
    };
    let mut params = kube_params(k);
    if let Some(e) = &k.precondition_rv {
        params.insert(0, format!("if-rv={}", Named(e)));
    }
    let request = describe::KubeRequest {
        verb: k.verb.word(),
        resource: &k.resource,
        namespace: k.namespace.as_deref(),
        name: k.name.as_deref(),
        subresource: k.subresource.as_deref(),
        rv: rv.as_deref(),
        params,
    };
    write!(f, "{request}")
}

fn put(f: &mut Formatter<'_>, p: &PutPlan) -> fmt::Result {
    let lease = p.lease.as_ref().map(|l| l as &dyn Display);
    describe::write_put(f, p.key.as_bytes(), p.value.as_bytes(), lease, p.ignore_value, p.ignore_lease)
}

fn txn(f: &mut Formatter<'_>, t: &TxnPlan) -> fmt::Result {
    describe::write_txn(f, &t.compare, &t.success, &t.failure, compare, txn_op)
}

fn compare(f: &mut Formatter<'_>, c: &ComparePlan) -> fmt::Result {
    let target = match c.target {
        CompareTarget::Version => "version",
        CompareTarget::Create => "create",
        CompareTarget::Mod => "mod",
        CompareTarget::Value => "value",
        CompareTarget::Lease => "lease",
    };
    let result = match c.op {
        CompareOp::Equal => CompareResult::Equal,
        CompareOp::NotEqual => CompareResult::NotEqual,
        CompareOp::Greater => CompareResult::Greater,
        CompareOp::Less => CompareResult::Less,
    };
    match &c.value {
        CompareValue::Number(e) => describe::write_compare(f, target, &c.span, result, &Named(e)),
        CompareValue::Text(s) => describe::write_compare(f, target, &c.span, result, &Text(s.as_bytes())),
        CompareValue::Lease(step) => describe::write_compare(f, target, &c.span, result, step),
    }
}

fn txn_op(f: &mut Formatter<'_>, op: &TxnOpPlan) -> fmt::Result {
    match op {
        TxnOpPlan::Get(g) => get(f, g),
        TxnOpPlan::Put(p) => put(f, p),
        TxnOpPlan::Delete(d) => describe::write_del(f, &d.span),
        TxnOpPlan::Txn(inner) => describe::write_nested(f, &FromFn(|f: &mut Formatter<'_>| txn(f, inner))),
    }
}
