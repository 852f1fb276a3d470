//! End to end: the ReplicaSet controller against a real apiserver in this process (`server::build` over an
//! embedded fake-etcd member, reached through `ApiServer::handle`), on the manager's shared informers.
//! A ReplicaSet of three gets three pods it owns (named from `<rs>-`, with a blocking controller
//! reference, each announced by a `SuccessfulCreate` event) and a status that counts them; a deleted pod
//! is replaced; scaling to one deletes two (`SuccessfulDelete`); a matching orphan is adopted with an
//! owner reference instead of a new pod being made. No scheduler or kubelet runs, so pods stay `Pending`
//! and nothing is ready.
#![cfg(not(madsim))]

use crate::support::{self, eventually, items, name};

use std::sync::Arc;

use controllers::client::{Client, MERGE_PATCH};
use controllers::kcm::replicaset;
use serde_json::{json, Value};

/// How long the controller may take to settle: a few requests per pod, with room for a loaded machine.
const NS: &str = "rs-e2e";

/// The apiserver, a client of it, a namespace with its `default` service account (which pods need to be
/// admitted), and the ReplicaSet controller running in a task of its own.
async fn start(name: &str) -> (Arc<Client>, tokio::task::JoinHandle<()>) {
    let (client, ctx) = support::context(name, replicaset::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    let controller = tokio::spawn(replicaset::run(ctx));
    (client, controller)
}

fn replica_set(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    })
}

fn rs_path(name: &str) -> String {
    format!("/apis/apps/v1/namespaces/{NS}/replicasets/{name}")
}

/// The pods labelled `app=<app>` that are not being deleted.
async fn live_pods(client: &Client, app: &str) -> Vec<Value> {
    items(client, &format!("/api/v1/namespaces/{NS}/pods?labelSelector=app%3D{app}"))
        .await
        .into_iter()
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .collect()
}

/// Waits until `app`'s ReplicaSet has exactly `count` live pods, all owned by it, and a status saying so.
async fn settled(client: &Client, app: &str, count: usize) -> (Value, Vec<Value>) {
    eventually(&format!("{app} settling at {count} pods"), || async {
        let rs = client.get(&rs_path(app)).await.map_err(|e| e.to_string())?;
        let pods = live_pods(client, app).await;
        let owned = pods.iter().all(|p| p.pointer("/metadata/ownerReferences/0/uid") == rs.pointer("/metadata/uid"));
        let status_ok = rs["status"]["replicas"] == json!(count)
            && rs["status"]["observedGeneration"] == rs["metadata"]["generation"];
        if pods.len() == count && owned && status_ok {
            Ok((rs, pods))
        } else {
            Err(format!("{} pods (all owned: {owned}), status {}", pods.len(), rs["status"]))
        }
    })
    .await
}

/// The messages of the events with `reason` about ReplicaSet `rs`.
async fn event_messages(client: &Client, rs: &str, reason: &str) -> Vec<String> {
    items(client, &format!("/api/v1/namespaces/{NS}/events"))
        .await
        .into_iter()
        .filter(|e| e["involvedObject"]["name"] == rs && e["reason"] == reason)
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_set_creates_replaces_scales_and_adopts_its_pods() {
    let (client, controller) = start("rs-e2e").await;
    let rs_collection = format!("/apis/apps/v1/namespaces/{NS}/replicasets");

    // Three replicas: three pods, owned, named from the ReplicaSet, counted in its status.
    client.create(&rs_collection, &replica_set("web", 3)).await.expect("the ReplicaSet is created");
    let (rs, pods) = settled(&client, "web", 3).await;
    for pod in &pods {
        let owner = &pod["metadata"]["ownerReferences"][0];
        assert_eq!(
            (&owner["apiVersion"], &owner["kind"], &owner["name"], &owner["controller"], &owner["blockOwnerDeletion"]),
            (&json!("apps/v1"), &json!("ReplicaSet"), &json!("web"), &json!(true), &json!(true)),
            "{pod}"
        );
        assert!(name(pod).starts_with("web-"), "{pod}");
        assert_eq!(pod["metadata"]["generateName"], "web-");
        assert_eq!(pod["spec"]["containers"][0]["image"], "nginx");
    }
    assert_eq!(rs["status"]["fullyLabeledReplicas"], 3);
    assert_eq!(rs["status"].get("readyReplicas"), None, "no kubelet: nothing is ready");
    assert_eq!(rs["status"].get("availableReplicas"), None);
    let mut created = event_messages(&client, "web", "SuccessfulCreate").await;
    created.sort();
    let mut want: Vec<String> = pods.iter().map(|p| format!("Created pod: {}", name(p))).collect();
    want.sort();
    assert_eq!(created, want);

    // A deleted pod is replaced.
    let victim = name(&pods[0]);
    client.delete(&format!("/api/v1/namespaces/{NS}/pods/{victim}"), None).await.expect("the pod is deleted");
    let (_, pods) = eventually("the deleted pod being replaced", || async {
        let (rs, pods) = settled(&client, "web", 3).await;
        if pods.iter().any(|p| name(p) == victim) {
            Err(format!("{victim} is still there"))
        } else {
            Ok((rs, pods))
        }
    })
    .await;
    assert_eq!(event_messages(&client, "web", "SuccessfulCreate").await.len(), 4);

    // An orphan for the adoption below, made now: once the controller has seen the deletions that follow,
    // its pod cache (one ordered watch) has this pod too, so the adopting ReplicaSet cannot miss it.
    let orphan = json!({"metadata": {"name": "stray", "labels": {"app": "api"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    client.create(&format!("/api/v1/namespaces/{NS}/pods"), &orphan).await.expect("the orphan is created");

    // Scaled to one: two pods are deleted.
    client
        .patch(&rs_path("web"), &json!({"spec": {"replicas": 1}}), MERGE_PATCH)
        .await
        .expect("the ReplicaSet is scaled");
    let (_, left) = settled(&client, "web", 1).await;
    assert!(pods.iter().any(|p| name(p) == name(&left[0])), "the survivor is one of the three");
    let deleted = eventually("two SuccessfulDelete events", || async {
        let deleted = event_messages(&client, "web", "SuccessfulDelete").await;
        if deleted.len() == 2 {
            Ok(deleted)
        } else {
            Err(format!("{deleted:?}"))
        }
    })
    .await;
    for message in deleted {
        let gone = message.strip_prefix("Deleted pod: ").expect("upstream's text");
        assert!(pods.iter().any(|p| name(p) == gone) && gone != name(&left[0]), "{message}");
    }

    // A matching orphan is adopted rather than a new pod made in its place.
    client.create(&rs_collection, &replica_set("api", 2)).await.expect("the ReplicaSet is created");
    let (rs, pods) = settled(&client, "api", 2).await;
    let stray = pods.iter().find(|p| name(p) == "stray").expect("the orphan is one of the two");
    let owner = &stray["metadata"]["ownerReferences"][0];
    assert_eq!(
        (&owner["uid"], &owner["controller"], &owner["blockOwnerDeletion"]),
        (&rs["metadata"]["uid"], &json!(true), &json!(true))
    );
    assert_eq!(event_messages(&client, "api", "SuccessfulCreate").await.len(), 1, "only one pod was made");

    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_create_is_reported_until_it_succeeds() {
    let (client, controller) = start("rs-e2e-failure").await;
    // A namespace without its `default` service account: the ServiceAccount admission plugin refuses pods.
    client
        .create("/api/v1/namespaces", &json!({"metadata": {"name": "bare"}}))
        .await
        .expect("the namespace is created");
    let collection = "/apis/apps/v1/namespaces/bare/replicasets";
    client.create(collection, &replica_set("lonely", 2)).await.expect("the ReplicaSet is created");

    let path = format!("{collection}/lonely");
    let failure = eventually("the ReplicaFailure condition", || async {
        let rs = client.get(&path).await.map_err(|e| e.to_string())?;
        let conditions = rs["status"]["conditions"].as_array().cloned().unwrap_or_default();
        conditions.into_iter().find(|c| c["type"] == "ReplicaFailure").ok_or_else(|| format!("status {}", rs["status"]))
    })
    .await;
    assert_eq!((&failure["status"], &failure["reason"]), (&json!("True"), &json!("FailedCreate")));
    let message = failure["message"].as_str().unwrap_or_default();
    assert!(message.contains("error looking up service account bare/default"), "{message}");
    let warnings: Vec<Value> = items(&client, "/api/v1/namespaces/bare/events")
        .await
        .into_iter()
        .filter(|e| e["reason"] == "FailedCreate" && e["type"] == "Warning")
        .collect();
    assert!(!warnings.is_empty(), "a FailedCreate warning is recorded");
    assert_eq!(warnings[0]["message"], format!("Error creating: {message}"));

    // With the account in place, the retries succeed and the condition goes.
    let account = json!({"metadata": {"name": "default"}});
    client.create("/api/v1/namespaces/bare/serviceaccounts", &account).await.expect("the account is created");
    eventually("two pods and no ReplicaFailure", || async {
        let rs = client.get(&path).await.map_err(|e| e.to_string())?;
        let pods = items(&client, "/api/v1/namespaces/bare/pods").await;
        if pods.len() == 2 && rs["status"]["replicas"] == 2 && rs["status"].get("conditions").is_none() {
            Ok(())
        } else {
            Err(format!("{} pods, status {}", pods.len(), rs["status"]))
        }
    })
    .await;
    controller.abort();
}
