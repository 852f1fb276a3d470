//! Compact: the revision rules it refuses and the history it keeps for watchers.

use super::*;

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
    // Compacting at a delete keeps that delete for watchers (etcd #18089), but a range does not see it.
    let mut s = sm();
    put_kv(&mut s, "k", "1");
    del(&mut s, del_req("k", ""));
    compact(&mut s, 3).unwrap();
    let events = s.mvcc.events(&crate::mvcc::KeyRange::new(b"k", b""), Revision(3), Revision(3)).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].r#type, EventType::Delete as i32);
    assert_eq!(s.range(&RangeRequest { revision: 3, ..get_req("k") }).unwrap().count, 0);
}
