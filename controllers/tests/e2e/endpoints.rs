//! End to end: the Endpoints and EndpointSlice controllers (with the garbage collector, which removes a
//! deleted Service's slices) against a real apiserver in this process, on shared informers. The test plays
//! the kubelet: it writes each pod's IP and `Ready` condition through `pods/{name}/status`. A Service
//! selecting three pods, one not ready, with a named target port, gets Endpoints with two addresses and
//! one not-ready address on the container's port, and one EndpointSlice of three endpoints with their
//! conditions, zone, labels and owner. A pod deleted gracefully leaves the Endpoints at once and stays in
//! the slice as terminating until it is gone; the Service deleted takes its Endpoints and slices along.
#![cfg(not(madsim))]

use crate::support::{self, eventually, items, name};

use std::sync::Arc;

use controllers::client::Client;
use controllers::kcm::{endpoints, endpointslice, garbagecollector, Context};
use serde_json::{json, Value};

const NS: &str = "endpoints-e2e";
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// The apiserver, a client of it, the namespace with its `default` service account, a node in zone
/// `zone-a`, and the controllers on one set of informers.
async fn start(name: &str) -> (Arc<Client>, Vec<tokio::task::JoinHandle<()>>) {
    let (client, ctx) = support::context(name, endpoints::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    let node = json!({"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "zone-a"}}});
    client.create("/api/v1/nodes", &node).await.expect("the node is created");
    let context = |component: &str| Context { events: ctx.events.for_component(component), ..ctx.clone() };
    let tasks = vec![
        tokio::spawn(endpoints::run(context(endpoints::DESCRIPTOR.name))),
        tokio::spawn(endpointslice::run(context(endpointslice::DESCRIPTOR.name))),
        tokio::spawn(garbagecollector::run(context(garbagecollector::DESCRIPTOR.name))),
    ];
    (client, tasks)
}

/// Creates pod `name` on node `n1` with a container port named `http`, then reports it running with
/// `ip`, ready or not, as its kubelet would.
async fn running_pod(client: &Client, name: &str, ip: &str, ready: bool) -> Value {
    let pod = json!({
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx",
                 "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
    });
    let mut pod = client.create(&format!("/api/v1/namespaces/{NS}/pods"), &pod).await.expect("the pod is created");
    pod["status"]["phase"] = json!("Running");
    pod["status"]["podIP"] = json!(ip);
    pod["status"]["podIPs"] = json!([{"ip": ip}]);
    pod["status"]["conditions"] = json!([{"type": "Ready", "status": if ready { "True" } else { "False" },
                                          "lastTransitionTime": "2023-11-14T22:13:20Z"}]);
    let path = format!("/api/v1/namespaces/{NS}/pods/{name}/status");
    client.update(&path, &pod).await.expect("the pod's status is written")
}

fn ips(addresses: &Value) -> Vec<String> {
    let mut out: Vec<String> =
        addresses.as_array().into_iter().flatten().filter_map(|a| a["ip"].as_str()).map(str::to_string).collect();
    out.sort();
    out
}

/// The Endpoints `web` once its (ready, not ready) addresses are as wanted.
async fn endpoints_with(client: &Client, ready: &[&str], not_ready: &[&str]) -> Value {
    let path = format!("/api/v1/namespaces/{NS}/endpoints/web");
    eventually("the Endpoints' addresses", || async {
        let ep = client.get(&path).await.map_err(|e| e.to_string())?;
        let subset = &ep["subsets"][0];
        let got = (ips(&subset["addresses"]), ips(&subset["notReadyAddresses"]));
        if got.0 == ready && got.1 == not_ready && ep["subsets"].as_array().map_or(0, Vec::len) == 1 {
            Ok(ep)
        } else {
            Err(format!("{}", ep["subsets"]))
        }
    })
    .await
}

async fn slices_of_web(client: &Client) -> Vec<Value> {
    items(client, &format!("/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices"))
        .await
        .into_iter()
        .filter(|s| s["metadata"]["labels"][SERVICE_NAME_LABEL] == "web")
        .collect()
}

/// The single slice of `web` once its endpoints are, by pod name, (ready, serving, terminating) as wanted.
async fn slice_with(client: &Client, want: &[(&str, bool, bool, bool)]) -> Value {
    eventually("the EndpointSlice's endpoints", || async {
        let slices = slices_of_web(client).await;
        let [slice] = slices.as_slice() else { return Err(format!("{} slices", slices.len())) };
        let mut got: Vec<(String, bool, bool, bool)> = slice["endpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                let c = &e["conditions"];
                let flag = |f: &str| c[f].as_bool().unwrap_or(false);
                (
                    e["targetRef"]["name"].as_str().unwrap_or("").to_string(),
                    flag("ready"),
                    flag("serving"),
                    flag("terminating"),
                )
            })
            .collect();
        got.sort();
        let want: Vec<(String, bool, bool, bool)> =
            want.iter().map(|(n, r, s, t)| (n.to_string(), *r, *s, *t)).collect();
        if got == want {
            Ok(slice.clone())
        } else {
            Err(format!("{got:?}"))
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_gets_endpoints_and_slices() {
    let (client, tasks) = start("endpoints-e2e").await;
    let a = running_pod(&client, "a", "10.244.0.11", true).await;
    running_pod(&client, "b", "10.244.0.12", true).await;
    running_pod(&client, "c", "10.244.0.13", false).await;
    let service = json!({
        "metadata": {"name": "web", "labels": {"team": "blue"}},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"}]},
    });
    let service =
        client.create(&format!("/api/v1/namespaces/{NS}/services"), &service).await.expect("the Service is created");

    // Endpoints: two ready, one not, on the port the name `http` resolves to.
    let ep = endpoints_with(&client, &["10.244.0.11", "10.244.0.12"], &["10.244.0.13"]).await;
    assert_eq!(ep["subsets"][0]["ports"], json!([{"name": "web", "port": 8080, "protocol": "TCP"}]));
    let first = &ep["subsets"][0]["addresses"][0];
    assert_eq!(first["nodeName"], "n1");
    assert_eq!(
        (&first["targetRef"]["kind"], &first["targetRef"]["name"], &first["targetRef"]["uid"]),
        (&json!("Pod"), &json!("a"), &a["metadata"]["uid"])
    );
    assert_eq!(ep["metadata"]["labels"], json!({"team": "blue"}));
    let trigger = &ep["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"];
    assert_eq!(trigger, &service["metadata"]["creationTimestamp"], "a new Service: its creation time");

    // One slice of three endpoints.
    let slice =
        slice_with(&client, &[("a", true, true, false), ("b", true, true, false), ("c", false, false, false)]).await;
    let slice_name = name(&slice);
    assert!(slice_name.starts_with("web-") && slice_name.len() > 4, "{slice_name}");
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(slice["ports"], json!([{"name": "web", "port": 8080, "protocol": "TCP"}]));
    assert_eq!(
        slice["metadata"]["labels"],
        json!({"team": "blue", SERVICE_NAME_LABEL: "web", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"})
    );
    let owner = &slice["metadata"]["ownerReferences"][0];
    assert_eq!(
        (&owner["kind"], &owner["name"], &owner["uid"], &owner["controller"], &owner["blockOwnerDeletion"]),
        (&json!("Service"), &json!("web"), &service["metadata"]["uid"], &json!(true), &json!(true))
    );
    let endpoint =
        slice["endpoints"].as_array().expect("endpoints").iter().find(|e| e["targetRef"]["name"] == "a").cloned();
    let endpoint = endpoint.expect("pod a's endpoint");
    assert_eq!(
        (&endpoint["addresses"], &endpoint["nodeName"], &endpoint["zone"]),
        (&json!(["10.244.0.11"]), &json!("n1"), &json!("zone-a"))
    );

    // Pod a deleted gracefully: out of the Endpoints at once, terminating in the slice (the same one).
    let pod_a = format!("/api/v1/namespaces/{NS}/pods/a");
    client.delete(&pod_a, None).await.expect("pod a is deleted");
    endpoints_with(&client, &["10.244.0.12"], &["10.244.0.13"]).await;
    let terminating =
        slice_with(&client, &[("a", false, true, true), ("b", true, true, false), ("c", false, false, false)]).await;
    assert_eq!(name(&terminating), slice_name, "updated in place");
    // Its kubelet finishes the deletion: gone from the slice too.
    client.delete(&pod_a, Some(&json!({"gracePeriodSeconds": 0}))).await.expect("pod a is removed");
    let after = slice_with(&client, &[("b", true, true, false), ("c", false, false, false)]).await;
    assert_eq!(name(&after), slice_name);

    // The Service deleted: its Endpoints go with it, and its slices through the garbage collector.
    client.delete(&format!("/api/v1/namespaces/{NS}/services/web"), None).await.expect("the Service is deleted");
    eventually("the Endpoints and slices gone", || async {
        let ep = client.get(&format!("/api/v1/namespaces/{NS}/endpoints/web")).await;
        let slices = slices_of_web(&client).await.len();
        match ep {
            Err(err) if err.is_not_found() && slices == 0 => Ok(()),
            other => Err(format!("endpoints {:?}, {slices} slices", other.map(|e| e["subsets"].clone()))),
        }
    })
    .await;

    // The apiserver's own `default/kubernetes` Service has no selector: neither controller writes for it.
    let default_ep = client.get("/api/v1/namespaces/default/endpoints/kubernetes").await;
    assert!(default_ep.is_err_and(|e| e.is_not_found()));
    for task in tasks {
        task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_without_pods_gets_a_placeholder_slice_and_empty_endpoints() {
    let (client, tasks) = start("endpoints-e2e-empty").await;
    let service = json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "none"}, "ports": [{"port": 80}]}});
    client.create(&format!("/api/v1/namespaces/{NS}/services"), &service).await.expect("the Service is created");
    let ep = eventually("the empty Endpoints", || async {
        client.get(&format!("/api/v1/namespaces/{NS}/endpoints/web")).await.map_err(|e| e.to_string())
    })
    .await;
    assert!(ep.get("subsets").is_none_or(|s| s.as_array().is_some_and(Vec::is_empty)), "{ep}");
    let placeholder = slice_with(&client, &[]).await;
    assert!(placeholder.get("ports").is_none_or(|p| p.as_array().is_some_and(Vec::is_empty)), "{placeholder}");
    for task in tasks {
        task.abort();
    }
}
