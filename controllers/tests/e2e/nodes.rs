//! End to end: simulated nodes against a real apiserver in this process. A fleet of two registers Ready
//! Nodes with the kubelet's labels and keeps their Leases in `kube-node-lease` renewed; a fleet of one
//! (node 3) stopped by itself stops renewing while the others go on. Pods bound to the nodes run: one is
//! Running and Ready with an IP from its node's CIDR; run-to-completion pods end Succeeded, or Failed with
//! the exit code their annotation names; a deleted pod stays while its containers shut down, then the node
//! deletes it.
#![cfg(not(madsim))]

use crate::support::{self, condition, eventually, name};

use std::time::Duration;

use controllers::client::Client;
use controllers::nodes::{self, Fleet, NodeTemplate};
use serde_json::{json, Value};

const NS: &str = "nodes-e2e";

fn lease_path(node: &str) -> String {
    format!("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}")
}

fn pod_path(name: &str) -> String {
    format!("/api/v1/namespaces/{NS}/pods/{name}")
}

async fn renew_time(client: &Client, node: &str) -> Result<String, String> {
    let lease = client.get(&lease_path(node)).await.map_err(|e| e.to_string())?;
    lease["spec"]["renewTime"].as_str().map(String::from).ok_or_else(|| format!("no renewTime: {lease}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_register_ready_and_heartbeat_their_leases() {
    let (client, ctx) = support::context("nodes-e2e-heartbeat", "kubelet").await;
    let mut template = NodeTemplate::default();
    template.labels.insert("pool".into(), "simulated".into());
    let pair = tokio::spawn(nodes::run(ctx.clone(), Fleet { first: 1, count: 2, template: template.clone() }));
    let third = tokio::spawn(nodes::run(ctx.clone(), Fleet { first: 3, count: 1, template }));

    for (i, node_name) in ["node-1", "node-2", "node-3"].into_iter().enumerate() {
        let node = eventually(&format!("{node_name} Ready"), || async {
            let node = client.get(&format!("/api/v1/nodes/{node_name}")).await.map_err(|e| e.to_string())?;
            match condition(&node, "Ready") {
                Some(c) if c["status"] == "True" => Ok(node),
                _ => Err(format!("status {}", node["status"])),
            }
        })
        .await;
        let ready = condition(&node, "Ready").unwrap();
        assert_eq!(
            (&ready["reason"], &ready["message"]),
            (&json!("KubeletReady"), &json!("kubelet is posting ready status"))
        );
        let labels = &node["metadata"]["labels"];
        assert_eq!(labels["kubernetes.io/hostname"], node_name);
        assert_eq!((&labels["kubernetes.io/os"], &labels["kubernetes.io/arch"]), (&json!("linux"), &json!("amd64")));
        assert_eq!(
            (&labels["beta.kubernetes.io/os"], &labels["beta.kubernetes.io/arch"]),
            (&json!("linux"), &json!("amd64"))
        );
        assert_eq!(labels["pool"], "simulated");
        assert_eq!(node["spec"]["podCIDR"], format!("10.244.{}.0/24", i + 1));
        assert_eq!(node["status"]["nodeInfo"]["kubeletVersion"], "v1.32.0");
        assert_eq!(node["status"]["allocatable"], node["status"]["capacity"]);
        assert_eq!(node["status"]["capacity"]["pods"], "110");
        let lease = eventually(&format!("{node_name}'s lease"), || async {
            client.get(&lease_path(node_name)).await.map_err(|e| e.to_string())
        })
        .await;
        assert_eq!(lease["spec"]["holderIdentity"], node_name);
        assert_eq!(lease["spec"]["leaseDurationSeconds"], 40);
        let owner = &lease["metadata"]["ownerReferences"][0];
        assert_eq!(
            (&owner["kind"], &owner["name"], &owner["uid"]),
            (&json!("Node"), &json!(node_name), &node["metadata"]["uid"])
        );
    }

    // Node 3's fleet stops: its lease is left as it was while the others' are renewed (every 10 s).
    third.abort();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stopped = renew_time(&client, "node-3").await.unwrap();
    let before = [renew_time(&client, "node-1").await.unwrap(), renew_time(&client, "node-2").await.unwrap()];
    eventually("both running nodes' leases renewed", || async {
        let now = [renew_time(&client, "node-1").await?, renew_time(&client, "node-2").await?];
        if now[0] != before[0] && now[1] != before[1] {
            Ok(())
        } else {
            Err(format!("renewTimes still {now:?}"))
        }
    })
    .await;
    assert_eq!(renew_time(&client, "node-3").await.unwrap(), stopped, "a stopped node no longer heartbeats");

    // Started again, node 3's fleet takes its Node over and heartbeats again.
    let again = tokio::spawn(nodes::run(ctx.clone(), Fleet { first: 3, count: 1, template: NodeTemplate::default() }));
    eventually("node 3 heartbeating again", || async {
        let now = renew_time(&client, "node-3").await?;
        if now != stopped {
            Ok(())
        } else {
            Err(format!("renewTime still {now}"))
        }
    })
    .await;
    let node = client.get("/api/v1/nodes/node-3").await.unwrap();
    assert_eq!(node["metadata"]["labels"]["kubernetes.io/hostname"], "node-3");
    pair.abort();
    again.abort();
}

fn a_pod(name: &str, node: &str, policy: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"nodeName": node, "restartPolicy": policy, "containers": [{"name": "c", "image": "nginx:1.27"}]},
    })
}

/// The pod once its phase is `phase`.
async fn pod_in_phase(client: &Client, pod: &str, phase: &str) -> Value {
    eventually(&format!("{pod} {phase}"), || async {
        let p = client.get(&pod_path(pod)).await.map_err(|e| e.to_string())?;
        if p["status"]["phase"] == phase {
            Ok(p)
        } else {
            Err(format!("status {}", p["status"]))
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_bound_to_the_nodes_run_finish_and_are_deleted() {
    let (client, ctx) = support::context("nodes-e2e-pods", "kubelet").await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    let fleet = tokio::spawn(nodes::run(ctx.clone(), Fleet { first: 1, count: 2, template: NodeTemplate::default() }));
    let pods = format!("/api/v1/namespaces/{NS}/pods");
    let create = |pod: Value| {
        let (client, pods) = (client.clone(), pods.clone());
        async move { client.create(&pods, &pod).await.expect("the pod is created") }
    };
    create(a_pod("web", "node-1", "Always", json!({nodes::SHUTDOWN_SECONDS: "2"}))).await;
    create(a_pod("done", "node-2", "Never", json!({nodes::RUN_SECONDS: "0.2"}))).await;
    create(a_pod("broken", "node-2", "Never", json!({nodes::RUN_SECONDS: "0.2", nodes::EXIT_CODE: "3"}))).await;
    create(a_pod("quick", "node-1", "Always", json!({}))).await;

    // Running and Ready, with an IP from node-1's CIDR.
    let web = eventually("web Running and Ready", || async {
        let p = client.get(&pod_path("web")).await.map_err(|e| e.to_string())?;
        let ready = condition(&p, "Ready").is_some_and(|c| c["status"] == "True");
        if p["status"]["phase"] == "Running" && ready {
            Ok(p)
        } else {
            Err(format!("status {}", p["status"]))
        }
    })
    .await;
    let ip = web["status"]["podIP"].as_str().expect("a pod IP");
    assert!(ip.starts_with("10.244.1.") && ip != "10.244.1.0" && ip != "10.244.1.255", "{ip}");
    assert_eq!(web["status"]["podIPs"], json!([{"ip": ip}]));
    assert_eq!(web["status"]["hostIP"], "10.0.0.1");
    assert!(web["status"]["startTime"].is_string());
    let c = &web["status"]["containerStatuses"][0];
    assert!(c["state"]["running"]["startedAt"].is_string(), "{c}");
    assert_eq!((&c["ready"], &c["started"], &c["restartCount"]), (&json!(true), &json!(true), &json!(0)));
    assert!(c["containerID"].as_str().unwrap().starts_with("containerd://"));
    for kind in ["PodReadyToStartContainers", "Initialized", "ContainersReady", "PodScheduled"] {
        assert_eq!(condition(&web, kind).map(|c| c["status"].clone()), Some(json!("True")), "{kind}");
    }
    let quick = pod_in_phase(&client, "quick", "Running").await;
    assert_ne!(quick["status"]["podIP"], web["status"]["podIP"], "pod IPs are unique on a node");

    // Run to completion: Succeeded, and Failed with the annotation's exit code.
    let done = pod_in_phase(&client, "done", "Succeeded").await;
    let terminated = &done["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!((&terminated["exitCode"], &terminated["reason"]), (&json!(0), &json!("Completed")));
    assert!(done["status"]["podIP"].as_str().unwrap().starts_with("10.244.2."));
    assert_eq!(condition(&done, "Ready").unwrap()["reason"], "PodCompleted");
    let broken = pod_in_phase(&client, "broken", "Failed").await;
    let terminated = &broken["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!((&terminated["exitCode"], &terminated["reason"]), (&json!(3), &json!("Error")));

    // Deleted: the pod stays while its containers take their 2 s to stop, then the node deletes it.
    client.delete(&pod_path("web"), None).await.expect("the pod is deleted");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let terminating = client.get(&pod_path("web")).await.expect("still there while shutting down");
    assert!(terminating["metadata"]["deletionTimestamp"].is_string());
    eventually("web deleted by its node", || async {
        match client.get(&pod_path("web")).await {
            Err(err) if err.is_not_found() => Ok(()),
            Err(err) => Err(err.to_string()),
            Ok(p) => Err(format!("still there: {} {}", name(&p), p["status"])),
        }
    })
    .await;
    // A pod deleted while it runs, with nothing said about its shutdown, goes as quickly.
    client.delete(&pod_path("quick"), None).await.expect("the pod is deleted");
    eventually("quick deleted by its node", || async {
        match client.get(&pod_path("quick")).await {
            Err(err) if err.is_not_found() => Ok(()),
            other => Err(format!("{:?}", other.map(|p| p["status"].clone()))),
        }
    })
    .await;
    fleet.abort();
}
