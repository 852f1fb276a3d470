//! Builds the etcd requests a step sends, resolving its references (`rev_of(..)`, lease steps) against what
//! earlier steps returned. Pure: the runner passes in what it knows.

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget as PbTarget, TargetUnion};
use etcd_proto::etcdserverpb::request_op::Request as PbOp;

use super::plan::{CompareValue, DeletePlan, GetPlan, PutPlan, TxnOpPlan, TxnPlan, WatchPlan};
use super::syntax::{CompareOp, CompareTarget, SortOrder, SortTarget};
use crate::history::KeySpan;

/// What the runner knows when a step starts: the revisions and lease ids earlier steps returned.
pub trait Known {
    fn revision(&self, step: &str) -> Option<i64>;
    fn lease(&self, step: &str) -> Option<i64>;
}

/// Why a step could not be sent.
pub type Unresolved = String;

fn lease_id(known: &dyn Known, step: &str) -> Result<i64, Unresolved> {
    known.lease(step).ok_or_else(|| format!("lease step {step} has no lease (it failed, or has not run yet)"))
}

fn span(s: &KeySpan) -> (Vec<u8>, Vec<u8>) {
    (s.key.0.clone(), s.range_end.0.clone())
}

pub fn range(g: &GetPlan, known: &dyn Known) -> Result<pb::RangeRequest, Unresolved> {
    let (key, range_end) = span(&g.span);
    let given = |e: &Option<super::expr::Expr>| -> Result<i64, Unresolved> {
        match e {
            Some(e) => e.value(&|s| known.revision(s)),
            None => Ok(0),
        }
    };
    use pb::range_request::{SortOrder as O, SortTarget as T};
    let sort_order = match g.sort_order {
        None | Some(SortOrder::None) => O::None,
        Some(SortOrder::Ascend) => O::Ascend,
        Some(SortOrder::Descend) => O::Descend,
    };
    let sort_target = match g.sort_target {
        None | Some(SortTarget::Key) => T::Key,
        Some(SortTarget::Version) => T::Version,
        Some(SortTarget::Create) => T::Create,
        Some(SortTarget::Mod) => T::Mod,
        Some(SortTarget::Value) => T::Value,
    };
    Ok(pb::RangeRequest {
        key,
        range_end,
        limit: g.limit,
        revision: given(&g.revision)?,
        sort_order: sort_order as i32,
        sort_target: sort_target as i32,
        serializable: g.serializable,
        keys_only: g.keys_only,
        count_only: g.count_only,
        min_mod_revision: given(&g.min_mod_revision)?,
        max_mod_revision: given(&g.max_mod_revision)?,
        min_create_revision: given(&g.min_create_revision)?,
        max_create_revision: given(&g.max_create_revision)?,
    })
}

pub fn put(p: &PutPlan, known: &dyn Known) -> Result<pb::PutRequest, Unresolved> {
    let lease = match &p.lease {
        Some(step) => lease_id(known, step)?,
        None => 0,
    };
    Ok(pb::PutRequest {
        key: p.key.as_bytes().to_vec(),
        value: p.value.as_bytes().to_vec(),
        lease,
        prev_kv: p.prev_kv,
        ignore_value: p.ignore_value,
        ignore_lease: p.ignore_lease,
    })
}

pub fn delete(d: &DeletePlan) -> pb::DeleteRangeRequest {
    let (key, range_end) = span(&d.span);
    pb::DeleteRangeRequest { key, range_end, prev_kv: d.prev_kv }
}

pub fn txn(t: &TxnPlan, known: &dyn Known) -> Result<pb::TxnRequest, Unresolved> {
    let mut compare = Vec::new();
    for c in &t.compare {
        let (key, range_end) = span(&c.span);
        let number = |v: &CompareValue| -> Result<i64, Unresolved> {
            match v {
                CompareValue::Number(e) => e.value(&|s| known.revision(s)),
                CompareValue::Lease(step) => lease_id(known, step),
                CompareValue::Text(_) => unreachable!("validated: text only for value compares"),
            }
        };
        let (target, union) = match c.target {
            CompareTarget::Version => (PbTarget::Version, TargetUnion::Version(number(&c.value)?)),
            CompareTarget::Create => (PbTarget::Create, TargetUnion::CreateRevision(number(&c.value)?)),
            CompareTarget::Mod => (PbTarget::Mod, TargetUnion::ModRevision(number(&c.value)?)),
            CompareTarget::Lease => (PbTarget::Lease, TargetUnion::Lease(number(&c.value)?)),
            CompareTarget::Value => match &c.value {
                CompareValue::Text(s) => (PbTarget::Value, TargetUnion::Value(s.as_bytes().to_vec())),
                _ => unreachable!("validated: value compares take text"),
            },
        };
        let result = match c.op {
            CompareOp::Equal => CompareResult::Equal,
            CompareOp::NotEqual => CompareResult::NotEqual,
            CompareOp::Greater => CompareResult::Greater,
            CompareOp::Less => CompareResult::Less,
        };
        compare.push(pb::Compare {
            result: result as i32,
            target: target as i32,
            key,
            range_end,
            target_union: Some(union),
        });
    }
    let ops = |list: &[TxnOpPlan]| -> Result<Vec<pb::RequestOp>, Unresolved> {
        list.iter()
            .map(|op| {
                let request = match op {
                    TxnOpPlan::Get(g) => PbOp::RequestRange(range(g, known)?),
                    TxnOpPlan::Put(p) => PbOp::RequestPut(put(p, known)?),
                    TxnOpPlan::Delete(d) => PbOp::RequestDeleteRange(delete(d)),
                    TxnOpPlan::Txn(t) => PbOp::RequestTxn(txn(t, known)?),
                };
                Ok(pb::RequestOp { request: Some(request) })
            })
            .collect()
    };
    Ok(pb::TxnRequest { compare, success: ops(&t.success)?, failure: ops(&t.failure)? })
}

pub fn watch(w: &WatchPlan, known: &dyn Known) -> Result<pb::WatchCreateRequest, Unresolved> {
    let (key, range_end) = span(&w.span);
    let start_revision = match &w.start_revision {
        Some(e) => e.value(&|s| known.revision(s))?,
        None => 0,
    };
    let mut filters = Vec::new();
    if w.no_put {
        filters.push(pb::watch_create_request::FilterType::Noput as i32);
    }
    if w.no_delete {
        filters.push(pb::watch_create_request::FilterType::Nodelete as i32);
    }
    Ok(pb::WatchCreateRequest {
        key,
        range_end,
        start_revision,
        progress_notify: w.progress_notify,
        filters,
        prev_kv: w.prev_kv,
        fragment: w.fragment,
        ..Default::default()
    })
}
