//! Requests as text: `get /a* limit=10 rev=5`, `put /a=1 lease=7`, `del /a`, `compact rev=5`,
//! `txn [mod(/a)==5] ? put /a=2 : get /a`, `lease-grant ttl=5s`, `lease-revoke 7`.
//!
//! An operation inside a txn reads exactly as the same request on its own; a nested txn is in parentheses.
//! The pieces are public so that a scenario can show a request whose numbers are still names: every
//! number a piece writes is any `Display`.

use std::fmt::{self, Display, Formatter};

use super::text::{text, Span};
use crate::history::{
    Compare, CompareResult, CompareTarget, KeySpan, PutRequest, RangeRequest, Request, SortOrder, SortTarget, TxnOp,
    TxnRequest,
};

/// A Range request with its numbers as anything displayable; a `None` is left out, as a 0 is on the wire.
/// Reads `get SPAN [limit=N] [rev=R] [serializable] [keys_only] [count_only] [sort=TARGET:ORDER] [mod>=R]
/// [mod<=R] [create>=R] [create<=R]`, each option only when set.
pub struct Range<'a> {
    pub span: &'a KeySpan,
    pub limit: i64,
    pub revision: Option<&'a dyn Display>,
    pub serializable: bool,
    pub keys_only: bool,
    pub count_only: bool,
    pub sort_order: SortOrder,
    pub sort_target: SortTarget,
    pub min_mod_revision: Option<&'a dyn Display>,
    pub max_mod_revision: Option<&'a dyn Display>,
    pub min_create_revision: Option<&'a dyn Display>,
    pub max_create_revision: Option<&'a dyn Display>,
}

impl<'a> Range<'a> {
    pub fn of(r: &'a RangeRequest) -> Range<'a> {
        let set = |rev: &'a crate::history::Revision| (rev.0 != 0).then_some(rev as &dyn Display);
        Range {
            span: &r.span,
            limit: r.limit,
            revision: (r.revision.0 > 0).then_some(&r.revision as &dyn Display),
            serializable: r.serializable,
            keys_only: r.keys_only,
            count_only: r.count_only,
            sort_order: r.sort_order,
            sort_target: r.sort_target,
            min_mod_revision: set(&r.min_mod_revision),
            max_mod_revision: set(&r.max_mod_revision),
            min_create_revision: set(&r.min_create_revision),
            max_create_revision: set(&r.max_create_revision),
        }
    }
}

impl Display for Range<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "get {}", Span(self.span))?;
        if self.limit > 0 {
            write!(f, " limit={}", self.limit)?;
        }
        if let Some(rev) = self.revision {
            write!(f, " rev={rev}")?;
        }
        if self.serializable {
            // A serializable read may be served stale by the member asked; the trace must say so.
            f.write_str(" serializable")?;
        }
        if self.keys_only {
            f.write_str(" keys_only")?;
        }
        if self.count_only {
            f.write_str(" count_only")?;
        }
        if self.sort_order != SortOrder::None || self.sort_target != SortTarget::Key {
            let target = match self.sort_target {
                SortTarget::Key => "key",
                SortTarget::Version => "version",
                SortTarget::Create => "create",
                SortTarget::Mod => "mod",
                SortTarget::Value => "value",
            };
            let order = match self.sort_order {
                SortOrder::None => "none",
                SortOrder::Ascend => "ascend",
                SortOrder::Descend => "descend",
            };
            write!(f, " sort={target}:{order}")?;
        }
        for (name, bound, rev) in [
            ("mod", ">=", self.min_mod_revision),
            ("mod", "<=", self.max_mod_revision),
            ("create", ">=", self.min_create_revision),
            ("create", "<=", self.max_create_revision),
        ] {
            if let Some(rev) = rev {
                write!(f, " {name}{bound}{rev}")?;
            }
        }
        Ok(())
    }
}

/// `put KEY=VALUE [lease=L] [ignore_value] [ignore_lease]`.
pub fn write_put(
    f: &mut Formatter<'_>,
    key: &[u8],
    value: &[u8],
    lease: Option<&dyn Display>,
    ignore_value: bool,
    ignore_lease: bool,
) -> fmt::Result {
    write!(f, "put {}={}", super::Text(key), super::Text(value))?;
    if let Some(lease) = lease {
        write!(f, " lease={lease}")?;
    }
    if ignore_value {
        f.write_str(" ignore_value")?;
    }
    if ignore_lease {
        f.write_str(" ignore_lease")?;
    }
    Ok(())
}

/// `del SPAN`.
pub fn write_del(f: &mut Formatter<'_>, span: &KeySpan) -> fmt::Result {
    write!(f, "del {}", Span(span))
}

/// `==`, `>`, `<`, `!=`.
pub fn compare_op(result: CompareResult) -> &'static str {
    match result {
        CompareResult::Equal => "==",
        CompareResult::Greater => ">",
        CompareResult::Less => "<",
        CompareResult::NotEqual => "!=",
    }
}

/// One compare of a txn: `mod(/a)==5`, `value(/a)!=x`; `target` is `version`, `create`, `mod`, `value` or
/// `lease`.
pub fn write_compare(
    f: &mut Formatter<'_>,
    target: &str,
    span: &KeySpan,
    result: CompareResult,
    value: &dyn Display,
) -> fmt::Result {
    write!(f, "{target}({}){}{value}", Span(span), compare_op(result))
}

/// A txn: `txn [COMPARE COMPARE] ? OP; OP : OP`, `-` for an empty branch. `compare` and `op` write one item
/// each; an op that is itself a txn goes through [`write_nested`].
pub fn write_txn<C, O>(
    f: &mut Formatter<'_>,
    compares: &[C],
    success: &[O],
    failure: &[O],
    compare: impl Fn(&mut Formatter<'_>, &C) -> fmt::Result,
    op: impl Fn(&mut Formatter<'_>, &O) -> fmt::Result,
) -> fmt::Result {
    f.write_str("txn [")?;
    for (i, c) in compares.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        compare(f, c)?;
    }
    f.write_str("] ? ")?;
    write_branch(f, success, &op)?;
    f.write_str(" : ")?;
    write_branch(f, failure, &op)
}

fn write_branch<O>(
    f: &mut Formatter<'_>,
    list: &[O],
    op: &impl Fn(&mut Formatter<'_>, &O) -> fmt::Result,
) -> fmt::Result {
    if list.is_empty() {
        return f.write_str("-");
    }
    for (i, o) in list.iter().enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        op(f, o)?;
    }
    Ok(())
}

/// A txn inside a txn's branch, in parentheses.
pub fn write_nested(f: &mut Formatter<'_>, txn: &dyn Display) -> fmt::Result {
    write!(f, "({txn})")
}

/// `compact rev=R`.
pub fn write_compact(f: &mut Formatter<'_>, revision: &dyn Display) -> fmt::Result {
    write!(f, "compact rev={revision}")
}

/// `lease-grant ttl=Ns`, and ` id=L` when the client chose the id.
pub fn write_lease_grant(f: &mut Formatter<'_>, ttl_s: i64, id: Option<&dyn Display>) -> fmt::Result {
    write!(f, "lease-grant ttl={ttl_s}s")?;
    match id {
        Some(id) => write!(f, " id={id}"),
        None => Ok(()),
    }
}

/// `lease-revoke L`.
pub fn write_lease_revoke(f: &mut Formatter<'_>, lease: &dyn Display) -> fmt::Result {
    write!(f, "lease-revoke {lease}")
}

/// `lease-keepalive L`: one keep-alive round trip (traced, not filed in the history).
pub fn write_lease_keep_alive(f: &mut Formatter<'_>, lease: &dyn Display) -> fmt::Result {
    write!(f, "lease-keepalive {lease}")
}

/// `lease-ttl L`, and ` keys` when the lease's keys are asked for too (traced, not filed in the history).
pub fn write_lease_time_to_live(f: &mut Formatter<'_>, lease: &dyn Display, keys: bool) -> fmt::Result {
    write!(f, "lease-ttl {lease}{}", if keys { " keys" } else { "" })
}

/// A lease listing (traced, not filed in the history).
pub const LEASE_LEASES: &str = "lease-leases";

fn put(f: &mut Formatter<'_>, p: &PutRequest) -> fmt::Result {
    let lease = (!p.lease.is_none()).then_some(&p.lease as &dyn Display);
    write_put(f, p.key.as_slice(), p.value.as_slice(), lease, p.ignore_value, p.ignore_lease)
}

fn compare(f: &mut Formatter<'_>, c: &Compare) -> fmt::Result {
    match &c.target {
        CompareTarget::Version(v) => write_compare(f, "version", &c.span, c.result, v),
        CompareTarget::Create(r) => write_compare(f, "create", &c.span, c.result, r),
        CompareTarget::Mod(r) => write_compare(f, "mod", &c.span, c.result, r),
        CompareTarget::Value(v) => write_compare(f, "value", &c.span, c.result, &text(v)),
        CompareTarget::Lease(l) => write_compare(f, "lease", &c.span, c.result, l),
    }
}

fn txn_op(f: &mut Formatter<'_>, op: &TxnOp) -> fmt::Result {
    match op {
        TxnOp::Range(r) => write!(f, "{}", Range::of(r)),
        TxnOp::Put(p) => put(f, p),
        TxnOp::DeleteRange(d) => write_del(f, &d.span),
        TxnOp::Txn(t) => write_nested(f, &Txn(t)),
    }
}

struct Txn<'a>(&'a TxnRequest);

impl Display for Txn<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_txn(f, &self.0.compare, &self.0.success, &self.0.failure, compare, txn_op)
    }
}

/// A request as the trace shows it.
pub struct DescribeRequest<'a>(pub &'a Request);

impl Display for DescribeRequest<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            Request::Range(r) => write!(f, "{}", Range::of(r)),
            Request::Put(p) => put(f, p),
            Request::DeleteRange(d) => write_del(f, &d.span),
            Request::Txn(t) => write!(f, "{}", Txn(t)),
            Request::Compact(c) => write_compact(f, &c.revision),
            Request::LeaseGrant(g) => write_lease_grant(f, g.ttl_s, (!g.id.is_none()).then_some(&g.id as &dyn Display)),
            Request::LeaseRevoke(r) => write_lease_revoke(f, &r.id),
        }
    }
}

pub fn request(r: &Request) -> DescribeRequest<'_> {
    DescribeRequest(r)
}
