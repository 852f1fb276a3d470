//! End to end: the node lifecycle and taint eviction controllers against a real apiserver in this process,
//! with the scheduler and two simulated node fleets (node-1 and node-2, run separately so that node-2 can
//! go away by itself). Pods land on both nodes; node-2's fleet stops; once the grace period passes, node-2
//! is Unknown with `NodeStatusUnknown`, carries the unreachable NoSchedule and NoExecute taints, its pods
//! are not ready, a pod tolerating the taint for 0 s is deleted at once (with the `DisruptionTarget`
//! condition), one tolerating it for 2 s about 2 s later, while one tolerating it forever and one with only
//! the 300 s the DefaultTolerationSeconds admission plugin gives every pod stay; node-1 is untouched. node-2's fleet starts again and its taints come off.
//!
//! The grace period is 15 s rather than upstream's 50 s to keep the test short; it must stay above the
//! simulated kubelet's lease renewal interval (10 s, with jitter), or healthy nodes would be judged silent.
#![cfg(not(madsim))]

use crate::support::{self, condition, eventually, items};

use std::time::Duration;

use controllers::client::Client;
use controllers::kcm::{nodelifecycle, tainteviction, Context};
use controllers::nodes::{self, Fleet, NodeTemplate};
use controllers::scheduler;
use serde_json::{json, Value};
use tokio::time::Instant;

const NS: &str = "nlc-e2e";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

fn with_events(ctx: &Context, component: &str) -> Context {
    Context { events: ctx.events.for_component(component), ..ctx.clone() }
}

/// A pod pinned to `node` with `tolerations`.
fn pod(name: &str, node: &str, tolerations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "tolerations": tolerations,
            "nodeSelector": {"kubernetes.io/hostname": node}}})
}

async fn get(client: &Client, path: &str) -> Result<Value, String> {
    client.get(path).await.map_err(|e| e.to_string())
}

fn pod_path(name: &str) -> String {
    format!("/api/v1/namespaces/{NS}/pods/{name}")
}

/// The node's taints as `key:effect`.
fn taints(node: &Value) -> Vec<String> {
    node["spec"]["taints"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| format!("{}:{}", t["key"].as_str().unwrap_or(""), t["effect"].as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default()
}

fn ready(obj: &Value) -> String {
    condition(obj, "Ready").and_then(|c| c["status"].as_str()).unwrap_or("").to_string()
}

fn deleting(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_node_is_tainted_and_its_pods_evicted_until_it_returns() {
    let (client, ctx) = support::context("nlc-e2e", "kubelet").await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account");

    let fleet = |first| Fleet { first, count: 1, template: NodeTemplate::default() };
    let node1 = tokio::spawn(nodes::run(ctx.clone(), fleet(1)));
    let node2 = tokio::spawn(nodes::run(ctx.clone(), fleet(2)));
    let sched = tokio::spawn(scheduler::run(with_events(&ctx, scheduler::SCHEDULER_NAME)));
    let options = nodelifecycle::Options {
        node_monitor_period: Duration::from_secs(1),
        node_monitor_grace_period: Duration::from_secs(15),
        ..Default::default()
    };
    let lifecycle = tokio::spawn(nodelifecycle::run_with(ctx.clone(), options));
    let eviction = tokio::spawn(tainteviction::run(ctx.clone()));

    let forever = json!([{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}]);
    let zero = json!([{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}]);
    let brief = json!([{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 2}]);
    let pods = [
        pod("one", "node-1", json!([])),
        pod("plain", "node-2", json!([])),
        pod("zero", "node-2", zero),
        pod("forever", "node-2", forever),
        pod("brief", "node-2", brief),
    ];
    for p in &pods {
        client.create(&format!("/api/v1/namespaces/{NS}/pods"), p).await.expect("the pod is created");
    }
    for name in ["one", "plain", "zero", "forever", "brief"] {
        eventually(&format!("{name} running and ready"), || async {
            let pod = get(&client, &pod_path(name)).await?;
            (ready(&pod) == "True").then_some(()).ok_or_else(|| format!("{}", pod["status"]))
        })
        .await;
    }
    // Healthy nodes carry none of the controller's taints.
    for node in ["node-1", "node-2"] {
        let n = get(&client, &format!("/api/v1/nodes/{node}")).await.unwrap();
        assert_eq!(taints(&n), Vec::<String>::new(), "{node}");
    }

    // node-2 goes away: after the grace period it is Unknown and tainted unreachable, both ways.
    node2.abort();
    let stopped = Instant::now();
    let node = eventually("node-2 unreachable", || async {
        let node = get(&client, "/api/v1/nodes/node-2").await?;
        let t = taints(&node);
        let want = [format!("{UNREACHABLE}:NoSchedule"), format!("{UNREACHABLE}:NoExecute")];
        (ready(&node) == "Unknown" && want.iter().all(|w| t.contains(w)))
            .then_some(node.clone())
            .ok_or_else(|| format!("ready {}, taints {t:?}", ready(&node)))
    })
    .await;
    let tainted = Instant::now();
    assert!(stopped.elapsed() >= Duration::from_secs(10), "not before the grace period: {:?}", stopped.elapsed());
    let cond = condition(&node, "Ready").unwrap();
    assert_eq!(
        (&cond["reason"], &cond["message"]),
        (&json!("NodeStatusUnknown"), &json!("Kubelet stopped posting node status."))
    );
    assert_eq!(condition(&node, "MemoryPressure").unwrap()["status"], "Unknown");
    let no_execute = node["spec"]["taints"].as_array().unwrap().iter().find(|t| t["effect"] == "NoExecute").unwrap();
    assert!(no_execute["timeAdded"].is_string(), "{no_execute}");

    // Its pods are not ready; the one tolerating the taint for 0 s is deleted at once, marked a disruption
    // target.
    let zero = eventually("zero deleted", || async {
        let pod = get(&client, &pod_path("zero")).await?;
        deleting(&pod).then_some(pod.clone()).ok_or_else(|| format!("{}", pod["metadata"]))
    })
    .await;
    let target = condition(&zero, "DisruptionTarget").expect("the DisruptionTarget condition");
    assert_eq!((&target["status"], &target["reason"]), (&json!("True"), &json!("DeletionByTaintManager")));
    assert!(tainted.elapsed() < Duration::from_millis(1500), "at once: {:?}", tainted.elapsed());
    for name in ["forever", "plain"] {
        let pod = eventually(&format!("{name} not ready"), || async {
            let pod = get(&client, &pod_path(name)).await?;
            (ready(&pod) == "False").then_some(pod.clone()).ok_or_else(|| format!("{}", pod["status"]))
        })
        .await;
        assert!(!deleting(&pod), "{name}");
    }

    // The pod tolerating the taint for 2 s is deleted about 2 s after it.
    eventually("brief deleted", || async {
        let pod = get(&client, &pod_path("brief")).await?;
        deleting(&pod).then_some(()).ok_or_else(|| "not yet".to_string())
    })
    .await;
    let after = tainted.elapsed();
    assert!(after >= Duration::from_millis(1500) && after < Duration::from_secs(4), "2 s after the taint: {after:?}");
    let events = items(&client, &format!("/api/v1/namespaces/{NS}/events")).await;
    let marked: Vec<_> = events
        .iter()
        .filter(|e| e["reason"] == "TaintManagerEviction" && e["involvedObject"]["name"] == "brief")
        .map(|e| (e["message"].clone(), e["source"]["component"].clone()))
        .collect();
    assert_eq!(
        marked,
        vec![(json!(format!("Marking for deletion Pod {NS}/brief")), json!("taint-eviction-controller"))]
    );
    let node_events = items(&client, "/api/v1/namespaces/default/events").await;
    assert!(
        node_events.iter().any(|e| e["reason"] == "NodeNotReady"
            && e["message"] == "Node node-2 status is now: NodeNotReady"
            && e["source"]["component"] == "node-controller"),
        "the node's status change is announced"
    );

    // node-1 stayed healthy through it all, and its pod with it.
    let n1 = get(&client, "/api/v1/nodes/node-1").await.unwrap();
    assert_eq!((ready(&n1), taints(&n1)), ("True".to_string(), vec![]));
    assert_eq!(ready(&get(&client, &pod_path("one")).await.unwrap()), "True");
    tokio::time::sleep(Duration::from_secs(1)).await;
    for name in ["forever", "plain"] {
        assert!(!deleting(&get(&client, &pod_path(name)).await.unwrap()), "{name} is tolerated");
    }

    // node-2 comes back: Ready again, and the controller's taints come off.
    let node2 = tokio::spawn(nodes::run(ctx.clone(), fleet(2)));
    eventually("node-2 untainted", || async {
        let node = get(&client, "/api/v1/nodes/node-2").await?;
        let t = taints(&node);
        (ready(&node) == "True" && t.is_empty())
            .then_some(())
            .ok_or_else(|| format!("ready {}, taints {t:?}", ready(&node)))
    })
    .await;

    for task in [node1, node2, sched, lifecycle, eviction] {
        task.abort();
    }
}
