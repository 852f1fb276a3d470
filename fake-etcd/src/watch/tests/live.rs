//! Live delivery to synced watchers: one response per revision, filters, prev_kv, transactions, cancel.

use etcd_proto::etcdserverpb::watch_create_request::FilterType;

use super::*;

fn filtered(filters: &[FilterType]) -> WatchCreateRequest {
    WatchCreateRequest { filters: filters.iter().map(|f| *f as i32).collect(), ..create("a", "", 0) }
}

/// Each live response carries the revision of its events; a revision the watcher does not care about
/// sends nothing.
#[test]
fn live_events_one_response_per_revision() {
    let mut h = Harness::new();
    let s = h.open();
    assert_eq!(h.watch(s, create("a", "", 0)), lines(&["id=0 rev=1 created"]));
    assert_eq!(h.put("a", "1"), lines(&["s0 id=0 rev=2 [PUT a=1@2]"]));
    assert_eq!(h.put("b", "1"), NONE);
    assert_eq!(h.put("a", "2"), lines(&["s0 id=0 rev=4 [PUT a=2@4]"]));
    assert_eq!(h.del("a"), lines(&["s0 id=0 rev=5 [DEL a@5]"]));
    // A delete of a missing key changes nothing, so there is no revision and nothing to send.
    assert_eq!(h.del("a"), NONE);
    assert_eq!(h.rev(), 5);
}

/// NOPUT and NODELETE drop events; a response left without events is not sent.
#[test]
fn filters() {
    let cases: &[(&[FilterType], &[&str])] = &[
        (&[], &["s0 id=0 rev=2 [PUT a=1@2]", "s0 id=0 rev=3 [DEL a@3]", "s0 id=0 rev=4 [PUT a=2@4, DEL a@4]"]),
        (&[FilterType::Noput], &["s0 id=0 rev=3 [DEL a@3]", "s0 id=0 rev=4 [DEL a@4]"]),
        (&[FilterType::Nodelete], &["s0 id=0 rev=2 [PUT a=1@2]", "s0 id=0 rev=4 [PUT a=2@4]"]),
        (&[FilterType::Noput, FilterType::Nodelete], NONE),
    ];
    for &(filters, expected) in cases {
        let mut h = Harness::new();
        let s = h.open();
        h.watch(s, filtered(filters));
        let mut seen = h.put("a", "1");
        seen.extend(h.del("a"));
        seen.extend(h.txn(&[Op::Put("a", "2"), Op::Del("a")]));
        assert_eq!(seen, lines(expected), "filters {filters:?}");
    }
}

/// prev_kv is the key at `mod_revision - 1`: none for a creation, the old value for an update or delete.
#[test]
fn prev_kv_live() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, WatchCreateRequest { prev_kv: true, ..create("a", "", 0) });
    h.watch(s, create("a", "", 0));
    assert_eq!(h.put("a", "1"), lines(&["s0 id=0 rev=2 [PUT a=1@2]", "s0 id=1 rev=2 [PUT a=1@2]"]));
    assert_eq!(h.put("a", "2"), lines(&["s0 id=0 rev=3 [PUT a=2@3 prev(a=1@2)]", "s0 id=1 rev=3 [PUT a=2@3]"]));
    assert_eq!(h.del("a"), lines(&["s0 id=0 rev=4 [DEL a@4 prev(a=2@3)]", "s0 id=1 rev=4 [DEL a@4]"]));
    // Created again: a creation, so no prev_kv although the key existed before.
    assert_eq!(h.put("a", "3"), lines(&["s0 id=0 rev=5 [PUT a=3@5]", "s0 id=1 rev=5 [PUT a=3@5]"]));
}

/// All changes of one transaction share a revision and reach a watcher in one response, in op order,
/// with prev_kv read per key.
#[test]
fn txn_is_one_response() {
    let mut h = Harness::new();
    h.txn(&[Op::Put("a", "0"), Op::Put("c", "0")]);
    let s = h.open();
    h.watch(s, WatchCreateRequest { prev_kv: true, ..create("a", "z", 0) });
    h.watch(s, create("c", "", 0));
    h.watch(s, create("x", "", 0));
    assert_eq!(
        h.txn(&[Op::Put("b", "1"), Op::Put("a", "1"), Op::Del("c")]),
        lines(&["s0 id=0 rev=3 [PUT b=1@3, PUT a=1@3 prev(a=0@2), DEL c@3 prev(c=0@2)]", "s0 id=1 rev=3 [DEL c@3]"])
    );
    assert_eq!(h.txn(&[Op::DelRange("a", "c")]), lines(&["s0 id=0 rev=4 [DEL a@4 prev(a=1@3), DEL b@4 prev(b=1@3)]"]));
}

/// A cancel is answered at the current revision and stops delivery; an unknown id gets no answer.
#[test]
fn cancel() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, create("a", "", 0));
    h.watch(s, create("a", "", 0));
    h.put("a", "1");
    assert_eq!(h.cancel(s, 0), lines(&["id=0 rev=2 canceled"]));
    assert_eq!(h.put("a", "2"), lines(&["s0 id=1 rev=3 [PUT a=2@3]"]));
    assert_eq!(h.cancel(s, 0), NONE, "already canceled");
    assert_eq!(h.cancel(s, 9), NONE, "never existed");
    assert_eq!(h.cancel(s, -1), NONE);
    assert_eq!(h.hub.watcher_count(), 1);
    assert_eq!(h.cancel(s, 1), lines(&["id=1 rev=3 canceled"]));
    assert_eq!(h.put("a", "3"), NONE);
    assert_eq!(h.hub.watcher_count(), 0);
}
