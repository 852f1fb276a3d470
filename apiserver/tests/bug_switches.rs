//! The apiserver's bug switches, each shown putting its historical bug back: with the switch on the old
//! behaviour shows, with it off (the default) the fixed one. Runs on fake-etcd in-process (real build).
//! Each test waits for named conditions (an event, a held failpoint, the cache reaching a revision, a stream
//! ending); the Cacher's switches that need no etcd are shown on its state directly, in
//! `apiserver/src/storage/cacher/tests.rs`.
#![cfg(not(madsim))]

// This suite runs on fake-etcd only; the real-etcd starter goes unused.
#[allow(dead_code)]
#[path = "support/etcd_server.rs"]
mod etcd_server;

use std::time::Duration;

use apiserver::bug::{Bug, Bugs};
use apiserver::failpoint::{Action, Arm, Failpoints, Point};
use apiserver::storage::cacher::{Cacher, CacherConfig};
use apiserver::storage::etcd3::{Etcd3Config, Etcd3Store};
use apiserver::storage::{
    GetOptions, GroupResource, ListOptions, Preconditions, Storage, StorageError, WatchEvent, Watcher,
};
use etcd_server::{start, Server};
use serde_json::{json, Value};

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, "data": {"v": value}})
}

async fn store(endpoint: &str, prefix: &str, bugs: Bugs) -> Etcd3Store {
    let mut config = Etcd3Config::new(prefix, GroupResource::new("", "configmaps"));
    config.bugs = bugs;
    Etcd3Store::connect(endpoint, config).await.unwrap()
}

/// Creates `name` and updates it once: the first state is what a lagging watch cache still holds.
async fn stale_copy(store: &Etcd3Store, key: &str, name: &str) -> Value {
    let first = store.create(key, configmap(name, "1")).await.unwrap();
    let set = |mut obj: Value, _| {
        obj["data"]["v"] = json!("2");
        Ok(obj)
    };
    store.guaranteed_update(key, false, None, set, None).await.unwrap();
    first
}

/// kubernetes #82303 (and #41892, #89828): a write judged against the watch cache's stale copy must be
/// judged again on fresh data before its failure is reported.
#[tokio::test]
async fn stale_suggestion_trusted_gives_spurious_conflicts_and_precondition_failures() {
    let etcd = start(Server::FakeEtcd, "bug-stale-suggestion").await;
    for on in [true, false] {
        let bugs = if on { Bugs::of(&[Bug::StaleSuggestionTrusted]) } else { Bugs::none() };
        let store = store(&etcd.endpoint, &format!("/registry-{on}/"), bugs).await;

        // An update function that refuses the stale copy's resourceVersion, as a client's optimistic lock
        // on fresher state would.
        let stale = stale_copy(&store, "/configmaps/ns/u", "u").await;
        let stale_rv = stale["metadata"]["resourceVersion"].as_str().unwrap().to_string();
        let locked = |mut obj: Value, meta: apiserver::storage::ResponseMeta| {
            if meta.resource_version.0.to_string() == stale_rv {
                return Err(StorageError::ResourceVersionConflicts { key: "stale".into(), rv: 0 });
            }
            obj["data"]["v"] = json!("3");
            Ok(obj)
        };
        let update = store.guaranteed_update("/configmaps/ns/u", false, None, locked, Some(stale)).await;
        assert_eq!(update.is_err(), on, "switch {on}: update {update:?}");

        // A delete whose uid precondition names the object as it is now, against a stale copy of an earlier
        // object of the same name.
        let old = store.create("/configmaps/ns/d", configmap("d", "1")).await.unwrap();
        store.delete("/configmaps/ns/d", None, |_| Ok(()), None).await.unwrap();
        let mut recreated = configmap("d", "2");
        recreated["metadata"]["uid"] = json!("uid-new");
        store.create("/configmaps/ns/d", recreated).await.unwrap();
        let pre = Preconditions { uid: Some("uid-new".into()), resource_version: None };
        let delete = store.delete("/configmaps/ns/d", Some(&pre), |_| Ok(()), Some(old)).await;
        assert_eq!(delete.is_err(), on, "switch {on}: delete {delete:?}");
    }
}

fn switch(on: bool, bug: Bug) -> Bugs {
    if on {
        Bugs::of(&[bug])
    } else {
        Bugs::none()
    }
}

fn rv_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
}

/// A Cacher of configmaps over `prefix` with `bugs`, set up further by `tune`, once it is ready.
async fn cacher(endpoint: &str, prefix: &str, bugs: Bugs, tune: impl FnOnce(&mut CacherConfig)) -> Cacher {
    let mut config = CacherConfig::new("/configmaps", GroupResource::new("", "configmaps"));
    config.bugs = bugs;
    tune(&mut config);
    let store = Etcd3Store::connect(endpoint, Etcd3Config::new(prefix, GroupResource::new("", "configmaps")));
    let cacher = Cacher::new(store.await.unwrap(), config);
    assert!(cacher.wait_ready(Duration::from_secs(10)).await);
    cacher
}

/// Waits (real time, bounded) until `cond` holds.
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..500 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

/// An event as `TYPE name@rv` (a bookmark as `BOOKMARK @rv`, the initial-events end as `END @rv`).
fn show(event: &WatchEvent) -> String {
    let obj = |kind: &str, obj: &Value| format!("{kind} {}@{}", obj["metadata"]["name"].as_str().unwrap(), rv_of(obj));
    match event {
        WatchEvent::Added(o) => obj("ADDED", o.value()),
        WatchEvent::Modified(o) => obj("MODIFIED", o.value()),
        WatchEvent::Deleted(o) => obj("DELETED", o.value()),
        WatchEvent::Bookmark(rv) => format!("BOOKMARK @{rv}"),
        WatchEvent::InitialEventsEnd(rv) => format!("END @{rv}"),
        WatchEvent::Error(status) => format!("ERROR {}", status.code.unwrap_or(0)),
    }
}

async fn next(watch: &mut Watcher) -> String {
    let event = tokio::time::timeout(Duration::from_secs(10), watch.next()).await.expect("an event within 10 s");
    event.as_ref().map(show).unwrap_or_else(|| "the end".into())
}

/// A watch-list request: the current state from a consistent start, then the initial-events end.
fn watch_list() -> ListOptions {
    ListOptions { send_initial_events: Some(true), allow_watch_bookmarks: true, ..ListOptions::default() }
}

/// kubernetes #49956 as PR #49992 tells it: sally's list was at N; bob creates an object at N + 1; the
/// cache's first list is at N + 1, with an empty event history; sally watches from N. Fixed, that is 410
/// (the cache holds no event for N + 1); with `empty-history-accepts-older-rv` the watch is accepted and
/// sally never learns of bob's object.
#[tokio::test]
async fn empty_history_accepts_older_rv_misses_the_change_at_the_list_version() {
    let etcd = start(Server::FakeEtcd, "bug-empty-history").await;
    for on in [true, false] {
        let prefix = format!("/registry-empty-{on}/");
        let writer = store(&etcd.endpoint, &prefix, Bugs::none()).await;
        let sally = rv_of(&writer.create("/configmaps/ns/sally", configmap("sally", "1")).await.unwrap());
        let bob = writer.create("/configmaps/ns/bob", configmap("bob", "1")).await.unwrap();
        assert_eq!(rv_of(&bob), sally + 1);
        let cacher = cacher(&etcd.endpoint, &prefix, switch(on, Bug::EmptyHistoryAcceptsOlderRv), |_| {}).await;
        assert_eq!(cacher.resource_version().0, sally + 1, "the cache's list includes bob's create");
        let opts = ListOptions { resource_version: sally.to_string(), ..ListOptions::default() };
        let mut watch = cacher.watch("/configmaps", &opts).await.unwrap();
        if on {
            let later = writer.create("/configmaps/ns/later", configmap("later", "1")).await.unwrap();
            assert_eq!(next(&mut watch).await, format!("ADDED later@{}", rv_of(&later)), "bob's create is skipped");
        } else {
            assert_eq!(next(&mut watch).await, "ERROR 410");
            assert_eq!(next(&mut watch).await, "the end");
        }
    }
}

/// kubernetes #116122: a watch passes the readiness check; the reflector's watch fails and it relists; the
/// watch registers after the relist's start and before its new list replaces the cache (held there by two
/// failpoints). Fixed, the watch ends at once (its client watches again and gets 410 or the missed
/// change); with `watch-registers-on-old-generation` it is registered with the old cache's (empty)
/// initial events, survives the relist, and never gets the write the reflector lost with its watch.
#[tokio::test]
async fn watch_registers_on_old_generation_misses_the_changes_of_the_relist() {
    let etcd = start(Server::FakeEtcd, "bug-old-generation").await;
    for on in [true, false] {
        let prefix = format!("/registry-generation-{on}/");
        let writer = store(&etcd.endpoint, &prefix, Bugs::none()).await;
        let first = rv_of(&writer.create("/configmaps/ns/first", configmap("first", "1")).await.unwrap());
        let fp = Failpoints::new();
        let bugs = switch(on, Bug::WatchRegistersOnOldGeneration);
        let (tune_fp, once) = (fp.clone(), |action| Arm { action, skip: 0, times: Some(1) });
        let cacher = cacher(&etcd.endpoint, &prefix, bugs, move |c| {
            c.failpoints = tune_fp;
            c.relist_period = Duration::from_millis(50);
        })
        .await;
        assert_eq!(cacher.resource_version().0, first);

        let ready_point = Point::CacherWatchBetweenReadyAndRegister;
        fp.arm(ready_point, once(Action::Hold));
        let watching = cacher.clone();
        let opts = ListOptions { resource_version: first.to_string(), ..ListOptions::default() };
        let watch = tokio::spawn(async move { watching.watch("/configmaps", &opts).await.unwrap() });
        eventually("the watch to pass its readiness check", || fp.held(ready_point) == 1).await;

        // The reflector's watch fails on the next event, which it never applies; the relist that follows
        // lists it and stops before replacing the cache.
        fp.arm(Point::BeforeCacherDispatch, once(Action::Error));
        fp.arm(Point::CacherBetweenListAndWatch, once(Action::Hold));
        let lost = writer.create("/configmaps/ns/lost", configmap("lost", "1")).await.unwrap();
        eventually("the relist to stop after its list", || fp.held(Point::CacherBetweenListAndWatch) == 1).await;
        fp.release(ready_point);
        let mut watch = watch.await.unwrap();
        fp.release(Point::CacherBetweenListAndWatch);
        eventually("the relisted cache to include the lost write", || cacher.resource_version().0 >= rv_of(&lost))
            .await;

        let after = writer.create("/configmaps/ns/after", configmap("after", "1")).await.unwrap();
        if on {
            assert_eq!(next(&mut watch).await, format!("ADDED after@{}", rv_of(&after)), "the lost write is missed");
        } else {
            assert_eq!(next(&mut watch).await, "the end", "registered on no generation: ended at once");
        }
    }
}

/// kubernetes #125288: a watch-list request on a resource nobody writes after the cache's first list. Fixed,
/// the initial events end with the annotated bookmark at once; with `bookmarks-from-zero-after-init` the
/// end bookmark comes from the dispatcher, which has processed nothing yet, so it comes only after the next
/// write, behind that write's event.
#[tokio::test]
async fn bookmarks_from_zero_after_init_holds_back_the_initial_events_end() {
    for on in [true, false] {
        let etcd = start(Server::FakeEtcd, &format!("bug-bookmarks-{on}")).await;
        let writer = store(&etcd.endpoint, "/registry/", Bugs::none()).await;
        let idle = rv_of(&writer.create("/configmaps/ns/idle", configmap("idle", "1")).await.unwrap());
        let bugs = switch(on, Bug::BookmarksFromZeroAfterInit);
        let cacher = cacher(&etcd.endpoint, "/registry/", bugs, |c| c.bookmark_tick = Duration::from_millis(20)).await;
        let mut watch = cacher.watch("/configmaps", &watch_list()).await.unwrap();
        assert_eq!(next(&mut watch).await, format!("ADDED idle@{idle}"));
        if on {
            let write = rv_of(&writer.create("/configmaps/ns/write", configmap("write", "1")).await.unwrap());
            assert_eq!(next(&mut watch).await, format!("ADDED write@{write}"), "no end bookmark while idle");
            assert_eq!(next(&mut watch).await, format!("END @{write}"));
        } else {
            assert_eq!(next(&mut watch).await, format!("END @{idle}"));
            let write = rv_of(&writer.create("/configmaps/ns/write", configmap("write", "1")).await.unwrap());
            assert_eq!(next(&mut watch).await, format!("ADDED write@{write}"));
        }
    }
}

/// kubernetes #129408 and kcp-dev/kcp#3871: with `no-initial-events-end-bookmark` a watch-list request gets
/// its initial events and later changes, but no annotated bookmark, up to the stream's end; fixed, the
/// bookmark follows the initial events.
#[tokio::test]
async fn no_initial_events_end_bookmark_leaves_a_watch_list_unsynced() {
    let etcd = start(Server::FakeEtcd, "bug-no-end").await;
    for on in [true, false] {
        let prefix = format!("/registry-no-end-{on}/");
        let writer = store(&etcd.endpoint, &prefix, Bugs::none()).await;
        let a = rv_of(&writer.create("/configmaps/ns/a", configmap("a", "1")).await.unwrap());
        let cacher = cacher(&etcd.endpoint, &prefix, switch(on, Bug::NoInitialEventsEndBookmark), |_| {}).await;
        let mut watch = cacher.watch("/configmaps", &watch_list()).await.unwrap();
        let b = rv_of(&writer.create("/configmaps/ns/b", configmap("b", "1")).await.unwrap());
        let mut got = vec![next(&mut watch).await, next(&mut watch).await];
        if !on {
            got.push(next(&mut watch).await);
        }
        drop(cacher);
        got.push(next(&mut watch).await);
        let (end, a, b) = (format!("END @{a}"), format!("ADDED a@{a}"), format!("ADDED b@{b}"));
        let expected = if on { vec![a, b, "the end".into()] } else { vec![a, end, b, "the end".into()] };
        assert_eq!(got, expected, "switch {on}");
    }
}

/// kubernetes #91073: a cache whose resource is idle while another resource is written. Fixed, a read at
/// etcd's newer revision asks etcd for progress and completes; with `no-progress-requests` it waits the block
/// timeout and fails with 504 `Too large resource version`, the cache still at its own last write.
#[tokio::test]
async fn no_progress_requests_fail_reads_at_newer_revisions() {
    let etcd = start(Server::FakeEtcd, "bug-no-progress").await;
    for on in [true, false] {
        let prefix = format!("/registry-progress-{on}/");
        let writer = store(&etcd.endpoint, &prefix, Bugs::none()).await;
        let a = writer.create("/configmaps/ns/a", configmap("a", "1")).await.unwrap();
        let bugs = switch(on, Bug::NoProgressRequests);
        let cacher = cacher(&etcd.endpoint, &prefix, bugs, |c| c.block_timeout = Duration::from_millis(500)).await;
        eventually("the cache to reach its write", || cacher.resource_version().0 >= rv_of(&a)).await;
        let elsewhere = rv_of(&writer.create("/secrets/ns/s", configmap("s", "1")).await.unwrap());
        let got = cacher.get("/configmaps/ns/a", &GetOptions { resource_version: elsewhere.to_string() }).await;
        if on {
            let err =
                StorageError::TooLargeResourceVersion { requested: elsewhere, current: rv_of(&a), retry_after_s: 1 };
            assert_eq!(got, Err(err));
        } else {
            assert_eq!(got, Ok(a));
        }
    }
}
