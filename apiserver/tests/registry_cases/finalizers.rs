//! Finalizers: a delete of an object with finalizers only marks it (`deletionTimestamp` now, grace 0,
//! watchers see MODIFIED) and answers with it; no finalizer may be added afterwards; the update that
//! removes the last one deletes it (watchers see DELETED) and answers with the object sent. ownerReferences
//! are kept as sent.

use std::time::Duration;

use apiserver::registry::ListRequest;
use apiserver::storage::{GetOptions, Preconditions, WatchEvent};
use serde_json::json;

use super::harness::{expect_err, Case, Ctx, NOW};

pub fn cases() -> Vec<Case> {
    cases![finalizers_hold_an_object_until_an_update_removes_them]
}

async fn finalizers_hold_an_object_until_an_update_removes_them(ctx: Ctx) {
    ctx.namespace("ns").await;
    let list = ctx.configmaps.list("ns", &ListRequest::default()).await.unwrap();
    let from = ListRequest { resource_version: list.resource_version.to_string(), ..ListRequest::default() };
    let mut watch = ctx.configmaps.watch("ns", &from).await.unwrap();
    let owner = json!([{"apiVersion": "v1", "kind": "Namespace", "name": "ns", "uid": "u-1"}]);
    let created = ctx
        .configmaps
        .create(
            "ns",
            json!({"metadata": {"name": "a", "finalizers": ["example.com/a", "example.com/b"], "ownerReferences": owner},
                   "data": {"k": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(created["metadata"]["ownerReferences"], owner);
    let marked = ctx.configmaps.delete("ns", "a", &Preconditions::default()).await.unwrap();
    assert!(!marked.deleted);
    assert_eq!(marked.body["metadata"]["deletionTimestamp"], NOW);
    assert_eq!(marked.body["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(marked.body["metadata"]["finalizers"], json!(["example.com/a", "example.com/b"]));
    let again = ctx.configmaps.delete("ns", "a", &Preconditions::default()).await.unwrap();
    assert_eq!(again.body, marked.body, "a second delete changes nothing");

    // No finalizer may join once deletion has begun.
    let mut more = marked.body.clone();
    more["metadata"]["finalizers"] = json!(["example.com/a", "example.com/b", "example.com/c"]);
    let status = expect_err(ctx.configmaps.update("ns", "a", more).await);
    assert_eq!(status["code"], 422);
    assert_eq!(
        status["message"],
        "ConfigMap \"a\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/c\"}"
    );
    // Removing one keeps the object; removing the last deletes it.
    let mut one = marked.body.clone();
    one["metadata"]["finalizers"] = json!(["example.com/b"]);
    one["data"]["k"] = json!("2");
    let (one, _) = ctx.configmaps.update("ns", "a", one).await.unwrap();
    assert_eq!(one["data"]["k"], "2");
    let mut none = one.clone();
    none["metadata"]["finalizers"] = json!([]);
    let (answer, created_now) = ctx.configmaps.update("ns", "a", none).await.unwrap();
    assert!(!created_now);
    assert_eq!(answer["metadata"]["finalizers"], json!([]), "the answer is the object sent");
    assert_eq!(expect_err(ctx.configmaps.get("ns", "a", &GetOptions::default()).await)["code"], 404);

    let mut seen = Vec::new();
    for _ in 0..4 {
        let event = tokio::time::timeout(Duration::from_secs(5), watch.next()).await.expect("an event").expect("open");
        seen.push(match event {
            WatchEvent::Added(o) => format!("ADDED {}", o["data"]["k"]),
            WatchEvent::Modified(o) => {
                format!("MODIFIED {} deleting={}", o["data"]["k"], o["metadata"].get("deletionTimestamp").is_some())
            }
            WatchEvent::Deleted(o) => format!("DELETED {}", o["data"]["k"]),
            other => format!("{other:?}"),
        });
    }
    assert_eq!(seen, ["ADDED \"1\"", "MODIFIED \"1\" deleting=true", "MODIFIED \"2\" deleting=true", "DELETED \"2\""]);
}
