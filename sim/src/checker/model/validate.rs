//! The checks etcd makes before a request enters Raft (`v3rpc/key.go`, `lease.go`). A request that fails
//! them is rejected whatever the state, and changes nothing.

use std::collections::BTreeSet;

use super::Refusal;

use crate::history::{Bytes, KeySpan, PutRequest, Request, TxnOp, TxnRequest};

/// etcd's default `--max-txn-ops`.
const MAX_TXN_OPS: usize = 128;

/// etcd's largest lease TTL in seconds (`lease.MaxLeaseTTL`).
const MAX_LEASE_TTL_S: i64 = 9_000_000_000;

pub(super) fn request(request: &Request) -> Result<(), Refusal> {
    match request {
        Request::Range(r) => key(&r.span.key),
        Request::Put(p) => put(p),
        Request::DeleteRange(d) => key(&d.span.key),
        Request::Txn(t) => {
            txn(t, MAX_TXN_OPS)?;
            intervals(&t.success)?;
            intervals(&t.failure)?;
            Ok(())
        }
        Request::Compact(_) | Request::LeaseRevoke(_) => Ok(()),
        Request::LeaseGrant(g) if g.ttl_s > MAX_LEASE_TTL_S => Err(Refusal::LeaseTtlTooLarge),
        Request::LeaseGrant(_) => Ok(()),
    }
}

fn key(key: &Bytes) -> Result<(), Refusal> {
    if key.is_empty() {
        Err(Refusal::EmptyKey)
    } else {
        Ok(())
    }
}

fn put(p: &PutRequest) -> Result<(), Refusal> {
    key(&p.key)?;
    if p.ignore_value && !p.value.is_empty() {
        return Err(Refusal::ValueProvided);
    }
    if p.ignore_lease && !p.lease.is_none() {
        return Err(Refusal::LeaseProvided);
    }
    Ok(())
}

/// `checkTxnRequest`: the op budget (nested txns get what their parent left), and empty keys.
fn txn(t: &TxnRequest, max_ops: usize) -> Result<(), Refusal> {
    let ops = t.compare.len().max(t.success.len()).max(t.failure.len());
    if ops > max_ops {
        return Err(Refusal::TooManyOps);
    }
    for c in &t.compare {
        key(&c.span.key)?;
    }
    for op in t.success.iter().chain(&t.failure) {
        match op {
            TxnOp::Range(r) => key(&r.span.key)?,
            TxnOp::Put(p) => put(p)?,
            TxnOp::DeleteRange(d) => key(&d.span.key)?,
            TxnOp::Txn(nested) => txn(nested, max_ops - ops)?,
        }
    }
    Ok(())
}

/// `checkIntervals`: within one branch no key is put twice and no put falls inside a delete, counting the
/// puts and deletes of nested txns; the two branches of a nested txn may put the same key, since only one
/// runs. Returns the branch's puts and deletes for the parent's check.
///
/// etcd compares delete ranges literally here, so a delete "from key" (`range_end == "\0"`) covers no put.
fn intervals(ops: &[TxnOp]) -> Result<(BTreeSet<Bytes>, Vec<KeySpan>), Refusal> {
    let mut deletes: Vec<KeySpan> =
        ops.iter().filter_map(|op| if let TxnOp::DeleteRange(d) = op { Some(d.span.clone()) } else { None }).collect();
    let mut puts = BTreeSet::new();
    let deleted = |deletes: &[KeySpan], k: &Bytes| deletes.iter().any(|d| literally_contains(d, k.as_slice()));
    for op in ops {
        let TxnOp::Txn(nested) = op else { continue };
        let (puts_then, deletes_then) = intervals(&nested.success)?;
        let (puts_else, deletes_else) = intervals(&nested.failure)?;
        for k in &puts_then {
            if puts.contains(k) || deleted(&deletes, k) {
                return Err(Refusal::DuplicateKey);
            }
            puts.insert(k.clone());
        }
        for k in &puts_else {
            if puts.contains(k) && !puts_then.contains(k) || deleted(&deletes, k) {
                return Err(Refusal::DuplicateKey);
            }
            puts.insert(k.clone());
        }
        deletes.extend(deletes_then);
        deletes.extend(deletes_else);
    }
    for op in ops {
        let TxnOp::Put(p) = op else { continue };
        if puts.contains(&p.key) || deleted(&deletes, &p.key) {
            return Err(Refusal::DuplicateKey);
        }
        puts.insert(p.key.clone());
    }
    Ok((puts, deletes))
}

fn literally_contains(span: &KeySpan, k: &[u8]) -> bool {
    if span.range_end.is_empty() {
        span.key.as_slice() == k
    } else {
        span.key.as_slice() <= k && k < span.range_end.as_slice()
    }
}
