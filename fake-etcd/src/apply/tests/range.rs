//! Range: sorting, min/max filters, limits, `count` and `more`, and which revisions can be read.

use super::*;

/// Keys a..f with mod revisions 2..7; values are the reverse of the key order; b and e were put twice.
fn range_fixture() -> StateMachine {
    let mut s = sm();
    for (k, v) in [("a", "6"), ("b", "5"), ("c", "4"), ("d", "3"), ("e", "2"), ("f", "1")] {
        put_kv(&mut s, k, v);
    }
    put_kv(&mut s, "b", "5"); // rev 8, version 2
    put_kv(&mut s, "e", "2"); // rev 9, version 2
    s
}

#[test]
fn range_sort_filter_limit_count() {
    let s = range_fixture();
    let all = || RangeRequest { key: b("a"), range_end: b("z"), ..RangeRequest::default() };
    let sort = |target: SortTarget, order: SortOrder| RangeRequest {
        sort_target: target as i32,
        sort_order: order as i32,
        ..all()
    };
    // (request, keys, count, more)
    let cases: Vec<(&str, RangeRequest, &[&str], i64, bool)> = vec![
        ("natural order", all(), &["a", "b", "c", "d", "e", "f"], 6, false),
        ("limit", RangeRequest { limit: 2, ..all() }, &["a", "b"], 6, true),
        ("limit = size", RangeRequest { limit: 6, ..all() }, &["a", "b", "c", "d", "e", "f"], 6, false),
        ("negative limit is none", RangeRequest { limit: -3, ..all() }, &["a", "b", "c", "d", "e", "f"], 6, false),
        ("count_only", RangeRequest { count_only: true, ..all() }, &[], 6, false),
        ("count_only with limit", RangeRequest { count_only: true, limit: 1, ..all() }, &[], 6, false),
        ("key descend", sort(SortTarget::Key, SortOrder::Descend), &["f", "e", "d", "c", "b", "a"], 6, false),
        ("key none", sort(SortTarget::Key, SortOrder::None), &["a", "b", "c", "d", "e", "f"], 6, false),
        (
            "value with order NONE sorts ascending",
            sort(SortTarget::Value, SortOrder::None),
            &["f", "e", "d", "c", "b", "a"],
            6,
            false,
        ),
        ("value descend", sort(SortTarget::Value, SortOrder::Descend), &["a", "b", "c", "d", "e", "f"], 6, false),
        ("mod ascend", sort(SortTarget::Mod, SortOrder::Ascend), &["a", "c", "d", "f", "b", "e"], 6, false),
        ("mod none sorts ascending", sort(SortTarget::Mod, SortOrder::None), &["a", "c", "d", "f", "b", "e"], 6, false),
        ("create descend", sort(SortTarget::Create, SortOrder::Descend), &["f", "e", "d", "c", "b", "a"], 6, false),
        // Ties keep key order, both ways.
        ("version ascend", sort(SortTarget::Version, SortOrder::Ascend), &["a", "c", "d", "f", "b", "e"], 6, false),
        ("version descend", sort(SortTarget::Version, SortOrder::Descend), &["b", "e", "a", "c", "d", "f"], 6, false),
        // etcd reads everything only if the raw sort order is set: a target with order NONE sorts just the
        // first limit + 1 keys (measured on etcd 3.4.23).
        (
            "value, order NONE, limited",
            RangeRequest { limit: 2, ..sort(SortTarget::Value, SortOrder::None) },
            &["c", "b"],
            6,
            true,
        ),
        (
            "value ascend, limited",
            RangeRequest { limit: 2, ..sort(SortTarget::Value, SortOrder::Ascend) },
            &["f", "e"],
            6,
            true,
        ),
        (
            "sorted then limited",
            RangeRequest { limit: 2, ..sort(SortTarget::Mod, SortOrder::Descend) },
            &["e", "b"],
            6,
            true,
        ),
        ("min mod", RangeRequest { min_mod_revision: 5, ..all() }, &["b", "d", "e", "f"], 6, false),
        ("max mod", RangeRequest { max_mod_revision: 4, ..all() }, &["a", "c"], 6, false),
        ("min create", RangeRequest { min_create_revision: 6, ..all() }, &["e", "f"], 6, false),
        ("max create", RangeRequest { max_create_revision: 3, ..all() }, &["a", "b"], 6, false),
        ("mod window", RangeRequest { min_mod_revision: 4, max_mod_revision: 7, ..all() }, &["c", "d", "f"], 6, false),
        // With a filter everything is read first, so `more` reflects what the filter left.
        ("filter then limit", RangeRequest { min_mod_revision: 5, limit: 3, ..all() }, &["b", "d", "e"], 6, true),
        (
            "filter then limit, nothing cut",
            RangeRequest { min_mod_revision: 5, limit: 4, ..all() },
            &["b", "d", "e", "f"],
            6,
            false,
        ),
        ("filter leaving nothing", RangeRequest { min_mod_revision: 100, ..all() }, &[], 6, false),
        ("single key", get_req("c"), &["c"], 1, false),
        ("inverted range", RangeRequest { key: b("d"), range_end: b("b"), ..RangeRequest::default() }, &[], 0, false),
        (
            "from key",
            RangeRequest { key: b("e"), range_end: b("\0"), ..RangeRequest::default() },
            &["e", "f"],
            2,
            false,
        ),
        (
            "all keys",
            RangeRequest { key: b("\0"), range_end: b("\0"), ..RangeRequest::default() },
            &["a", "b", "c", "d", "e", "f"],
            6,
            false,
        ),
        ("at an old revision", RangeRequest { revision: 4, ..all() }, &["a", "b", "c"], 3, false),
    ];
    for (name, req, want_keys, want_count, want_more) in cases {
        let r = s.range(&req).unwrap();
        assert_eq!(keys(&r), want_keys, "{name}");
        assert_eq!((r.count, r.more), (want_count, want_more), "{name}");
        assert_eq!(r.header, hdr(9), "{name}: the header names the current revision");
    }
    let r = s.range(&RangeRequest { keys_only: true, ..get_req("a") }).unwrap();
    assert_eq!(r.kvs, vec![kv("a", "", 2, 2, 1)]);
}

#[test]
fn range_revision_rules() {
    let mut s = range_fixture();
    compact(&mut s, 5).unwrap();
    let cases = [
        (10, Err(EtcdError::FutureRev)),
        (9, Ok(6)),
        (5, Ok(4)),
        (4, Err(EtcdError::Compacted)),
        (0, Ok(6)),
        (-7, Ok(6)),
    ];
    for (rev, want) in cases {
        let got = s.range(&RangeRequest { key: b("a"), range_end: b("z"), revision: rev, ..RangeRequest::default() });
        assert_eq!(got.map(|r| r.count), want, "at {rev}");
    }
}
