//! Applying one validated request to the model: reads, writes, txns, compaction, lease grant and revoke.

use super::Refusal;

use super::range::{read, scan_span};
use super::{KvModel, Live, Record, Undo};
use crate::history::{
    Compare, CompareResult, CompareTarget, DeleteRangeRequest, DeleteResult, KeyValue, LeaseGrantResult, LeaseId,
    PutRequest, PutResult, RangeRequest, RangeResult, Request, Response, ResponseBody, Revision, TxnOp, TxnOpResult,
    TxnRequest, TxnResult,
};

pub(super) fn request(
    m: &mut KvModel,
    request: &Request,
    granted: Option<LeaseId>,
    undo: &mut Undo,
) -> Result<Response, Refusal> {
    let body = match request {
        Request::Range(r) => ResponseBody::Range(range(m, r)?),
        Request::Put(p) => {
            check_put(m, p)?;
            let mut w = Write::begin(m, undo);
            let result = w.put(p);
            w.end();
            ResponseBody::Put(result)
        }
        Request::DeleteRange(d) => {
            let mut w = Write::begin(m, undo);
            let result = w.delete(d);
            w.end();
            ResponseBody::DeleteRange(result)
        }
        Request::Txn(t) => ResponseBody::Txn(txn(m, t, undo)?),
        Request::Compact(c) => {
            if c.revision <= m.compact_revision {
                return Err(Refusal::Compacted);
            }
            if c.revision > m.revision {
                return Err(Refusal::FutureRev);
            }
            m.compact_revision = c.revision;
            ResponseBody::Compact
        }
        Request::LeaseGrant(g) => {
            let id = if g.id.is_none() { granted.unwrap_or_else(|| smallest_free_lease(m)) } else { g.id };
            if m.has_lease(id) {
                return Err(Refusal::LeaseExist);
            }
            m.grant(id, undo);
            ResponseBody::LeaseGrant(LeaseGrantResult { id, ttl_s: g.ttl_s })
        }
        Request::LeaseRevoke(r) => {
            if !m.has_lease(r.id) {
                return Err(Refusal::LeaseNotFound);
            }
            revoke(m, r.id, undo);
            ResponseBody::LeaseRevoke
        }
    };
    Ok(Response { header_revision: m.revision, body })
}

/// A Range outside a txn: `revision <= 0` reads the latest; etcd checks the future bound first.
fn range(m: &KvModel, r: &RangeRequest) -> Result<RangeResult, Refusal> {
    if r.revision > m.revision {
        return Err(Refusal::FutureRev);
    }
    let at = if r.revision > Revision::ZERO { r.revision } else { m.revision };
    if at < m.compact_revision {
        return Err(Refusal::Compacted);
    }
    Ok(read(m, r, at))
}

/// The checks a Put gets against the state before it (`checkRequestPut` in a txn, `Put` otherwise): the
/// lease must exist, and `ignore_value`/`ignore_lease` need a previous value.
fn check_put(m: &KvModel, p: &PutRequest) -> Result<(), Refusal> {
    if !p.lease.is_none() && !m.has_lease(p.lease) {
        return Err(Refusal::LeaseNotFound);
    }
    if (p.ignore_value || p.ignore_lease) && m.kv_at(p.key.as_slice(), m.revision).is_none() {
        return Err(Refusal::KeyNotFound);
    }
    Ok(())
}

/// A txn's compares, nested ones included, all evaluated against the state before the txn
/// (etcd's `compareToPath`).
struct Plan {
    succeeded: bool,
    /// One plan per nested txn of the chosen branch, in op order.
    nested: Vec<Plan>,
}

impl Plan {
    fn of(m: &KvModel, t: &TxnRequest) -> Plan {
        let succeeded = t.compare.iter().all(|c| compare_holds(m, c));
        let nested = branch(t, succeeded)
            .iter()
            .filter_map(|op| if let TxnOp::Txn(inner) = op { Some(Plan::of(m, inner)) } else { None })
            .collect();
        Plan { succeeded, nested }
    }

    /// Calls `f` on every non-txn op the txn will run, depth first.
    fn visit<'t>(
        &self,
        t: &'t TxnRequest,
        f: &mut impl FnMut(&'t TxnOp) -> Result<(), Refusal>,
    ) -> Result<(), Refusal> {
        let mut nested = self.nested.iter();
        for op in branch(t, self.succeeded) {
            match op {
                TxnOp::Txn(inner) => nested.next().expect("a plan per nested txn").visit(inner, f)?,
                op => f(op)?,
            }
        }
        Ok(())
    }
}

fn branch(t: &TxnRequest, succeeded: bool) -> &[TxnOp] {
    if succeeded {
        &t.success
    } else {
        &t.failure
    }
}

fn txn(m: &mut KvModel, t: &TxnRequest, undo: &mut Undo) -> Result<TxnResult, Refusal> {
    let plan = Plan::of(m, t);
    // etcd checks the puts on the chosen path first, then the ranges (`applierV3backend.Txn`).
    plan.visit(t, &mut |op| if let TxnOp::Put(p) = op { check_put(m, p) } else { Ok(()) })?;
    plan.visit(t, &mut |op| match op {
        TxnOp::Range(r) if r.revision > m.revision => Err(Refusal::FutureRev),
        TxnOp::Range(r) if r.revision > Revision::ZERO && r.revision < m.compact_revision => Err(Refusal::Compacted),
        _ => Ok(()),
    })?;
    let mut w = Write::begin(m, undo);
    let result = w.txn(t, &plan);
    w.end();
    Ok(result)
}

/// etcd's `applyCompare`: every key in the compare's span must satisfy it; an empty span compares as a
/// zero kv, except that a VALUE compare on nothing is false.
fn compare_holds(m: &KvModel, c: &Compare) -> bool {
    let kvs = scan_span(m, &c.span, m.revision);
    if kvs.is_empty() {
        return !matches!(c.target, CompareTarget::Value(_)) && compare_kv(c, &KeyValue::default());
    }
    kvs.iter().all(|kv| compare_kv(c, kv))
}

fn compare_kv(c: &Compare, kv: &KeyValue) -> bool {
    let ordering = match &c.target {
        CompareTarget::Version(v) => kv.version.cmp(v),
        CompareTarget::Create(r) => kv.create_revision.cmp(r),
        CompareTarget::Mod(r) => kv.mod_revision.cmp(r),
        CompareTarget::Value(v) => kv.value.cmp(v),
        CompareTarget::Lease(l) => kv.lease.cmp(l),
    };
    match c.result {
        CompareResult::Equal => ordering.is_eq(),
        CompareResult::NotEqual => ordering.is_ne(),
        CompareResult::Greater => ordering.is_gt(),
        CompareResult::Less => ordering.is_lt(),
    }
}

/// Deletes every key attached to the lease, at one revision, and forgets the lease.
fn revoke(m: &mut KvModel, id: LeaseId, undo: &mut Undo) {
    let attached: Vec<_> = m
        .keys
        .iter()
        .filter(|(_, records)| records.last().and_then(|r| r.live.as_ref()).is_some_and(|l| l.lease == id))
        .map(|(key, _)| key.clone())
        .collect();
    let mut w = Write::begin(m, undo);
    for key in attached {
        w.delete(&DeleteRangeRequest {
            span: crate::history::KeySpan { key, range_end: Default::default() },
            prev_kv: false,
        });
    }
    w.end();
    m.revoke(id, undo);
}

fn smallest_free_lease(m: &KvModel) -> LeaseId {
    (1..).map(LeaseId).find(|id| !m.has_lease(*id)).expect("a free lease id")
}

/// One write transaction: every change is written at `begin + 1`, and reads see the changes made so far.
struct Write<'a> {
    m: &'a mut KvModel,
    undo: &'a mut Undo,
    begin: Revision,
    changed: bool,
}

impl<'a> Write<'a> {
    fn begin(m: &'a mut KvModel, undo: &'a mut Undo) -> Write<'a> {
        let begin = m.revision;
        Write { m, undo, begin, changed: false }
    }

    fn at(&self) -> Revision {
        self.begin.next()
    }

    /// What a read of "the latest revision" sees inside the txn (etcd reads at `begin + 1` once the txn
    /// has changes).
    fn latest(&self) -> Revision {
        if self.changed {
            self.at()
        } else {
            self.begin
        }
    }

    fn range(&self, r: &RangeRequest) -> RangeResult {
        let at = if r.revision > Revision::ZERO { r.revision } else { self.latest() };
        read(self.m, r, at)
    }

    fn put(&mut self, p: &PutRequest) -> PutResult {
        let prev = self.m.kv_at(p.key.as_slice(), self.latest());
        let value = match (&prev, p.ignore_value) {
            (Some(prev), true) => prev.value.clone(),
            _ => p.value.clone(),
        };
        let lease = match (&prev, p.ignore_lease) {
            (Some(prev), true) => prev.lease,
            _ => p.lease,
        };
        let live = Live {
            create_revision: prev.as_ref().map_or(self.at(), |kv| kv.create_revision),
            version: prev.as_ref().map_or(1, |kv| kv.version + 1),
            value,
            lease,
        };
        let record = Record { mod_revision: self.at(), live: Some(live) };
        self.m.append(&p.key, record, self.undo);
        self.changed = true;
        PutResult { prev_kv: if p.prev_kv { prev } else { None } }
    }

    fn delete(&mut self, d: &DeleteRangeRequest) -> DeleteResult {
        let live = scan_span(self.m, &d.span, self.latest());
        for kv in &live {
            let record = Record { mod_revision: self.at(), live: None };
            self.m.append(&kv.key, record, self.undo);
        }
        self.changed |= !live.is_empty();
        let deleted = live.len() as i64;
        DeleteResult { deleted, prev_kvs: if d.prev_kv { live } else { Vec::new() } }
    }

    fn txn(&mut self, t: &TxnRequest, plan: &Plan) -> TxnResult {
        let mut nested = plan.nested.iter();
        let responses = branch(t, plan.succeeded)
            .iter()
            .map(|op| match op {
                TxnOp::Range(r) => TxnOpResult::Range(self.range(r)),
                TxnOp::Put(p) => TxnOpResult::Put(self.put(p)),
                TxnOp::DeleteRange(d) => TxnOpResult::DeleteRange(self.delete(d)),
                TxnOp::Txn(inner) => TxnOpResult::Txn(self.txn(inner, nested.next().expect("a plan per nested txn"))),
            })
            .collect();
        TxnResult { succeeded: plan.succeeded, responses }
    }

    /// Commits: the store moves to `begin + 1` if anything changed.
    fn end(self) {
        if self.changed {
            self.m.revision = self.at();
        }
    }
}
