//! Each description against the text it must give: these are the words the trace, the verdicts and the
//! snapshots share, so a change here is a change to all of them.

use super::*;
use crate::history::*;

fn kv(key: &str, value: &str, create: i64, modified: i64, version: i64) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: value.into(),
        create_revision: Revision(create),
        mod_revision: Revision(modified),
        version,
        lease: LeaseId::NONE,
    }
}

fn ok(rev: i64, body: ResponseBody) -> Outcome {
    Outcome::Ok(Response { header_revision: Revision(rev), body })
}

#[test]
fn requests_read_as_the_trace_writes_them() {
    let get = RangeRequest {
        limit: 10,
        revision: Revision(5),
        serializable: true,
        ..RangeRequest::span(KeySpan::prefix("/a/"))
    };
    assert_eq!(request(&Request::Range(get)).to_string(), "get /a/* limit=10 rev=5 serializable");
    let put = PutRequest { lease: LeaseId(0x1f), ..PutRequest::new("/a", "1") };
    assert_eq!(request(&Request::Put(put.clone())).to_string(), "put /a=1 lease=1f");
    let nested = TxnRequest { compare: vec![], success: vec![TxnOp::Put(put)], failure: vec![] };
    let txn = TxnRequest {
        compare: vec![Compare {
            span: KeySpan::single("/a"),
            result: CompareResult::Equal,
            target: CompareTarget::Mod(Revision(5)),
        }],
        success: vec![TxnOp::Put(PutRequest::new("/a", "2")), TxnOp::Txn(nested)],
        failure: vec![TxnOp::Range(RangeRequest::key("/a"))],
    };
    assert_eq!(
        request(&Request::Txn(txn)).to_string(),
        "txn [mod(/a)==5] ? put /a=2; (txn [] ? put /a=1 lease=1f : -) : get /a"
    );
    let grant = LeaseGrantRequest { ttl_s: 5, id: LeaseId(0x2a) };
    assert_eq!(request(&Request::LeaseGrant(grant)).to_string(), "lease-grant ttl=5s id=2a");
}

#[test]
fn an_outcome_in_full_adds_the_key_values_it_carried() {
    let read = ok(3, ResponseBody::Range(RangeResult { kvs: vec![kv("/a", "1", 2, 3, 2)], more: false, count: 1 }));
    assert_eq!(outcome(&read).to_string(), "ok rev=3 kvs=1 count=1");
    assert_eq!(outcome_in_full(&read).to_string(), "ok rev=3 kvs=1 count=1 {/a=1 create=2 mod=3 ver=2}");

    let inner = TxnResult {
        succeeded: false,
        responses: vec![TxnOpResult::Range(RangeResult { kvs: vec![kv("/b", "x", 4, 4, 1)], more: false, count: 1 })],
    };
    let txn = TxnResult {
        succeeded: true,
        responses: vec![TxnOpResult::Put(PutResult { prev_kv: Some(kv("/a", "1", 2, 3, 2)) }), TxnOpResult::Txn(inner)],
    };
    let txn = ok(5, ResponseBody::Txn(txn));
    assert_eq!(outcome(&txn).to_string(), "ok rev=5 then [put,txn]");
    assert_eq!(
        outcome_in_full(&txn).to_string(),
        "ok rev=5 then [put,txn] {[1] prev /a=1 create=2 mod=3 ver=2; [2.1] /b=x create=4 mod=4 ver=1}"
    );
    assert_eq!(outcome_in_full(&ok(4, ResponseBody::Put(PutResult::default()))).to_string(), "ok rev=4");

    let refused =
        Outcome::Err(ErrorStatus::new(GrpcCode::OutOfRange, "etcdserver: mvcc: required revision has been compacted"));
    assert_eq!(
        outcome(&refused).to_string(),
        r#"err OutOfRange "etcdserver: mvcc: required revision has been compacted""#
    );
    let lost = Outcome::Unknown { reason: "no answer within 1000ms".into() };
    assert_eq!(outcome_in_full(&lost).to_string(), "unknown (no answer within 1000ms)");
}

#[test]
fn watches_and_events_read_as_the_trace_writes_them() {
    let create = WatchCreate { span: KeySpan::prefix("/a/"), start_revision: Revision(5), ..WatchCreate::default() };
    assert_eq!(watch_request(&create).to_string(), "watch /a/* from rev=5");
    let record = WatchRecord {
        client: ClientId(1),
        request: create,
        opened: Stamp { seq: 0, time: Nanos(0) },
        responses: vec![],
    };
    assert_eq!(watch(WatchId(2), &record).to_string(), "watch#2 (c1, /a/* from rev=5)");

    let put = Event { kind: EventKind::Put, kv: kv("/a/x", "1", 2, 3, 2), prev_kv: Some(kv("/a/x", "0", 2, 2, 1)) };
    assert_eq!(event(&put).to_string(), "put /a/x rev=3");
    assert_eq!(event_in_full(&put).to_string(), "put /a/x=1 rev=3 create=2 ver=2 prev=0");
    let delete = Event { kind: EventKind::Delete, kv: kv("/a/x", "", 0, 4, 0), prev_kv: None };
    assert_eq!(event_in_full(&delete).to_string(), "delete /a/x rev=4");
    assert_eq!(change(EventKind::Delete, &"/a/x".into(), Revision(4)).to_string(), event(&delete).to_string());

    let canceled = WatchResponse { canceled: true, compact_revision: Revision(3), ..WatchResponse::default() };
    assert_eq!(cancel(&canceled).to_string(), r#"canceled compact_revision=3 reason="""#);
}

#[test]
fn spans_read_as_the_trace_writes_them() {
    assert_eq!(span(&KeySpan::single("/a")).to_string(), "/a");
    assert_eq!(span(&KeySpan::prefix("/a/")).to_string(), "/a/*");
    assert_eq!(span(&KeySpan::range("/a", "\0")).to_string(), "/a..");
    assert_eq!(span(&KeySpan::range("/a", "/c")).to_string(), "/a../c");
    assert_eq!(span(&KeySpan::prefix(vec![b'a', 0xff])).to_string(), "0x61ff*");
    assert_eq!(span(&KeySpan::range("", "\0")).to_string(), "*");
}

#[test]
fn bytes_that_are_not_printable_are_hex() {
    assert_eq!(text(&Bytes::from("a b")).to_string(), "0x612062");
    assert_eq!(text(&Bytes::from("/a")).to_string(), "/a");
}
