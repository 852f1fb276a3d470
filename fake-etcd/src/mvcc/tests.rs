//! Unit tests of the MVCC store and its write transactions, table-driven where the cases share a shape.

use etcd_proto::mvccpb::{event::EventType, Event, KeyValue};

use super::{prefix_end, KeyRange, MvccConfig, MvccStore, RangeOptions};
use crate::error::EtcdError;
use crate::types::{LeaseId, Revision};

fn key(k: &str) -> KeyRange {
    KeyRange::new(k.as_bytes(), b"")
}

fn span(start: &str, end: &str) -> KeyRange {
    KeyRange::new(start.as_bytes(), end.as_bytes())
}

fn all() -> KeyRange {
    KeyRange::new(b"\0", b"\0")
}

fn at(rev: i64) -> RangeOptions {
    RangeOptions { rev: Revision(rev), ..RangeOptions::default() }
}

fn put(store: &mut MvccStore, k: &str, v: &str) -> Revision {
    let mut txn = store.write();
    txn.put(k.as_bytes(), v.as_bytes().to_vec(), LeaseId::NONE);
    let rev = txn.rev();
    txn.end();
    rev
}

fn del(store: &mut MvccStore, range: &KeyRange) -> usize {
    let mut txn = store.write();
    let n = txn.delete_range(range).len();
    txn.end();
    n
}

fn kv(k: &str, v: &str, create: i64, modified: i64, version: i64) -> KeyValue {
    KeyValue {
        key: k.as_bytes().to_vec(),
        value: v.as_bytes().to_vec(),
        create_revision: create,
        mod_revision: modified,
        version,
        lease: 0,
    }
}

fn put_event(kv: KeyValue) -> Event {
    Event { r#type: EventType::Put as i32, kv: Some(kv), prev_kv: None }
}

fn delete_event(k: &str, rev: i64) -> Event {
    let kv = KeyValue { key: k.as_bytes().to_vec(), mod_revision: rev, ..KeyValue::default() };
    Event { r#type: EventType::Delete as i32, kv: Some(kv), prev_kv: None }
}

fn values(store: &MvccStore, range: &KeyRange, rev: i64) -> Vec<(String, String)> {
    let result = store.range(range, at(rev)).expect("range");
    result
        .kvs
        .iter()
        .map(|kv| (String::from_utf8(kv.key.clone()).unwrap(), String::from_utf8(kv.value.clone()).unwrap()))
        .collect()
}

/// A store shaped like transcript §1–§4: foo put five times, then /reg/{a,b,c}, then deletes.
fn sample() -> MvccStore {
    let mut s = MvccStore::new();
    put(&mut s, "foo", "bar"); // 2
    put(&mut s, "foo", "bar"); // 3
    put(&mut s, "foo", "bar2"); // 4
    put(&mut s, "/reg/a", "1"); // 5
    put(&mut s, "/reg/b", "2"); // 6
    put(&mut s, "/reg/c", "3"); // 7
    del(&mut s, &key("foo")); // 8
    put(&mut s, "foo", "again"); // 9
    s
}

#[test]
fn empty_store_starts_at_revision_one() {
    let s = MvccStore::new();
    assert_eq!(s.current_revision(), Revision(1));
    assert_eq!(s.compact_revision(), Revision(0));
    assert_eq!(s.compact_revision_raw(), Revision(-1));
    let r = s.range(&all(), at(0)).unwrap();
    assert_eq!((r.kvs.len(), r.count, r.rev), (0, 0, Revision(1)));
    assert_eq!(s.size_bytes(), 0);
}

#[test]
fn puts_bump_revision_and_version_and_recreate_resets_them() {
    let s = sample();
    assert_eq!(s.current_revision(), Revision(9));
    let cases: &[(i64, &str, Option<KeyValue>)] = &[
        (1, "foo", None),
        (2, "foo", Some(kv("foo", "bar", 2, 2, 1))),
        (3, "foo", Some(kv("foo", "bar", 2, 3, 2))),
        (7, "foo", Some(kv("foo", "bar2", 2, 4, 3))),
        (8, "foo", None),
        (9, "foo", Some(kv("foo", "again", 9, 9, 1))),
        (0, "foo", Some(kv("foo", "again", 9, 9, 1))),
        (-5, "foo", Some(kv("foo", "again", 9, 9, 1))),
        (4, "/reg/a", None),
        (5, "/reg/a", Some(kv("/reg/a", "1", 5, 5, 1))),
    ];
    for (rev, k, want) in cases {
        let r = s.range(&key(k), at(*rev)).unwrap();
        assert_eq!(r.kvs.first(), want.as_ref(), "{k} at {rev}");
        assert_eq!(r.count, want.is_some() as i64, "{k} at {rev}");
        let read = if *rev <= 0 { 9 } else { *rev };
        assert_eq!(r.rev, Revision(read));
    }
}

#[test]
fn range_shapes_limit_and_count() {
    let s = sample();
    let pairs = |v: &[(&str, &str)]| v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
    // (range, rev, expected key/values)
    type Case = (KeyRange, i64, Vec<(String, String)>);
    let cases: Vec<Case> = vec![
        (
            span("/reg/", &String::from_utf8(prefix_end(b"/reg/")).unwrap()),
            0,
            pairs(&[("/reg/a", "1"), ("/reg/b", "2"), ("/reg/c", "3")]),
        ),
        (span("/reg/a", "/reg/c"), 0, pairs(&[("/reg/a", "1"), ("/reg/b", "2")])),
        (KeyRange::new(b"/reg/b", b"\0"), 0, pairs(&[("/reg/b", "2"), ("/reg/c", "3"), ("foo", "again")])),
        (all(), 0, pairs(&[("/reg/a", "1"), ("/reg/b", "2"), ("/reg/c", "3"), ("foo", "again")])),
        (all(), 6, pairs(&[("/reg/a", "1"), ("/reg/b", "2"), ("foo", "bar2")])),
        (span("z", "a"), 0, vec![]),
        (span("/reg/a", "/reg/a"), 0, vec![]),
        (key("nosuch"), 0, vec![]),
    ];
    for (range, rev, want) in cases {
        assert_eq!(values(&s, &range, rev), want, "{range:?} at {rev}");
        let r = s.range(&range, at(rev)).unwrap();
        assert_eq!(r.count, want.len() as i64, "{range:?} at {rev}");
    }

    // Limit truncates but count covers the whole range; count_only returns no kvs; negative limit is none.
    let opts = |limit, count_only| RangeOptions { limit, count_only, ..RangeOptions::default() };
    let cases = [
        (opts(2, false), 2, 4),
        (opts(10, false), 4, 4),
        (opts(0, true), 0, 4),
        (opts(1, true), 0, 4),
        (opts(-1, false), 4, 4),
    ];
    for (o, n_kvs, count) in cases {
        let r = s.range(&all(), o).unwrap();
        assert_eq!((r.kvs.len(), r.count), (n_kvs, count), "{o:?}");
    }
    let r = s.range(&all(), opts(2, false)).unwrap();
    assert_eq!(r.kvs[1].key, b"/reg/b");
}

#[test]
fn range_revision_errors() {
    let mut s = sample();
    s.compact(Revision(5)).unwrap();
    let cases: &[(i64, Result<(), EtcdError>)] = &[
        (10, Err(EtcdError::FutureRev)),
        (9, Ok(())),
        (5, Ok(())),
        (4, Err(EtcdError::Compacted)),
        (1, Err(EtcdError::Compacted)),
        (0, Ok(())),
        (-1, Ok(())),
    ];
    for (rev, want) in cases {
        assert_eq!(s.range(&all(), at(*rev)).map(|_| ()), *want, "at {rev}");
    }
}

#[test]
fn write_txn_shares_one_revision_and_sees_its_own_writes() {
    let mut s = sample();
    let mut txn = s.write();
    assert_eq!(txn.rev(), Revision(10));
    // Before any change, the txn reads at the store's revision and its own revision is in the future.
    assert_eq!(txn.range(&all(), at(10)).unwrap_err(), EtcdError::FutureRev);
    assert_eq!(txn.range(&all(), at(0)).unwrap().rev, Revision(9));
    let prev = txn.put(b"foo", b"x".to_vec(), LeaseId(7));
    assert_eq!(prev, Some(kv("foo", "again", 9, 9, 1)));
    assert_eq!(txn.put(b"new", b"n".to_vec(), LeaseId::NONE), None);
    let deleted = txn.delete_range(&span("/reg/a", "/reg/c"));
    assert_eq!(deleted, vec![kv("/reg/a", "1", 5, 5, 1), kv("/reg/b", "2", 6, 6, 1)]);
    // Reads at the latest revision merge committed keys with the txn's writes, in key order.
    let r = txn.range(&all(), at(0)).unwrap();
    let keys: Vec<&[u8]> = r.kvs.iter().map(|kv| kv.key.as_slice()).collect();
    assert_eq!(keys, vec![&b"/reg/c"[..], b"foo", b"new"]);
    assert_eq!((r.count, r.rev), (3, Revision(10)));
    assert_eq!(txn.range(&all(), at(10)).unwrap(), r);
    let limited = txn.range(&all(), RangeOptions { limit: 2, ..RangeOptions::default() }).unwrap();
    assert_eq!((limited.kvs.len(), limited.count), (2, 3));
    // Older revisions are read from the store, untouched by the txn.
    assert_eq!(txn.range(&key("foo"), at(9)).unwrap().kvs[0].value, b"again");
    assert_eq!(txn.changes().len(), 4);
    let events = txn.end();
    let mut foo = kv("foo", "x", 9, 10, 2);
    foo.lease = 7;
    assert_eq!(
        events,
        vec![
            put_event(foo.clone()),
            put_event(kv("new", "n", 10, 10, 1)),
            delete_event("/reg/a", 10),
            delete_event("/reg/b", 10)
        ]
    );
    assert_eq!(s.current_revision(), Revision(10));
    assert_eq!(s.range(&key("foo"), at(0)).unwrap().kvs, vec![foo]);
    assert_eq!(s.events(&all(), Revision(10), Revision(10)).unwrap(), events);
}

#[test]
fn empty_or_dropped_write_txn_changes_nothing() {
    let mut s = sample();
    let hash = s.hash_kv(Revision(0)).unwrap();
    {
        let mut txn = s.write();
        assert!(txn.delete_range(&key("nosuch")).is_empty());
        assert!(txn.range(&all(), at(0)).is_ok());
        assert!(txn.end().is_empty());
    }
    {
        let mut txn = s.write();
        txn.put(b"foo", b"dropped".to_vec(), LeaseId::NONE);
        txn.delete_range(&all());
        // Dropped without `end`: discarded.
    }
    assert_eq!(s.current_revision(), Revision(9));
    assert_eq!(s.hash_kv(Revision(0)).unwrap(), hash);
    assert_eq!(values(&s, &key("foo"), 0), vec![("foo".to_string(), "again".to_string())]);
}

#[test]
fn one_key_can_change_twice_in_one_txn() {
    // etcd allows `del --from-key` and a put of a key in its range in one txn (checkIntervals never sees the
    // overlap), and a put followed by a delete of the same key from a later nested txn.
    let mut s = sample();
    let mut txn = s.write();
    assert_eq!(txn.delete_range(&KeyRange::new(b"a", b"\0")).len(), 1);
    assert_eq!(txn.put(b"foo", b"re".to_vec(), LeaseId::NONE), None);
    txn.put(b"z", b"1".to_vec(), LeaseId::NONE);
    assert_eq!(txn.delete_range(&key("z")), vec![kv("z", "1", 10, 10, 1)]);
    let events = txn.end();
    assert_eq!(
        events,
        vec![
            delete_event("foo", 10),
            put_event(kv("foo", "re", 10, 10, 1)),
            put_event(kv("z", "1", 10, 10, 1)),
            delete_event("z", 10)
        ]
    );
    assert_eq!(values(&s, &all(), 0).len(), 4);
    assert_eq!(values(&s, &key("z"), 10), vec![]);
    assert_eq!(s.events(&all(), Revision(10), Revision(10)).unwrap(), events);
    s.compact(Revision(10)).unwrap();
    assert_eq!(s.events(&all(), Revision(10), Revision(10)).unwrap(), events);
}

#[test]
fn events_filter_by_revision_and_key() {
    let s = sample();
    let cases: Vec<(KeyRange, i64, i64, Vec<Event>)> = vec![
        (
            key("foo"),
            1,
            9,
            vec![
                put_event(kv("foo", "bar", 2, 2, 1)),
                put_event(kv("foo", "bar", 2, 3, 2)),
                put_event(kv("foo", "bar2", 2, 4, 3)),
                delete_event("foo", 8),
                put_event(kv("foo", "again", 9, 9, 1)),
            ],
        ),
        (all(), 6, 7, vec![put_event(kv("/reg/b", "2", 6, 6, 1)), put_event(kv("/reg/c", "3", 7, 7, 1))]),
        (span("/reg/b", "/reg/c"), 1, 100, vec![put_event(kv("/reg/b", "2", 6, 6, 1))]),
        (all(), 8, 8, vec![delete_event("foo", 8)]),
        (all(), 10, 20, vec![]),
        (all(), 7, 6, vec![]),
    ];
    for (range, from, to, want) in cases {
        assert_eq!(s.events(&range, Revision(from), Revision(to)).unwrap(), want, "{range:?} [{from}, {to}]");
    }
}

#[test]
fn event_batches_hold_whole_revisions_and_say_where_the_rest_begins() {
    let mut s = MvccStore::new();
    for ops in [&["a"][..], &["b", "c"], &["a", "b", "c"], &["c"]] {
        let mut txn = s.write();
        for k in ops {
            txn.put(k.as_bytes(), b"v".to_vec(), LeaseId::NONE);
        }
        txn.end(); // revisions 2, 3 (two events), 4 (three), 5
    }
    let revs = |events: &[Event]| events.iter().map(|e| e.kv.as_ref().unwrap().mod_revision).collect::<Vec<_>>();
    let batch = |from, max| {
        let (events, rest) = s.events_batch(&all(), Revision(from), Revision(5), max).unwrap();
        (revs(&events), rest.map(|r| r.0))
    };
    assert_eq!(batch(2, 1), (vec![2], Some(3)));
    assert_eq!(batch(3, 1), (vec![3, 3], Some(4)));
    assert_eq!(batch(2, 2), (vec![2, 3, 3], Some(4)));
    assert_eq!(batch(4, 2), (vec![4, 4, 4, 5], None));
    assert_eq!(batch(2, 4), (revs(&s.events(&all(), Revision(2), Revision(5)).unwrap()), None));
    assert_eq!(batch(6, 1), (vec![], None));
    // Revisions without an event in the range are not counted.
    let (events, rest) = s.events_batch(&key("c"), Revision(2), Revision(5), 2).unwrap();
    assert_eq!((revs(&events), rest), (vec![3, 4], Some(Revision(5))));
    s.compact(Revision(3)).unwrap();
    assert_eq!(s.events_batch(&all(), Revision(2), Revision(5), 1), Err(EtcdError::Compacted));
}

#[test]
fn compaction_keeps_a_delete_at_the_compaction_revision_for_watchers() {
    // etcd #18089: PUT k v2 (r2), PUT k v3, PUT k v4, DELETE k (r5), PUT k v6 (r6),
    // COMPACT r5, then a watch from r5 must still see the DELETE at r5.
    let mut s = MvccStore::new();
    for v in ["v2", "v3", "v4"] {
        put(&mut s, "k", v);
    }
    assert_eq!(del(&mut s, &key("k")), 1);
    put(&mut s, "k", "v6");
    s.compact(Revision(5)).unwrap();
    assert_eq!(
        s.events(&all(), Revision(5), Revision(6)).unwrap(),
        vec![delete_event("k", 5), put_event(kv("k", "v6", 6, 6, 1))]
    );
    assert_eq!(s.events(&all(), Revision(4), Revision(6)).unwrap_err(), EtcdError::Compacted);
    // A range at the compaction revision does not return the deleted key, and one below fails.
    assert_eq!(s.range(&key("k"), at(5)).unwrap().count, 0);
    assert_eq!(s.range(&key("k"), at(4)).unwrap_err(), EtcdError::Compacted);
    // The next compaction forgets that tombstone.
    s.compact(Revision(6)).unwrap();
    assert_eq!(s.events(&all(), Revision(6), Revision(6)).unwrap(), vec![put_event(kv("k", "v6", 6, 6, 1))]);
}

/// The etcd #18089 history in a store with `config`: PUT k v2 (r2), v3, v4, DELETE k (r5), PUT k v6 (r6).
fn history_18089(config: MvccConfig) -> MvccStore {
    let mut s = MvccStore::with_config(config);
    for v in ["v2", "v3", "v4"] {
        put(&mut s, "k", v);
    }
    assert_eq!(del(&mut s, &key("k")), 1);
    put(&mut s, "k", "v6");
    s
}

/// The two compaction bug switches, each against the fixed behaviour: `compaction-drops-delete-tombstone`
/// (etcd #18089) loses the tombstone at the compaction revision when compacting, and
/// `watch-at-compaction-misses-delete` (etcd #19179) keeps it through the compaction and loses it when the
/// store is restored from a snapshot, as etcd finishing an interrupted compaction at restart did.
#[test]
fn compaction_bug_switches_lose_the_tombstone_at_the_compaction_revision() {
    let with_delete = vec![delete_event("k", 5), put_event(kv("k", "v6", 6, 6, 1))];
    let without = vec![put_event(kv("k", "v6", 6, 6, 1))];
    let dropping = MvccConfig { compaction_drops_tombstone_at_revision: true, ..MvccConfig::default() };
    let restoring = MvccConfig { restore_drops_tombstones_at_compaction: true, ..MvccConfig::default() };
    // (config, events from r5 after the compaction, events from r5 after a restore)
    let cases = [
        (MvccConfig::default(), &with_delete, &with_delete),
        (dropping, &without, &without),
        (restoring, &with_delete, &without),
    ];
    for (config, compacted, restored) in cases {
        let mut s = history_18089(config);
        s.compact(Revision(5)).unwrap();
        assert_eq!(&s.events(&all(), Revision(5), Revision(6)).unwrap(), compacted, "{config:?}: compacted");
        // Nothing else changes: the live key, and reads at the compaction revision.
        assert_eq!(values(&s, &all(), 0), vec![("k".to_string(), "v6".to_string())], "{config:?}");
        assert_eq!(s.range(&key("k"), at(5)).unwrap().count, 0, "{config:?}");

        let bytes = bincode::serialize(&s).unwrap();
        let mut member = MvccStore::with_config(config);
        member.adopt(bincode::deserialize(&bytes).unwrap());
        assert_eq!(&member.events(&all(), Revision(5), Revision(6)).unwrap(), restored, "{config:?}: restored");
        assert_eq!(values(&member, &all(), 0), vec![("k".to_string(), "v6".to_string())], "{config:?}");
    }
}

#[test]
fn compaction_keeps_newest_version_at_or_before_its_revision() {
    let mut s = sample();
    let size_before = s.size_bytes();
    s.compact(Revision(7)).unwrap();
    assert!(s.size_bytes() < size_before);
    assert_eq!(s.compact_revision(), Revision(7));
    let want = [("/reg/a", "1"), ("/reg/b", "2"), ("/reg/c", "3"), ("foo", "bar2")];
    let want: Vec<(String, String)> = want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert_eq!(values(&s, &all(), 7), want);
    // Older puts of foo are gone from the event history, the kept ones are still there.
    let events = s.events(&all(), Revision(7), Revision(9)).unwrap();
    assert_eq!(
        events,
        vec![put_event(kv("/reg/c", "3", 7, 7, 1)), delete_event("foo", 8), put_event(kv("foo", "again", 9, 9, 1))]
    );
    // Reads after compaction still see the right data at every readable revision.
    assert_eq!(values(&s, &key("foo"), 8), vec![]);
    assert_eq!(values(&s, &key("foo"), 9), vec![("foo".to_string(), "again".to_string())]);
    // Compacting at a revision whose newest change is a delete drops the key from the index entirely.
    s.compact(Revision(8)).unwrap();
    assert_eq!(values(&s, &key("foo"), 8), vec![]);
    assert_eq!(
        s.events(&all(), Revision(8), Revision(9)).unwrap(),
        vec![delete_event("foo", 8), put_event(kv("foo", "again", 9, 9, 1))]
    );
}

#[test]
fn compaction_errors_leave_the_store_unchanged() {
    // (setup compactions, request, expected)
    let cases: &[(&[i64], i64, Result<(), EtcdError>)] = &[
        (&[], 0, Ok(())),
        (&[], -1, Err(EtcdError::Compacted)),
        (&[0], 0, Err(EtcdError::Compacted)),
        (&[], 9, Ok(())),
        (&[], 10, Err(EtcdError::FutureRev)),
        (&[5], 5, Err(EtcdError::Compacted)),
        (&[5], 4, Err(EtcdError::Compacted)),
        (&[5], 6, Ok(())),
        (&[5], 100, Err(EtcdError::FutureRev)),
    ];
    for (setup, rev, want) in cases {
        let mut s = sample();
        for r in *setup {
            s.compact(Revision(*r)).unwrap();
        }
        let before = (s.compact_revision_raw(), s.hash_kv(Revision(0)).unwrap(), s.size_bytes());
        assert_eq!(s.compact(Revision(*rev)), *want, "after {setup:?}, compact {rev}");
        if want.is_err() {
            assert_eq!((s.compact_revision_raw(), s.hash_kv(Revision(0)).unwrap(), s.size_bytes()), before);
        } else {
            assert_eq!(s.compact_revision_raw(), Revision(*rev));
        }
    }
}

/// etcdctl prints the `hash` field only when it is non-zero, and real etcd's never is.
#[test]
fn hash_kv_of_an_empty_store_is_not_zero() {
    let (hash, compact) = MvccStore::new().hash_kv(Revision(0)).unwrap();
    assert_ne!(hash, 0);
    assert_eq!(compact, Revision(-1));
}

#[test]
fn hash_kv_is_a_function_of_history() {
    let a = sample();
    let b = sample();
    assert_eq!(a.hash_kv(Revision(0)).unwrap(), b.hash_kv(Revision(0)).unwrap());
    assert_eq!(a.hash_kv(Revision(0)).unwrap().1, Revision(-1));
    assert_eq!(a.hash_kv(Revision(9)).unwrap(), a.hash_kv(Revision(0)).unwrap());
    assert_ne!(a.hash_kv(Revision(8)).unwrap().0, a.hash_kv(Revision(9)).unwrap().0);
    let mut c = sample();
    put(&mut c, "foo", "different");
    assert_ne!(c.hash_kv(Revision(9)).unwrap().0, c.hash_kv(Revision(10)).unwrap().0);
    assert_eq!(c.hash_kv(Revision(9)).unwrap(), a.hash_kv(Revision(9)).unwrap());
    c.compact(Revision(5)).unwrap();
    let cases: &[(i64, Result<Revision, EtcdError>)] = &[
        (4, Err(EtcdError::Compacted)),
        (5, Err(EtcdError::Compacted)),
        (6, Ok(Revision(5))),
        (11, Err(EtcdError::FutureRev)),
        (0, Ok(Revision(5))),
    ];
    for (rev, want) in cases {
        assert_eq!(c.hash_kv(Revision(*rev)).map(|(_, compacted)| compacted), *want, "hash at {rev}");
    }
}

#[test]
fn key_range_and_prefix_end() {
    type Case<'a> = (&'a [u8], &'a [u8], &'a [u8], bool);
    let cases: &[Case] = &[
        (b"a", b"", b"a", true),
        (b"a", b"", b"ab", false),
        (b"a", b"c", b"b", true),
        (b"a", b"c", b"c", false),
        (b"a", b"\0", b"zzz", true),
        (b"b", b"\0", b"a", false),
        (b"\0", b"\0", b"\0", true),
        (b"c", b"a", b"b", false),
    ];
    for (k, end, probe, want) in cases {
        assert_eq!(KeyRange::new(k, end).contains(probe), *want, "{k:?}..{end:?} contains {probe:?}");
    }
    assert_eq!(prefix_end(b"/reg/"), b"/reg0");
    assert_eq!(prefix_end(b"a\xff"), b"b");
    assert_eq!(prefix_end(b"\xff\xff"), b"\0");
}
