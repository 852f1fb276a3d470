//! Leases: grants (ids, TTL bounds) and revokes, which delete every attached key at one revision.

use super::*;

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
