//! End to end: the namespace controller against a real apiserver in this process (`server::build` over an
//! embedded fake-etcd member, reached through `ApiServer::handle`), with the manager's shared informers.
//! A deleted namespace is emptied and then gone; a namespace whose content waits on a finalizer stays
//! Terminating, saying so in its conditions, until that finalizer is removed.
#![cfg(not(madsim))]

use crate::support::{self, condition, items};

use std::sync::Arc;
use std::time::Duration;

use controllers::client::{Client, ClientError, MERGE_PATCH};
use controllers::kcm::namespace;
use serde_json::{json, Value};

/// How long a namespace may take to go: the 5 s grace before the first pass, and for the held namespace
/// a requeue after 8 s (a 15 s finalizer estimate), with room to spare.
const GONE_WITHIN: Duration = Duration::from_secs(60);

/// The apiserver, a client of it, and the namespace controller running in a task of its own.
async fn start(name: &str) -> (Arc<Client>, tokio::task::JoinHandle<()>) {
    let (client, ctx) = support::context(name, namespace::DESCRIPTOR.name).await;
    let controller = tokio::spawn(namespace::run(ctx));
    (client, controller)
}

/// A namespace holding a configmap (with `finalizers`), a service account and an unscheduled pod.
async fn populate(client: &Client, ns: &str, finalizers: &[&str]) {
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": ns}})).await.expect("the namespace is created");
    let cm = json!({"metadata": {"name": "cm", "finalizers": finalizers}, "data": {"k": "v"}});
    client.create(&format!("/api/v1/namespaces/{ns}/configmaps"), &cm).await.expect("the configmap is created");
    // The serviceaccount controller is not running: its account is made here, as pods need it to exist.
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{ns}/serviceaccounts"), &account).await.expect("the account is created");
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    client.create(&format!("/api/v1/namespaces/{ns}/pods"), &pod).await.expect("the pod is created");
}

/// Polls the namespace every 50 ms until `done` holds of its GET's answer, or panics after `limit`.
async fn wait_for(
    client: &Client,
    ns: &str,
    limit: Duration,
    what: &str,
    done: impl Fn(&Result<Value, ClientError>) -> bool,
) -> Result<Value, ClientError> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let answer = client.get(&format!("/api/v1/namespaces/{ns}")).await;
        if done(&answer) {
            return answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{ns}: {what} did not happen within {limit:?}; last {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_namespace_is_emptied_and_then_gone() {
    let (client, controller) = start("ns-gone").await;
    populate(&client, "doomed", &[]).await;
    let deleting = client.delete("/api/v1/namespaces/doomed", None).await.expect("the delete is accepted");
    assert_eq!(deleting["status"]["phase"], "Terminating");
    assert_eq!(deleting["spec"]["finalizers"], json!(["kubernetes"]), "the namespace waits for the controller");

    wait_for(&client, "doomed", GONE_WITHIN, "the namespace going", |a| matches!(a, Err(e) if e.is_not_found()))
        .await
        .expect_err("the namespace is gone");
    assert!(items(&client, "/api/v1/namespaces/doomed/configmaps").await.is_empty());
    assert!(items(&client, "/api/v1/namespaces/doomed/pods").await.is_empty());
    assert!(items(&client, "/api/v1/namespaces/doomed/serviceaccounts").await.is_empty());
    // Other namespaces are left alone.
    client.get("/api/v1/namespaces/default").await.expect("default is still there");
    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_held_by_a_finalizer_holds_the_namespace_until_it_is_removed() {
    let (client, controller) = start("ns-held").await;
    populate(&client, "held", &["example.com/hold"]).await;
    client.delete("/api/v1/namespaces/held", None).await.expect("the delete is accepted");

    let finalizers_remaining = |a: &Result<Value, ClientError>| matches!(a, Ok(ns) if condition(ns, "NamespaceFinalizersRemaining").is_some_and(|c| c["status"] == "True"));
    let ns =
        wait_for(&client, "held", GONE_WITHIN, "NamespaceFinalizersRemaining", finalizers_remaining).await.unwrap();
    let held = condition(&ns, "NamespaceFinalizersRemaining").unwrap();
    assert_eq!(held["reason"], "SomeFinalizersRemain");
    assert_eq!(
        held["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(held["lastTransitionTime"], "2023-11-14T22:13:20Z");
    let remaining = condition(&ns, "NamespaceContentRemaining").unwrap();
    assert_eq!(
        (remaining["status"].as_str(), remaining["reason"].as_str(), remaining["message"].as_str()),
        (
            Some("True"),
            Some("SomeResourcesRemain"),
            Some("Some resources are remaining: configmaps. has 1 resource instances")
        )
    );
    for (kind, reason) in [
        ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered"),
        ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions"),
        ("NamespaceDeletionContentFailure", "ContentDeleted"),
    ] {
        let c = condition(&ns, kind).unwrap_or_else(|| panic!("{kind} is set"));
        assert_eq!((c["status"].as_str(), c["reason"].as_str()), (Some("False"), Some(reason)), "{kind}");
    }
    // The unscheduled pod went at once; the configmap waits on its finalizer, marked for deletion.
    assert!(items(&client, "/api/v1/namespaces/held/pods").await.is_empty());
    let cm = client.get("/api/v1/namespaces/held/configmaps/cm").await.expect("the held configmap stays");
    assert!(cm.pointer("/metadata/deletionTimestamp").is_some());

    // Past the next pass (8 s after the first), the namespace is still held and still says why.
    tokio::time::sleep(Duration::from_secs(9)).await;
    let ns = client.get("/api/v1/namespaces/held").await.expect("the namespace is still there");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(condition(&ns, "NamespaceFinalizersRemaining").unwrap()["status"], "True");

    let release = json!({"metadata": {"finalizers": null}});
    client
        .patch("/api/v1/namespaces/held/configmaps/cm", &release, MERGE_PATCH)
        .await
        .expect("the finalizer is removed");
    wait_for(&client, "held", GONE_WITHIN, "the namespace going", |a| matches!(a, Err(e) if e.is_not_found()))
        .await
        .expect_err("the namespace is gone");
    controller.abort();
}
