//! The model against the etcd 3.4 facts it encodes (`mvcc`, `etcdserver/apply.go`, `lease`).

use super::*;
use crate::history::*;

fn ok(m: &mut KvModel, request: Request) -> Response {
    m.apply(&request, None).0.unwrap_or_else(|e| panic!("{request:?} failed: {e}"))
}

fn err(m: &mut KvModel, request: Request) -> Refusal {
    let (result, undo) = m.apply(&request, None);
    let err = result.expect_err("expected an error");
    assert!(undo.appended.is_empty() && undo.granted.is_none() && undo.revoked.is_none());
    err
}

fn put(key: &str, value: &str) -> Request {
    Request::Put(PutRequest::new(key, value))
}

fn get(key: &str) -> Request {
    Request::Range(RangeRequest::key(key))
}

fn kvs(response: &Response) -> &[KeyValue] {
    match &response.body {
        ResponseBody::Range(r) => &r.kvs,
        other => panic!("not a range: {other:?}"),
    }
}

#[test]
fn revision_starts_at_one_and_only_changes_bump_it() {
    let mut m = KvModel::new();
    assert_eq!(ok(&mut m, get("a")).header_revision, Revision(1));
    assert_eq!(ok(&mut m, put("a", "1")).header_revision, Revision(2));
    assert_eq!(ok(&mut m, put("a", "1")).header_revision, Revision(3), "an identical put still bumps");
    let missing = DeleteRangeRequest { span: KeySpan::single("zz"), prev_kv: false };
    assert_eq!(ok(&mut m, Request::DeleteRange(missing)).header_revision, Revision(3));
    let lease = LeaseGrantRequest { ttl_s: 10, id: LeaseId(7) };
    assert_eq!(ok(&mut m, Request::LeaseGrant(lease)).header_revision, Revision(3));
}

#[test]
fn delete_and_recreate_resets_create_revision_and_version() {
    let mut m = KvModel::new();
    ok(&mut m, put("a", "1"));
    ok(&mut m, put("a", "2"));
    let del = DeleteRangeRequest { span: KeySpan::single("a"), prev_kv: true };
    let deleted = ok(&mut m, Request::DeleteRange(del));
    let ResponseBody::DeleteRange(d) = &deleted.body else { panic!() };
    assert_eq!((d.deleted, d.prev_kvs[0].version), (1, 2));
    ok(&mut m, put("a", "3"));
    let read = ok(&mut m, get("a"));
    let kv = &kvs(&read)[0];
    assert_eq!((kv.create_revision, kv.mod_revision, kv.version), (Revision(5), Revision(5), 1));
}

#[test]
fn txn_compares_against_the_state_before_it_and_a_missing_value_never_compares() {
    let mut m = KvModel::new();
    let create = |key: &str| TxnRequest {
        compare: vec![Compare {
            span: KeySpan::single(key),
            result: CompareResult::Equal,
            target: CompareTarget::Mod(Revision(0)),
        }],
        success: vec![TxnOp::Put(PutRequest::new(key, "v")), TxnOp::Range(RangeRequest::key(key))],
        failure: vec![TxnOp::Range(RangeRequest::key(key))],
    };
    let first = ok(&mut m, Request::Txn(create("a")));
    let ResponseBody::Txn(t) = &first.body else { panic!() };
    assert!(t.succeeded);
    let TxnOpResult::Range(seen) = &t.responses[1] else { panic!() };
    assert_eq!(seen.kvs[0].mod_revision, Revision(2), "later ops see earlier writes");
    let second = ok(&mut m, Request::Txn(create("a")));
    let ResponseBody::Txn(t) = &second.body else { panic!() };
    assert!(!t.succeeded);
    assert_eq!(second.header_revision, Revision(2), "a read-only branch keeps the revision");

    let value_ne = TxnRequest {
        compare: vec![Compare {
            span: KeySpan::single("missing"),
            result: CompareResult::NotEqual,
            target: CompareTarget::Value(Bytes::from("x")),
        }],
        ..TxnRequest::default()
    };
    let ResponseBody::Txn(t) = ok(&mut m, Request::Txn(value_ne)).body else { panic!() };
    assert!(!t.succeeded);
}

#[test]
fn range_counts_before_limit_and_reads_the_past() {
    let mut m = KvModel::new();
    for (k, v) in [("/p/a", "1"), ("/p/b", "2"), ("/p/c", "3"), ("/q", "4")] {
        ok(&mut m, put(k, v));
    }
    let limited = RangeRequest { limit: 2, ..RangeRequest::span(KeySpan::prefix("/p/")) };
    let ResponseBody::Range(r) = ok(&mut m, Request::Range(limited)).body else { panic!() };
    assert_eq!((r.kvs.len(), r.more, r.count), (2, true, 3));
    let past = RangeRequest { revision: Revision(3), ..RangeRequest::span(KeySpan::prefix("/p/")) };
    let ResponseBody::Range(r) = ok(&mut m, Request::Range(past)).body else { panic!() };
    assert_eq!(r.count, 2);
    let desc = RangeRequest {
        sort_order: SortOrder::Descend,
        sort_target: SortTarget::Mod,
        ..RangeRequest::span(KeySpan::range("/", "\0"))
    };
    let read = ok(&mut m, Request::Range(desc));
    let keys: Vec<String> = kvs(&read).iter().map(|kv| kv.key.to_string()).collect();
    assert_eq!(keys, ["/q", "/p/c", "/p/b", "/p/a"]);
}

#[test]
fn compaction_bounds_reads_and_itself() {
    let mut m = KvModel::new();
    for v in ["1", "2", "3"] {
        ok(&mut m, put("a", v));
    }
    ok(&mut m, Request::Compact(CompactRequest { revision: Revision(3), physical: false }));
    let at = |rev| Request::Range(RangeRequest { revision: Revision(rev), ..RangeRequest::key("a") });
    assert_eq!(err(&mut m, at(2)), Refusal::Compacted);
    assert_eq!(kvs(&ok(&mut m, at(3)))[0].value, Bytes::from("2"), "the compaction revision stays readable");
    assert_eq!(err(&mut m, at(5)), Refusal::FutureRev);
    let again = Request::Compact(CompactRequest { revision: Revision(3), physical: false });
    assert_eq!(err(&mut m, again), Refusal::Compacted);
    let future = Request::Compact(CompactRequest { revision: Revision(9), physical: false });
    assert_eq!(err(&mut m, future), Refusal::FutureRev);
}

#[test]
fn revoke_deletes_attached_keys_at_one_revision() {
    let mut m = KvModel::new();
    ok(&mut m, Request::LeaseGrant(LeaseGrantRequest { ttl_s: 5, id: LeaseId(9) }));
    for k in ["a", "b"] {
        ok(&mut m, Request::Put(PutRequest { lease: LeaseId(9), ..PutRequest::new(k, "v") }));
    }
    ok(&mut m, put("c", "v"));
    let revoked = ok(&mut m, Request::LeaseRevoke(LeaseRevokeRequest { id: LeaseId(9) }));
    assert_eq!(revoked.header_revision, Revision(5));
    let all = ok(&mut m, Request::Range(RangeRequest::span(KeySpan::range("a", "\0"))));
    assert_eq!(kvs(&all).len(), 1);
    let orphan = Request::Put(PutRequest { lease: LeaseId(9), ..PutRequest::new("d", "v") });
    assert_eq!(err(&mut m, orphan), Refusal::LeaseNotFound);
}

#[test]
fn invalid_requests_are_rejected_before_touching_the_state() {
    let mut m = KvModel::new();
    assert_eq!(err(&mut m, put("", "v")), Refusal::EmptyKey);
    let dup = TxnRequest {
        success: vec![TxnOp::Put(PutRequest::new("a", "1")), TxnOp::Put(PutRequest::new("a", "2"))],
        ..TxnRequest::default()
    };
    assert_eq!(err(&mut m, Request::Txn(dup)), Refusal::DuplicateKey);
    let overlapping_deletes = TxnRequest {
        success: vec![
            TxnOp::DeleteRange(DeleteRangeRequest { span: KeySpan::range("c", "e"), prev_kv: false }),
            TxnOp::DeleteRange(DeleteRangeRequest { span: KeySpan::range("d", "f"), prev_kv: false }),
        ],
        ..TxnRequest::default()
    };
    ok(&mut m, Request::Txn(overlapping_deletes));
    let ignore = Request::Put(PutRequest { ignore_value: true, ..PutRequest::new("nope", "") });
    assert_eq!(err(&mut m, ignore), Refusal::KeyNotFound);
}

#[test]
fn undo_restores_state_and_fingerprint() {
    let mut m = KvModel::new();
    ok(&mut m, put("a", "1"));
    let before = m.fingerprint();
    let revoke_txn = Request::Txn(TxnRequest {
        success: vec![
            TxnOp::Put(PutRequest::new("b", "2")),
            TxnOp::DeleteRange(DeleteRangeRequest { span: KeySpan::single("a"), prev_kv: false }),
        ],
        ..TxnRequest::default()
    });
    let (result, undo) = m.apply(&revoke_txn, None);
    assert_eq!(result.unwrap().header_revision, Revision(3));
    assert_ne!(m.fingerprint(), before);
    m.undo(undo);
    assert_eq!(m.fingerprint(), before);
    assert_eq!(m.revision(), Revision(2));
    assert_eq!(kvs(&ok(&mut m, get("a")))[0].value, Bytes::from("1"));
    assert!(kvs(&ok(&mut m, get("b"))).is_empty());
}

#[test]
fn stale_reads_see_the_state_at_the_served_revision() {
    let mut m = KvModel::new();
    ok(&mut m, put("a", "1"));
    ok(&mut m, put("a", "2"));
    let r = m.stale_range(&RangeRequest::key("a"), Revision(2)).unwrap();
    assert_eq!(r.kvs[0].value, Bytes::from("1"));
    assert!(m.stale_range(&RangeRequest::key("a"), Revision(4)).is_none(), "no member is ahead of the store");
}
