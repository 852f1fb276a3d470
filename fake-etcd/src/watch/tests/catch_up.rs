//! Catching up from history: batching by revisions, header revisions, filters and prev_kv on the way.

use etcd_proto::etcdserverpb::watch_create_request::FilterType;

use super::*;

/// Catch-up responses carry the current revision in their header, even when their last event is older;
/// live responses afterwards carry their own revision.
#[test]
fn header_revision_catch_up_vs_live() {
    let mut h = Harness::new();
    h.put("a", "1");
    h.put("b", "1");
    h.put("b", "2");
    let s = h.open();
    assert_eq!(h.watch(s, create("a", "", 1)), lines(&["id=0 rev=4 created", "id=0 rev=4 [PUT a=1@2]"]));
    assert_eq!(h.put("a", "2"), lines(&["s0 id=0 rev=5 [PUT a=2@5]"]));
}

/// A long history goes out in responses of at most 1,000 revisions each, all with the current revision.
#[test]
fn batches_of_1000_revisions() {
    let mut h = Harness::new();
    h.puts("a", 2_500);
    assert_eq!(h.rev(), 2_501);
    let s = h.open();
    let sent = h.hub.handle(
        s,
        WatchRequest { request_union: Some(RequestUnion::CreateRequest(create("a", "", 2))) },
        &h.store,
        usize::MAX,
    );
    let summary: Vec<(i64, usize, i64, i64)> = sent
        .iter()
        .map(|r| {
            let revs = r.events.iter().map(|e| e.kv.as_ref().unwrap().mod_revision).collect::<Vec<_>>();
            (
                r.header.as_ref().unwrap().revision,
                r.events.len(),
                revs.first().copied().unwrap_or(0),
                revs.last().copied().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![(2_501, 0, 0, 0), (2_501, 1_000, 2, 1_001), (2_501, 1_000, 1_002, 2_001), (2_501, 500, 2_002, 2_501)]
    );
    assert!(sent[0].created);
}

/// Batches count distinct revisions, so a transaction is never split; filters apply after batching, as in
/// etcd, so a batch the filters empty is not sent and the others keep their shape.
#[test]
fn batches_keep_revisions_whole_and_filter_after_batching() {
    let config = HubConfig { batch_max_revs: 2, ..HubConfig::default() };
    let cases: &[(&[FilterType], &[&str])] = &[
        (&[], &["id=0 rev=5 [PUT a=1@2, PUT b=1@2, DEL a@3]", "id=0 rev=5 [PUT a=2@4, PUT b=2@5, DEL b@5]"]),
        (&[FilterType::Nodelete], &["id=0 rev=5 [PUT a=1@2, PUT b=1@2]", "id=0 rev=5 [PUT a=2@4, PUT b=2@5]"]),
        (&[FilterType::Noput], &["id=0 rev=5 [DEL a@3]", "id=0 rev=5 [DEL b@5]"]),
    ];
    for &(filters, expected) in cases {
        let mut h = Harness::with_config(config);
        h.txn(&[Op::Put("a", "1"), Op::Put("b", "1")]);
        h.del("a");
        h.put("a", "2");
        h.txn(&[Op::Put("b", "2"), Op::Del("b")]);
        let s = h.open();
        let req = WatchCreateRequest { filters: filters.iter().map(|f| *f as i32).collect(), ..create("a", "c", 2) };
        let mut expected = lines(expected);
        expected.insert(0, "id=0 rev=5 created".to_owned());
        assert_eq!(h.watch(s, req), expected, "filters {filters:?}");
    }
    // With revisions 2 and 3 filtered out entirely, the first batch is not sent at all.
    let mut h = Harness::with_config(config);
    h.put("a", "1");
    h.put("a", "2");
    h.del("a");
    let s = h.open();
    let req = WatchCreateRequest { filters: vec![FilterType::Noput as i32], ..create("a", "", 2) };
    assert_eq!(h.watch(s, req), lines(&["id=0 rev=4 created", "id=0 rev=4 [DEL a@4]"]));
}

/// prev_kv during catch-up reads the same history as live.
#[test]
fn prev_kv_catch_up() {
    let mut h = Harness::new();
    h.put("a", "1");
    h.put("a", "2");
    h.del("a");
    h.put("a", "3");
    let s = h.open();
    let req = WatchCreateRequest { prev_kv: true, ..create("a", "", 2) };
    assert_eq!(
        h.watch(s, req),
        lines(&["id=0 rev=5 created", "id=0 rev=5 [PUT a=1@2, PUT a=2@3 prev(a=1@2), DEL a@4 prev(a=2@3), PUT a=3@5]"])
    );
}

/// A drained stream's watchers catch up a batch each per round, in watch-id order, only as far as the
/// stream's outbox has room; a stream that runs out of room stalls again and goes on at the next sync, so
/// its backlog is never built all at once. Every event still arrives once and in order, and a progress
/// request waits for the last batch.
#[test]
fn catch_up_goes_as_far_as_the_outbox_has_room() {
    let mut h = Harness::with_config(HubConfig { batch_max_revs: 2, ..HubConfig::default() });
    let s = h.open();
    h.watch(s, create("a", "", 0));
    h.watch(s, create("a", "", 0));
    h.hub.stall(s);
    h.puts("a", 5); // revisions 2 to 6, two revisions a batch: three batches each
    h.request_progress(s);
    h.room = 4;
    assert_eq!(
        h.sync(Some(s)),
        lines(&[
            "s0 id=0 rev=6 [PUT a=0@2, PUT a=1@3]",
            "s0 id=1 rev=6 [PUT a=0@2, PUT a=1@3]",
            "s0 id=0 rev=6 [PUT a=2@4, PUT a=3@5]",
            "s0 id=1 rev=6 [PUT a=2@4, PUT a=3@5]",
        ])
    );
    assert!(h.hub.is_stalled(s), "out of room with watchers behind");
    assert_eq!(h.put("a", "live"), NONE, "a stalled stream gets no live events");
    assert_eq!(h.sync(None), NONE, "still stalled");
    assert_eq!(
        h.sync(Some(s)),
        lines(&[
            "s0 id=0 rev=7 [PUT a=4@6, PUT a=live@7]",
            "s0 id=1 rev=7 [PUT a=4@6, PUT a=live@7]",
            "s0 id=-1 rev=7",
        ])
    );
    assert!(!h.hub.is_stalled(s));
    assert_eq!(h.put("a", "next"), lines(&["s0 id=0 rev=8 [PUT a=next@8]", "s0 id=1 rev=8 [PUT a=next@8]"]));
}

/// A new watcher with a long history counts its created response against the room, catches up as far as
/// the rest allows, and leaves its stream stalled until the next sync; with no room at all it only gets
/// created. Other streams are not held up.
#[test]
fn a_new_watcher_catches_up_as_far_as_the_outbox_has_room() {
    let mut h = Harness::with_config(HubConfig { batch_max_revs: 2, ..HubConfig::default() });
    h.puts("a", 3); // revisions 2 to 4
    let s = h.open();
    h.room = 2;
    assert_eq!(h.watch(s, create("a", "", 2)), lines(&["id=0 rev=4 created", "id=0 rev=4 [PUT a=0@2, PUT a=1@3]"]));
    assert!(h.hub.is_stalled(s));
    h.room = 1;
    assert_eq!(h.sync(Some(s)), lines(&["s0 id=0 rev=4 [PUT a=2@4]"]));
    assert!(!h.hub.is_stalled(s), "the last batch fitted");
    let other = h.open();
    h.room = 0;
    assert_eq!(h.watch(other, create("a", "", 2)), lines(&["id=0 rev=4 created"]));
    assert!(h.hub.is_stalled(other) && !h.hub.is_stalled(s));
    assert_eq!(h.put("a", "live"), lines(&["s0 id=0 rev=5 [PUT a=live@5]"]));
}
