//! End to end: the DaemonSet controller with the scheduler and simulated nodes against a real apiserver
//! in this process. A DaemonSet on a fleet of two gets one Running, Ready pod per node, pinned by node
//! affinity and bound by the scheduler, labelled with its ControllerRevision's hash; a third node (a second
//! fleet) gets its pod too. A new image rolls out one node at a time (`maxUnavailable: 1`) through a second
//! revision, and the status satisfies `kubectl rollout status`'s rules (kubectl's `DaemonSetStatusViewer`,
//! rebuilt here as [`rollout_status`]).
#![cfg(not(madsim))]

use crate::support::{self, eventually, items, name};

use std::collections::BTreeMap;
use std::sync::Arc;

use controllers::client::{Client, STRATEGIC_MERGE_PATCH};
use controllers::kcm::{daemonset, Context};
use controllers::nodes::{self, Fleet};
use controllers::scheduler;
use serde_json::{json, Value};

const NS: &str = "ds-e2e";

fn ds_path(name: &str) -> String {
    format!("/apis/apps/v1/namespaces/{NS}/daemonsets/{name}")
}

/// kubectl's `DaemonSetStatusViewer.Status`: `Ok` with the final message once rolled out, `Err` with the
/// waiting message before.
fn rollout_status(ds: &Value) -> Result<String, String> {
    let name = name(ds);
    let i = |p: &str| ds.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    if ds.pointer("/spec/updateStrategy/type").and_then(Value::as_str) != Some("RollingUpdate") {
        return Err("rollout status is only available for RollingUpdate strategy type".into());
    }
    if i("/metadata/generation") > i("/status/observedGeneration") {
        return Err("Waiting for daemon set spec update to be observed...".into());
    }
    let (updated, desired, available) =
        (i("/status/updatedNumberScheduled"), i("/status/desiredNumberScheduled"), i("/status/numberAvailable"));
    if updated < desired {
        return Err(format!(
            "Waiting for daemon set {name:?} rollout to finish: {updated} out of {desired} new pods have been updated..."
        ));
    }
    if available < desired {
        return Err(format!(
            "Waiting for daemon set {name:?} rollout to finish: {available} of {desired} updated pods are available..."
        ));
    }
    Ok(format!("daemon set {name:?} successfully rolled out"))
}

fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// The DaemonSet's live pods by node, each with its image and whether it is ready.
async fn pods_by_node(client: &Client) -> BTreeMap<String, Vec<(String, String, bool)>> {
    let mut map: BTreeMap<String, Vec<(String, String, bool)>> = BTreeMap::new();
    for pod in items(client, &format!("/api/v1/namespaces/{NS}/pods")).await {
        if !pod["metadata"]["deletionTimestamp"].is_null() {
            continue;
        }
        let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
        let image = pod["spec"]["containers"][0]["image"].as_str().unwrap_or("").to_string();
        map.entry(node).or_default().push((name(&pod), image, is_ready(&pod)));
    }
    map
}

/// Waits until every node in `nodes` runs exactly one ready pod of `image`, and nothing else runs.
async fn settled(client: &Arc<Client>, nodes: &[&str], image: &str) -> BTreeMap<String, Vec<(String, String, bool)>> {
    eventually(&format!("one ready {image} pod per node"), || async {
        let map = pods_by_node(client).await;
        let want: Vec<&str> = nodes.to_vec();
        let good = map.keys().map(String::as_str).collect::<Vec<_>>() == want
            && map.values().all(|pods| pods.len() == 1 && pods[0].1 == image && pods[0].2);
        if good {
            Ok(map)
        } else {
            Err(format!("{map:?}"))
        }
    })
    .await
}

async fn rolled_out(client: &Arc<Client>, ds: &str) -> Value {
    eventually("kubectl rollout status finishes", || async {
        let ds = client.get(&ds_path(ds)).await.map_err(|e| e.to_string())?;
        rollout_status(&ds).map(|_| ds.clone()).map_err(|waiting| format!("{waiting} {}", ds["status"]))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_set_runs_one_pod_per_node_and_rolls_out_node_by_node() {
    let (client, ctx) = support::context("ds-e2e", daemonset::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    let context = |component: &str| Context { events: ctx.events.for_component(component), ..ctx.clone() };
    let mut tasks = vec![
        tokio::spawn(nodes::run(context("kubelet"), Fleet { first: 1, count: 2, template: Default::default() })),
        tokio::spawn(scheduler::run(context("default-scheduler"))),
        tokio::spawn(daemonset::run(context(daemonset::DESCRIPTOR.name))),
    ];

    let ds = json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        // The apiserver upstream keeps this annotation; kubesim's does not, so the test sets it.
        "metadata": {"name": "agent", "annotations": {"deprecated.daemonset.template.generation": "1"}},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "c", "image": "agent:1"}]}},
        },
    });
    client.create(&format!("/apis/apps/v1/namespaces/{NS}/daemonsets"), &ds).await.expect("the DaemonSet is created");
    settled(&client, &["node-1", "node-2"], "agent:1").await;

    let revisions = items(&client, &format!("/apis/apps/v1/namespaces/{NS}/controllerrevisions")).await;
    assert_eq!(revisions.len(), 1, "{revisions:?}");
    let first = &revisions[0];
    let hash = first["metadata"]["labels"]["controller-revision-hash"].as_str().unwrap().to_string();
    assert_eq!(name(first), format!("agent-{hash}"));
    assert_eq!(first["revision"], 1);
    for pod in items(&client, &format!("/api/v1/namespaces/{NS}/pods")).await {
        let labels = &pod["metadata"]["labels"];
        assert_eq!(
            (&labels["controller-revision-hash"], &labels["pod-template-generation"]),
            (&json!(hash), &json!("1"))
        );
        let owner = &pod["metadata"]["ownerReferences"][0];
        assert_eq!(
            (&owner["kind"], &owner["name"], &owner["controller"]),
            (&json!("DaemonSet"), &json!("agent"), &json!(true))
        );
        let field = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchFields"][0];
        assert_eq!((&field["key"], &field["values"][0]), (&json!("metadata.name"), &pod["spec"]["nodeName"]));
        let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
        assert!(tolerations
            .iter()
            .any(|t| t["key"] == "node.kubernetes.io/unreachable" && t["tolerationSeconds"].is_null()));
    }
    let ds = rolled_out(&client, "agent").await;
    let status = &ds["status"];
    assert_eq!(
        [
            &status["desiredNumberScheduled"],
            &status["currentNumberScheduled"],
            &status["numberReady"],
            &status["numberMisscheduled"]
        ],
        [&json!(2), &json!(2), &json!(2), &json!(0)]
    );

    // A third node joins: it gets its pod.
    tasks
        .push(tokio::spawn(nodes::run(context("kubelet"), Fleet { first: 3, count: 1, template: Default::default() })));
    settled(&client, &["node-1", "node-2", "node-3"], "agent:1").await;
    let ds = rolled_out(&client, "agent").await;
    assert_eq!(ds["status"]["desiredNumberScheduled"], 3);

    // A new image rolls out with at most one node without a ready pod at any time.
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "agent:2"}]}}}});
    client.patch(&ds_path("agent"), &patch, STRATEGIC_MERGE_PATCH).await.expect("the DaemonSet is patched");
    let watch = async {
        let mut worst = 3;
        loop {
            let map = pods_by_node(&client).await;
            let ready_nodes = ["node-1", "node-2", "node-3"]
                .iter()
                .filter(|n| map.get(**n).is_some_and(|pods| pods.iter().any(|p| p.2)))
                .count();
            worst = worst.min(ready_nodes);
            let done =
                map.len() == 3 && map.values().all(|pods| pods.len() == 1 && pods[0].1 == "agent:2" && pods[0].2);
            if done {
                return worst;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    let worst = tokio::time::timeout(support::WITHIN, watch).await.expect("the rollout finishes");
    assert!(worst >= 2, "at most one node may lack a ready pod during the rollout, saw {worst} of 3 ready");
    let ds = rolled_out(&client, "agent").await;
    assert_eq!(ds["status"]["updatedNumberScheduled"], 3);
    let revisions = items(&client, &format!("/apis/apps/v1/namespaces/{NS}/controllerrevisions")).await;
    let mut numbers: Vec<i64> = revisions.iter().map(|r| r["revision"].as_i64().unwrap()).collect();
    numbers.sort();
    assert_eq!(numbers, [1, 2]);

    let events = items(&client, &format!("/api/v1/namespaces/{NS}/events")).await;
    let reasons = |reason: &str| events.iter().filter(|e| e["reason"] == reason).count();
    assert_eq!((reasons("SuccessfulCreate"), reasons("SuccessfulDelete")), (6, 3), "{events:?}");
    assert!(events.iter().any(|e| e["message"].as_str().is_some_and(|m| m.starts_with("Created pod: agent-"))));

    for task in tasks {
        task.abort();
    }
}

#[test]
fn rollout_status_follows_kubectls_rules() {
    let ds = |generation: i64, observed: i64, desired: i64, updated: i64, available: i64| {
        json!({
            "metadata": {"name": "x", "generation": generation},
            "spec": {"updateStrategy": {"type": "RollingUpdate"}},
            "status": {"observedGeneration": observed, "desiredNumberScheduled": desired, "updatedNumberScheduled": updated, "numberAvailable": available},
        })
    };
    let cases = [
        (ds(2, 1, 3, 3, 3), Err("Waiting for daemon set spec update to be observed...".to_string())),
        (
            ds(2, 2, 3, 1, 3),
            Err("Waiting for daemon set \"x\" rollout to finish: 1 out of 3 new pods have been updated...".into()),
        ),
        (
            ds(2, 2, 3, 3, 2),
            Err("Waiting for daemon set \"x\" rollout to finish: 2 of 3 updated pods are available...".into()),
        ),
        (ds(2, 2, 3, 3, 3), Ok("daemon set \"x\" successfully rolled out".to_string())),
    ];
    for (ds, want) in cases {
        assert_eq!(rollout_status(&ds), want, "{ds}");
    }
}
