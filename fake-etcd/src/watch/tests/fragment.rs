//! Fragmenting: only for watchers that asked, only for responses at or above `max_request_bytes` with at
//! least two events; every piece but the last says `fragment`.

use super::super::wire_size::response_len;
use super::*;

const LIMIT: usize = 200;

/// (fragment flag, events) per response.
type Shape = Vec<(bool, usize)>;

/// The shape of the responses for one watch id.
fn shape(sent: &[(StreamId, WatchResponse)], watch_id: i64) -> Shape {
    sent.iter().filter(|(_, r)| r.watch_id == watch_id).map(|(_, r)| (r.fragment, r.events.len())).collect()
}

fn commit(h: &mut Harness, ops: &[Op<'_>]) -> Vec<(StreamId, WatchResponse)> {
    let events = {
        let mut txn = h.store.write();
        for op in ops {
            if let Op::Put(k, v) = *op {
                txn.put(k.as_bytes(), v.as_bytes().to_vec(), LeaseId::NONE);
            }
        }
        txn.end()
    };
    h.hub.notify(&events, &h.store)
}

#[test]
fn large_responses_are_fragmented_for_watchers_that_asked() {
    let mut h = Harness::with_config(HubConfig { max_request_bytes: LIMIT, ..HubConfig::default() });
    let s = h.open();
    h.watch(s, WatchCreateRequest { fragment: true, ..create("a", "z", 0) });
    h.watch(s, create("a", "z", 0));
    let big = "x".repeat(80);
    // About 95 encoded bytes per event: two fit under the limit, three do not.
    let cases: &[(&[&str], Shape)] = &[
        (&["a"], vec![(false, 1)]),
        (&["a", "b"], vec![(false, 2)]),
        (&["a", "b", "c"], vec![(true, 2), (false, 1)]),
        (&["a", "b", "c", "d", "e"], vec![(true, 2), (true, 2), (false, 1)]),
    ];
    for (keys, expected) in cases {
        let ops: Vec<Op<'_>> = keys.iter().map(|k| Op::Put(k, &big)).collect();
        let sent = commit(&mut h, &ops);
        assert_eq!(shape(&sent, 0), *expected, "keys {keys:?}: fragmenting watcher");
        assert_eq!(shape(&sent, 1), vec![(false, keys.len())], "keys {keys:?}: the other watcher gets it whole");
        let rev = h.rev();
        for (_, piece) in sent.iter().filter(|(_, r)| r.watch_id == 0) {
            assert_eq!(piece.header.as_ref().unwrap().revision, rev, "every piece has the revision");
            assert!(piece.events.len() == 1 || response_len(piece) < LIMIT, "a piece of several events fits");
        }
        let joined: Vec<_> = sent.iter().filter(|(_, r)| r.watch_id == 0).flat_map(|(_, r)| r.events.clone()).collect();
        let whole: Vec<_> = sent.iter().filter(|(_, r)| r.watch_id == 1).flat_map(|(_, r)| r.events.clone()).collect();
        assert_eq!(joined, whole, "the pieces join to the whole response");
    }
    // One event alone is never split, however large.
    let huge = "x".repeat(4 * LIMIT);
    let sent = commit(&mut h, &[Op::Put("a", &huge)]);
    assert_eq!(shape(&sent, 0), vec![(false, 1)]);
}

/// Catch-up responses are fragmented the same way.
#[test]
fn catch_up_is_fragmented() {
    let mut h = Harness::with_config(HubConfig { max_request_bytes: LIMIT, ..HubConfig::default() });
    let big = "x".repeat(80);
    for k in ["a", "b", "c"] {
        h.put(k, &big);
    }
    let s = h.open();
    let req = WatchCreateRequest { fragment: true, ..create("a", "z", 2) };
    let sent =
        h.hub.handle(s, WatchRequest { request_union: Some(RequestUnion::CreateRequest(req)) }, &h.store, usize::MAX);
    let shape: Vec<(bool, bool, usize, i64)> =
        sent.iter().map(|r| (r.created, r.fragment, r.events.len(), r.header.as_ref().unwrap().revision)).collect();
    assert_eq!(shape, vec![(true, false, 0, 4), (false, true, 2, 4), (false, false, 1, 4)]);
}
