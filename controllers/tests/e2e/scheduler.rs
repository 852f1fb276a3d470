//! End to end: the scheduler against a real apiserver in this process, on shared informers. The test
//! registers Nodes itself (there is no kubelet): created through `nodes`, then given capacity,
//! allocatable and a `Ready` condition through `nodes/status`. Pods spread over the nodes and bind within
//! their capacity, a `nodeSelector` lands on the matching node, a tainted node is avoided unless the pod
//! tolerates its taint, and a pod too big for every node gets upstream's `Unschedulable` condition and
//! `FailedScheduling` event, then binds once a node big enough is added.
#![cfg(not(madsim))]

use crate::support::{self, condition, eventually, items, name};

use std::collections::BTreeMap;
use std::sync::Arc;

use controllers::client::Client;
use controllers::scheduler::{self, SCHEDULER_NAME};
use serde_json::{json, Value};

const NS: &str = "sched-e2e";

/// Registers the node `name` with `cpu` cores, `labels` and `taints`, Ready.
async fn add_node(client: &Client, name: &str, cpu: &str, labels: Value, taints: Value) {
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {"taints": taints}});
    client.create("/api/v1/nodes", &node).await.expect("the node is created");
    let mut node = client.get(&format!("/api/v1/nodes/{name}")).await.expect("the node is there");
    let resources = json!({"cpu": cpu, "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"});
    node["status"] = json!({
        "capacity": resources,
        "allocatable": resources,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                        "lastHeartbeatTime": "2023-11-14T22:13:20Z", "lastTransitionTime": "2023-11-14T22:13:20Z"}],
    });
    client.update(&format!("/api/v1/nodes/{name}/status"), &node).await.expect("the node's status is written");
}

fn a_pod(name: &str, cpu: &str, extra: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

async fn create_pod(client: &Client, pod: Value) {
    client.create(&format!("/api/v1/namespaces/{NS}/pods"), &pod).await.expect("the pod is created");
}

async fn get_pod(client: &Client, name: &str) -> Value {
    client.get(&format!("/api/v1/namespaces/{NS}/pods/{name}")).await.expect("the pod is there")
}

/// Waits until the pods named `names` are all bound, and returns their nodes.
async fn bound(client: &Arc<Client>, names: &[&str]) -> BTreeMap<String, String> {
    eventually("the pods are bound", || async {
        let mut nodes = BTreeMap::new();
        for n in names {
            let pod = get_pod(client, n).await;
            match pod["spec"]["nodeName"].as_str() {
                Some(node) if !node.is_empty() => nodes.insert(n.to_string(), node.to_string()),
                _ => return Err(format!("{n} is not bound: {}", pod["status"])),
            };
        }
        Ok(nodes)
    })
    .await
}

/// The events about the pod `pod` with `reason`: (type, message, source component).
async fn events_of(client: &Client, pod: &str, reason: &str) -> Vec<(String, String, String)> {
    items(client, &format!("/api/v1/namespaces/{NS}/events"))
        .await
        .into_iter()
        .filter(|e| e["involvedObject"]["name"] == pod && e["reason"] == reason)
        .map(|e| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (s(&e["type"]), s(&e["message"]), s(&e["source"]["component"]))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_places_pods_and_explains_what_fits_nowhere() {
    let (client, ctx) = support::context("sched-e2e", SCHEDULER_NAME).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    add_node(&client, "n1", "2", json!({"disk": "ssd"}), json!([])).await;
    add_node(&client, "n2", "2", json!({"disk": "hdd"}), json!([])).await;
    add_node(&client, "n3", "8", json!({}), json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]))
        .await;
    let task = tokio::spawn(scheduler::run(ctx));

    // Eight pods of half a core fill n1 and n2 exactly, four each; none goes to the tainted n3.
    let spread: Vec<String> = (0..8).map(|i| format!("spread-{i}")).collect();
    for n in &spread {
        create_pod(&client, a_pod(n, "500m", json!({}))).await;
    }
    let names: Vec<&str> = spread.iter().map(String::as_str).collect();
    let placed = bound(&client, &names).await;
    let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
    for node in placed.values() {
        *per_node.entry(node).or_default() += 1;
    }
    assert_eq!(per_node, BTreeMap::from([("n1", 4), ("n2", 4)]), "{placed:?}");
    let first = get_pod(&client, "spread-0").await;
    let scheduled = condition(&first, "PodScheduled").expect("the binding's condition");
    assert_eq!(scheduled["status"], "True");
    assert_eq!(
        events_of(&client, "spread-0", "Scheduled").await,
        vec![(
            "Normal".to_string(),
            format!("Successfully assigned {NS}/spread-0 to {}", placed["spread-0"]),
            SCHEDULER_NAME.to_string()
        )]
    );

    // A pod selecting `disk: ssd` without requests lands on n1 (full for cpu, not for pods).
    create_pod(&client, a_pod("ssd", "0", json!({"nodeSelector": {"disk": "ssd"}}))).await;
    // A pod tolerating n3's taint goes there, the only node with room for it.
    let toleration =
        json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]});
    create_pod(&client, a_pod("tolerating", "3", toleration)).await;
    let placed = bound(&client, &["ssd", "tolerating"]).await;
    assert_eq!(placed["ssd"], "n1");
    assert_eq!(placed["tolerating"], "n3");

    // A pod that does not tolerate the taint, and finds no cpu on n1 and n2, is unschedulable.
    create_pod(&client, a_pod("intolerant", "1", json!({}))).await;
    // A pod too big for every node, tolerating every taint.
    create_pod(&client, a_pod("big", "16", json!({"tolerations": [{"operator": "Exists"}]}))).await;
    let cases = [
        (
            "intolerant",
            "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. \
             preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..",
        ),
        (
            "big",
            "0/3 nodes are available: 3 Insufficient cpu. \
             preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..",
        ),
    ];
    for (pod_name, want) in cases {
        let pod = eventually("the Unschedulable condition", || async {
            let pod = get_pod(&client, pod_name).await;
            match condition(&pod, "PodScheduled") {
                Some(_) => Ok(pod),
                None => Err(format!("status {}", pod["status"])),
            }
        })
        .await;
        let c = condition(&pod, "PodScheduled").expect("just seen");
        assert_eq!(
            (&c["status"], &c["reason"], &c["message"]),
            (&json!("False"), &json!("Unschedulable"), &json!(want)),
            "{pod_name}"
        );
        assert!(pod["spec"]["nodeName"].as_str().unwrap_or_default().is_empty());
        let failed = eventually("the FailedScheduling event", || async {
            let events = events_of(&client, pod_name, "FailedScheduling").await;
            if events.is_empty() {
                Err("no event yet".to_string())
            } else {
                Ok(events)
            }
        })
        .await;
        assert_eq!(failed[0], ("Warning".to_string(), want.to_string(), SCHEDULER_NAME.to_string()), "{pod_name}");
    }

    // A node big enough arrives: the big pod goes there, and its condition turns True.
    add_node(&client, "n4", "32", json!({}), json!([])).await;
    let placed = bound(&client, &["big"]).await;
    assert_eq!(placed["big"], "n4");
    let big = get_pod(&client, "big").await;
    assert_eq!(condition(&big, "PodScheduled").expect("a condition")["status"], "True");
    assert_eq!(events_of(&client, "big", "Scheduled").await.len(), 1);
    // The intolerant pod takes n4 too, now that it has room.
    let placed = bound(&client, &["intolerant"]).await;
    assert_eq!(placed["intolerant"], "n4");

    // Nothing overcommits a node.
    let nodes: BTreeMap<String, i64> = items(&client, "/api/v1/nodes")
        .await
        .iter()
        .map(|n| {
            (
                name(n),
                scheduler::resources::parse_nanos(n["status"]["allocatable"]["cpu"].as_str().unwrap()).unwrap() as i64
                    / 1_000_000,
            )
        })
        .collect();
    let mut used: BTreeMap<String, i64> = BTreeMap::new();
    for pod in items(&client, &format!("/api/v1/namespaces/{NS}/pods")).await {
        let cpu = pod["spec"]["containers"][0]["resources"]["requests"]["cpu"].as_str().unwrap_or("0");
        let milli = scheduler::resources::parse_nanos(cpu).unwrap() as i64 / 1_000_000;
        *used.entry(pod["spec"]["nodeName"].as_str().unwrap_or_default().to_string()).or_default() += milli;
    }
    for (node, milli) in &used {
        assert!(*milli <= nodes[node], "{node} holds {milli}m of {}m", nodes[node]);
    }
    task.abort();
}
