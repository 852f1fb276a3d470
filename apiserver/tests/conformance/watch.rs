//! Watches: from an exact resourceVersion (changes after it, not at it), from 0 (current state as ADDED,
//! then changes), from the future (waits), after compaction (one 410 ERROR event, then the end), DELETED
//! events carrying the last state at the deletion revision, selector transitions, progress bookmarks.

use apiserver::storage::{ListOptions, ResourceVersion, SelectionPredicate, Storage, StorageError, WatchEvent};
use serde_json::{json, Value};

use super::harness::{compact, configmap, current_revision, data_of, expect_quiet, key, next_event, rv_of, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![
        watch_from_resource_version_delivers_later_changes_only,
        watch_from_zero_sends_current_state_first,
        watch_from_the_future_waits,
        watch_deleted_event_carries_last_state_at_deletion_revision,
        watch_selector_transitions_become_added_and_deleted,
        watch_with_invalid_resource_version_is_refused,
    ]
}

/// Cases of the uncached path only: the cache's window is its own history, not etcd's (a watch from a
/// compacted revision it still holds succeeds; `cacher.rs` checks its 410), and its watches do not pass
/// progress requests on to etcd (it sends its own bookmarks).
pub fn etcd3_cases() -> Vec<Case> {
    cases![watch_from_a_compacted_revision_fails_with_expired, watch_progress_request_yields_a_bookmark]
}

fn from(rv: u64) -> ListOptions {
    ListOptions { resource_version: rv.to_string(), ..ListOptions::default() }
}

fn set_data(mut obj: Value, v: &str) -> Value {
    obj["data"]["k"] = json!(v);
    obj
}

async fn watch_from_resource_version_delivers_later_changes_only(ctx: Ctx) {
    let a = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let mut w = ctx.store.watch("/configmaps/ns", &from(rv_of(&a))).await.unwrap();
    let a2 = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    let b = ctx.store.create(&key("b"), configmap("b", "1")).await.unwrap();
    ctx.store.create("/configmaps/other/x", configmap("x", "1")).await.unwrap();
    assert_eq!(next_event(&mut w).await, WatchEvent::Modified(a2.into()));
    assert_eq!(next_event(&mut w).await, WatchEvent::Added(b.into()));
    expect_quiet(&mut w).await;
}

async fn watch_from_zero_sends_current_state_first(ctx: Ctx) {
    let a = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let b = ctx.store.create(&key("b"), configmap("b", "1")).await.unwrap();
    for rv in ["0", ""] {
        let mut w = ctx
            .store
            .watch("/configmaps/ns", &ListOptions { resource_version: rv.into(), ..ListOptions::default() })
            .await
            .unwrap();
        assert_eq!(next_event(&mut w).await, WatchEvent::Added(a.clone().into()), "rv {rv:?}");
        assert_eq!(next_event(&mut w).await, WatchEvent::Added(b.clone().into()), "rv {rv:?}");
        expect_quiet(&mut w).await;
    }
    let mut w = ctx.store.watch("/configmaps/ns", &from(0)).await.unwrap();
    next_event(&mut w).await;
    next_event(&mut w).await;
    let c = ctx.store.create(&key("c"), configmap("c", "1")).await.unwrap();
    assert_eq!(next_event(&mut w).await, WatchEvent::Added(c.into()));
}

async fn watch_from_the_future_waits(ctx: Ctx) {
    let start = current_revision(&ctx).await + 2;
    let mut w = ctx.store.watch("/configmaps/ns", &from(start)).await.unwrap();
    expect_quiet(&mut w).await;
    ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    ctx.store.create(&key("b"), configmap("b", "1")).await.unwrap();
    let c = ctx.store.create(&key("c"), configmap("c", "1")).await.unwrap();
    assert_eq!(rv_of(&c), start + 1);
    assert_eq!(next_event(&mut w).await, WatchEvent::Added(c.into()));
}

async fn watch_from_a_compacted_revision_fails_with_expired(ctx: Ctx) {
    let a = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "3")), None).await.unwrap();
    compact(&ctx, current_revision(&ctx).await).await;
    let mut w = ctx.store.watch("/configmaps/ns", &from(rv_of(&a))).await.unwrap();
    let WatchEvent::Error(status) = next_event(&mut w).await else { panic!("want an ERROR event") };
    assert_eq!((status.code, status.reason.as_deref()), (Some(410), Some("Expired")));
    assert_eq!(status.message.as_deref(), Some("The resourceVersion for the provided watch is too old."));
    assert_eq!(status.status.as_deref(), Some("Failure"));
    let end = tokio::time::timeout(std::time::Duration::from_secs(5), w.next()).await.expect("the watch must end");
    assert_eq!(end, None);
}

async fn watch_deleted_event_carries_last_state_at_deletion_revision(ctx: Ctx) {
    let a = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let a2 = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "2")), None).await.unwrap();
    let mut w = ctx.store.watch("/configmaps/ns", &from(rv_of(&a))).await.unwrap();
    let deleted = ctx.store.delete(&key("a"), None, |_| Ok(()), None).await.unwrap();
    assert_eq!(next_event(&mut w).await, WatchEvent::Modified(a2.into()));
    let WatchEvent::Deleted(obj) = next_event(&mut w).await else { panic!("want DELETED") };
    assert_eq!(data_of(&obj), "2");
    assert_eq!(rv_of(&obj), rv_of(&deleted));
    assert_eq!(rv_of(&obj), current_revision(&ctx).await);
}

async fn watch_selector_transitions_become_added_and_deleted(ctx: Ctx) {
    let start = current_revision(&ctx).await;
    let selected = SelectionPredicate::matching(|o: &Value| o["data"]["k"] == json!("yes"));
    let opts = ListOptions { resource_version: start.to_string(), predicate: selected, ..ListOptions::default() };
    let mut w = ctx.store.watch("/configmaps/ns", &opts).await.unwrap();
    ctx.store.create(&key("a"), configmap("a", "no")).await.unwrap();
    let a_yes = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "yes")), None).await.unwrap();
    let a_no = ctx.store.guaranteed_update(&key("a"), false, None, |o, _| Ok(set_data(o, "no")), None).await.unwrap();
    ctx.store.delete(&key("a"), None, |_| Ok(()), None).await.unwrap();
    assert_eq!(next_event(&mut w).await, WatchEvent::Added(a_yes.into()));
    // Leaving the selection is a DELETED carrying the previous (matching) state at the new revision.
    let WatchEvent::Deleted(gone) = next_event(&mut w).await else { panic!("want DELETED") };
    assert_eq!(data_of(&gone), "yes");
    assert_eq!(rv_of(&gone), rv_of(&a_no));
    expect_quiet(&mut w).await;
}

async fn watch_progress_request_yields_a_bookmark(ctx: Ctx) {
    let a = ctx.store.create(&key("a"), configmap("a", "1")).await.unwrap();
    let opts = ListOptions { resource_version: rv_of(&a).to_string(), progress_notify: true, ..ListOptions::default() };
    let mut w = ctx.store.watch("/configmaps/ns", &opts).await.unwrap();
    ctx.store.create("/configmaps/other/x", configmap("x", "1")).await.unwrap();
    let current = current_revision(&ctx).await;
    // etcd answers a progress request only once the watch has caught up; ask until it does.
    let mut bookmark = None;
    for _ in 0..20 {
        w.request_progress();
        if let Ok(Some(e)) = tokio::time::timeout(std::time::Duration::from_millis(250), w.next()).await {
            bookmark = Some(e);
            break;
        }
    }
    match bookmark {
        Some(WatchEvent::Bookmark(rv)) => assert!(rv >= ResourceVersion(current), "bookmark {rv} < current {current}"),
        other => panic!("want a bookmark, got {other:?}"),
    }
}

async fn watch_with_invalid_resource_version_is_refused(ctx: Ctx) {
    let opts = ListOptions { resource_version: "1.5".into(), ..ListOptions::default() };
    let err = ctx.store.watch("/configmaps/ns", &opts).await.err().expect("must fail");
    assert!(matches!(err, StorageError::InvalidResourceVersion { .. }), "{err:?}");
}
