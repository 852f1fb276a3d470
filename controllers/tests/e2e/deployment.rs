//! End to end: the Deployment and ReplicaSet controllers against a real apiserver in this process
//! (`server::build` over an embedded fake-etcd member, reached through `ApiServer::handle`), on shared
//! informers. A Deployment of three gets a ReplicaSet named and selected by its `pod-template-hash`, at
//! revision 1, with three pods and the `Progressing` and `Available` conditions; once the test marks the
//! pods ready (there is no kubelet) it is available and complete. A new image rolls out through a second
//! ReplicaSet at revision 2, one surge pod at a time as pods turn ready. `Recreate` scales the old
//! ReplicaSet to zero before it makes the new one. Without ready pods a rollout of four stops where
//! `maxSurge` and `maxUnavailable` say, and scaling it then resizes both ReplicaSets in proportion.
#![cfg(not(madsim))]

use crate::support::{self, condition, eventually, items, name};

use std::sync::Arc;
use std::time::Duration;

use controllers::client::{Client, MERGE_PATCH, STRATEGIC_MERGE_PATCH};
use controllers::kcm::{deployment, replicaset, Context};
use serde_json::{json, Value};

/// How long one step may take to settle, with room for a loaded machine.
const NS: &str = "deploy-e2e";

/// The apiserver, a client of it, the namespace with its `default` service account, and both controllers
/// on one set of informers.
async fn start(name: &str) -> (Arc<Client>, Vec<tokio::task::JoinHandle<()>>) {
    let (client, ctx) = support::context(name, replicaset::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    let context = |component: &str| Context { events: ctx.events.for_component(component), ..ctx.clone() };
    let tasks = vec![
        tokio::spawn(replicaset::run(context(replicaset::DESCRIPTOR.name))),
        tokio::spawn(deployment::run(context(deployment::DESCRIPTOR.name))),
    ];
    (client, tasks)
}

fn a_deployment(name: &str, replicas: i64, image: &str, strategy: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "strategy": strategy,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": image}]}},
        },
    })
}

fn d_path(name: &str) -> String {
    format!("/apis/apps/v1/namespaces/{NS}/deployments/{name}")
}

fn annotation<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj["metadata"]["annotations"][key].as_str().unwrap_or_default()
}

fn replicas(obj: &Value) -> i64 {
    obj["spec"]["replicas"].as_i64().unwrap_or(-1)
}

/// The ReplicaSets the Deployment `d` controls, by revision.
async fn replica_sets_of(client: &Client, d: &Value) -> Vec<Value> {
    let mut rss: Vec<Value> = items(client, &format!("/apis/apps/v1/namespaces/{NS}/replicasets"))
        .await
        .into_iter()
        .filter(|rs| rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"])
        .collect();
    rss.sort_by_key(|rs| annotation(rs, "deployment.kubernetes.io/revision").parse::<i64>().unwrap_or(0));
    rss
}

/// The live pods the ReplicaSet `rs` controls.
async fn pods_of(client: &Client, rs: &Value) -> Vec<Value> {
    items(client, &format!("/api/v1/namespaces/{NS}/pods"))
        .await
        .into_iter()
        .filter(|p| p["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"])
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .collect()
}

/// Marks every live pod of the namespace ready and running, as a kubelet would report it.
async fn mark_all_ready(client: &Client) {
    for pod in items(client, &format!("/api/v1/namespaces/{NS}/pods")).await {
        if pod.pointer("/metadata/deletionTimestamp").is_some() || pod["status"]["phase"] == "Running" {
            continue;
        }
        let mut pod = pod;
        pod["status"]["phase"] = json!("Running");
        pod["status"]["conditions"] =
            json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z"}]);
        let path = format!("/api/v1/namespaces/{NS}/pods/{}/status", name(&pod));
        // A pod deleted or changed meanwhile is marked on the next round.
        let _ = client.update(&path, &pod).await;
    }
}

/// The messages of the events with `reason` about the Deployment `d`.
async fn event_messages(client: &Client, d: &str, reason: &str) -> Vec<String> {
    items(client, &format!("/api/v1/namespaces/{NS}/events"))
        .await
        .into_iter()
        .filter(|e| {
            e["involvedObject"]["name"] == d && e["involvedObject"]["kind"] == "Deployment" && e["reason"] == reason
        })
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Sets the template's image of the Deployment `d_name` as `kubectl set image` does: a strategic merge patch
/// keyed by the container's name, which the controller's own status writes cannot make conflict.
async fn set_image(client: &Client, d_name: &str, image: &str) {
    let d = client.get(&d_path(d_name)).await.expect("the Deployment is there");
    let container = d["spec"]["template"]["spec"]["containers"][0]["name"].clone();
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": container, "image": image}]}}}});
    client.patch(&d_path(d_name), &patch, STRATEGIC_MERGE_PATCH).await.expect("the Deployment is updated");
}

/// A summary of the Deployment's ReplicaSets for failure messages: `name=spec/status replicas`.
fn sizes(rss: &[Value]) -> String {
    rss.iter()
        .map(|rs| format!("{}={}/{}", name(rs), replicas(rs), rs["status"]["replicas"]))
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_rolls_out_and_rolls_forward() {
    let (client, tasks) = start("deploy-e2e-rolling").await;
    let collection = format!("/apis/apps/v1/namespaces/{NS}/deployments");
    client.create(&collection, &a_deployment("web", 3, "nginx:1", json!({}))).await.expect("the Deployment is created");

    // One ReplicaSet named and selected by the template's hash, at revision 1, with three pods.
    let (d, rs) = eventually("the first ReplicaSet with three pods", || async {
        let d = client.get(&d_path("web")).await.map_err(|e| e.to_string())?;
        let rss = replica_sets_of(&client, &d).await;
        let [rs] = rss.as_slice() else { return Err(format!("replica sets {}", sizes(&rss))) };
        let pods = pods_of(&client, rs).await;
        let settled = pods.len() == 3
            && d["status"]["replicas"] == 3
            && d["status"]["observedGeneration"] == d["metadata"]["generation"]
            && condition(&d, "Progressing").is_some();
        if settled {
            Ok((d, rs.clone()))
        } else {
            Err(format!("{} pods, status {}", pods.len(), d["status"]))
        }
    })
    .await;
    let hash = rs["metadata"]["labels"]["pod-template-hash"].as_str().expect("the hash label").to_string();
    assert_eq!(name(&rs), format!("web-{hash}"));
    assert_eq!(rs["spec"]["selector"]["matchLabels"], json!({"app": "web", "pod-template-hash": hash}));
    assert_eq!(rs["spec"]["template"]["metadata"]["labels"], json!({"app": "web", "pod-template-hash": hash}));
    assert_eq!(replicas(&rs), 3);
    let owner = &rs["metadata"]["ownerReferences"][0];
    assert_eq!(
        (&owner["kind"], &owner["controller"], &owner["blockOwnerDeletion"]),
        (&json!("Deployment"), &json!(true), &json!(true))
    );
    assert_eq!(annotation(&rs, "deployment.kubernetes.io/revision"), "1");
    assert_eq!(annotation(&rs, "deployment.kubernetes.io/desired-replicas"), "3");
    assert_eq!(annotation(&rs, "deployment.kubernetes.io/max-replicas"), "4", "3 + 25 % surge rounded up");
    assert_eq!(annotation(&d, "deployment.kubernetes.io/revision"), "1");
    for pod in pods_of(&client, &rs).await {
        assert_eq!(pod["metadata"]["labels"]["pod-template-hash"], hash.as_str());
    }
    assert_eq!(
        (d["status"]["updatedReplicas"].clone(), d["status"]["unavailableReplicas"].clone()),
        (json!(3), json!(3))
    );
    let available = condition(&d, "Available").expect("an Available condition");
    assert_eq!((&available["status"], &available["reason"]), (&json!("False"), &json!("MinimumReplicasUnavailable")));
    assert_eq!(available["message"], "Deployment does not have minimum availability.");
    let progressing = condition(&d, "Progressing").expect("a Progressing condition");
    assert_eq!(progressing["status"], "True");
    let rs_name = name(&rs);
    let wanted = [
        ("NewReplicaSetCreated", format!("Created new replica set \"{rs_name}\"")),
        ("ReplicaSetUpdated", format!("ReplicaSet \"{rs_name}\" is progressing.")),
    ];
    assert!(
        wanted.iter().any(|(r, m)| progressing["reason"] == *r && progressing["message"] == m.as_str()),
        "{progressing}"
    );
    assert_eq!(
        event_messages(&client, "web", "ScalingReplicaSet").await,
        vec![format!("Scaled up replica set {rs_name} to 3")]
    );

    // The pods turn ready: available, and the rollout is complete (what `kubectl rollout status` waits for).
    mark_all_ready(&client).await;
    let d = eventually("the Deployment available and complete", || async {
        let d = client.get(&d_path("web")).await.map_err(|e| e.to_string())?;
        let complete = condition(&d, "Progressing").is_some_and(|c| c["reason"] == "NewReplicaSetAvailable");
        if d["status"]["availableReplicas"] == 3 && complete {
            Ok(d)
        } else {
            Err(format!("status {}", d["status"]))
        }
    })
    .await;
    let available = condition(&d, "Available").unwrap();
    assert_eq!((&available["status"], &available["reason"]), (&json!("True"), &json!("MinimumReplicasAvailable")));
    let progressing = condition(&d, "Progressing").unwrap();
    assert_eq!(progressing["status"], "True");
    assert_eq!(progressing["message"], format!("ReplicaSet \"{rs_name}\" has successfully progressed."));
    assert_eq!(d["status"].get("unavailableReplicas"), None);

    // A new image: a second ReplicaSet at revision 2, one surge pod (25 % of 3 rounded up) and no old pod
    // taken away (25 % of 3 rounded down is none) until the new pod is ready.
    set_image(&client, "web", "nginx:2").await;
    let (old, new) = eventually("the second ReplicaSet with its surge pod", || async {
        let d = client.get(&d_path("web")).await.map_err(|e| e.to_string())?;
        let rss = replica_sets_of(&client, &d).await;
        match rss.as_slice() {
            [old, new] if replicas(new) == 1 && replicas(old) == 3 && pods_of(&client, new).await.len() == 1 => {
                Ok((old.clone(), new.clone()))
            }
            _ => Err(format!("replica sets {}", sizes(&rss))),
        }
    })
    .await;
    assert_eq!(name(&old), rs_name);
    assert_eq!(annotation(&new, "deployment.kubernetes.io/revision"), "2");
    assert_eq!(new["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:2");
    assert_ne!(new["metadata"]["labels"]["pod-template-hash"], json!(hash), "a new template, a new hash");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let d = client.get(&d_path("web")).await.expect("the Deployment is there");
    let now = replica_sets_of(&client, &d).await;
    let spec_sizes = |rss: &[Value]| rss.iter().map(|rs| (name(rs), replicas(rs))).collect::<Vec<_>>();
    assert_eq!(
        spec_sizes(&now),
        spec_sizes(&[old.clone(), new.clone()]),
        "nothing moves while the new pod is not ready"
    );

    // As pods turn ready the rollout proceeds to the end.
    let new_name = name(&new);
    let d = eventually("the rollout to complete", || async {
        mark_all_ready(&client).await;
        let d = client.get(&d_path("web")).await.map_err(|e| e.to_string())?;
        let rss = replica_sets_of(&client, &d).await;
        let complete = condition(&d, "Progressing").is_some_and(|c| {
            c["reason"] == "NewReplicaSetAvailable"
                && c["message"] == format!("ReplicaSet \"{new_name}\" has successfully progressed.")
        });
        let sized = matches!(rss.as_slice(), [old, new] if replicas(old) == 0 && replicas(new) == 3);
        if complete
            && sized
            && d["status"]["updatedReplicas"] == 3
            && d["status"]["replicas"] == 3
            && d["status"]["availableReplicas"] == 3
        {
            Ok(d)
        } else {
            Err(format!("replica sets {}, status {}", sizes(&rss), d["status"]))
        }
    })
    .await;
    assert_eq!(annotation(&d, "deployment.kubernetes.io/revision"), "2");
    let events = event_messages(&client, "web", "ScalingReplicaSet").await;
    assert!(events.contains(&format!("Scaled up replica set {new_name} to 1")), "{events:?}");
    assert!(events.contains(&format!("Scaled down replica set {rs_name} to 2 from 3")), "{events:?}");
    assert!(events.contains(&format!("Scaled down replica set {rs_name} to 0 from 1")), "{events:?}");
    assert!(events.contains(&format!("Scaled up replica set {new_name} to 3 from 2")), "{events:?}");
    for task in tasks {
        task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_scales_the_old_replica_set_down_before_making_the_new_one() {
    let (client, tasks) = start("deploy-e2e-recreate").await;
    let collection = format!("/apis/apps/v1/namespaces/{NS}/deployments");
    let db = a_deployment("db", 2, "postgres:15", json!({"type": "Recreate"}));
    client.create(&collection, &db).await.expect("the Deployment is created");
    let old = eventually("the first ReplicaSet with two pods", || async {
        let d = client.get(&d_path("db")).await.map_err(|e| e.to_string())?;
        let rss = replica_sets_of(&client, &d).await;
        match rss.as_slice() {
            [rs] if pods_of(&client, rs).await.len() == 2 => Ok(rs.clone()),
            _ => Err(format!("replica sets {}", sizes(&rss))),
        }
    })
    .await;
    set_image(&client, "db", "postgres:16").await;
    let (seen_old, new) = eventually("the new ReplicaSet", || async {
        let d = client.get(&d_path("db")).await.map_err(|e| e.to_string())?;
        let rss = replica_sets_of(&client, &d).await;
        match rss.as_slice() {
            [old, new] => Ok((old.clone(), new.clone())),
            _ => Err(format!("replica sets {}", sizes(&rss))),
        }
    })
    .await;
    // When the new ReplicaSet first shows, the old one is already down and its pods gone.
    assert_eq!(name(&seen_old), name(&old));
    assert_eq!(replicas(&seen_old), 0, "the old ReplicaSet was scaled down first");
    assert!(pods_of(&client, &seen_old).await.is_empty());
    assert_eq!(annotation(&new, "deployment.kubernetes.io/revision"), "2");
    eventually("two new pods", || async {
        let d = client.get(&d_path("db")).await.map_err(|e| e.to_string())?;
        let rss = replica_sets_of(&client, &d).await;
        let new = rss.last().cloned().unwrap_or(Value::Null);
        let pods = pods_of(&client, &new).await;
        if rss.len() == 2 && pods.len() == 2 && d["status"]["updatedReplicas"] == 2 && d["status"]["replicas"] == 2 {
            Ok(())
        } else {
            Err(format!("replica sets {}, status {}", sizes(&rss), d["status"]))
        }
    })
    .await;
    let events = event_messages(&client, "db", "ScalingReplicaSet").await;
    assert!(events.contains(&format!("Scaled down replica set {} to 0 from 2", name(&old))), "{events:?}");
    assert!(events.contains(&format!("Scaled up replica set {} to 2", name(&new))), "{events:?}");
    for task in tasks {
        task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_rollout_scales_in_proportion() {
    let (client, tasks) = start("deploy-e2e-proportional").await;
    let collection = format!("/apis/apps/v1/namespaces/{NS}/deployments");
    client.create(&collection, &a_deployment("api", 4, "api:1", json!({}))).await.expect("the Deployment is created");
    eventually("the first ReplicaSet at four", || async {
        let d = client.get(&d_path("api")).await.map_err(|e| e.to_string())?;
        let rss = replica_sets_of(&client, &d).await;
        match rss.as_slice() {
            [rs] if rs["status"]["replicas"] == 4 => Ok(()),
            _ => Err(format!("replica sets {}", sizes(&rss))),
        }
    })
    .await;
    // No pod is ready: at 25 %/25 % of four (one surge, one unavailable) the new ReplicaSet starts at 1,
    // one unready old pod goes, the new one grows to 2, and there it stops: 5 pods, 3 of them old.
    set_image(&client, "api", "api:2").await;
    let settled = |old_size: i64, new_size: i64| {
        let client = client.clone();
        async move {
            eventually(&format!("old at {old_size}, new at {new_size}"), || async {
                let d = client.get(&d_path("api")).await.map_err(|e| e.to_string())?;
                let rss = replica_sets_of(&client, &d).await;
                match rss.as_slice() {
                    [old, new] if replicas(old) == old_size && replicas(new) == new_size => {
                        Ok((old.clone(), new.clone()))
                    }
                    _ => Err(format!("replica sets {}", sizes(&rss))),
                }
            })
            .await
        }
    };
    settled(3, 2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    settled(3, 2).await;

    // Scaled to 8 mid-rollout: 8 + 2 surge = 10 shared as 3:2.
    let scale = json!({"spec": {"replicas": 8}});
    client.patch(&d_path("api"), &scale, MERGE_PATCH).await.expect("the Deployment is scaled");
    let (old, new) = settled(6, 4).await;
    for rs in [&old, &new] {
        assert_eq!(annotation(rs, "deployment.kubernetes.io/desired-replicas"), "8");
        assert_eq!(annotation(rs, "deployment.kubernetes.io/max-replicas"), "10");
    }
    let events = event_messages(&client, "api", "ScalingReplicaSet").await;
    assert!(events.contains(&format!("Scaled up replica set {} to 6 from 3", name(&old))), "{events:?}");
    assert!(events.contains(&format!("Scaled up replica set {} to 4 from 2", name(&new))), "{events:?}");
    for task in tasks {
        task.abort();
    }
}
