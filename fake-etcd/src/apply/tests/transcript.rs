//! The transcript of real etcd 3.4.23 (recorded with etcdctl 3.4.23; `tests/etcdctl/` replays the same against both) replayed against the
//! state machine: puts, gets, deletes, txns and a compaction, with the revisions and responses etcd gave.

use super::*;

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
