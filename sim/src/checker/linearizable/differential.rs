//! The checker's model against fake-etcd's state machine: histories generated with fake-etcd as the server
//! must be linearizable against the model. The two are written independently, so an agreement here is
//! evidence that both follow etcd, and a disagreement points at one of them (the failure message says
//! which op and what each side answers). It also exercises the wire → history conversions, and holds the
//! model's own list of refusals ([`Refusal`]) against fake-etcd's errors of the same names.

use etcd_proto::etcdserverpb as pb;
use fake_etcd::apply::validate::{self, DEFAULT_MAX_TXN_OPS};
use fake_etcd::apply::{Command, CommandResponse, StateMachine};
use fake_etcd::error::Code;
use fake_etcd::{EtcdError, LeaseId as WireLeaseId, Millis};
use rand_chacha::ChaCha8Rng;

use super::generate::{self, Server, Shape};
use super::{check, Options};
use crate::checker::model::Refusal;
use crate::history::*;

/// fake-etcd's state machine behind the generator's server interface, with etcd's pre-Raft checks in
/// front, as the gRPC service does. It serves serializable reads at the current revision (it has no
/// lagging members), which is one of the answers a stale read may give.
struct FakeEtcd(StateMachine);

impl Server for FakeEtcd {
    fn revision(&self) -> Revision {
        self.0.mvcc.current_revision()
    }

    fn serve(&mut self, _rng: &mut ChaCha8Rng, request: &Request) -> Outcome {
        match self.answer(request) {
            Ok(response) => Outcome::Ok(response),
            Err(err) => Outcome::Err(status_of(&err)),
        }
    }
}

impl FakeEtcd {
    fn answer(&mut self, request: &Request) -> Result<Response, EtcdError> {
        let now = Millis(0);
        let applied = match request {
            Request::Range(r) => {
                let wire = range(r);
                validate::check_range(&wire)?;
                return Ok(Response::from(&self.0.range(&wire)?));
            }
            Request::Put(p) => {
                let wire = put(p);
                validate::check_put(&wire)?;
                self.0.apply(Command::Put(wire), now)?
            }
            Request::DeleteRange(d) => {
                let wire = delete(d);
                validate::check_delete_range(&wire)?;
                self.0.apply(Command::DeleteRange(wire), now)?
            }
            Request::Txn(t) => {
                let wire = txn(t);
                validate::check_txn(&wire, DEFAULT_MAX_TXN_OPS)?;
                self.0.apply(Command::Txn(wire), now)?
            }
            Request::Compact(c) => {
                let wire = pb::CompactionRequest { revision: c.revision.0, physical: c.physical };
                self.0.apply(Command::Compact(wire), now)?
            }
            Request::LeaseGrant(g) => {
                self.0.apply(Command::LeaseGrant { id: WireLeaseId(g.id.0), ttl_s: g.ttl_s }, now)?
            }
            Request::LeaseRevoke(r) => self.0.apply(Command::LeaseRevoke(WireLeaseId(r.id.0)), now)?,
        };
        Ok(match &applied.response {
            CommandResponse::Put(r) => Response::from(r),
            CommandResponse::DeleteRange(r) => Response::from(r),
            CommandResponse::Txn(r) => Response::from(r),
            CommandResponse::Compact(r) => Response::from(r),
            CommandResponse::LeaseGrant(r) => Response::from(r),
            CommandResponse::LeaseRevoke(r) => Response::from(r),
            CommandResponse::Auth(r) => unreachable!("only KV and lease requests are applied here, not {r:?}"),
        })
    }
}

/// The status a client sees for one of fake-etcd's errors.
fn status_of(err: &EtcdError) -> ErrorStatus {
    let code = match err.code() {
        Code::InvalidArgument => GrpcCode::InvalidArgument,
        Code::OutOfRange => GrpcCode::OutOfRange,
        Code::NotFound => GrpcCode::NotFound,
        Code::FailedPrecondition => GrpcCode::FailedPrecondition,
        Code::ResourceExhausted => GrpcCode::ResourceExhausted,
        Code::Unavailable => GrpcCode::Unavailable,
        Code::Unimplemented => GrpcCode::Unimplemented,
        Code::PermissionDenied => GrpcCode::PermissionDenied,
        Code::Unauthenticated => GrpcCode::Unauthenticated,
        Code::Unknown => GrpcCode::Unknown,
    };
    ErrorStatus::new(code, err.to_string())
}

fn range(r: &RangeRequest) -> pb::RangeRequest {
    use pb::range_request::{SortOrder as O, SortTarget as T};
    pb::RangeRequest {
        key: r.span.key.0.clone(),
        range_end: r.span.range_end.0.clone(),
        limit: r.limit,
        revision: r.revision.0,
        sort_order: match r.sort_order {
            SortOrder::None => O::None,
            SortOrder::Ascend => O::Ascend,
            SortOrder::Descend => O::Descend,
        } as i32,
        sort_target: match r.sort_target {
            SortTarget::Key => T::Key,
            SortTarget::Version => T::Version,
            SortTarget::Create => T::Create,
            SortTarget::Mod => T::Mod,
            SortTarget::Value => T::Value,
        } as i32,
        serializable: r.serializable,
        keys_only: r.keys_only,
        count_only: r.count_only,
        min_mod_revision: r.min_mod_revision.0,
        max_mod_revision: r.max_mod_revision.0,
        min_create_revision: r.min_create_revision.0,
        max_create_revision: r.max_create_revision.0,
    }
}

fn put(p: &PutRequest) -> pb::PutRequest {
    pb::PutRequest {
        key: p.key.0.clone(),
        value: p.value.0.clone(),
        lease: p.lease.0,
        prev_kv: p.prev_kv,
        ignore_value: p.ignore_value,
        ignore_lease: p.ignore_lease,
    }
}

fn delete(d: &DeleteRangeRequest) -> pb::DeleteRangeRequest {
    pb::DeleteRangeRequest { key: d.span.key.0.clone(), range_end: d.span.range_end.0.clone(), prev_kv: d.prev_kv }
}

fn txn(t: &TxnRequest) -> pb::TxnRequest {
    pb::TxnRequest {
        compare: t.compare.iter().map(compare).collect(),
        success: t.success.iter().map(op).collect(),
        failure: t.failure.iter().map(op).collect(),
    }
}

fn compare(c: &Compare) -> pb::Compare {
    use pb::compare::{CompareResult as R, CompareTarget as T, TargetUnion as U};
    let (target, union) = match &c.target {
        CompareTarget::Version(v) => (T::Version, U::Version(*v)),
        CompareTarget::Create(r) => (T::Create, U::CreateRevision(r.0)),
        CompareTarget::Mod(r) => (T::Mod, U::ModRevision(r.0)),
        CompareTarget::Value(v) => (T::Value, U::Value(v.0.clone())),
        CompareTarget::Lease(l) => (T::Lease, U::Lease(l.0)),
    };
    let result = match c.result {
        CompareResult::Equal => R::Equal,
        CompareResult::Greater => R::Greater,
        CompareResult::Less => R::Less,
        CompareResult::NotEqual => R::NotEqual,
    };
    pb::Compare {
        result: result as i32,
        target: target as i32,
        key: c.span.key.0.clone(),
        range_end: c.span.range_end.0.clone(),
        target_union: Some(union),
    }
}

fn op(op: &TxnOp) -> pb::RequestOp {
    use pb::request_op::Request as R;
    let request = match op {
        TxnOp::Range(r) => R::RequestRange(range(r)),
        TxnOp::Put(p) => R::RequestPut(put(p)),
        TxnOp::DeleteRange(d) => R::RequestDeleteRange(delete(d)),
        TxnOp::Txn(t) => R::RequestTxn(txn(t)),
    };
    pb::RequestOp { request: Some(request) }
}

#[test]
fn histories_served_by_fake_etcd_are_linearizable_against_the_model() {
    for seed in 0..60u64 {
        let shape = Shape {
            clients: 1 + (seed % 6) as usize,
            ops: 20 + (seed as usize * 7) % 120,
            keys: 1 + (seed % 4) as usize,
            unknown_rate: (seed % 5) as f64 * 0.02,
        };
        let mut server = FakeEtcd(StateMachine::new(2));
        let h = generate::history_against(seed, &shape, &mut server);
        let verdict = check(&h, &Options::default()).verdict;
        assert_eq!(verdict, crate::checker::Verdict::Pass, "seed {seed}, {shape:?}");
    }
}

/// The model's refusals are etcd's as fake-etcd answers them: the same code and text, name by name.
#[test]
fn the_models_refusals_are_fake_etcds_errors() {
    let fake = |r: Refusal| match r {
        Refusal::EmptyKey => EtcdError::EmptyKey,
        Refusal::KeyNotFound => EtcdError::KeyNotFound,
        Refusal::ValueProvided => EtcdError::ValueProvided,
        Refusal::LeaseProvided => EtcdError::LeaseProvided,
        Refusal::TooManyOps => EtcdError::TooManyOps,
        Refusal::DuplicateKey => EtcdError::DuplicateKey,
        Refusal::Compacted => EtcdError::Compacted,
        Refusal::FutureRev => EtcdError::FutureRev,
        Refusal::LeaseNotFound => EtcdError::LeaseNotFound,
        Refusal::LeaseExist => EtcdError::LeaseExist,
        Refusal::LeaseTtlTooLarge => EtcdError::LeaseTtlTooLarge,
    };
    for refusal in Refusal::ALL {
        assert_eq!(refusal.status(), status_of(&fake(refusal)), "{refusal:?}");
        assert_eq!(Refusal::of(&status_of(&fake(refusal))), Some(refusal));
    }
    // An availability error is no refusal: it leaves the outcome unknown.
    assert_eq!(Refusal::of(&status_of(&EtcdError::Timeout)), None);
}
