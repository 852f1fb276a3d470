//! Txn: compares (value, version, create and mod revisions, leases, ranges), one revision per txn, later ops
//! seeing earlier writes, nested txns, and errors that fail the whole txn without a partial write.

use super::*;

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
