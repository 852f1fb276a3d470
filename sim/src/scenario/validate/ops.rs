//! The requests a step sends, from the file's tables to plans: key spans (`key` with `prefix`, `from_key`
//! or `range_end`), gets, puts, deletes and txns with their compares and branches.

use std::ops::Range;

use toml::Spanned;

use super::names::Names;
use super::{Result, Source};
use crate::history::KeySpan;
use crate::scenario::expr::Expr;
use crate::scenario::plan::{ComparePlan, CompareValue, DeletePlan, GetPlan, PutPlan, TxnOpPlan, TxnPlan};
use crate::scenario::syntax::{self, KeyFields, Value};

pub(super) fn span_of(src: &Source, k: &KeyFields) -> Result<KeySpan> {
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

pub(super) fn get_plan(src: &Source, names: &Names, g: &syntax::Get) -> Result<GetPlan> {
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
pub(super) fn put_plan(src: &Source, names: &Names, p: &syntax::Put, span: Range<usize>) -> Result<PutPlan> {
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

pub(super) fn delete_plan(src: &Source, d: &syntax::Delete) -> Result<DeletePlan> {
    Ok(DeletePlan { span: span_of(src, &d.keys())?, prev_kv: d.prev_kv })
}

fn txn_op(src: &Source, names: &Names, op: &Spanned<syntax::TxnOp>) -> Result<TxnOpPlan> {
    let o = op.get_ref();
    match (&o.get, &o.put, &o.delete, &o.txn) {
        (Some(g), None, None, None) => Ok(TxnOpPlan::Get(Box::new(get_plan(src, names, g)?))),
        (None, Some(p), None, None) => Ok(TxnOpPlan::Put(put_plan(src, names, p, op.span())?)),
        (None, None, Some(d), None) => Ok(TxnOpPlan::Delete(delete_plan(src, d)?)),
        (None, None, None, Some(t)) => Ok(TxnOpPlan::Txn(txn_plan(src, names, t)?)),
        _ => Err(src.err(op.span(), "a txn operation needs exactly one of `get`, `put`, `delete`, `txn`")),
    }
}

pub(super) fn txn_plan(src: &Source, names: &Names, t: &syntax::Txn) -> Result<TxnPlan> {
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
