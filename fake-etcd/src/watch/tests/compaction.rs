//! Compaction: a start below it is canceled with `compact_revision`; a start at it is served, deletes
//! included (etcd #18089 and #19179, fixed); a slow watcher that compaction overtakes is canceled rather than
//! skipping history (etcd #17529, fixed). Each fix is also shown with its bug switch on.

use super::*;
use crate::mvcc::MvccConfig;

/// Puts a at 2..=5 (values 2..=5).
fn history() -> Harness {
    let mut h = Harness::new();
    for rev in 2..=5 {
        h.put("a", &rev.to_string());
    }
    h
}

/// created (header = current), then `canceled, compact_revision` with header revision 0 and no reason
/// (etcd-transcript §13); the watcher is gone.
#[test]
fn start_below_compaction_is_canceled() {
    let cases: &[(i64, &[&str])] = &[
        (1, &["id=0 rev=5 created", "id=0 rev=0 canceled compact=4"]),
        (3, &["id=0 rev=5 created", "id=0 rev=0 canceled compact=4"]),
        (4, &["id=0 rev=5 created", "id=0 rev=5 [PUT a=4@4, PUT a=5@5]"]),
        (5, &["id=0 rev=5 created", "id=0 rev=5 [PUT a=5@5]"]),
        (0, &["id=0 rev=5 created"]),
    ];
    for &(start, expected) in cases {
        let mut h = history();
        h.compact(4);
        let s = h.open();
        assert_eq!(h.watch(s, create("a", "", start)), lines(expected), "start {start}");
        let canceled = expected.len() == 2 && expected[1].contains("compact");
        assert_eq!(h.hub.watcher_count(), usize::from(!canceled), "start {start}");
        let later = if canceled { vec![] } else { vec!["s0 id=0 rev=6 [PUT a=6@6]".to_owned()] };
        assert_eq!(h.put("a", "6"), later, "start {start}: nothing after the cancel");
    }
}

/// As in etcd, a compaction-canceled id stays registered until the client cancels it: it cannot be
/// reused, and its cancel is answered (clientv3 sends one).
#[test]
fn compaction_canceled_id_stays_until_client_cancel() {
    let mut h = history();
    h.compact(4);
    let s = h.open();
    let at = |start| WatchCreateRequest { watch_id: 5, ..create("a", "", start) };
    assert_eq!(h.watch(s, at(2)), lines(&["id=5 rev=5 created", "id=5 rev=0 canceled compact=4"]));
    assert_eq!(
        h.watch(s, at(0)),
        lines(&[r#"id=-1 rev=5 created canceled reason="mvcc: duplicate watch ID provided on the WatchStream""#])
    );
    assert_eq!(h.cancel(s, 5), lines(&["id=5 rev=5 canceled"]));
    assert_eq!(h.cancel(s, 5), NONE);
    assert_eq!(h.watch(s, at(0)), lines(&["id=5 rev=5 created"]));
}

/// etcd #18089: PUT k (r2), PUT k, PUT k, DELETE k (r5), PUT k (r6), COMPACT r5, WATCH from r5 must
/// deliver the DELETE at r5 before the PUT at r6.
#[test]
fn watch_from_compaction_revision_delivers_its_delete() {
    let mut h = Harness::new();
    for v in ["v2", "v3", "v4"] {
        h.put("k", v);
    }
    h.del("k");
    h.put("k", "v6");
    h.compact(5);
    let s = h.open();
    assert_eq!(h.watch(s, create("k", "", 5)), lines(&["id=0 rev=6 created", "id=0 rev=6 [DEL k@5, PUT k=v6@6]"]));
    // One below is compacted.
    assert_eq!(h.watch(s, create("k", "", 4)), lines(&["id=1 rev=6 created", "id=1 rev=0 canceled compact=5"]));
}

/// etcd #19179: the watch opens at the revision being compacted, which is the current one, and that
/// revision is a delete; prev_kv below the compaction revision is left empty rather than failing.
#[test]
fn watch_at_current_compaction_revision_with_prev_kv() {
    let mut h = Harness::new();
    h.put("k", "1");
    h.put("k", "2");
    h.txn(&[Op::Del("k"), Op::Put("j", "1")]);
    h.compact(4);
    let s = h.open();
    let req = WatchCreateRequest { prev_kv: true, ..create("j", "l", 4) };
    assert_eq!(h.watch(s, req), lines(&["id=0 rev=4 created", "id=0 rev=4 [DEL k@4, PUT j=1@4]"]));
    // Live events after the compaction still find their prev_kv at revisions at or above it.
    assert_eq!(h.put("k", "3"), lines(&["s0 id=0 rev=5 [PUT k=3@5]"]));
    assert_eq!(h.put("j", "2"), lines(&["s0 id=0 rev=6 [PUT j=2@6 prev(j=1@4)]"]));
}

/// A stalled stream's watchers get no live events; `sync` with the stall lifted catches them up in one
/// response at the current revision.
#[test]
fn stall_then_sync_catches_up() {
    let mut h = Harness::new();
    let slow = h.open();
    let fast = h.open();
    h.watch(slow, create("a", "", 0));
    h.watch(fast, create("a", "", 0));
    h.hub.stall(slow);
    assert_eq!(h.put("a", "1"), lines(&["s1 id=0 rev=2 [PUT a=1@2]"]));
    assert_eq!(h.put("a", "2"), lines(&["s1 id=0 rev=3 [PUT a=2@3]"]));
    // Without lifting the stall, sync does nothing for it.
    assert_eq!(h.sync(None), NONE);
    // A watcher created on a stalled stream waits as well.
    assert_eq!(h.watch(slow, create("a", "", 2)), lines(&["id=1 rev=3 created"]));
    assert_eq!(
        h.sync(Some(slow)),
        lines(&["s0 id=0 rev=3 [PUT a=1@2, PUT a=2@3]", "s0 id=1 rev=3 [PUT a=1@2, PUT a=2@3]"])
    );
    assert_eq!(h.sync(None), NONE, "nothing left to catch up");
    assert_eq!(
        h.put("a", "3"),
        lines(&["s0 id=0 rev=4 [PUT a=3@4]", "s0 id=1 rev=4 [PUT a=3@4]", "s1 id=0 rev=4 [PUT a=3@4]"])
    );
}

/// etcd #17529: compaction passes a slow watcher's next revision; it must be canceled with the compaction
/// revision, not silently resumed after the gap. A slow watcher whose next revision survived is caught up.
#[test]
fn stall_then_compaction_cancels_overtaken_watchers() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, create("a", "", 0));
    h.watch(s, create("b", "", 0));
    h.put("a", "1");
    h.hub.stall(s);
    // Watcher 0 is owed revision 3 onwards, watcher 1 (on b) as well.
    h.put("a", "2");
    h.put("a", "3");
    h.put("b", "1");
    h.compact(4);
    assert_eq!(h.sync(Some(s)), lines(&["s0 id=0 rev=0 canceled compact=4", "s0 id=1 rev=0 canceled compact=4"]));
    assert_eq!(h.hub.watcher_count(), 0);

    // Compacting exactly at the next revision leaves everything it is owed.
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, WatchCreateRequest { prev_kv: true, ..create("a", "", 0) });
    h.put("a", "1");
    h.hub.stall(s);
    h.put("a", "2");
    h.del("a");
    h.compact(3);
    assert_eq!(h.sync(Some(s)), lines(&["s0 id=0 rev=4 [PUT a=2@3, DEL a@4 prev(a=2@3)]"]));
    assert_eq!(h.put("a", "3"), lines(&["s0 id=0 rev=5 [PUT a=3@5]"]));
}

/// The etcd #18089 history in a store with `mvcc`: PUT k v2 (r2), v3, v4, DELETE k (r5), PUT k v6 (r6).
fn history_18089(mvcc: MvccConfig) -> Harness {
    let mut h =
        Harness { store: MvccStore::with_config(mvcc), hub: WatchHub::new(HubConfig::default()), room: usize::MAX };
    for v in ["v2", "v3", "v4"] {
        h.put("k", v);
    }
    h.del("k");
    h.put("k", "v6");
    h
}

const WITH_DELETE: &[&str] = &["id=0 rev=6 created", "id=0 rev=6 [DEL k@5, PUT k=v6@6]"];
const WITHOUT_DELETE: &[&str] = &["id=0 rev=6 created", "id=0 rev=6 [PUT k=v6@6]"];

/// `compaction-drops-delete-tombstone` (etcd #18089): COMPACT r5, WATCH from r5 returns only the PUT at r6.
#[test]
fn compaction_drops_delete_tombstone_switch() {
    for (bug, expected) in [(false, WITH_DELETE), (true, WITHOUT_DELETE)] {
        let mut h = history_18089(MvccConfig { compaction_drops_tombstone_at_revision: bug, ..MvccConfig::default() });
        h.compact(5);
        let s = h.open();
        assert_eq!(h.watch(s, create("k", "", 5)), lines(expected), "switch {bug}");
    }
}

/// `watch-at-compaction-misses-delete` (etcd #19179): the compaction itself keeps the tombstone at r5, so a
/// watch from r5 right after it sees the delete (unlike #18089); a member that then restores its store from a
/// snapshot (a restart, or a leader's snapshot) finishes the compaction over an index without the deleted
/// key, and a watch opened there at the compaction revision misses the delete.
#[test]
fn watch_at_compaction_misses_delete_switch() {
    use crate::apply::StateMachine;
    use crate::types::Millis;

    for (bug, after_restore) in [(false, WITH_DELETE), (true, WITHOUT_DELETE)] {
        let mvcc = MvccConfig { restore_drops_tombstones_at_compaction: bug, ..MvccConfig::default() };
        let mut h = history_18089(mvcc);
        h.compact(5);
        let s = h.open();
        assert_eq!(h.watch(s, create("k", "", 5)), lines(WITH_DELETE), "switch {bug}: before the restore");

        let mut before = StateMachine::with_config(2, mvcc);
        std::mem::swap(&mut before.mvcc, &mut h.store);
        let mut restarted = StateMachine::with_config(2, mvcc);
        restarted.restore(&before.snapshot(), Millis(1_000)).unwrap();
        let mut h = Harness { store: restarted.mvcc, hub: WatchHub::new(HubConfig::default()), room: usize::MAX };
        let s = h.open();
        assert_eq!(h.watch(s, create("k", "", 5)), lines(after_restore), "switch {bug}: after the restore");
    }
}

/// `slow-watcher-skips-compacted` (etcd #17529): with the switch on, a slow watcher that compaction overtook
/// resumes from the compaction revision without a cancel, losing `a=2@3`; a new watcher from below the
/// compaction is still canceled, because only a slow stream's full channel kept etcd from sending the cancel.
#[test]
fn slow_watcher_skips_compacted_switch() {
    let cases: [(bool, &[&str]); 2] = [
        (false, &["s0 id=0 rev=0 canceled compact=4", "s0 id=1 rev=0 canceled compact=4"]),
        (true, &["s0 id=0 rev=5 [PUT a=3@4]", "s0 id=1 rev=5 [PUT b=1@5]"]),
    ];
    for (bug, expected) in cases {
        let mut h = Harness::with_config(HubConfig { slow_watcher_skips_compacted: bug, ..HubConfig::default() });
        let s = h.open();
        h.watch(s, create("a", "", 0));
        h.watch(s, create("b", "", 0));
        h.put("a", "1");
        h.hub.stall(s);
        h.put("a", "2");
        h.put("a", "3");
        h.put("b", "1");
        h.compact(4);
        assert_eq!(h.sync(Some(s)), lines(expected), "switch {bug}");
        let later = if bug { vec!["s0 id=0 rev=6 [PUT a=4@6]".to_owned()] } else { vec![] };
        assert_eq!(h.put("a", "4"), later, "switch {bug}: the skipped watcher goes on as if nothing was lost");
        let fresh = h.open();
        assert_eq!(
            h.watch(fresh, create("a", "", 3)),
            lines(&["id=0 rev=6 created", "id=0 rev=0 canceled compact=4"]),
            "switch {bug}: a new watcher below the compaction"
        );
    }
}
