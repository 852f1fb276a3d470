//! Progress notifications: the periodic tick, and requests that wait until the stream is synced
//! (etcd #15220, fixed; and with its bug switch on).

use super::*;

fn notifying(key: &str, start: i64) -> WatchCreateRequest {
    WatchCreateRequest { progress_notify: true, ..create(key, "", start) }
}

/// A tick reaches synced watchers with progress_notify that got no events since the previous tick.
#[test]
fn tick_rules() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, notifying("a", 0));
    h.watch(s, create("a", "", 0));
    h.watch(s, notifying("b", 0));
    h.watch(s, WatchCreateRequest { filters: vec![0], ..notifying("a", 0) });
    assert_eq!(h.tick(), lines(&["s0 id=0 rev=1", "s0 id=2 rev=1", "s0 id=3 rev=1"]));
    h.put("a", "1");
    // Watcher 0 got an event; watcher 3 filtered it out, so it got none.
    assert_eq!(h.tick(), lines(&["s0 id=2 rev=2", "s0 id=3 rev=2"]));
    assert_eq!(h.tick(), lines(&["s0 id=0 rev=2", "s0 id=2 rev=2", "s0 id=3 rev=2"]));
    h.put("b", "1");
    h.put("a", "2");
    assert_eq!(h.tick(), lines(&["s0 id=3 rev=4"]));
}

/// Unsynced watchers get no tick; catch-up events count as events.
#[test]
fn tick_skips_unsynced_watchers() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, notifying("a", 0));
    h.watch(s, notifying("b", 0));
    h.hub.stall(s);
    h.put("a", "1");
    assert_eq!(h.tick(), NONE);
    assert_eq!(h.sync(Some(s)), lines(&["s0 id=0 rev=2 [PUT a=1@2]"]));
    assert_eq!(h.tick(), lines(&["s0 id=1 rev=2"]));
    assert_eq!(h.tick(), lines(&["s0 id=0 rev=2", "s0 id=1 rev=2"]));
}

/// A watcher waiting for a future start revision gets no progress below it (etcd #20221, fixed in 3.4):
/// neither ticks nor answers to requests, until the store reaches its start.
#[test]
fn future_watcher_gets_no_progress_before_its_start() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, notifying("a", 3));
    assert_eq!(h.tick(), NONE);
    assert_eq!(h.request_progress(s), NONE);
    assert_eq!(h.put("b", "1"), NONE, "store at 2, start 3");
    assert_eq!(h.tick(), NONE);
    // Revision 3 does not touch a, but the store reached the start: the waiting request is answered.
    assert_eq!(h.put("b", "2"), lines(&["s0 id=-1 rev=3"]));
    assert_eq!(h.tick(), lines(&["s0 id=0 rev=3"]));

    // An explicit start of current + 1 counts as in the future too (unlike a start of 0), as in etcd.
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, notifying("a", 2));
    h.watch(s, notifying("a", 0));
    assert_eq!(h.tick(), lines(&["s0 id=1 rev=1"]));
    assert_eq!(h.request_progress(s), NONE);
    assert_eq!(h.put("b", "1"), lines(&["s0 id=-1 rev=2"]));
    assert_eq!(h.tick(), lines(&["s0 id=0 rev=2", "s0 id=1 rev=2"]));
}

/// A progress request is answered at once when every watcher on the stream is synced; not at all on a
/// stream without watchers.
#[test]
fn request_on_synced_stream() {
    let mut h = Harness::new();
    let s = h.open();
    assert_eq!(h.request_progress(s), NONE, "no watcher");
    h.watch(s, create("a", "", 0));
    h.put("b", "1");
    assert_eq!(h.request_progress(s), lines(&["id=-1 rev=2"]));
    assert_eq!(h.request_progress(s), lines(&["id=-1 rev=2"]));
}

/// While a watcher of the stream is behind, a progress request waits; `sync` answers it after the catch-up
/// events, once, however many requests came. Other streams are not concerned.
#[test]
fn request_waits_until_synced() {
    let mut h = Harness::new();
    let s = h.open();
    let other = h.open();
    h.watch(s, create("a", "", 0));
    h.watch(s, create("b", "", 0));
    h.watch(other, create("a", "", 0));
    h.hub.stall(s);
    h.put("a", "1");
    assert_eq!(h.request_progress(s), NONE);
    assert_eq!(h.request_progress(s), NONE);
    assert_eq!(h.request_progress(other), lines(&["id=-1 rev=2"]));
    assert_eq!(h.put("a", "2"), lines(&["s1 id=0 rev=3 [PUT a=2@3]"]));
    assert_eq!(h.sync(None), NONE, "still stalled");
    assert_eq!(h.sync(Some(s)), lines(&["s0 id=0 rev=3 [PUT a=1@2, PUT a=2@3]", "s0 id=-1 rev=3"]));
    assert_eq!(h.sync(None), NONE, "answered once");
    assert_eq!(h.put("a", "3"), lines(&["s0 id=0 rev=4 [PUT a=3@4]", "s1 id=0 rev=4 [PUT a=3@4]"]));
}

/// Canceling the watcher that held a request back lets it through; canceling the last watcher drops it.
#[test]
fn request_after_cancel() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, create("a", "", 0));
    h.watch(s, create("b", "", 9));
    assert_eq!(h.request_progress(s), NONE);
    assert_eq!(h.cancel(s, 1), lines(&["id=1 rev=1 canceled", "id=-1 rev=1"]));

    h.watch(s, create("b", "", 9));
    assert_eq!(h.request_progress(s), NONE);
    assert_eq!(h.cancel(s, 0), lines(&["id=0 rev=1 canceled"]));
    assert_eq!(h.cancel(s, 2), lines(&["id=2 rev=1 canceled"]), "no watcher left: no progress answer");
    h.watch(s, create("a", "", 0));
    assert_eq!(h.put("a", "1"), lines(&["s0 id=3 rev=2 [PUT a=1@2]"]), "the dropped request stays dropped");
}

/// `progress-before-unsynced-events` (etcd #15220): with the switch on, a progress request on a stream whose
/// watcher is behind is answered at once with the current revision, ahead of the catch-up events that
/// follow it, so a client would take revision 3 as seen before it got `a=1@2` and `a=2@3`. Off, the answer
/// waits for the catch-up.
#[test]
fn progress_before_unsynced_events_switch() {
    let cases: [(bool, &[&str], &[&str]); 2] = [
        (false, NONE, &["s0 id=0 rev=3 [PUT a=1@2, PUT a=2@3]", "s0 id=-1 rev=3"]),
        (true, &["id=-1 rev=3"], &["s0 id=0 rev=3 [PUT a=1@2, PUT a=2@3]"]),
    ];
    for (bug, answer, sync) in cases {
        let mut h = Harness::with_config(HubConfig { progress_ignores_unsynced: bug, ..HubConfig::default() });
        let s = h.open();
        h.watch(s, create("a", "", 0));
        h.hub.stall(s);
        h.put("a", "1");
        h.put("a", "2");
        assert_eq!(h.request_progress(s), lines(answer), "switch {bug}: the request");
        assert_eq!(h.sync(Some(s)), lines(sync), "switch {bug}: the catch-up");
    }
}
