//! Unit tests of the state machine: the transcript of real etcd 3.4.23 replayed, then one table per rule.
//! Every error case also checks that the state is unchanged afterwards.

use etcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use etcd_proto::etcdserverpb::range_request::{SortOrder, SortTarget};
use etcd_proto::etcdserverpb::{
    request_op, response_op, CompactionRequest, Compare, DeleteRangeRequest, DeleteRangeResponse, PutRequest,
    PutResponse, RangeRequest, RangeResponse, RequestOp, ResponseHeader, ResponseOp, TxnRequest, TxnResponse,
};
use etcd_proto::mvccpb::{event::EventType, Event, KeyValue};

use super::validate::{check_txn, DEFAULT_MAX_TXN_OPS};
use super::{Applied, Command, CommandResponse, StateMachine};
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

// ---- transcript replay (shared/reference/etcd-transcript.md §1–§6) ----

#[test]
fn transcript_put_get_del_txn_compaction() {
    let mut s = sm();
    // §1 put
    assert_eq!(put_kv(&mut s, "foo", "bar"), 2);
    assert_eq!(put_kv(&mut s, "foo", "bar"), 3);
    let r = put(&mut s, PutRequest { prev_kv: true, ..put_req("foo", "bar2") }).unwrap();
    assert_eq!(r, PutResponse { header: hdr(4), prev_kv: Some(kv("foo", "bar", 2, 3, 2)) });
    let r = put(&mut s, PutRequest { prev_kv: true, ..put_req("foo", "bar3") }).unwrap();
    assert_eq!(r.prev_kv, Some(kv("foo", "bar2", 2, 4, 3)));
    let r = put(&mut s, PutRequest { ignore_value: true, ..put_req("foo", "") }).unwrap();
    assert_eq!(r, PutResponse { header: hdr(6), prev_kv: None });

    // §2 get
    assert_eq!(put_kv(&mut s, "/reg/a", "1"), 7);
    assert_eq!(put_kv(&mut s, "/reg/b", "2"), 8);
    assert_eq!(put_kv(&mut s, "/reg/c", "3"), 9);
    let reg = || vec![kv("/reg/a", "1", 7, 7, 1), kv("/reg/b", "2", 8, 8, 1), kv("/reg/c", "3", 9, 9, 1)];
    let no_values = |kvs: Vec<KeyValue>| kvs.into_iter().map(|kv| KeyValue { value: vec![], ..kv }).collect();
    let cases: Vec<(RangeRequest, RangeResponse)> = vec![
        (get_req("foo"), range_resp(vec![kv("foo", "bar3", 2, 6, 5)], 1, false, 9)),
        (prefix_req("/reg/"), range_resp(reg(), 3, false, 9)),
        (RangeRequest { keys_only: true, ..prefix_req("/reg/") }, range_resp(no_values(reg()), 3, false, 9)),
        (RangeRequest { limit: 1, ..prefix_req("/reg/") }, range_resp(reg()[..1].to_vec(), 3, true, 9)),
        (
            RangeRequest {
                sort_target: SortTarget::Mod as i32,
                sort_order: SortOrder::Descend as i32,
                ..prefix_req("/reg/")
            },
            range_resp(reg().into_iter().rev().collect(), 3, false, 9),
        ),
        (RangeRequest { range_end: b("/reg/c"), ..get_req("/reg/a") }, range_resp(reg()[..2].to_vec(), 2, false, 9)),
        (
            RangeRequest { range_end: b("\0"), keys_only: true, ..get_req("/reg/b") },
            range_resp(no_values(vec![reg()[1].clone(), reg()[2].clone(), kv("foo", "", 2, 6, 5)]), 3, false, 9),
        ),
        (get_req("nosuchkey"), range_resp(vec![], 0, false, 9)),
    ];
    for (req, want) in cases {
        assert_eq!(s.range(&req).unwrap(), want, "{req:?}");
    }

    // §3 get --rev
    assert_eq!(put_kv(&mut s, "foo", "v1"), 10);
    assert_eq!(put_kv(&mut s, "foo", "v2"), 11);
    assert_eq!(put_kv(&mut s, "foo", "v3"), 12);
    let at = |rev| RangeRequest { revision: rev, ..get_req("foo") };
    assert_eq!(s.range(&at(9)).unwrap(), range_resp(vec![kv("foo", "bar3", 2, 6, 5)], 1, false, 12));
    assert_eq!(s.range(&at(10)).unwrap().kvs[0].value, b"v1");
    assert_eq!(s.range(&at(1)).unwrap(), range_resp(vec![], 0, false, 12));
    assert_eq!(s.range(&at(1000)), Err(EtcdError::FutureRev));

    // §4 del
    assert_eq!(del(&mut s, del_req("foo", "")), DeleteRangeResponse { header: hdr(13), deleted: 1, prev_kvs: vec![] });
    let r = del(&mut s, DeleteRangeRequest { prev_kv: true, ..del_req("/reg/", "/reg0") });
    assert_eq!(r, DeleteRangeResponse { header: hdr(14), deleted: 3, prev_kvs: reg() });
    assert_eq!(
        del(&mut s, del_req("nosuch", "")),
        DeleteRangeResponse { header: hdr(14), deleted: 0, prev_kvs: vec![] }
    );
    put_kv(&mut s, "/d/x", "1");
    put_kv(&mut s, "/d/y", "2");
    assert_eq!(del(&mut s, del_req("/d/", "/d0")).deleted, 2);

    // §5 txn
    assert_eq!(put_kv(&mut s, "k1", "a"), 18);
    let t = txn(
        vec![cmp_mod("k1", CompareResult::Greater, 0)],
        vec![op_put("k1", "b"), op_put("k2", "c")],
        vec![op_put("k1", "fail")],
    );
    let put19 = || ResponseOp {
        response: Some(response_op::Response::ResponsePut(PutResponse { header: hdr(19), prev_kv: None })),
    };
    assert_eq!(
        run_txn(&mut s, t).unwrap(),
        TxnResponse { header: hdr(19), succeeded: true, responses: vec![put19(), put19()] }
    );
    let t = txn(
        vec![cmp_value("k1", CompareResult::Equal, "zzz")],
        vec![op_put("k1", "b")],
        vec![op_get(get_req("k1")), op_get(get_req("k2")), op_del("k3", "")],
    );
    let want = TxnResponse {
        header: hdr(19),
        succeeded: false,
        responses: vec![
            ResponseOp {
                response: Some(response_op::Response::ResponseRange(range_resp(
                    vec![kv("k1", "b", 18, 19, 2)],
                    1,
                    false,
                    19,
                ))),
            },
            ResponseOp {
                response: Some(response_op::Response::ResponseRange(range_resp(
                    vec![kv("k2", "c", 19, 19, 1)],
                    1,
                    false,
                    19,
                ))),
            },
            ResponseOp {
                response: Some(response_op::Response::ResponseDeleteRange(DeleteRangeResponse {
                    header: hdr(19),
                    deleted: 0,
                    prev_kvs: vec![],
                })),
            },
        ],
    };
    assert_eq!(run_txn(&mut s, t).unwrap(), want);
    let t = txn(vec![cmp_value("k1", CompareResult::Equal, "b")], vec![op_put("k1", "x")], vec![op_get(get_req("k1"))]);
    assert_eq!(run_txn(&mut s, t).unwrap().header, hdr(20));
    let t = txn(
        vec![cmp("k1", CompareTarget::Create, CompareResult::Equal, TargetUnion::CreateRevision(0))],
        vec![op_put("k1", "new")],
        vec![op_get(get_req("k1"))],
    );
    let r = run_txn(&mut s, t).unwrap();
    assert!(!r.succeeded);
    assert_eq!(
        r.responses[0].response,
        Some(response_op::Response::ResponseRange(range_resp(vec![kv("k1", "x", 18, 20, 3)], 1, false, 20)))
    );
    let t = txn(
        vec![cmp("k1", CompareTarget::Version, CompareResult::Equal, TargetUnion::Version(3))],
        vec![op_put("k1", "v")],
        vec![],
    );
    assert_eq!(run_txn(&mut s, t).unwrap().header, hdr(21));
    assert_eq!(
        check_txn(&txn(vec![], vec![op_put("k1", "a"), op_put("k1", "b")], vec![]), DEFAULT_MAX_TXN_OPS),
        Err(EtcdError::DuplicateKey)
    );

    // §6 compaction
    assert_eq!(s.range(&at(10)).unwrap(), range_resp(vec![kv("foo", "v1", 2, 10, 6)], 1, false, 21));
    let r = compact(&mut s, 10).unwrap();
    assert_eq!(r.response, CommandResponse::Compact(etcd_proto::etcdserverpb::CompactionResponse { header: hdr(21) }));
    assert_refused(&mut s, Command::Compact(CompactionRequest { revision: 10, physical: false }), EtcdError::Compacted);
    assert_refused(&mut s, Command::Compact(CompactionRequest { revision: 5, physical: false }), EtcdError::Compacted);
    assert_refused(
        &mut s,
        Command::Compact(CompactionRequest { revision: 1000, physical: false }),
        EtcdError::FutureRev,
    );
    assert_eq!(s.range(&at(9)), Err(EtcdError::Compacted));
    assert_eq!(s.range(&at(10)).unwrap(), range_resp(vec![kv("foo", "v1", 2, 10, 6)], 1, false, 21));
    assert_eq!(s.range(&at(11)).unwrap(), range_resp(vec![kv("foo", "v2", 2, 11, 7)], 1, false, 21));
    assert!(compact(&mut s, 12).is_ok());
    assert_eq!(s.mvcc.current_revision(), Revision(21));
}

// ---- Range ----

/// Keys a..f with mod revisions 2..7; values are the reverse of the key order; b and e were put twice.
fn range_fixture() -> StateMachine {
    let mut s = sm();
    for (k, v) in [("a", "6"), ("b", "5"), ("c", "4"), ("d", "3"), ("e", "2"), ("f", "1")] {
        put_kv(&mut s, k, v);
    }
    put_kv(&mut s, "b", "5"); // rev 8, version 2
    put_kv(&mut s, "e", "2"); // rev 9, version 2
    s
}

#[test]
fn range_sort_filter_limit_count() {
    let s = range_fixture();
    let all = || RangeRequest { key: b("a"), range_end: b("z"), ..RangeRequest::default() };
    let sort = |target: SortTarget, order: SortOrder| RangeRequest {
        sort_target: target as i32,
        sort_order: order as i32,
        ..all()
    };
    // (request, keys, count, more)
    let cases: Vec<(&str, RangeRequest, &[&str], i64, bool)> = vec![
        ("natural order", all(), &["a", "b", "c", "d", "e", "f"], 6, false),
        ("limit", RangeRequest { limit: 2, ..all() }, &["a", "b"], 6, true),
        ("limit = size", RangeRequest { limit: 6, ..all() }, &["a", "b", "c", "d", "e", "f"], 6, false),
        ("negative limit is none", RangeRequest { limit: -3, ..all() }, &["a", "b", "c", "d", "e", "f"], 6, false),
        ("count_only", RangeRequest { count_only: true, ..all() }, &[], 6, false),
        ("count_only with limit", RangeRequest { count_only: true, limit: 1, ..all() }, &[], 6, false),
        ("key descend", sort(SortTarget::Key, SortOrder::Descend), &["f", "e", "d", "c", "b", "a"], 6, false),
        ("key none", sort(SortTarget::Key, SortOrder::None), &["a", "b", "c", "d", "e", "f"], 6, false),
        (
            "value with order NONE sorts ascending",
            sort(SortTarget::Value, SortOrder::None),
            &["f", "e", "d", "c", "b", "a"],
            6,
            false,
        ),
        ("value descend", sort(SortTarget::Value, SortOrder::Descend), &["a", "b", "c", "d", "e", "f"], 6, false),
        ("mod ascend", sort(SortTarget::Mod, SortOrder::Ascend), &["a", "c", "d", "f", "b", "e"], 6, false),
        ("mod none sorts ascending", sort(SortTarget::Mod, SortOrder::None), &["a", "c", "d", "f", "b", "e"], 6, false),
        ("create descend", sort(SortTarget::Create, SortOrder::Descend), &["f", "e", "d", "c", "b", "a"], 6, false),
        // Ties keep key order, both ways.
        ("version ascend", sort(SortTarget::Version, SortOrder::Ascend), &["a", "c", "d", "f", "b", "e"], 6, false),
        ("version descend", sort(SortTarget::Version, SortOrder::Descend), &["b", "e", "a", "c", "d", "f"], 6, false),
        // etcd reads everything only if the raw sort order is set: a target with order NONE sorts just the
        // first limit + 1 keys (measured on etcd 3.4.23).
        (
            "value, order NONE, limited",
            RangeRequest { limit: 2, ..sort(SortTarget::Value, SortOrder::None) },
            &["c", "b"],
            6,
            true,
        ),
        (
            "value ascend, limited",
            RangeRequest { limit: 2, ..sort(SortTarget::Value, SortOrder::Ascend) },
            &["f", "e"],
            6,
            true,
        ),
        (
            "sorted then limited",
            RangeRequest { limit: 2, ..sort(SortTarget::Mod, SortOrder::Descend) },
            &["e", "b"],
            6,
            true,
        ),
        ("min mod", RangeRequest { min_mod_revision: 5, ..all() }, &["b", "d", "e", "f"], 6, false),
        ("max mod", RangeRequest { max_mod_revision: 4, ..all() }, &["a", "c"], 6, false),
        ("min create", RangeRequest { min_create_revision: 6, ..all() }, &["e", "f"], 6, false),
        ("max create", RangeRequest { max_create_revision: 3, ..all() }, &["a", "b"], 6, false),
        ("mod window", RangeRequest { min_mod_revision: 4, max_mod_revision: 7, ..all() }, &["c", "d", "f"], 6, false),
        // With a filter everything is read first, so `more` reflects what the filter left.
        ("filter then limit", RangeRequest { min_mod_revision: 5, limit: 3, ..all() }, &["b", "d", "e"], 6, true),
        (
            "filter then limit, nothing cut",
            RangeRequest { min_mod_revision: 5, limit: 4, ..all() },
            &["b", "d", "e", "f"],
            6,
            false,
        ),
        ("filter leaving nothing", RangeRequest { min_mod_revision: 100, ..all() }, &[], 6, false),
        ("single key", get_req("c"), &["c"], 1, false),
        ("inverted range", RangeRequest { key: b("d"), range_end: b("b"), ..RangeRequest::default() }, &[], 0, false),
        (
            "from key",
            RangeRequest { key: b("e"), range_end: b("\0"), ..RangeRequest::default() },
            &["e", "f"],
            2,
            false,
        ),
        (
            "all keys",
            RangeRequest { key: b("\0"), range_end: b("\0"), ..RangeRequest::default() },
            &["a", "b", "c", "d", "e", "f"],
            6,
            false,
        ),
        ("at an old revision", RangeRequest { revision: 4, ..all() }, &["a", "b", "c"], 3, false),
    ];
    for (name, req, want_keys, want_count, want_more) in cases {
        let r = s.range(&req).unwrap();
        assert_eq!(keys(&r), want_keys, "{name}");
        assert_eq!((r.count, r.more), (want_count, want_more), "{name}");
        assert_eq!(r.header, hdr(9), "{name}: the header names the current revision");
    }
    let r = s.range(&RangeRequest { keys_only: true, ..get_req("a") }).unwrap();
    assert_eq!(r.kvs, vec![kv("a", "", 2, 2, 1)]);
}

#[test]
fn range_revision_rules() {
    let mut s = range_fixture();
    compact(&mut s, 5).unwrap();
    let cases = [
        (10, Err(EtcdError::FutureRev)),
        (9, Ok(6)),
        (5, Ok(4)),
        (4, Err(EtcdError::Compacted)),
        (0, Ok(6)),
        (-7, Ok(6)),
    ];
    for (rev, want) in cases {
        let got = s.range(&RangeRequest { key: b("a"), range_end: b("z"), revision: rev, ..RangeRequest::default() });
        assert_eq!(got.map(|r| r.count), want, "at {rev}");
    }
}

// ---- Put ----

#[test]
fn put_leases_and_ignore_flags() {
    let mut s = sm();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(10), ttl_s: 60 }).unwrap();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(20), ttl_s: 60 }).unwrap();
    let with_lease = |k: &str, v: &str, lease: i64| PutRequest { lease, ..put_req(k, v) };

    put(&mut s, with_lease("k", "v1", 10)).unwrap();
    assert_eq!(s.lessor.lease_of(b"k"), Some(LeaseId(10)));
    // ignore_value keeps the value and takes the new lease; the key moves from lease 10 to 20.
    let r = put(&mut s, PutRequest { ignore_value: true, prev_kv: true, ..with_lease("k", "", 20) }).unwrap();
    assert_eq!(r.prev_kv.unwrap().lease, 10);
    let got = s.range(&get_req("k")).unwrap().kvs;
    assert_eq!((got[0].value.as_slice(), got[0].lease, got[0].version), (&b"v1"[..], 20, 2));
    assert_eq!(s.lessor.lease_of(b"k"), Some(LeaseId(20)));
    assert_eq!(s.lessor.time_to_live(LeaseId(10), NOW).unwrap().keys, Vec::<Vec<u8>>::new());
    // ignore_lease keeps the lease and takes the new value.
    put(&mut s, PutRequest { ignore_lease: true, ..put_req("k", "v2") }).unwrap();
    let got = s.range(&get_req("k")).unwrap().kvs;
    assert_eq!((got[0].value.as_slice(), got[0].lease), (&b"v2"[..], 20));
    // A plain put drops the lease.
    put(&mut s, put_req("k", "v3")).unwrap();
    assert_eq!(s.range(&get_req("k")).unwrap().kvs[0].lease, 0);
    assert_eq!(s.lessor.lease_of(b"k"), None);
    // An identical value still makes a new revision.
    let rev = s.mvcc.current_revision().0;
    assert_eq!(put_kv(&mut s, "k", "v3"), rev + 1);

    // prev_kv only when asked, and never for a new key.
    assert_eq!(put(&mut s, PutRequest { prev_kv: true, ..put_req("new", "n") }).unwrap().prev_kv, None);
    assert_eq!(put(&mut s, put_req("new", "n2")).unwrap().prev_kv, None);

    // Errors.
    let cases = [
        (with_lease("k", "v", 1234), EtcdError::LeaseNotFound),
        (PutRequest { ignore_value: true, ..put_req("missing", "") }, EtcdError::KeyNotFound),
        (PutRequest { ignore_lease: true, ..put_req("missing", "v") }, EtcdError::KeyNotFound),
        // The lease is checked before the key.
        (PutRequest { ignore_value: true, ..with_lease("missing", "", 1234) }, EtcdError::LeaseNotFound),
    ];
    for (req, want) in cases {
        assert_refused(&mut s, Command::Put(req), want);
    }
}

#[test]
fn put_events_carry_the_new_kv() {
    let mut s = sm();
    let a = apply(&mut s, Command::Put(put_req("k", "v"))).unwrap();
    assert_eq!(a.events, vec![Event { r#type: EventType::Put as i32, kv: Some(kv("k", "v", 2, 2, 1)), prev_kv: None }]);
}

// ---- DeleteRange ----

#[test]
fn delete_range_counts_prev_kvs_events_and_leases() {
    let mut s = sm();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(10), ttl_s: 60 }).unwrap();
    put(&mut s, PutRequest { lease: 10, ..put_req("a", "1") }).unwrap();
    put_kv(&mut s, "b", "2");
    put_kv(&mut s, "c", "3");
    let a = apply(&mut s, Command::DeleteRange(DeleteRangeRequest { prev_kv: true, ..del_req("a", "c") })).unwrap();
    let want = DeleteRangeResponse {
        header: hdr(5),
        deleted: 2,
        prev_kvs: vec![KeyValue { lease: 10, ..kv("a", "1", 2, 2, 1) }, kv("b", "2", 3, 3, 1)],
    };
    assert_eq!(a.response, CommandResponse::DeleteRange(want));
    let tombstone = |k: &str| Event {
        r#type: EventType::Delete as i32,
        kv: Some(KeyValue { key: b(k), mod_revision: 5, ..KeyValue::default() }),
        prev_kv: None,
    };
    assert_eq!(a.events, vec![tombstone("a"), tombstone("b")]);
    assert_eq!(s.lessor.time_to_live(LeaseId(10), NOW).unwrap().keys, Vec::<Vec<u8>>::new());
    // Deleting nothing leaves the revision and emits nothing.
    let a = apply(&mut s, Command::DeleteRange(del_req("a", "c"))).unwrap();
    assert_eq!(
        a.response,
        CommandResponse::DeleteRange(DeleteRangeResponse { header: hdr(5), deleted: 0, prev_kvs: vec![] })
    );
    assert!(a.events.is_empty());
    assert_eq!(del(&mut s, del_req("\0", "\0")).deleted, 1);
}

// ---- Txn ----

/// k: version 2, create 2, mod 3, value "v2", lease 10. Nothing else.
fn compare_fixture() -> StateMachine {
    let mut s = sm();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(10), ttl_s: 60 }).unwrap();
    put_kv(&mut s, "k", "v1");
    put(&mut s, PutRequest { lease: 10, ..put_req("k", "v2") }).unwrap();
    s
}

#[test]
fn txn_compares() {
    use CompareResult::{Equal as Eq, Greater as Gt, Less as Lt, NotEqual as Ne};
    use CompareTarget as T;
    use TargetUnion as U;
    let cases: Vec<(Compare, bool)> = vec![
        (cmp("k", T::Version, Eq, U::Version(2)), true),
        (cmp("k", T::Version, Gt, U::Version(1)), true),
        (cmp("k", T::Version, Lt, U::Version(2)), false),
        (cmp("k", T::Version, Ne, U::Version(2)), false),
        (cmp("k", T::Create, Eq, U::CreateRevision(2)), true),
        (cmp("k", T::Create, Lt, U::CreateRevision(3)), true),
        (cmp("k", T::Mod, Eq, U::ModRevision(3)), true),
        (cmp("k", T::Mod, Gt, U::ModRevision(3)), false),
        (cmp("k", T::Mod, Ne, U::ModRevision(4)), true),
        (cmp("k", T::Value, Eq, U::Value(b("v2"))), true),
        (cmp("k", T::Value, Gt, U::Value(b("v1"))), true),
        (cmp("k", T::Value, Lt, U::Value(b("v3"))), true),
        (cmp("k", T::Value, Lt, U::Value(b("v2"))), false),
        (cmp("k", T::Value, Ne, U::Value(b("v2"))), false),
        (cmp("k", T::Lease, Eq, U::Lease(10)), true),
        (cmp("k", T::Lease, Gt, U::Lease(0)), true),
        // A missing key compares as a zero kv...
        (cmp("missing", T::Version, Eq, U::Version(0)), true),
        (cmp("missing", T::Mod, Eq, U::ModRevision(0)), true),
        (cmp("missing", T::Create, Lt, U::CreateRevision(1)), true),
        (cmp("missing", T::Lease, Eq, U::Lease(0)), true),
        (cmp("missing", T::Version, Gt, U::Version(0)), false),
        // ...except that a VALUE compare on it is always false.
        (cmp("missing", T::Value, Eq, U::Value(vec![])), false),
        (cmp("missing", T::Value, Ne, U::Value(b("x"))), false),
        (cmp("missing", T::Value, Lt, U::Value(b("x"))), false),
        // An operand of the wrong kind counts as 0.
        (cmp("k", T::Mod, Gt, U::Version(100)), true),
        (Compare { target_union: None, ..cmp("k", T::Version, Gt, U::Version(100)) }, true),
        (Compare { target_union: None, ..cmp("k", T::Value, Gt, U::Version(0)) }, true),
    ];
    for (compare, want) in cases {
        let mut s = compare_fixture();
        let r = run_txn(&mut s, txn(vec![compare.clone()], vec![], vec![])).unwrap();
        assert_eq!(r.succeeded, want, "{compare:?}");
        assert_eq!(r.header, hdr(3));
    }
}

#[test]
fn txn_range_compares() {
    use CompareResult::{Equal as Eq, Greater as Gt};
    let mut s = sm();
    put_kv(&mut s, "a", "x"); // 2
    put_kv(&mut s, "b", "x"); // 3
    put_kv(&mut s, "c", "y"); // 4
    let ranged = |k: &str, end: &str, c: Compare| Compare { key: b(k), range_end: b(end), ..c };
    let cases: Vec<(Compare, bool)> = vec![
        (ranged("a", "c", cmp_value("", Eq, "x")), true),
        (ranged("a", "d", cmp_value("", Eq, "x")), false),
        (ranged("a", "d", cmp_mod("", Gt, 1)), true),
        (ranged("a", "d", cmp_mod("", Gt, 2)), false),
        (ranged("a", "\0", cmp_mod("", Gt, 1)), true),
        // An empty range compares as a zero kv; VALUE on it is false.
        (ranged("x", "z", cmp_mod("", Eq, 0)), true),
        (ranged("x", "z", cmp_value("", Eq, "")), false),
        (ranged("c", "a", cmp_mod("", Eq, 0)), true),
    ];
    for (compare, want) in cases {
        let r = run_txn(&mut s, txn(vec![compare.clone()], vec![], vec![])).unwrap();
        assert_eq!(r.succeeded, want, "{compare:?}");
    }
    // Compares form a conjunction.
    let both = vec![cmp_value("a", Eq, "x"), cmp_value("c", Eq, "x")];
    assert!(!run_txn(&mut s, txn(both, vec![], vec![])).unwrap().succeeded);
}

#[test]
fn txn_ops_share_one_revision_and_see_earlier_writes() {
    let mut s = sm();
    put_kv(&mut s, "a", "1"); // 2
    let t = txn(
        vec![],
        vec![
            op_get(get_req("a")),
            op_del("nosuch", ""),
            op_put("a", "2"),
            op_get(get_req("a")),
            op_del("nosuch", ""),
            op_put("b", "1"),
            op_get(RangeRequest { key: b("a"), range_end: b("z"), ..RangeRequest::default() }),
            op_get(RangeRequest { revision: 2, ..get_req("a") }),
        ],
        vec![],
    );
    let a = apply(&mut s, Command::Txn(t)).unwrap();
    let CommandResponse::Txn(r) = a.response else { panic!() };
    let range = |i: usize| match &r.responses[i].response {
        Some(response_op::Response::ResponseRange(rr)) => rr.clone(),
        other => panic!("{other:?}"),
    };
    let header = |i: usize| match &r.responses[i].response {
        Some(response_op::Response::ResponseRange(x)) => x.header,
        Some(response_op::Response::ResponsePut(x)) => x.header,
        Some(response_op::Response::ResponseDeleteRange(x)) => x.header,
        Some(response_op::Response::ResponseTxn(x)) => x.header,
        None => None,
    };
    // Before the first write, inner headers name the store's revision (measured on etcd 3.4.23).
    assert_eq!((header(0), header(1)), (hdr(2), hdr(2)));
    assert_eq!(range(0).kvs, vec![kv("a", "1", 2, 2, 1)]);
    assert_eq!((header(2), header(3), header(4), header(5)), (hdr(3), hdr(3), hdr(3), hdr(3)));
    assert_eq!(range(3).kvs, vec![kv("a", "2", 2, 3, 2)]);
    assert_eq!(range(6).kvs, vec![kv("a", "2", 2, 3, 2), kv("b", "1", 3, 3, 1)]);
    assert_eq!(range(7).kvs, vec![kv("a", "1", 2, 2, 1)]);
    assert_eq!(r.header, hdr(3));
    assert_eq!(a.events.len(), 2);
    assert!(a.events.iter().all(|e| e.kv.as_ref().unwrap().mod_revision == 3));
}

#[test]
fn txn_read_only_or_unchanged_keeps_the_revision() {
    let mut s = sm();
    put_kv(&mut s, "a", "1");
    let cases = vec![
        txn(vec![], vec![op_get(get_req("a"))], vec![]),
        txn(vec![], vec![], vec![]),
        // The branch not taken has the writes.
        txn(vec![cmp_value("a", CompareResult::Equal, "nope")], vec![op_put("a", "2")], vec![op_get(get_req("a"))]),
        txn(vec![], vec![op_del("zzz", "")], vec![]),
    ];
    for t in cases {
        let a = apply(&mut s, Command::Txn(t.clone())).unwrap();
        assert!(a.events.is_empty(), "{t:?}");
        let CommandResponse::Txn(r) = a.response else { panic!() };
        assert_eq!(r.header, hdr(2), "{t:?}");
    }
    assert_eq!(s.mvcc.current_revision(), Revision(2));
}

#[test]
fn txn_nested() {
    let mut s = sm();
    put_kv(&mut s, "a", "1"); // 2
                              // The nested compare is decided before the outer put: it sees a = "1".
    let inner = txn(
        vec![cmp_value("a", CompareResult::Equal, "1")],
        vec![op_put("x", "then"), op_get(get_req("a"))],
        vec![op_put("x", "else")],
    );
    let t = txn(vec![], vec![op_put("a", "2"), op_txn(inner)], vec![]);
    let a = apply(&mut s, Command::Txn(t)).unwrap();
    let CommandResponse::Txn(r) = a.response else { panic!() };
    assert_eq!(r.header, hdr(3));
    let Some(response_op::Response::ResponseTxn(inner)) = &r.responses[1].response else { panic!() };
    assert!(inner.succeeded);
    // A nested txn's own header is empty, as etcd leaves it.
    assert_eq!(inner.header, Some(ResponseHeader::default()));
    let Some(response_op::Response::ResponseRange(rr)) = &inner.responses[1].response else { panic!() };
    assert_eq!(rr.kvs, vec![kv("a", "2", 2, 3, 2)]);
    assert_eq!(s.range(&get_req("x")).unwrap().kvs, vec![kv("x", "then", 3, 3, 1)]);
    // etcd 3.4.23 applies a put in one nested txn and a delete of the same key in a later one, at one revision.
    let t = txn(
        vec![],
        vec![op_txn(txn(vec![], vec![op_put("z", "1")], vec![])), op_txn(txn(vec![], vec![op_del("z", "")], vec![]))],
        vec![],
    );
    assert_eq!(check_txn(&t, DEFAULT_MAX_TXN_OPS), Ok(()));
    let a = apply(&mut s, Command::Txn(t)).unwrap();
    assert_eq!(a.events.len(), 2);
    assert_eq!(s.range(&get_req("z")).unwrap().count, 0);
    assert_eq!(s.mvcc.current_revision(), Revision(4));
}

#[test]
fn txn_errors_fail_the_whole_txn() {
    let mut s = sm();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(10), ttl_s: 60 }).unwrap();
    for i in 0..5 {
        put_kv(&mut s, "a", &i.to_string()); // 2..6
    }
    compact(&mut s, 4).unwrap();
    let get_at = |rev| op_get(RangeRequest { revision: rev, ..get_req("a") });
    let with_lease = |lease| op_put_with(PutRequest { lease, ..put_req("p", "v") });
    let ignoring = |k: &str| op_put_with(PutRequest { ignore_value: true, ..put_req(k, "") });
    let fail_always = || vec![cmp_value("nosuch", CompareResult::Equal, "")];
    let cases: Vec<(&str, TxnRequest, EtcdError)> = vec![
        ("range below compaction", txn(vec![], vec![op_put("w", "1"), get_at(3)], vec![]), EtcdError::Compacted),
        ("range in the future", txn(vec![], vec![op_put("w", "1"), get_at(7)], vec![]), EtcdError::FutureRev),
        ("read-only range below compaction", txn(vec![], vec![get_at(1)], vec![]), EtcdError::Compacted),
        ("negative revision after a compaction", txn(vec![], vec![get_at(-1)], vec![]), EtcdError::Compacted),
        (
            "nested range below compaction",
            txn(vec![], vec![op_put("w", "1"), op_txn(txn(vec![], vec![get_at(2)], vec![]))], vec![]),
            EtcdError::Compacted,
        ),
        ("failure branch range", txn(fail_always(), vec![], vec![op_put("w", "1"), get_at(2)]), EtcdError::Compacted),
        ("missing lease", txn(vec![], vec![op_put("w", "1"), with_lease(99)], vec![]), EtcdError::LeaseNotFound),
        (
            "missing lease nested",
            txn(vec![], vec![op_txn(txn(vec![], vec![with_lease(99)], vec![]))], vec![]),
            EtcdError::LeaseNotFound,
        ),
        (
            "ignore_value on a missing key",
            txn(vec![], vec![op_put("w", "1"), ignoring("missing")], vec![]),
            EtcdError::KeyNotFound,
        ),
        // Put checks come before range checks, whatever the op order.
        ("put check first", txn(vec![], vec![get_at(1), with_lease(99)], vec![]), EtcdError::LeaseNotFound),
        // etcd's checkIntervals lets a from-key delete precede an ignore_value put of a key in its range; the
        // pre-check passes (the key exists before the txn) and the put then finds no key. etcd 3.4 panics
        // here; fake-etcd refuses the txn and leaves the state as it was.
        (
            "ignore_value after from-key delete",
            txn(vec![], vec![op_del("a", "\0"), ignoring("a")], vec![]),
            EtcdError::KeyNotFound,
        ),
    ];
    for (name, t, want) in cases {
        assert_eq!(check_txn(&t, DEFAULT_MAX_TXN_OPS), Ok(()), "{name} passes validation");
        let before = snapshot(&s);
        assert_eq!(run_txn(&mut s, t), Err(want), "{name}");
        assert_eq!(snapshot(&s), before, "{name} changed the state");
    }
    // The same checks pass on the branch not taken, and at exactly the compaction revision.
    let ok_cases = vec![
        txn(fail_always(), vec![get_at(1), with_lease(99)], vec![op_put("w", "1")]),
        txn(vec![], vec![op_put("w", "1"), get_at(4)], vec![]),
        txn(vec![], vec![op_put("w2", "1"), with_lease(10), ignoring("a")], vec![]),
        txn(vec![], vec![get_at(0)], vec![]),
    ];
    for t in ok_cases {
        assert!(run_txn(&mut s, t.clone()).is_ok(), "{t:?}");
    }
    assert_eq!(s.lessor.lease_of(b"p"), Some(LeaseId(10)));
}

#[test]
fn txn_negative_range_revision_before_any_compaction() {
    // etcd compares a txn Range's raw revision with compactMainRev, which is -1 until the first compaction.
    let mut s = sm();
    put_kv(&mut s, "a", "1");
    let get_at = |rev| txn(vec![], vec![op_get(RangeRequest { revision: rev, ..get_req("a") })], vec![]);
    assert_eq!(run_txn(&mut s, get_at(-1)).unwrap().responses.len(), 1);
    assert_eq!(run_txn(&mut s, get_at(-2)), Err(EtcdError::Compacted));
    // A plain Range reads the latest revision for any revision <= 0.
    assert_eq!(s.range(&RangeRequest { revision: -2, ..get_req("a") }).unwrap().count, 1);
}

#[test]
fn txn_lease_attachments() {
    let mut s = sm();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(10), ttl_s: 60 }).unwrap();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(20), ttl_s: 60 }).unwrap();
    let leased = |k: &str, lease| op_put_with(PutRequest { lease, ..put_req(k, "v") });
    run_txn(&mut s, txn(vec![], vec![leased("a", 10), leased("b", 10), leased("c", 20)], vec![])).unwrap();
    assert_eq!(s.lessor.time_to_live(LeaseId(10), NOW).unwrap().keys, vec![b("a"), b("b")]);
    // Move a to 20, drop b's lease, delete c: all in one txn.
    run_txn(&mut s, txn(vec![], vec![leased("a", 20), op_put("b", "plain"), op_del("c", "")], vec![])).unwrap();
    assert_eq!(s.lessor.time_to_live(LeaseId(10), NOW).unwrap().keys, Vec::<Vec<u8>>::new());
    assert_eq!(s.lessor.time_to_live(LeaseId(20), NOW).unwrap().keys, vec![b("a")]);
    // A put followed by a from-key delete of the same key leaves it attached to nothing.
    run_txn(&mut s, txn(vec![], vec![leased("x", 10), op_del("a", "\0")], vec![])).unwrap();
    assert_eq!(s.lessor.time_to_live(LeaseId(10), NOW).unwrap().keys, Vec::<Vec<u8>>::new());
    assert_eq!(s.lessor.time_to_live(LeaseId(20), NOW).unwrap().keys, Vec::<Vec<u8>>::new());
    assert_eq!(
        s.range(&RangeRequest { key: b("\0"), range_end: b("\0"), ..RangeRequest::default() }).unwrap().count,
        0
    );
}

// ---- Compact ----

#[test]
fn compact_errors_and_events() {
    let cases: Vec<(&[i64], i64, Result<i64, EtcdError>)> = vec![
        (&[], 0, Ok(0)),
        (&[], 1, Ok(1)),
        (&[], -1, Err(EtcdError::Compacted)),
        (&[0], 0, Err(EtcdError::Compacted)),
        (&[], 4, Ok(4)),
        (&[], 5, Err(EtcdError::FutureRev)),
        (&[3], 3, Err(EtcdError::Compacted)),
        (&[3], 2, Err(EtcdError::Compacted)),
        (&[3], 4, Ok(4)),
    ];
    for (setup, rev, want) in cases {
        let mut s = sm();
        put_kv(&mut s, "k", "1"); // 2
        put_kv(&mut s, "k", "2"); // 3
        del(&mut s, del_req("k", "")); // 4
        for r in setup {
            compact(&mut s, *r).unwrap();
        }
        match want {
            Ok(compacted) => {
                let a = compact(&mut s, rev).unwrap();
                assert!(a.events.is_empty());
                assert_eq!(
                    a.response,
                    CommandResponse::Compact(etcd_proto::etcdserverpb::CompactionResponse { header: hdr(4) })
                );
                assert_eq!(s.mvcc.compact_revision_raw(), Revision(compacted));
            }
            Err(e) => assert_refused(&mut s, Command::Compact(CompactionRequest { revision: rev, physical: true }), e),
        }
    }
    // Compacting at a delete keeps that delete for watchers (races-catalog C1), but a range does not see it.
    let mut s = sm();
    put_kv(&mut s, "k", "1");
    del(&mut s, del_req("k", ""));
    compact(&mut s, 3).unwrap();
    let events = s.mvcc.events(&crate::mvcc::KeyRange::new(b"k", b""), Revision(3), Revision(3)).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].r#type, EventType::Delete as i32);
    assert_eq!(s.range(&RangeRequest { revision: 3, ..get_req("k") }).unwrap().count, 0);
}

// ---- Leases ----

#[test]
fn lease_grant() {
    let mut s = sm();
    put_kv(&mut s, "a", "1");
    let cases = [(60, Ok(60)), (1, Ok(2)), (0, Ok(2)), (9_000_000_001, Err(EtcdError::LeaseTtlTooLarge))];
    for (i, (ttl_s, want)) in cases.into_iter().enumerate() {
        let id = LeaseId(100 + i as i64);
        let cmd = Command::LeaseGrant { id, ttl_s };
        match want {
            Ok(ttl) => {
                let a = apply(&mut s, cmd).unwrap();
                let want = etcd_proto::etcdserverpb::LeaseGrantResponse {
                    header: hdr(2),
                    id: id.0,
                    ttl,
                    error: String::new(),
                };
                assert_eq!(a.response, CommandResponse::LeaseGrant(want));
                assert!(a.events.is_empty());
            }
            Err(e) => assert_refused(&mut s, cmd, e),
        }
    }
    assert_refused(&mut s, Command::LeaseGrant { id: LeaseId(100), ttl_s: 5 }, EtcdError::LeaseExist);
    assert_eq!(s.mvcc.current_revision(), Revision(2));
}

#[test]
fn lease_revoke_deletes_attached_keys_at_one_revision() {
    let mut s = sm();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(7), ttl_s: 60 }).unwrap();
    apply(&mut s, Command::LeaseGrant { id: LeaseId(8), ttl_s: 60 }).unwrap();
    for k in ["c", "a", "b"] {
        put(&mut s, PutRequest { lease: 7, ..put_req(k, "v") }).unwrap(); // 2, 3, 4
    }
    put(&mut s, PutRequest { lease: 8, ..put_req("d", "v") }).unwrap(); // 5
    put_kv(&mut s, "b", "moved off the lease"); // 6

    let a = apply(&mut s, Command::LeaseRevoke(LeaseId(7))).unwrap();
    let header = etcd_proto::etcdserverpb::LeaseRevokeResponse { header: hdr(7) };
    assert_eq!(a.response, CommandResponse::LeaseRevoke(header));
    let tombstone = |k: &str| Event {
        r#type: EventType::Delete as i32,
        kv: Some(KeyValue { key: b(k), mod_revision: 7, ..KeyValue::default() }),
        prev_kv: None,
    };
    assert_eq!(a.events, vec![tombstone("a"), tombstone("c")]);
    assert_eq!(
        keys(&s.range(&RangeRequest { key: b("\0"), range_end: b("\0"), ..RangeRequest::default() }).unwrap()),
        vec!["b", "d"]
    );
    assert!(!s.lessor.contains(LeaseId(7)));
    assert_refused(&mut s, Command::LeaseRevoke(LeaseId(7)), EtcdError::LeaseNotFound);
    assert_refused(&mut s, Command::Put(PutRequest { lease: 7, ..put_req("e", "v") }), EtcdError::LeaseNotFound);

    // A lease with no keys is revoked without a new revision.
    apply(&mut s, Command::LeaseGrant { id: LeaseId(9), ttl_s: 60 }).unwrap();
    let a = apply(&mut s, Command::LeaseRevoke(LeaseId(9))).unwrap();
    assert!(a.events.is_empty());
    assert_eq!(s.mvcc.current_revision(), Revision(7));
}
