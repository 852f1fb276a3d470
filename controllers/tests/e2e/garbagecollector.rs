//! End to end: the garbage collector against a real apiserver in this process (`server::build` over an
//! embedded fake-etcd member, reached through `ApiServer::handle`), on the manager's shared informers.
//! ConfigMaps stand for owners and dependents: a dependent of a deleted owner goes (background); an owner
//! deleted in the foreground waits with `foregroundDeletion` until its blocking dependent is gone; an
//! owner deleted with the Orphan policy leaves its dependent, unowned; a reference with the wrong UID is
//! dangling; a reference across namespaces gets an `OwnerRefInvalidNamespace` warning; a custom resource
//! defined after the collector started is monitored from the next discovery round, and its dangling
//! reference is patched out with the JSON merge patch fallback (custom resources take no strategic merge
//! patch).
#![cfg(not(madsim))]

use crate::support::{self, WITHIN};

use std::sync::Arc;
use std::time::Duration;

use controllers::client::{Client, ClientError, MERGE_PATCH};
use controllers::kcm::garbagecollector;
use serde_json::{json, Value};

/// How long the collector may take: its monitors' first lists (every deletable resource), then a few
/// requests per object, with room for a loaded machine.
/// The apiserver, a client of it, and the garbage collector running in a task of its own.
async fn start(name: &str) -> (Arc<Client>, tokio::task::JoinHandle<()>) {
    start_with(name, garbagecollector::Options::default()).await
}

async fn start_with(name: &str, options: garbagecollector::Options) -> (Arc<Client>, tokio::task::JoinHandle<()>) {
    let (client, ctx) = support::context(name, garbagecollector::DESCRIPTOR.name).await;
    let controller = tokio::spawn(garbagecollector::run_with(ctx, options));
    (client, controller)
}

fn configmaps(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

/// Creates ConfigMap `ns/name` with `metadata` merged in; returns its uid.
async fn create(client: &Client, ns: &str, name: &str, metadata: Value) -> String {
    let mut cm = json!({"metadata": {"name": name}, "data": {"k": "v"}});
    if let (Some(meta), Some(extra)) = (cm["metadata"].as_object_mut(), metadata.as_object()) {
        meta.extend(extra.clone());
    }
    let created = client.create(&configmaps(ns), &cm).await.unwrap_or_else(|e| panic!("{ns}/{name} is created: {e}"));
    created["metadata"]["uid"].as_str().expect("a uid").to_string()
}

/// An owner reference to ConfigMap `name` with `uid`.
fn owned_by(name: &str, uid: &str, block: bool) -> Value {
    json!({"ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid, "blockOwnerDeletion": block}
    ]})
}

/// Polls `path` every 50 ms until `done` holds of its GET's answer, or panics after [`WITHIN`].
async fn wait_for(
    client: &Client,
    path: &str,
    what: &str,
    done: impl Fn(&Result<Value, ClientError>) -> bool,
) -> Result<Value, ClientError> {
    let deadline = tokio::time::Instant::now() + WITHIN;
    loop {
        let answer = client.get(path).await;
        if done(&answer) {
            return answer;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what} did not happen within {WITHIN:?}; last {answer:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_gone(client: &Client, path: &str, what: &str) {
    wait_for(client, path, what, |a| matches!(a, Err(e) if e.is_not_found())).await.expect_err("gone");
}

fn finalizers(object: &Value) -> Value {
    object.pointer("/metadata/finalizers").cloned().unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_deletion_collects_the_dependent() {
    let (client, controller) = start("gc-background").await;
    let owner = create(&client, "default", "owner", json!({})).await;
    create(&client, "default", "dep", owned_by("owner", &owner, false)).await;
    create(&client, "default", "bystander", json!({})).await;
    client.delete(&format!("{}/owner", configmaps("default")), None).await.expect("the owner is deleted");

    wait_gone(&client, &format!("{}/dep", configmaps("default")), "the dependent going").await;
    client.get(&format!("{}/bystander", configmaps("default"))).await.expect("an unowned configmap stays");
    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_deletion_waits_for_the_blocking_dependent() {
    let (client, controller) = start("gc-foreground").await;
    let owner_path = format!("{}/owner", configmaps("default"));
    let dep_path = format!("{}/dep", configmaps("default"));
    let owner = create(&client, "default", "owner", json!({})).await;
    // The dependent's own finalizer holds it once the collector deletes it, so the wait can be seen.
    let mut dep_meta = owned_by("owner", &owner, true);
    dep_meta["finalizers"] = json!(["example.com/hold"]);
    create(&client, "default", "dep", dep_meta).await;

    let deleting = client
        .delete(
            &owner_path,
            Some(&json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})),
        )
        .await
        .expect("the foreground delete is accepted");
    assert_eq!(finalizers(&deleting), json!(["foregroundDeletion"]));
    assert!(deleting.pointer("/metadata/deletionTimestamp").is_some());

    // The collector deletes the dependent, which its finalizer holds.
    let deleting_dep =
        |a: &Result<Value, ClientError>| matches!(a, Ok(d) if d.pointer("/metadata/deletionTimestamp").is_some());
    wait_for(&client, &dep_path, "the dependent being deleted", deleting_dep).await.unwrap();
    // A while later the owner still waits for it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let waiting = client.get(&owner_path).await.expect("the owner waits for its blocking dependent");
    assert_eq!(finalizers(&waiting), json!(["foregroundDeletion"]));

    client
        .patch(&dep_path, &json!({"metadata": {"finalizers": null}}), MERGE_PATCH)
        .await
        .expect("the dependent's finalizer is removed");
    wait_gone(&client, &dep_path, "the dependent going").await;
    wait_gone(&client, &owner_path, "the owner going after its dependent").await;
    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphan_deletion_leaves_the_dependent_unowned() {
    let (client, controller) = start("gc-orphan").await;
    let owner_path = format!("{}/owner", configmaps("default"));
    let dep_path = format!("{}/dep", configmaps("default"));
    let owner = create(&client, "default", "owner", json!({})).await;
    let dep = create(&client, "default", "dep", owned_by("owner", &owner, true)).await;

    let deleting = client
        .delete(&owner_path, Some(&json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"})))
        .await
        .expect("the orphan delete is accepted");
    assert_eq!(finalizers(&deleting), json!(["orphan"]));

    wait_gone(&client, &owner_path, "the owner going once its dependent is orphaned").await;
    let orphaned = client.get(&dep_path).await.expect("the dependent stays");
    assert_eq!(orphaned["metadata"]["uid"], dep.as_str());
    let refs = orphaned.pointer("/metadata/ownerReferences").cloned().unwrap_or(Value::Null);
    assert!(refs.is_null() || refs == json!([]), "the owner reference is removed: {refs}");
    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_with_the_wrong_uid_is_dangling() {
    let (client, controller) = start("gc-wrong-uid").await;
    create(&client, "default", "owner", json!({})).await;
    create(&client, "default", "dep", owned_by("owner", "0badc0de-0000-4000-8000-000000000000", false)).await;

    wait_gone(&client, &format!("{}/dep", configmaps("default")), "the dependent of a missing uid going").await;
    // The object under the owner's name is another object, and stays.
    client.get(&format!("{}/owner", configmaps("default"))).await.expect("the named configmap stays");
    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_across_namespaces_is_reported_and_dangling() {
    let (client, controller) = start("gc-cross-namespace").await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": "other"}})).await.expect("a namespace");
    let owner = create(&client, "other", "owner", json!({})).await;
    // Seen after its owner, so that the graph already knows the owner lives elsewhere.
    tokio::time::sleep(Duration::from_millis(500)).await;
    create(&client, "default", "dep", owned_by("owner", &owner, false)).await;

    let reported = |a: &Result<Value, ClientError>| matches!(a, Ok(list) if list["items"].as_array().is_some_and(|items| items.iter().any(|e| e["reason"] == "OwnerRefInvalidNamespace")));
    let events = wait_for(&client, "/api/v1/namespaces/default/events", "the warning", reported).await.unwrap();
    let event =
        events["items"].as_array().unwrap().iter().find(|e| e["reason"] == "OwnerRefInvalidNamespace").unwrap().clone();
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["source"]["component"], "garbage-collector-controller");
    assert_eq!(event["involvedObject"]["kind"], "ConfigMap");
    assert_eq!(event["involvedObject"]["name"], "dep");
    assert_eq!(event["involvedObject"]["namespace"], "default");
    assert_eq!(
        event["message"],
        format!("ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: {owner}] does not exist in namespace \"default\"")
    );
    // The owner does not exist where a namespaced dependent can refer to it: the dependent goes.
    wait_gone(&client, &format!("{}/dep", configmaps("default")), "the dependent going").await;
    client.get(&format!("{}/owner", configmaps("other"))).await.expect("the owner elsewhere stays");
    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_resource_defined_later_is_collected_through_the_merge_patch_fallback() {
    // Discovery every second, so that the CRD's resource is monitored soon after it is served.
    let options = garbagecollector::Options { sync_period: Duration::from_secs(1), ..Default::default() };
    let (client, controller) = start_with("gc-custom", options).await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", &crd).await.expect("the CRD is created");
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    wait_for(&client, widgets, "the widgets being served", Result::is_ok).await.unwrap();

    let solid = create(&client, "default", "solid", json!({})).await;
    let refs = json!([
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "solid", "uid": solid},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "0badc0de-0000-4000-8000-000000000001"},
    ]);
    let widget =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "ownerReferences": refs}});
    client.create(widgets, &widget).await.expect("the widget is created");

    // The widget keeps its solid owner and loses the dangling one, which only a merge patch can do.
    let one_owner = |a: &Result<Value, ClientError>| matches!(a, Ok(w) if w.pointer("/metadata/ownerReferences").and_then(Value::as_array).is_some_and(|r| r.len() == 1));
    let patched = wait_for(&client, &format!("{widgets}/w"), "the dangling reference going", one_owner).await.unwrap();
    assert_eq!(patched["metadata"]["ownerReferences"][0]["uid"], solid.as_str());
    assert_eq!(patched["metadata"]["ownerReferences"][0]["blockOwnerDeletion"], Value::Null, "left as it was");
    // And once the solid owner goes, so does the widget.
    client.delete(&format!("{}/solid", configmaps("default")), None).await.expect("the owner is deleted");
    wait_gone(&client, &format!("{widgets}/w"), "the widget going").await;
    controller.abort();
}
