//! Snapshot restore: the member's store jumps to a leader's, and its watchers must neither stall at the old
//! revision (etcd #8411), nor travel back in time (etcd #15271), nor have a future start lowered (etcd
//! #20221). Each case runs with etcd's fixed behaviour and with the restore bug switched on, which must
//! break exactly those guarantees.

use super::*;

/// The member before the partition: puts of `a` at 2 and 3. On one stream, watch 0 from 2 (it delivered 2
/// and 3), watch 1 from now (it delivered nothing yet) and watch 2 from the future revision 10.
fn partitioned_member(bug: bool) -> (Harness, StreamId) {
    let mut h = Harness::with_config(HubConfig { restore_lowers_watchers: bug, ..HubConfig::default() });
    h.puts("a", 2);
    let s = h.open();
    assert_eq!(h.watch(s, create("a", "", 2)), lines(&["id=0 rev=3 created", "id=0 rev=3 [PUT a=0@2, PUT a=1@3]"]));
    assert_eq!(h.watch(s, create("a", "", 0)), lines(&["id=1 rev=3 created"]));
    assert_eq!(h.watch(s, create("a", "", 10)), lines(&["id=2 rev=3 created"]));
    (h, s)
}

/// The leader's store: the same two puts, then four more the partitioned member missed (revisions 4 to 7),
/// compacted at `compact` if given.
fn leader_store(compact: Option<i64>) -> MvccStore {
    let mut leader = Harness::new();
    leader.puts("a", 6);
    if let Some(rev) = compact {
        leader.compact(rev);
    }
    leader.store
}

impl Harness {
    /// Installs `store` as a snapshot restore does and returns what the hub sends for it.
    fn restore(&mut self, store: MvccStore) -> Vec<String> {
        self.store = store;
        let room = self.room;
        let sent = self.hub.restore(&self.store, |_| room);
        show_all(&sent)
    }
}

#[test]
fn watchers_keep_their_position_across_a_restore() {
    struct Case {
        name: &'static str,
        bug: bool,
        compact: Option<i64>,
        /// What the restore sends.
        restore: &'static [&'static str],
        /// What the puts at 8, 9 and 10 send afterwards.
        later: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "fixed: catch up from the snapshot; the future watch waits for 10",
            bug: false,
            compact: None,
            restore: &[
                "s0 id=0 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
                "s0 id=1 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
            ],
            later: &[
                "s0 id=0 rev=8 [PUT a=0@8]",
                "s0 id=1 rev=8 [PUT a=0@8]",
                "s0 id=0 rev=9 [PUT a=1@9]",
                "s0 id=1 rev=9 [PUT a=1@9]",
                "s0 id=0 rev=10 [PUT a=2@10]",
                "s0 id=1 rev=10 [PUT a=2@10]",
                "s0 id=2 rev=10 [PUT a=2@10]",
            ],
        },
        Case {
            name: "fixed: a compaction at the watchers' next revision still lets them catch up",
            bug: false,
            compact: Some(4),
            restore: &[
                "s0 id=0 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
                "s0 id=1 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
            ],
            later: &[
                "s0 id=0 rev=8 [PUT a=0@8]",
                "s0 id=1 rev=8 [PUT a=0@8]",
                "s0 id=0 rev=9 [PUT a=1@9]",
                "s0 id=1 rev=9 [PUT a=1@9]",
                "s0 id=0 rev=10 [PUT a=2@10]",
                "s0 id=1 rev=10 [PUT a=2@10]",
                "s0 id=2 rev=10 [PUT a=2@10]",
            ],
        },
        Case {
            name: "fixed: a compaction above their next revision cancels them; the future watch is untouched",
            bug: false,
            compact: Some(5),
            restore: &["s0 id=0 rev=0 canceled compact=5", "s0 id=1 rev=0 canceled compact=5"],
            later: &["s0 id=2 rev=10 [PUT a=2@10]"],
        },
        Case {
            name: "bug: watch 0 replays 2 and 3 (#15271), watch 2 gets 8 and 9 below its start (#20221)",
            bug: true,
            compact: None,
            restore: &[
                "s0 id=0 rev=7 [PUT a=0@2, PUT a=1@3, PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
                "s0 id=1 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
            ],
            later: &[
                "s0 id=0 rev=8 [PUT a=0@8]",
                "s0 id=1 rev=8 [PUT a=0@8]",
                "s0 id=2 rev=8 [PUT a=0@8]",
                "s0 id=0 rev=9 [PUT a=1@9]",
                "s0 id=1 rev=9 [PUT a=1@9]",
                "s0 id=2 rev=9 [PUT a=1@9]",
                "s0 id=0 rev=10 [PUT a=2@10]",
                "s0 id=1 rev=10 [PUT a=2@10]",
                "s0 id=2 rev=10 [PUT a=2@10]",
            ],
        },
        Case {
            name: "bug: watch 0 goes back below a compaction it had already passed and is canceled",
            bug: true,
            compact: Some(4),
            restore: &[
                "s0 id=0 rev=0 canceled compact=4",
                "s0 id=1 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
            ],
            later: &[
                "s0 id=1 rev=8 [PUT a=0@8]",
                "s0 id=2 rev=8 [PUT a=0@8]",
                "s0 id=1 rev=9 [PUT a=1@9]",
                "s0 id=2 rev=9 [PUT a=1@9]",
                "s0 id=1 rev=10 [PUT a=2@10]",
                "s0 id=2 rev=10 [PUT a=2@10]",
            ],
        },
    ];
    for case in cases {
        let (mut h, _) = partitioned_member(case.bug);
        assert_eq!(h.restore(leader_store(case.compact)), lines(case.restore), "{}: restore", case.name);
        assert_eq!(h.puts("a", 3), lines(case.later), "{}: later puts", case.name);
    }
}

/// A restore to the revision the member already has (nothing happened during the partition) sends nothing.
/// Fixed, it moves nobody; with the bug, the future watcher is lowered all the same (etcd #20221: the
/// resync after a restore sets every watcher's next revision, whether or not it was behind).
#[test]
fn restore_without_news_sends_nothing() {
    for bug in [false, true] {
        let mut h = Harness::with_config(HubConfig { restore_lowers_watchers: bug, ..HubConfig::default() });
        h.puts("a", 2);
        let s = h.open();
        h.watch(s, create("a", "", 0));
        h.watch(s, create("a", "", 10));
        let mut same = Harness::new();
        same.puts("a", 2);
        assert_eq!(h.restore(same.store), NONE, "bug {bug}");
        let mut expected = vec!["s0 id=0 rev=4 [PUT a=x@4]"];
        if bug {
            expected.push("s0 id=1 rev=4 [PUT a=x@4]");
        }
        assert_eq!(h.put("a", "x"), lines(&expected), "bug {bug}");
    }
}

/// A stalled stream's watchers are already unsynced: the restore leaves them where they are, and the `sync`
/// that lifts the stall catches them up from the restored store.
#[test]
fn stalled_stream_catches_up_after_the_restore() {
    let (mut h, s) = partitioned_member(false);
    h.hub.stall(s);
    assert_eq!(h.restore(leader_store(None)), NONE);
    assert_eq!(
        h.sync(Some(s)),
        lines(&[
            "s0 id=0 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
            "s0 id=1 rev=7 [PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]",
        ])
    );
    assert_eq!(h.put("a", "8"), lines(&["s0 id=0 rev=8 [PUT a=8@8]", "s0 id=1 rev=8 [PUT a=8@8]"]));
}

/// A progress request waiting behind a future watcher stays unanswered after the restore (a progress
/// revision below that watcher's start would move a resuming client back, etcd #20221), and a stream whose
/// watchers all caught up answers it at the restored revision.
#[test]
fn progress_request_after_restore() {
    let mut h = Harness::new();
    let s = h.open();
    h.watch(s, create("a", "", 0));
    assert_eq!(h.request_progress(s), lines(&["id=-1 rev=1"]));
    let future = h.open();
    h.watch(future, create("a", "", 10));
    assert_eq!(h.request_progress(future), NONE);
    assert_eq!(
        h.restore(leader_store(None)),
        lines(&["s0 id=0 rev=7 [PUT a=0@2, PUT a=1@3, PUT a=2@4, PUT a=3@5, PUT a=4@6, PUT a=5@7]"])
    );
    assert_eq!(h.request_progress(s), lines(&["id=-1 rev=7"]));
}

/// The whole path a member takes, with the store restored from a leader state machine's snapshot bytes
/// rather than built in place: the history the watchers catch up from is the one the snapshot carried.
#[test]
fn restore_from_state_machine_snapshot_bytes() {
    use crate::apply::{Command, StateMachine};
    use crate::types::Millis;
    use etcd_proto::etcdserverpb::PutRequest;

    let now = Millis(1_000);
    let put = |value: &str| {
        Command::Put(PutRequest { key: b"a".to_vec(), value: value.as_bytes().to_vec(), ..PutRequest::default() })
    };
    let cases: &[(bool, &[&str])] =
        &[(false, &["s0 id=0 rev=4 [PUT a=3@4]"]), (true, &["s0 id=0 rev=4 [PUT a=1@2, PUT a=2@3, PUT a=3@4]"])];
    for &(bug, expected) in cases {
        let mut follower = StateMachine::new(2);
        let mut leader = StateMachine::new(2);
        let mut hub = WatchHub::new(HubConfig { restore_lowers_watchers: bug, ..HubConfig::default() });
        let s = hub.open_stream();
        let req = WatchRequest { request_union: Some(RequestUnion::CreateRequest(create("a", "", 0))) };
        hub.handle(s, req, &follower.mvcc, usize::MAX);
        // The follower applies 2 and 3 (the watcher gets them live); the leader goes on to 4.
        for value in ["1", "2"] {
            let applied = follower.apply(put(value), now).unwrap();
            assert_eq!(hub.notify(&applied.events, &follower.mvcc).len(), 1, "bug {bug}: live event {value}");
        }
        for value in ["1", "2", "3"] {
            leader.apply(put(value), now).unwrap();
        }
        follower.restore(&leader.snapshot(), now).unwrap();
        assert_eq!(show_all(&hub.restore(&follower.mvcc, |_| usize::MAX)), lines(expected), "bug {bug}");
    }
}
