//! Unit tests of the state machine: the transcript of real etcd 3.4.23 replayed, then one file per request
//! kind with a table per rule. Every error case also checks that the state is unchanged afterwards. This
//! module holds what they share: request builders and helpers that drive the state machine.

mod compact;
mod delete_range;
mod lease;
mod put;
mod range;
mod transcript;
mod txn;

use etcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use etcd_proto::etcdserverpb::range_request::{SortOrder, SortTarget};
use etcd_proto::etcdserverpb::{
    request_op, response_op, CompactionRequest, Compare, DeleteRangeRequest, DeleteRangeResponse, PutRequest,
    PutResponse, RangeRequest, RangeResponse, RequestOp, ResponseHeader, ResponseOp, TxnRequest, TxnResponse,
};
use etcd_proto::mvccpb::{event::EventType, Event, KeyValue};

use super::command::Applied;
use super::validate::{check_txn, DEFAULT_MAX_TXN_OPS};
use super::{Command, CommandResponse, StateMachine};
use crate::error::EtcdError;
use crate::lease::TimeToLive;
use crate::mvcc::prefix_end;
use crate::types::{LeaseId, Millis, Revision};

// ---- request builders ----

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn put_req(k: &str, v: &str) -> PutRequest {
    PutRequest { key: b(k), value: b(v), ..PutRequest::default() }
}

fn get_req(k: &str) -> RangeRequest {
    RangeRequest { key: b(k), ..RangeRequest::default() }
}

fn prefix_req(p: &str) -> RangeRequest {
    RangeRequest { key: b(p), range_end: prefix_end(p.as_bytes()), ..RangeRequest::default() }
}

fn del_req(k: &str, end: &str) -> DeleteRangeRequest {
    DeleteRangeRequest { key: b(k), range_end: b(end), prev_kv: false }
}

fn op_put(k: &str, v: &str) -> RequestOp {
    RequestOp { request: Some(request_op::Request::RequestPut(put_req(k, v))) }
}

fn op_put_with(req: PutRequest) -> RequestOp {
    RequestOp { request: Some(request_op::Request::RequestPut(req)) }
}

fn op_get(req: RangeRequest) -> RequestOp {
    RequestOp { request: Some(request_op::Request::RequestRange(req)) }
}

fn op_del(k: &str, end: &str) -> RequestOp {
    RequestOp { request: Some(request_op::Request::RequestDeleteRange(del_req(k, end))) }
}

fn op_txn(t: TxnRequest) -> RequestOp {
    RequestOp { request: Some(request_op::Request::RequestTxn(t)) }
}

fn txn(compare: Vec<Compare>, success: Vec<RequestOp>, failure: Vec<RequestOp>) -> TxnRequest {
    TxnRequest { compare, success, failure }
}

fn cmp(k: &str, target: CompareTarget, result: CompareResult, operand: TargetUnion) -> Compare {
    Compare { key: b(k), range_end: vec![], target: target as i32, result: result as i32, target_union: Some(operand) }
}

fn cmp_value(k: &str, result: CompareResult, v: &str) -> Compare {
    cmp(k, CompareTarget::Value, result, TargetUnion::Value(b(v)))
}

fn cmp_mod(k: &str, result: CompareResult, rev: i64) -> Compare {
    cmp(k, CompareTarget::Mod, result, TargetUnion::ModRevision(rev))
}

fn kv(k: &str, v: &str, create: i64, modified: i64, version: i64) -> KeyValue {
    KeyValue { key: b(k), value: b(v), create_revision: create, mod_revision: modified, version, lease: 0 }
}

fn hdr(rev: i64) -> Option<ResponseHeader> {
    Some(ResponseHeader { revision: rev, ..ResponseHeader::default() })
}

// ---- driving the state machine ----

fn sm() -> StateMachine {
    StateMachine::new(2)
}

const NOW: Millis = Millis(1_000);

fn apply(s: &mut StateMachine, cmd: Command) -> Result<Applied, EtcdError> {
    s.apply(cmd, NOW)
}

fn put(s: &mut StateMachine, req: PutRequest) -> Result<PutResponse, EtcdError> {
    match apply(s, Command::Put(req))?.response {
        CommandResponse::Put(r) => Ok(r),
        other => panic!("put answered {other:?}"),
    }
}

fn put_kv(s: &mut StateMachine, k: &str, v: &str) -> i64 {
    put(s, put_req(k, v)).unwrap().header.unwrap().revision
}

fn del(s: &mut StateMachine, req: DeleteRangeRequest) -> DeleteRangeResponse {
    match apply(s, Command::DeleteRange(req)).unwrap().response {
        CommandResponse::DeleteRange(r) => r,
        other => panic!("delete answered {other:?}"),
    }
}

fn run_txn(s: &mut StateMachine, req: TxnRequest) -> Result<TxnResponse, EtcdError> {
    match apply(s, Command::Txn(req))?.response {
        CommandResponse::Txn(r) => Ok(r),
        other => panic!("txn answered {other:?}"),
    }
}

fn compact(s: &mut StateMachine, rev: i64) -> Result<Applied, EtcdError> {
    apply(s, Command::Compact(CompactionRequest { revision: rev, physical: false }))
}

fn range_resp(kvs: Vec<KeyValue>, count: i64, more: bool, rev: i64) -> RangeResponse {
    RangeResponse { header: hdr(rev), kvs, more, count }
}

fn keys(r: &RangeResponse) -> Vec<String> {
    r.kvs.iter().map(|kv| String::from_utf8(kv.key.clone()).unwrap()).collect()
}

/// Everything observable about the state, to check that an error changed nothing.
#[derive(Debug, PartialEq)]
struct Snapshot {
    rev: Revision,
    compact_rev: Revision,
    hash: u32,
    all: RangeResponse,
    leases: Vec<(LeaseId, Option<TimeToLive>)>,
}

fn snapshot(s: &StateMachine) -> Snapshot {
    let all = RangeRequest { key: b("\0"), range_end: b("\0"), ..RangeRequest::default() };
    Snapshot {
        rev: s.mvcc.current_revision(),
        compact_rev: s.mvcc.compact_revision_raw(),
        hash: s.mvcc.hash_kv(Revision(0)).unwrap().0,
        all: s.range(&all).unwrap(),
        leases: s.lessor.leases().into_iter().map(|id| (id, s.lessor.time_to_live(id, NOW))).collect(),
    }
}

/// Applies `cmd`, expects `want`, and checks that the state did not change.
fn assert_refused(s: &mut StateMachine, cmd: Command, want: EtcdError) {
    let before = snapshot(s);
    let got = apply(s, cmd.clone());
    assert_eq!(got.map(|a| a.response), Err(want), "{cmd:?}");
    assert_eq!(snapshot(s), before, "state changed by refused {cmd:?}");
}
