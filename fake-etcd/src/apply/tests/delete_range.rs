//! DeleteRange: counts, previous kvs, events, and the leases of deleted keys.

use super::*;

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
