//! Several streams: independent ids, output in stream then watch-id order, closing drops watchers.

use super::*;

#[test]
fn output_order_is_stream_then_watch_id() {
    let mut h = Harness::new();
    let s0 = h.open();
    let s1 = h.open();
    let s2 = h.open();
    // Created out of order, on purpose.
    h.watch(s2, create("a", "", 0));
    h.watch(s1, WatchCreateRequest { watch_id: 7, ..create("a", "", 0) });
    h.watch(s1, create("a", "b", 0));
    h.watch(s0, create("b", "", 0));
    h.watch(s1, WatchCreateRequest { watch_id: -3, ..create("", "\0", 0) });
    assert_eq!(
        h.txn(&[Op::Put("b", "1"), Op::Put("a", "1")]),
        lines(&[
            "s0 id=0 rev=2 [PUT b=1@2]",
            "s1 id=-3 rev=2 [PUT b=1@2, PUT a=1@2]",
            "s1 id=0 rev=2 [PUT a=1@2]",
            "s1 id=7 rev=2 [PUT a=1@2]",
            "s2 id=0 rev=2 [PUT a=1@2]",
        ])
    );
    assert_eq!(h.hub.watcher_count(), 5);
    h.hub.close_stream(s1);
    assert_eq!(h.hub.watcher_count(), 2);
    assert_eq!(h.put("a", "2"), lines(&["s2 id=0 rev=3 [PUT a=2@3]"]));
    // Closing twice, or an unknown stream, is harmless.
    h.hub.close_stream(s1);
    h.hub.close_stream(99);
    h.hub.stall(99);
    assert_eq!(h.sync(Some(99)), NONE);
    // Stream ids are not reused.
    assert_eq!(h.open(), 3);
}

/// Each stream catches up on its own; a stall on one does not hold the others back.
#[test]
fn streams_sync_independently() {
    let mut h = Harness::new();
    let s0 = h.open();
    let s1 = h.open();
    h.watch(s0, create("a", "", 0));
    h.watch(s1, create("a", "", 0));
    h.hub.stall(s0);
    h.hub.stall(s1);
    h.put("a", "1");
    assert_eq!(h.sync(Some(s1)), lines(&["s1 id=0 rev=2 [PUT a=1@2]"]));
    assert_eq!(h.put("a", "2"), lines(&["s1 id=0 rev=3 [PUT a=2@3]"]));
    assert_eq!(h.sync(Some(s0)), lines(&["s0 id=0 rev=3 [PUT a=1@2, PUT a=2@3]"]));
}
