//! Put: leases, the ignore-value and ignore-lease flags, and the events a put produces.

use super::*;

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
