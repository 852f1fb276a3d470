//! End to end: the resource quota controller against a real apiserver in this process (whose ResourceQuota
//! admission plugin charges creates and releases deletes). A new quota's status is filled in at once; pods,
//! their cpu requests and config maps show in `status.used` as they are created; a pod that finishes stops
//! counting (only the controller sees that); deleting the rest brings the usage back to zero.
#![cfg(not(madsim))]

use crate::support::{self, eventually};

use controllers::client::{Client, MERGE_PATCH};
use controllers::kcm::resourcequota;
use serde_json::{json, Value};

const NS: &str = "quota-e2e";

fn quota_path() -> String {
    format!("/api/v1/namespaces/{NS}/resourcequotas/compute")
}

/// Waits until the quota's `status.used` is `want`.
async fn used_becomes(client: &Client, what: &str, want: Value) -> Value {
    eventually(what, || async {
        let q = client.get(&quota_path()).await.map_err(|e| e.to_string())?;
        (q["status"]["used"] == want).then_some(q.clone()).ok_or_else(|| q["status"].to_string())
    })
    .await
}

fn pod(name: &str, cpu: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]},
    })
}

#[tokio::test]
async fn a_quota_tracks_pods_config_maps_and_cpu() {
    let (client, ctx) = support::context("quota-e2e", resourcequota::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    let quota = json!({
        "metadata": {"name": "compute"},
        "spec": {"hard": {"pods": "10", "configmaps": "5", "requests.cpu": "4000m"}},
    });
    client.create(&format!("/api/v1/namespaces/{NS}/resourcequotas"), &quota).await.expect("the quota is created");
    let controller = tokio::spawn(resourcequota::run(ctx));

    let counted =
        used_becomes(&client, "the new quota is counted", json!({"pods": "0", "configmaps": "0", "requests.cpu": "0"}))
            .await;
    // Limits are copied canonically, as upstream's `Quantity` prints them.
    assert_eq!(counted["status"]["hard"], json!({"pods": "10", "configmaps": "5", "requests.cpu": "4"}));

    for (name, cpu) in [("a", "250m"), ("b", "500m")] {
        client.create(&format!("/api/v1/namespaces/{NS}/pods"), &pod(name, cpu)).await.expect("the pod is created");
    }
    let config = json!({"metadata": {"name": "settings"}, "data": {"k": "v"}});
    client.create(&format!("/api/v1/namespaces/{NS}/configmaps"), &config).await.expect("the config map is created");
    used_becomes(&client, "the creations are counted", json!({"pods": "2", "configmaps": "1", "requests.cpu": "750m"}))
        .await;

    // A pod that finished uses no compute: the controller's recount, which admission never makes.
    let done = json!({"status": {"phase": "Succeeded"}});
    client.patch(&format!("/api/v1/namespaces/{NS}/pods/b/status"), &done, MERGE_PATCH).await.expect("b finishes");
    used_becomes(
        &client,
        "the finished pod is released",
        json!({"pods": "1", "configmaps": "1", "requests.cpu": "250m"}),
    )
    .await;

    for path in [format!("/api/v1/namespaces/{NS}/pods/a"), format!("/api/v1/namespaces/{NS}/configmaps/settings")] {
        client.delete(&path, Some(&json!({"gracePeriodSeconds": 0}))).await.expect("the object is deleted");
    }
    used_becomes(&client, "the deletions are counted", json!({"pods": "0", "configmaps": "0", "requests.cpu": "0"}))
        .await;

    // A raised limit is copied into the status.
    let raise = json!({"spec": {"hard": {"pods": "20"}}});
    client.patch(&quota_path(), &raise, MERGE_PATCH).await.expect("the quota is raised");
    eventually("the raised limit shows", || async {
        let q = client.get(&quota_path()).await.map_err(|e| e.to_string())?;
        (q["status"]["hard"]["pods"] == "20").then_some(()).ok_or_else(|| q["status"].to_string())
    })
    .await;
    controller.abort();
}
