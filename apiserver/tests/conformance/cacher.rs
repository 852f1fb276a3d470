//! The Cacher's own cases, where kube-apiserver's cached path differs from etcd's or has behaviour etcd's
//! lacks: waiting for a future resourceVersion (504 after 3 s with Retry-After 1), a cache held back without
//! progress notifications and freed by them, consistent lists from the cache, 410 for watches older than the
//! history, bookmarks only when allowed, the watch-list stream with its annotated end bookmark, and the 500
//! for a watch-list request when etcd's progress requests cannot be trusted. Each case builds its own Cacher
//! with the features it needs, and reads it without waiting for the cache to catch up first.

use std::time::Duration;

use apiserver::storage::cacher::Cacher;
use apiserver::storage::status::{GroupResource, Operation};
use apiserver::storage::{
    GetOptions, ListOptions, ResourceVersion, ResourceVersionMatch, Storage, StorageError, WatchEvent, Watcher,
};
use etcd_proto::etcdserverpb::PutRequest;
use serde_json::json;
use tokio::time::Instant;

use super::harness::{
    compact, configmap, current_revision, expect_quiet, key, new_cacher, next_event, rv_of, Case, Ctx,
};
use super::proxy::Proxy;

pub fn cases() -> Vec<Case> {
    cases![
        cacher_reads_wait_for_a_future_resource_version_then_time_out,
        cacher_read_returns_once_the_resource_version_arrives,
        cacher_without_progress_notify_is_held_back_by_other_resources,
        cacher_consistent_list_sees_every_acknowledged_write,
        cacher_watch_older_than_its_history_is_expired,
        cacher_bookmarks_only_when_allowed,
        cacher_send_initial_events_ends_with_the_annotated_bookmark,
        cacher_send_initial_events_from_a_future_resource_version_times_out,
        cacher_watch_list_needs_request_watch_progress,
        cacher_reinitializes_after_its_watch_fails,
    ]
}

fn cm() -> GroupResource {
    GroupResource::new("", "configmaps")
}

fn get_at(rv: u64) -> GetOptions {
    GetOptions { resource_version: rv.to_string() }
}

/// Writes a key of another resource under the case's prefix: etcd's revision moves, this cache sees nothing.
async fn write_elsewhere(ctx: &Ctx, name: &str) -> u64 {
    let put = PutRequest {
        key: format!("{}secrets/ns/{name}", ctx.prefix).into_bytes(),
        value: b"{}".to_vec(),
        ..Default::default()
    };
    ctx.kv.clone().put(put).await.unwrap().into_inner().header.unwrap().revision as u64
}

/// Waits until the cache has reached `rv` (the cases below check reads, not the reflector's speed).
async fn caught_up(cacher: &Cacher, rv: u64) {
    for _ in 0..500 {
        if cacher.resource_version() >= ResourceVersion(rv) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the cache never reached {rv}");
}

/// The ERROR event a watch ends with, and that it then ends.
async fn error_then_end(w: &mut Watcher) -> serde_json::Value {
    let WatchEvent::Error(status) = next_event(w).await else { panic!("want an ERROR event") };
    let end = tokio::time::timeout(Duration::from_secs(5), w.next()).await.expect("the watch must end");
    assert_eq!(end, None, "nothing follows an ERROR event");
    serde_json::to_value(*status).unwrap()
}

fn too_large_status(requested: u64, current: u64) -> serde_json::Value {
    json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":504,"reason":"Timeout",
           "message":format!("Timeout: Too large resource version: {requested}, current: {current}"),
           "details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],
                      "retryAfterSeconds":1}})
}

async fn cacher_reads_wait_for_a_future_resource_version_then_time_out(ctx: Ctx) {
    let cacher = ctx.cacher(|_| {}).await;
    let a = cacher.create(&key("a"), configmap("a", "1")).await.unwrap();
    caught_up(&cacher, rv_of(&a)).await;
    let future = current_revision(&ctx).await + 5;
    let started = Instant::now();
    let err = cacher.get(&key("a"), &get_at(future)).await.unwrap_err();
    assert!(started.elapsed() >= Duration::from_secs(3), "the cache waits its 3 s first");
    let current = cacher.resource_version().0;
    assert_eq!(err, StorageError::TooLargeResourceVersion { requested: future, current, retry_after_s: 1 });
    assert_eq!(
        serde_json::to_value(err.to_status(Operation::Get, &cm(), "a")).unwrap(),
        too_large_status(future, current)
    );
    // A list not older than the same version times out alike; one with a limit is exact and goes to etcd.
    let opts = ListOptions { resource_version: future.to_string(), ..ListOptions::default() };
    let err = cacher.get_list("/configmaps/ns", &opts).await.unwrap_err();
    assert_eq!(err, StorageError::TooLargeResourceVersion { requested: future, current, retry_after_s: 1 });
}

async fn cacher_read_returns_once_the_resource_version_arrives(ctx: Ctx) {
    let cacher = ctx.cacher(|_| {}).await;
    let a = cacher.create(&key("a"), configmap("a", "1")).await.unwrap();
    let next = rv_of(&a) + 1;
    let writer = cacher.clone();
    let write = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer.create(&key("b"), configmap("b", "1")).await.unwrap()
    });
    let got = cacher.get(&key("a"), &get_at(next)).await.unwrap();
    assert_eq!(got, a, "the latest cached state of a, read once the cache reached the requested version");
    let b = write.await.unwrap();
    assert_eq!(rv_of(&b), next);
    let opts = ListOptions { resource_version: next.to_string(), ..ListOptions::default() };
    assert_eq!(cacher.get_list("/configmaps/ns", &opts).await.unwrap().items, vec![a, b]);
}

async fn cacher_without_progress_notify_is_held_back_by_other_resources(ctx: Ctx) {
    // kubernetes #91073: the cache moves only on its own resource's events unless etcd reports progress.
    let held_back = ctx.cacher(|c| c.request_watch_progress = false).await;
    let notified = ctx.cacher(|c| c.request_watch_progress = true).await;
    let a = held_back.create(&key("a"), configmap("a", "1")).await.unwrap();
    caught_up(&held_back, rv_of(&a)).await;
    let elsewhere = write_elsewhere(&ctx, "s").await;
    let err = held_back.get(&key("a"), &get_at(elsewhere)).await.unwrap_err();
    assert_eq!(
        err,
        StorageError::TooLargeResourceVersion { requested: elsewhere, current: rv_of(&a), retry_after_s: 1 }
    );
    assert_eq!(held_back.resource_version().0, rv_of(&a));
    // With progress requests the same read completes: etcd vouches for the revision.
    let started = Instant::now();
    assert_eq!(notified.get(&key("a"), &get_at(elsewhere)).await.unwrap(), a);
    assert!(started.elapsed() < Duration::from_secs(2), "progress arrives within a few request periods");
    assert!(notified.resource_version().0 >= elsewhere);
}

async fn cacher_consistent_list_sees_every_acknowledged_write(ctx: Ctx) {
    let cacher = ctx.cacher(|c| c.request_watch_progress = true).await;
    for round in 0..5 {
        let name = format!("o{round}");
        let created = cacher.create(&key(&name), configmap(&name, "1")).await.unwrap();
        let elsewhere = write_elsewhere(&ctx, &name).await;
        // No waiting: the consistent read itself waits for the cache to reach etcd's current revision.
        let list = cacher.get_list("/configmaps/ns", &ListOptions::default()).await.unwrap();
        assert!(list.items.iter().any(|i| *i == created), "round {round}: the list misses an acknowledged write");
        assert!(list.resource_version.0 >= elsewhere, "round {round}: list RV {} < {elsewhere}", list.resource_version);
        assert_eq!(list.items.len(), round + 1);
    }
}

async fn cacher_watch_older_than_its_history_is_expired(ctx: Ctx) {
    let cacher = ctx.cacher(|c| c.history_capacity = 2).await;
    let listed = cacher.resource_version().0;
    // Right after the list, the list's version is still servable (nothing evicted yet).
    let mut from_list = cacher
        .watch("/configmaps/ns", &ListOptions { resource_version: listed.to_string(), ..ListOptions::default() })
        .await
        .unwrap();
    let mut rvs = Vec::new();
    for name in ["a", "b", "c"] {
        rvs.push(rv_of(&cacher.create(&key(name), configmap(name, "1")).await.unwrap()));
    }
    caught_up(&cacher, rvs[2]).await;
    for want in &rvs {
        let WatchEvent::Added(obj) = next_event(&mut from_list).await else { panic!("want ADDED") };
        assert_eq!(rv_of(&obj), *want);
    }
    // The history holds b and c now: a watch from before b is too old, from a it starts with b.
    let mut too_old = cacher
        .watch("/configmaps/ns", &ListOptions { resource_version: listed.to_string(), ..ListOptions::default() })
        .await
        .unwrap();
    let status = error_then_end(&mut too_old).await;
    assert_eq!(
        status,
        json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":410,"reason":"Expired",
               "message":format!("too old resource version: {listed} ({})", rvs[1] - 1)})
    );
    let mut from_a = cacher
        .watch("/configmaps/ns", &ListOptions { resource_version: rvs[0].to_string(), ..ListOptions::default() })
        .await
        .unwrap();
    for want in &rvs[1..] {
        let WatchEvent::Added(obj) = next_event(&mut from_a).await else { panic!("want ADDED") };
        assert_eq!(rv_of(&obj), *want);
    }
    expect_quiet(&mut from_a).await;
}

async fn cacher_bookmarks_only_when_allowed(ctx: Ctx) {
    let cacher = ctx
        .cacher(|c| {
            c.bookmark_frequency = Duration::from_millis(300);
            c.bookmark_tick = Duration::from_millis(100);
        })
        .await;
    let start = cacher.resource_version().0.to_string();
    let with = ListOptions { resource_version: start.clone(), allow_watch_bookmarks: true, ..ListOptions::default() };
    let without = ListOptions { resource_version: start, ..ListOptions::default() };
    let mut w_with = cacher.watch("/configmaps/ns", &with).await.unwrap();
    let mut w_without = cacher.watch("/configmaps/ns", &without).await.unwrap();
    let a = cacher.create(&key("a"), configmap("a", "1")).await.unwrap();
    assert_eq!(next_event(&mut w_with).await, WatchEvent::Added(a.clone().into()));
    assert_eq!(next_event(&mut w_without).await, WatchEvent::Added(a.clone().into()));
    match next_event(&mut w_with).await {
        WatchEvent::Bookmark(rv) => assert!(rv.0 >= rv_of(&a), "bookmark {rv} before the delivered event"),
        other => panic!("want a BOOKMARK, got {other:?}"),
    }
    if let Ok(e) = tokio::time::timeout(Duration::from_millis(1000), w_without.next()).await {
        panic!("no bookmarks without allowWatchBookmarks, got {e:?}");
    }
}

async fn cacher_send_initial_events_ends_with_the_annotated_bookmark(ctx: Ctx) {
    let cacher = ctx.cacher(|c| c.request_watch_progress = true).await;
    let a = cacher.create(&key("a"), configmap("a", "1")).await.unwrap();
    let b = cacher.create(&key("b"), configmap("b", "1")).await.unwrap();
    let elsewhere = write_elsewhere(&ctx, "s").await;
    let watch_list = |rv: &str, bookmarks: bool| ListOptions {
        resource_version: rv.to_string(),
        resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
        send_initial_events: Some(true),
        allow_watch_bookmarks: bookmarks,
        ..ListOptions::default()
    };
    // RV "": the state at a revision not older than etcd's current one, then the end marker at it.
    let mut listed = cacher.watch("/configmaps/ns", &watch_list("", true)).await.unwrap();
    assert_eq!(next_event(&mut listed).await, WatchEvent::Added(a.clone().into()));
    assert_eq!(next_event(&mut listed).await, WatchEvent::Added(b.clone().into()));
    match next_event(&mut listed).await {
        WatchEvent::InitialEventsEnd(rv) => assert!(rv.0 >= elsewhere, "end bookmark {rv} < {elsewhere}"),
        other => panic!("want the initial-events-end bookmark, got {other:?}"),
    }
    // Without bookmarks: the same initial events, no end marker.
    let mut unmarked = cacher.watch("/configmaps/ns", &watch_list("0", false)).await.unwrap();
    assert_eq!(next_event(&mut unmarked).await, WatchEvent::Added(a.clone().into()));
    assert_eq!(next_event(&mut unmarked).await, WatchEvent::Added(b.clone().into()));
    // sendInitialEvents=false from "0": no state, just what happens next.
    let opts = ListOptions { send_initial_events: Some(false), ..watch_list("0", false) };
    let mut bare = cacher.watch("/configmaps/ns", &opts).await.unwrap();
    let c = cacher.create(&key("c"), configmap("c", "1")).await.unwrap();
    for w in [&mut listed, &mut unmarked, &mut bare] {
        assert_eq!(next_event(w).await, WatchEvent::Added(c.clone().into()));
    }
}

async fn cacher_send_initial_events_from_a_future_resource_version_times_out(ctx: Ctx) {
    let cacher = ctx.cacher(|c| c.request_watch_progress = true).await;
    let future = current_revision(&ctx).await + 5;
    let opts = ListOptions {
        resource_version: future.to_string(),
        resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
        send_initial_events: Some(true),
        allow_watch_bookmarks: true,
        ..ListOptions::default()
    };
    let mut w = cacher.watch("/configmaps/ns", &opts).await.unwrap();
    let status = error_then_end(&mut w).await;
    assert_eq!(status, too_large_status(future, cacher.resource_version().0));
    // A plain watch from the same future version is accepted and waits.
    let mut plain = cacher
        .watch("/configmaps/ns", &ListOptions { resource_version: future.to_string(), ..ListOptions::default() })
        .await
        .unwrap();
    expect_quiet(&mut plain).await;
}

async fn cacher_watch_list_needs_request_watch_progress(ctx: Ctx) {
    let cacher = ctx.cacher(|c| c.request_watch_progress = false).await;
    let opts = ListOptions {
        resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
        send_initial_events: Some(true),
        allow_watch_bookmarks: true,
        ..ListOptions::default()
    };
    let mut w = cacher.watch("/configmaps/ns", &opts).await.unwrap();
    assert_eq!(
        error_then_end(&mut w).await,
        json!({"apiVersion":"v1","kind":"Status","metadata":{},"status":"Failure","code":500,"reason":"InternalError",
               "message":"a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled"})
    );
}

async fn cacher_reinitializes_after_its_watch_fails(ctx: Ctx) {
    // The Cacher reaches etcd through a proxy the case closes: its etcd watch breaks, and the etcd client's
    // attempts to resume it on its one endpoint fail until they give up (100 attempts, 25 ms apart), so the
    // watch fails. A connection that merely broke would be resumed unseen, as kube-apiserver's client does.
    let proxy = Proxy::start(&ctx.endpoint).await;
    let cacher = new_cacher(ctx.etcd3_store(&proxy.endpoint).await, ctx.server, |_| {}).await;
    let direct = ctx.etcd3_store(&ctx.endpoint).await;
    let a = direct.create(&key("a"), configmap("a", "1")).await.unwrap();
    caught_up(&cacher, rv_of(&a)).await;
    let from_a = || ListOptions { resource_version: rv_of(&a).to_string(), ..ListOptions::default() };
    let mut old_watch = cacher.watch("/configmaps/ns", &from_a()).await.unwrap();
    proxy.close();
    // While it re-lists, history moves on and is compacted away.
    let b = direct.create(&key("b"), configmap("b", "1")).await.unwrap();
    compact(&ctx, current_revision(&ctx).await).await;
    // The failed watch makes it pending at once, and it re-lists only after its 1 s pause.
    let mut waited = 0;
    while cacher.ready() {
        assert!(waited < 2000, "the cacher never noticed its failed watch");
        tokio::time::sleep(Duration::from_millis(5)).await;
        waited += 1;
    }
    proxy.open();
    // Not ready: watches and unpaged lists get 429; a paged unfiltered list and a get go to etcd.
    let err = cacher.watch("/configmaps/ns", &from_a()).await.err().expect("429 while re-initializing");
    let status = err.to_status(Operation::Watch, &cm(), "");
    assert_eq!((status.code, status.reason.as_deref()), (Some(429), Some("TooManyRequests")), "{err:?}");
    assert!(status.message.unwrap().starts_with("storage is (re)initializing"));
    assert_eq!(status.details.unwrap().retry_after_seconds, Some(1));
    let any = ListOptions { resource_version: "0".into(), ..ListOptions::default() };
    let err = cacher.get_list("/configmaps/ns", &any).await.unwrap_err();
    assert!(matches!(err, StorageError::NotReady { .. }), "{err:?}");
    let paged = ListOptions {
        predicate: apiserver::storage::SelectionPredicate { limit: 10, ..Default::default() },
        ..ListOptions::default()
    };
    assert_eq!(cacher.get_list("/configmaps/ns", &paged).await.unwrap().items, vec![a.clone(), b.clone()]);
    assert_eq!(cacher.get(&key("b"), &GetOptions { resource_version: "0".into() }).await.unwrap(), b);
    assert!(cacher.wait_ready(Duration::from_secs(10)).await, "the cacher never re-initialized");
    let relisted = cacher.resource_version().0;
    assert!(relisted >= rv_of(&b));
    // Re-initialization ended the old watch without an ERROR event.
    let end = tokio::time::timeout(Duration::from_secs(5), old_watch.next()).await.expect("the old watch must end");
    assert_eq!(end, None);
    // The history starts at the relist: older versions are too old, the relist's own is servable.
    let mut too_old = cacher.watch("/configmaps/ns", &from_a()).await.unwrap();
    let status = error_then_end(&mut too_old).await;
    assert_eq!(status["code"], 410);
    assert_eq!(status["message"], format!("too old resource version: {} ({relisted})", rv_of(&a)));
    let opts = ListOptions { resource_version: relisted.to_string(), ..ListOptions::default() };
    let mut fresh = cacher.watch("/configmaps/ns", &opts).await.unwrap();
    let c = direct.create(&key("c"), configmap("c", "1")).await.unwrap();
    assert_eq!(next_event(&mut fresh).await, WatchEvent::Added(c.into()));
    assert_eq!(cacher.get(&key("b"), &GetOptions { resource_version: "0".into() }).await.unwrap(), b);
}
