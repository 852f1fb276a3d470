//! End to end: the StatefulSet controller against a real apiserver in this process (`server::build` over an
//! embedded fake-etcd member, reached through `ApiServer::handle`), on shared informers. There is no
//! kubelet: the test marks pods running and ready through `pods/{name}/status`, as a kubelet reports them.
//!
//! A set of three under `OrderedReady` gets `web-0` with its claim `data-web-0` and nothing more until
//! `web-0` is ready, then `web-1`, then `web-2`; its first ControllerRevision names the pods' revision and
//! the status counts three current, updated, ready replicas. A new image with partition 2 replaces only
//! `web-2`, at a second revision, and `kubectl rollout status`'s rules (its `StatefulSetStatusViewer`,
//! rebuilt here) call the partitioned rollout complete. Scaling to one removes `web-2` before `web-1`,
//! and the claims stay (`Retain`).
#![cfg(not(madsim))]

use crate::support::{self, eventually, items, name};

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use controllers::client::{Client, MERGE_PATCH, STRATEGIC_MERGE_PATCH};
use controllers::kcm::statefulset;
use serde_json::{json, Value};

const NS: &str = "sts-e2e";

async fn start(name: &str) -> (Arc<Client>, tokio::task::JoinHandle<()>) {
    let (client, ctx) = support::context(name, statefulset::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    (client, tokio::spawn(statefulset::run(ctx)))
}

fn a_set(replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "serviceName": "nginx",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}},
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    })
}

fn set_path() -> String {
    format!("/apis/apps/v1/namespaces/{NS}/statefulsets/web")
}

/// The live pods of the namespace, by name.
async fn pod_names(client: &Client) -> BTreeSet<String> {
    items(client, &format!("/api/v1/namespaces/{NS}/pods"))
        .await
        .iter()
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .map(name)
        .collect()
}

async fn pod(client: &Client, pod_name: &str) -> Result<Value, String> {
    client.get(&format!("/api/v1/namespaces/{NS}/pods/{pod_name}")).await.map_err(|e| e.to_string())
}

/// Marks one pod running and ready, as a kubelet would report it.
async fn mark_ready(client: &Client, pod_name: &str) {
    let mut p = pod(client, pod_name).await.expect("the pod is there");
    p["status"]["phase"] = json!("Running");
    p["status"]["conditions"] =
        json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z"}]);
    client
        .update(&format!("/api/v1/namespaces/{NS}/pods/{pod_name}/status"), &p)
        .await
        .expect("the pod's status is written");
}

/// Waits until exactly `names` are live.
async fn wait_for_pods(client: &Client, names: &[&str]) {
    let want: BTreeSet<String> = names.iter().map(|s| s.to_string()).collect();
    eventually(&format!("pods {names:?}"), || async {
        let have = pod_names(client).await;
        if have == want {
            Ok(())
        } else {
            Err(format!("pods {have:?}"))
        }
    })
    .await;
}

/// `kubectl rollout status`'s `StatefulSetStatusViewer.Status`: the message and whether it is done.
fn rollout_status(sts: &Value) -> (String, bool) {
    let int = |p: &str| sts.pointer(p).and_then(Value::as_i64);
    let status = |f: &str| int(&format!("/status/{f}")).unwrap_or(0);
    if sts.pointer("/spec/updateStrategy/type").and_then(Value::as_str) != Some("RollingUpdate") {
        return ("rollout status is only available for RollingUpdate strategy type".into(), true);
    }
    let generation = int("/metadata/generation").unwrap_or(0);
    if status("observedGeneration") == 0 || generation > status("observedGeneration") {
        return ("Waiting for statefulset spec update to be observed...\n".into(), false);
    }
    let replicas = int("/spec/replicas");
    if let Some(r) = replicas.filter(|&r| status("readyReplicas") < r) {
        return (format!("Waiting for {} pods to be ready...\n", r - status("readyReplicas")), false);
    }
    if sts.pointer("/spec/updateStrategy/rollingUpdate").is_some_and(|r| !r.is_null()) {
        if let (Some(r), Some(partition)) = (replicas, int("/spec/updateStrategy/rollingUpdate/partition")) {
            if status("updatedReplicas") < r - partition {
                return (
                    format!(
                        "Waiting for partitioned roll out to finish: {} out of {} new pods have been updated...\n",
                        status("updatedReplicas"),
                        r - partition
                    ),
                    false,
                );
            }
        }
        return (
            format!("partitioned roll out complete: {} new pods have been updated...\n", status("updatedReplicas")),
            true,
        );
    }
    let text = |f: &str| sts.pointer(&format!("/status/{f}")).and_then(Value::as_str).unwrap_or("").to_string();
    if text("updateRevision") != text("currentRevision") {
        return (
            format!(
                "waiting for statefulset rolling update to complete {} pods at revision {}...\n",
                status("updatedReplicas"),
                text("updateRevision")
            ),
            false,
        );
    }
    (
        format!(
            "statefulset rolling update complete {} pods at revision {}...\n",
            status("currentReplicas"),
            text("currentRevision")
        ),
        true,
    )
}

/// The set's revisions, by revision number.
async fn revisions(client: &Client) -> Vec<Value> {
    let mut revs = items(client, &format!("/apis/apps/v1/namespaces/{NS}/controllerrevisions")).await;
    revs.sort_by_key(|r| r["revision"].as_i64().unwrap_or(0));
    revs
}

async fn event_messages(client: &Client, reason: &str) -> Vec<String> {
    items(client, &format!("/api/v1/namespaces/{NS}/events"))
        .await
        .into_iter()
        .filter(|e| {
            e["involvedObject"]["name"] == "web"
                && e["involvedObject"]["kind"] == "StatefulSet"
                && e["reason"] == reason
        })
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn counts(sts: &Value) -> [i64; 5] {
    let s = |f: &str| sts["status"][f].as_i64().unwrap_or(0);
    [s("replicas"), s("readyReplicas"), s("currentReplicas"), s("updatedReplicas"), s("availableReplicas")]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_set_creates_in_order_updates_a_partition_and_scales_down() {
    let (client, task) = start("sts-e2e-ordered").await;
    let collection = format!("/apis/apps/v1/namespaces/{NS}/statefulsets");
    client.create(&collection, &a_set(3, "nginx:1")).await.expect("the StatefulSet is created");

    // OrderedReady: web-0 with its claim, and nothing more while web-0 is not ready.
    wait_for_pods(&client, &["web-0"]).await;
    let claim =
        client.get(&format!("/api/v1/namespaces/{NS}/persistentvolumeclaims/data-web-0")).await.expect("the claim");
    assert_eq!(claim["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "1Gi");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(pod_names(&client).await, BTreeSet::from(["web-0".to_string()]), "web-1 waits for web-0");
    let web0 = pod(&client, "web-0").await.unwrap();
    let set = client.get(&set_path()).await.unwrap();
    let owner = &web0["metadata"]["ownerReferences"][0];
    assert_eq!(
        (&owner["kind"], &owner["uid"], &owner["controller"]),
        (&json!("StatefulSet"), &set["metadata"]["uid"], &json!(true))
    );
    assert_eq!(web0["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"], "web-0");
    assert_eq!(web0["metadata"]["labels"]["apps.kubernetes.io/pod-index"], "0");
    assert_eq!((&web0["spec"]["hostname"], &web0["spec"]["subdomain"]), (&json!("web-0"), &json!("nginx")));
    assert_eq!(
        web0["spec"]["volumes"][0],
        json!({"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}})
    );
    let first_revision =
        web0["metadata"]["labels"]["controller-revision-hash"].as_str().expect("a revision label").to_string();

    mark_ready(&client, "web-0").await;
    wait_for_pods(&client, &["web-0", "web-1"]).await;
    mark_ready(&client, "web-1").await;
    wait_for_pods(&client, &["web-0", "web-1", "web-2"]).await;
    mark_ready(&client, "web-2").await;

    let sts = eventually("three ready replicas", || async {
        let sts = client.get(&set_path()).await.map_err(|e| e.to_string())?;
        if counts(&sts) == [3, 3, 3, 3, 3] && sts["status"]["observedGeneration"] == sts["metadata"]["generation"] {
            Ok(sts)
        } else {
            Err(format!("status {}", sts["status"]))
        }
    })
    .await;
    assert_eq!(sts["status"]["currentRevision"], first_revision.as_str());
    assert_eq!(sts["status"]["updateRevision"], first_revision.as_str());
    assert_eq!(rollout_status(&sts), ("partitioned roll out complete: 3 new pods have been updated...\n".into(), true));
    let revs = revisions(&client).await;
    assert_eq!(revs.len(), 1);
    assert_eq!(name(&revs[0]), first_revision);
    assert_eq!(revs[0]["revision"], 1);
    let hash = revs[0]["metadata"]["labels"]["controller.kubernetes.io/hash"].as_str().expect("a hash label");
    assert_eq!(first_revision, format!("web-{hash}"));
    assert_eq!(revs[0]["data"]["spec"]["template"]["$patch"], "replace");
    assert_eq!(revs[0]["metadata"]["ownerReferences"][0]["uid"], sts["metadata"]["uid"]);
    for p in 0..3 {
        let claim_path = format!("/api/v1/namespaces/{NS}/persistentvolumeclaims/data-web-{p}");
        client.get(&claim_path).await.expect("every pod has its claim");
    }
    let created = event_messages(&client, "SuccessfulCreate").await;
    for p in 0..3 {
        assert!(created.contains(&format!("create Pod web-{p} in StatefulSet web successful")), "{created:?}");
        assert!(
            created.contains(&format!("create Claim data-web-{p} Pod web-{p} in StatefulSet web success")),
            "{created:?}"
        );
    }

    // A new image with partition 2: only web-2 is replaced, at a second revision.
    let patch = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}});
    client.patch(&set_path(), &patch, STRATEGIC_MERGE_PATCH).await.expect("the set is updated");
    let web2 = eventually("web-2 at the new revision", || async {
        let p = pod(&client, "web-2").await?;
        if p["spec"]["containers"][0]["image"] == "nginx:2" && p.pointer("/metadata/deletionTimestamp").is_none() {
            Ok(p)
        } else {
            Err(format!("web-2 {}", p["spec"]["containers"][0]["image"]))
        }
    })
    .await;
    let second_revision = web2["metadata"]["labels"]["controller-revision-hash"].as_str().unwrap().to_string();
    assert_ne!(second_revision, first_revision);
    mark_ready(&client, "web-2").await;
    let sts = eventually("the partitioned update counted", || async {
        let sts = client.get(&set_path()).await.map_err(|e| e.to_string())?;
        if counts(&sts) == [3, 3, 2, 1, 3] && sts["status"]["observedGeneration"] == sts["metadata"]["generation"] {
            Ok(sts)
        } else {
            Err(format!("status {}", sts["status"]))
        }
    })
    .await;
    assert_eq!(sts["status"]["currentRevision"], first_revision.as_str());
    assert_eq!(sts["status"]["updateRevision"], second_revision.as_str());
    assert_eq!(rollout_status(&sts), ("partitioned roll out complete: 1 new pods have been updated...\n".into(), true));
    for p in ["web-0", "web-1"] {
        let p = pod(&client, p).await.unwrap();
        assert_eq!(p["spec"]["containers"][0]["image"], "nginx:1");
        assert_eq!(p["metadata"]["labels"]["controller-revision-hash"], first_revision.as_str());
    }
    let revs = revisions(&client).await;
    assert_eq!(
        revs.iter().map(|r| (name(r), r["revision"].as_i64().unwrap())).collect::<Vec<_>>(),
        [(first_revision.clone(), 1), (second_revision.clone(), 2)]
    );
    assert!(event_messages(&client, "SuccessfulDelete")
        .await
        .contains(&"delete Pod web-2 in StatefulSet web successful".to_string()));

    // Scaling to one removes web-2 before web-1; the claims stay.
    client.patch(&set_path(), &json!({"spec": {"replicas": 1}}), MERGE_PATCH).await.expect("the set is scaled");
    wait_for_pods(&client, &["web-0"]).await;
    // Events are named after their instant, so the list (in name order) is in the order they happened.
    let deletions = event_messages(&client, "SuccessfulDelete").await;
    let msg = |p: &str| format!("delete Pod {p} in StatefulSet web successful");
    assert_eq!(
        deletions,
        [msg("web-2"), msg("web-2"), msg("web-1")],
        "the update's, then the scale-down's, highest first"
    );
    let sts = eventually("the status of one", || async {
        let sts = client.get(&set_path()).await.map_err(|e| e.to_string())?;
        if sts["status"]["replicas"] == 1 {
            Ok(sts)
        } else {
            Err(format!("status {}", sts["status"]))
        }
    })
    .await;
    assert_eq!(sts["status"]["readyReplicas"], 1);
    for p in 0..3 {
        let claim_path = format!("/api/v1/namespaces/{NS}/persistentvolumeclaims/data-web-{p}");
        client.get(&claim_path).await.expect("the claims are retained");
    }
    task.abort();
}
