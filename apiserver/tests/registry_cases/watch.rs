//! Watch through the registry: ADDED, MODIFIED and DELETED in order from a list's resourceVersion, with a
//! label selector turning matching transitions into ADDED and DELETED.

use std::time::Duration;

use apiserver::registry::ListRequest;
use apiserver::storage::{Preconditions, WatchEvent, Watcher};
use serde_json::{json, Value};

use super::harness::{Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![watch_delivers_added_modified_deleted]
}

async fn next(w: &mut Watcher) -> WatchEvent {
    tokio::time::timeout(Duration::from_secs(5), w.next()).await.expect("no event within 5 s").expect("the watch ended")
}

fn summary(e: &WatchEvent) -> String {
    let name =
        |o: &Value| format!("{}={}", o["metadata"]["name"].as_str().unwrap(), o["data"]["k"].as_str().unwrap_or(""));
    match e {
        WatchEvent::Added(o) => format!("ADDED {}", name(o)),
        WatchEvent::Modified(o) => format!("MODIFIED {}", name(o)),
        WatchEvent::Deleted(o) => format!("DELETED {}", name(o)),
        other => format!("{other:?}"),
    }
}

async fn watch_delivers_added_modified_deleted(ctx: Ctx) {
    ctx.namespace("ns").await;
    let list = ctx.configmaps.list("ns", &ListRequest::default()).await.unwrap();
    let from = ListRequest { resource_version: list.resource_version.to_string(), ..ListRequest::default() };
    let mut all = ctx.configmaps.watch("ns", &from).await.unwrap();
    let selected = ListRequest { label_selector: "app=web".into(), ..from.clone() };
    let mut web = ctx.configmaps.watch("ns", &selected).await.unwrap();
    let created = ctx
        .configmaps
        .create("ns", json!({"metadata": {"name": "a", "labels": {"app": "web"}}, "data": {"k": "1"}}))
        .await
        .unwrap();
    let mut edit = created.clone();
    edit["data"]["k"] = json!("2");
    let (edited, _) = ctx.configmaps.update("ns", "a", edit).await.unwrap();
    let mut unlabel = edited.clone();
    unlabel["metadata"]["labels"] = json!({"app": "db"});
    ctx.configmaps.update("ns", "a", unlabel).await.unwrap();
    ctx.configmaps.delete("ns", "a", &Preconditions::default()).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(summary(&next(&mut all).await));
    }
    assert_eq!(seen, ["ADDED a=1", "MODIFIED a=2", "MODIFIED a=2", "DELETED a=2"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(summary(&next(&mut web).await));
    }
    assert_eq!(seen, ["ADDED a=1", "MODIFIED a=2", "DELETED a=2"], "leaving the selector is a DELETED");
}
