//! Creating watchers: ids, refused creates, and where a new watcher starts.

use super::*;

const DUPLICATE: &str = "mvcc: duplicate watch ID provided on the WatchStream";
const EMPTY_RANGE: &str = "mvcc: watcher range is empty";
const COMPACTED: &str = "etcdserver: mvcc: required revision has been compacted";

fn with_id(watch_id: i64) -> WatchCreateRequest {
    WatchCreateRequest { watch_id, ..create("k", "", 0) }
}

/// Auto ids start at 0 and only move up, skipping ids in use; explicit ids are taken as given unless in use.
#[test]
fn watch_ids_auto_explicit_and_duplicate() {
    let mut h = Harness::new();
    let s = h.open();
    let fail = |reason: &str| format!("id=-1 rev=1 created canceled reason={reason:?}");
    let cases: &[(i64, String)] = &[
        (0, "id=0 rev=1 created".into()),
        (0, "id=1 rev=1 created".into()),
        (5, "id=5 rev=1 created".into()),
        (5, fail(DUPLICATE)),
        (1, fail(DUPLICATE)),
        (0, "id=2 rev=1 created".into()),
        (3, "id=3 rev=1 created".into()),
        (0, "id=4 rev=1 created".into()),
        // 5 is taken, so auto skips to 6.
        (0, "id=6 rev=1 created".into()),
        (-7, "id=-7 rev=1 created".into()),
        (-7, fail(DUPLICATE)),
    ];
    for (requested, expected) in cases {
        assert_eq!(h.watch(s, with_id(*requested)), vec![expected.clone()], "requested id {requested}");
    }
    assert_eq!(h.hub.watcher_count(), 8);

    // A canceled id is free again for an explicit create, but auto ids do not go back.
    assert_eq!(h.cancel(s, 1), lines(&["id=1 rev=1 canceled"]));
    assert_eq!(h.watch(s, with_id(0)), lines(&["id=7 rev=1 created"]));
    assert_eq!(h.watch(s, with_id(1)), lines(&["id=1 rev=1 created"]));
    // Ids are per stream.
    let other = h.open();
    assert_eq!(h.watch(other, with_id(0)), lines(&["id=0 rev=1 created"]));
    assert_eq!(h.watch(other, with_id(5)), lines(&["id=5 rev=1 created"]));
}

/// (key, range_end, start, error): the range must not be empty, the start not negative; a refused create
/// is `created` and `canceled` for watch id -1 at the current revision, and uses up no id.
#[test]
fn refused_creates() {
    let cases: &[(&str, &str, i64, Option<&str>)] = &[
        ("b", "a", 0, Some(EMPTY_RANGE)),
        ("a", "a", 0, Some(EMPTY_RANGE)),
        ("a", "a\0", 0, None),
        ("a", "b", 0, None),
        // "\0" as range_end means "every key from key on", never empty.
        ("z", "\0", 0, None),
        ("", "\0", 0, None),
        ("", "", 0, None),
        ("a", "", 0, None),
        // The start revision is checked first.
        ("b", "a", -1, Some(COMPACTED)),
        ("a", "", -1, Some(COMPACTED)),
        ("a", "", -100, Some(COMPACTED)),
    ];
    for &(key, end, start, error) in cases {
        let mut h = Harness::new();
        h.put("x", "1");
        let s = h.open();
        let expected = match error {
            Some(reason) => format!("id=-1 rev=2 created canceled reason={reason:?}"),
            None => "id=0 rev=2 created".to_owned(),
        };
        assert_eq!(h.watch(s, create(key, end, start)), vec![expected], "key {key:?} end {end:?} start {start}");
        assert_eq!(h.hub.watcher_count(), usize::from(error.is_none()));
        // The next auto id is 0 after a refusal and 1 after a success.
        let next = if error.is_some() { 0 } else { 1 };
        assert_eq!(h.watch(s, create("k", "", 0)), vec![format!("id={next} rev=2 created")]);
    }
}

/// Range watches see exactly the keys in their range; an empty key means "\0", so a watch on the empty key
/// alone watches the key "\0".
#[test]
fn ranges_select_keys() {
    const KEYS: [&str; 5] = ["\0", "a", "b", "b/x", "c"];
    let cases: &[(&str, &str, &[&str])] = &[
        ("a", "", &["a"]),
        ("a", "c", &["a", "b", "b/x"]),
        ("b", "b0", &["b", "b/x"]),
        ("b", "\0", &["b", "b/x", "c"]),
        ("", "\0", &["\0", "a", "b", "b/x", "c"]),
        ("", "", &["\0"]),
        ("\0", "", &["\0"]),
        ("", "b", &["\0", "a"]),
    ];
    for &(key, end, expected) in cases {
        let mut h = Harness::new();
        let s = h.open();
        h.watch(s, create(key, end, 0));
        let seen: Vec<String> = KEYS.iter().flat_map(|k| h.put(k, "v")).collect();
        // KEYS[i] is put at revision i + 2.
        let rev_of = |k: &&str| KEYS.iter().position(|x| x == k).unwrap() + 2;
        let expected: Vec<String> =
            expected.iter().map(|k| format!("s0 id=0 rev={r} [PUT {k}=v@{r}]", r = rev_of(k))).collect();
        assert_eq!(seen, expected, "key {key:?} end {end:?}");
    }
}

/// Where a watcher starts: 0 means current + 1; a past start catches up first (after the created
/// response); a future start is allowed and waits for its revision.
#[test]
fn start_revisions() {
    // The store is at 4 after puts of a at 2, 3, 4; after the create, a is put at 5, 6 and 7.
    let cases: &[(i64, &[&str], &[&str])] = &[
        (
            0,
            &["id=0 rev=4 created"],
            &["s0 id=0 rev=5 [PUT a=5@5]", "s0 id=0 rev=6 [PUT a=6@6]", "s0 id=0 rev=7 [PUT a=7@7]"],
        ),
        (
            1,
            &["id=0 rev=4 created", "id=0 rev=4 [PUT a=2@2, PUT a=3@3, PUT a=4@4]"],
            &["s0 id=0 rev=5 [PUT a=5@5]", "s0 id=0 rev=6 [PUT a=6@6]", "s0 id=0 rev=7 [PUT a=7@7]"],
        ),
        (
            3,
            &["id=0 rev=4 created", "id=0 rev=4 [PUT a=3@3, PUT a=4@4]"],
            &["s0 id=0 rev=5 [PUT a=5@5]", "s0 id=0 rev=6 [PUT a=6@6]", "s0 id=0 rev=7 [PUT a=7@7]"],
        ),
        (
            4,
            &["id=0 rev=4 created", "id=0 rev=4 [PUT a=4@4]"],
            &["s0 id=0 rev=5 [PUT a=5@5]", "s0 id=0 rev=6 [PUT a=6@6]", "s0 id=0 rev=7 [PUT a=7@7]"],
        ),
        (
            5,
            &["id=0 rev=4 created"],
            &["s0 id=0 rev=5 [PUT a=5@5]", "s0 id=0 rev=6 [PUT a=6@6]", "s0 id=0 rev=7 [PUT a=7@7]"],
        ),
        (6, &["id=0 rev=4 created"], &["s0 id=0 rev=6 [PUT a=6@6]", "s0 id=0 rev=7 [PUT a=7@7]"]),
        (7, &["id=0 rev=4 created"], &["s0 id=0 rev=7 [PUT a=7@7]"]),
        (8, &["id=0 rev=4 created"], NONE),
    ];
    for &(start, on_create, later) in cases {
        let mut h = Harness::new();
        for rev in 2..=4 {
            h.put("a", &rev.to_string());
        }
        let s = h.open();
        assert_eq!(h.watch(s, create("a", "", start)), lines(on_create), "start {start}: on create");
        let seen: Vec<String> = (5..=7).flat_map(|rev| h.put("a", &rev.to_string())).collect();
        assert_eq!(seen, lines(later), "start {start}: afterwards");
    }
}
