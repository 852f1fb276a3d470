//! Graceful deletion of pods: the first delete sets `deletionTimestamp` = now + grace and
//! `deletionGracePeriodSeconds`, with the grace from the request or the pod's
//! `terminationGracePeriodSeconds` (30 by default), and 0 for a pod never scheduled or already finished;
//! later deletes may only shorten it, and a grace of 0 deletes at once.

use apiserver::registry::{DeleteOptions, Subresource, UpdateOptions};
use apiserver::storage::GetOptions;
use serde_json::{json, Value};

use super::harness::{expect_err, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![pod_deletion_is_graceful_and_only_shortened, pod_grace_period_sources]
}

/// `NOW` plus `secs`, as the registry writes timestamps.
fn now_plus(secs: i64) -> String {
    apiserver::registry::system::rfc3339(super::harness::NOW_UNIX_S + secs)
}

fn pod(name: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx:1"}]}})
}

async fn pod_deletion_is_graceful_and_only_shortened(ctx: Ctx) {
    ctx.namespace("ns").await;
    let created = ctx.pods.create("ns", pod("p", "node-1")).await.unwrap();
    assert_eq!(created["spec"]["terminationGracePeriodSeconds"], 30, "the default grace period");
    let uid = created["metadata"]["uid"].clone();
    let get = || async { ctx.pods.get("ns", "p", &GetOptions::default()).await.unwrap() };

    let first = ctx.pods.delete_with("ns", "p", &DeleteOptions::default()).await.unwrap();
    assert!(!first.deleted, "the pod waits for its grace period");
    assert_eq!(first.body["metadata"]["deletionTimestamp"], now_plus(30));
    assert_eq!(first.body["metadata"]["deletionGracePeriodSeconds"], 30);
    // A graceful deletion bumps a generation that is set; kube 1.32 sets none on pods.
    assert_eq!(first.body["metadata"].get("generation"), None, "no generation to bump");
    let marked = get().await;
    assert_eq!(marked, first.body, "the answer is the pod as stored");

    // Deletes that do not shorten the grace change nothing and answer with the pod, as the pod store
    // answers every delete (`ReturnDeletedObject`).
    for opts in [DeleteOptions::default(), DeleteOptions::grace(30), DeleteOptions::grace(60)] {
        let again = ctx.pods.delete_with("ns", "p", &opts).await.unwrap();
        assert!(!again.deleted);
        assert_eq!(again.body, marked, "{opts:?}");
        assert_eq!(get().await, marked, "{opts:?} changed the pod");
    }
    // An update can neither clear nor move the deletion.
    let mut edit = marked.clone();
    edit["metadata"].as_object_mut().unwrap().remove("deletionTimestamp");
    edit["metadata"]["deletionGracePeriodSeconds"] = json!(1);
    edit["metadata"]["labels"] = json!({"edited": "yes"});
    let (edited, _) = ctx.pods.update("ns", "p", edit).await.unwrap();
    assert_eq!(edited["metadata"]["deletionTimestamp"], now_plus(30));
    assert_eq!(edited["metadata"]["deletionGracePeriodSeconds"], 30);

    // A shorter grace moves the deadline back by the difference.
    let shorter = ctx.pods.delete_with("ns", "p", &DeleteOptions::grace(10)).await.unwrap();
    assert!(!shorter.deleted);
    assert_eq!(shorter.body["metadata"]["deletionTimestamp"], now_plus(10));
    assert_eq!(shorter.body["metadata"]["deletionGracePeriodSeconds"], 10);
    assert_eq!(shorter.body["metadata"].get("generation"), None, "shortening adds no generation");

    // A grace of 0 deletes at once (the kubelet's final delete).
    let gone = ctx.pods.delete_with("ns", "p", &DeleteOptions::grace(0)).await.unwrap();
    assert!(gone.deleted);
    assert_eq!(gone.body["kind"], "Pod", "the answer is the deleted pod");
    assert_eq!(gone.body["metadata"]["uid"], uid);
    assert_eq!(gone.body["metadata"]["deletionGracePeriodSeconds"], 0);
    let status = expect_err(ctx.pods.get("ns", "p", &GetOptions::default()).await);
    assert_eq!(status["message"], "pods \"p\" not found");
}

async fn pod_grace_period_sources(ctx: Ctx) {
    ctx.namespace("ns").await;
    let delete = |name: &'static str, opts: DeleteOptions| {
        let ctx = ctx.clone();
        async move { ctx.pods.delete_with("ns", name, &opts).await.unwrap() }
    };
    // The request's grace overrides the pod's own.
    let mut own = pod("own", "node-1");
    own["spec"]["terminationGracePeriodSeconds"] = json!(5);
    ctx.pods.create("ns", own).await.unwrap();
    assert_eq!(delete("own", DeleteOptions::default()).await.body["metadata"]["deletionGracePeriodSeconds"], 5);
    ctx.pods.create("ns", pod("asked", "node-1")).await.unwrap();
    let asked = delete("asked", DeleteOptions::grace(7)).await;
    assert_eq!(asked.body["metadata"]["deletionTimestamp"], now_plus(7));
    // A negative grace counts as one second.
    ctx.pods.create("ns", pod("negative", "node-1")).await.unwrap();
    assert_eq!(delete("negative", DeleteOptions::grace(-5)).await.body["metadata"]["deletionGracePeriodSeconds"], 1);
    // A pod never scheduled, or already finished, has nothing to stop: it goes at once.
    ctx.pods.create("ns", pod("unscheduled", "")).await.unwrap();
    assert!(delete("unscheduled", DeleteOptions::default()).await.deleted);
    let done = ctx.pods.create("ns", pod("done", "node-1")).await.unwrap();
    let mut status = done.clone();
    status["status"] = json!({"phase": "Succeeded"});
    ctx.pods.update_subresource("ns", "done", Subresource::Status, status, &UpdateOptions::default()).await.unwrap();
    assert!(delete("done", DeleteOptions::grace(30)).await.deleted);
    // A dry run answers with the marked pod and leaves it alone.
    let dry = ctx.pods.create("ns", pod("dry", "node-1")).await.unwrap();
    let answer = delete("dry", DeleteOptions { dry_run: vec!["All".into()], ..DeleteOptions::default() }).await;
    assert!(!answer.deleted);
    assert_eq!(answer.body["metadata"]["deletionTimestamp"], now_plus(30));
    assert_eq!(ctx.pods.get("ns", "dry", &GetOptions::default()).await.unwrap(), dry);
    // Finalizers keep a pod whose grace is over until they are removed.
    let mut held = pod("held", "node-1");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    ctx.pods.create("ns", held).await.unwrap();
    let first = delete("held", DeleteOptions::default()).await;
    assert_eq!(first.body["metadata"]["deletionGracePeriodSeconds"], 30);
    let last = delete("held", DeleteOptions::grace(0)).await;
    assert!(!last.deleted, "finalizers keep the pod");
    assert_eq!(last.body["metadata"]["deletionGracePeriodSeconds"], 0);
    let mut release = last.body.clone();
    release["metadata"]["finalizers"] = json!([]);
    ctx.pods.update("ns", "held", release).await.unwrap();
    assert_eq!(expect_err(ctx.pods.get("ns", "held", &GetOptions::default()).await)["code"], 404);
}
