//! End to end: the disruption controller against a real apiserver in this process. A budget of
//! `minAvailable: 2` over three ready pods no workload owns (the test marks them ready through
//! `pods/NAME/status`, playing the kubelet) shows three expected and healthy, two desired, one disruption
//! allowed; the eviction subresource then lets one pod go, and once the controller has counted again it
//! refuses the next with upstream's 429.
#![cfg(not(madsim))]

use crate::support::{self, condition, eventually};

use controllers::client::{ClientError, MERGE_PATCH};
use controllers::kcm::disruption;
use serde_json::{json, Value};

const NS: &str = "pdb-e2e";

fn budget_path() -> String {
    format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web")
}

fn status_int(budget: &Value, field: &str) -> i64 {
    budget["status"][field].as_i64().unwrap_or(-1)
}

fn eviction(name: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS}})
}

#[tokio::test]
async fn a_budget_allows_one_eviction_and_refuses_the_next() {
    let (client, ctx) = support::context("disruption-e2e", disruption::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    for i in 0..3 {
        let pod = json!({
            "metadata": {"name": format!("web-{i}"), "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        });
        client.create(&format!("/api/v1/namespaces/{NS}/pods"), &pod).await.expect("the pod is created");
        let ready = json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        client
            .patch(&format!("/api/v1/namespaces/{NS}/pods/web-{i}/status"), &ready, MERGE_PATCH)
            .await
            .expect("the pod is marked ready");
    }
    let budget = json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    });
    client
        .create(&format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"), &budget)
        .await
        .expect("the budget is created");
    let controller = tokio::spawn(disruption::run(ctx));

    let counted = eventually("the budget is counted", || async {
        let b = client.get(&budget_path()).await.map_err(|e| e.to_string())?;
        (status_int(&b, "observedGeneration") == 1 && status_int(&b, "disruptionsAllowed") == 1)
            .then_some(b.clone())
            .ok_or_else(|| b["status"].to_string())
    })
    .await;
    assert_eq!(status_int(&counted, "expectedPods"), 3);
    assert_eq!(status_int(&counted, "currentHealthy"), 3);
    assert_eq!(status_int(&counted, "desiredHealthy"), 2);
    let allowed = condition(&counted, "DisruptionAllowed").expect("the condition is set");
    assert_eq!((allowed["status"].as_str(), allowed["reason"].as_str()), (Some("True"), Some("SufficientPods")));
    assert_eq!(allowed["message"], "");

    client
        .create(&format!("/api/v1/namespaces/{NS}/pods/web-0/eviction"), &eviction("web-0"))
        .await
        .expect("the first eviction is allowed");
    // The pod goes, and the controller counts two healthy of two wanted, none allowed.
    let spent = eventually("the budget is counted again", || async {
        let b = client.get(&budget_path()).await.map_err(|e| e.to_string())?;
        let gone = client.get(&format!("/api/v1/namespaces/{NS}/pods/web-0")).await.is_err_and(|e| e.is_not_found());
        (gone && status_int(&b, "currentHealthy") == 2 && b["status"].get("disruptedPods").is_none())
            .then_some(b.clone())
            .ok_or_else(|| format!("pod gone: {gone}, status: {}", b["status"]))
    })
    .await;
    assert_eq!(status_int(&spent, "disruptionsAllowed"), 0);
    assert_eq!(status_int(&spent, "expectedPods"), 2);
    let allowed = condition(&spent, "DisruptionAllowed").expect("the condition is set");
    assert_eq!((allowed["status"].as_str(), allowed["reason"].as_str()), (Some("False"), Some("InsufficientPods")));

    let refused = client
        .create(&format!("/api/v1/namespaces/{NS}/pods/web-1/eviction"), &eviction("web-1"))
        .await
        .expect_err("the second eviction is refused");
    let ClientError::Status { code, status } = &refused else { panic!("not a Status: {refused}") };
    assert_eq!(*code, 429);
    assert_eq!(status.message.as_deref(), Some("Cannot evict pod as it would violate the pod's disruption budget."));
    let causes = status.details.as_ref().and_then(|d| d.causes.clone()).unwrap_or_default();
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert_eq!(causes[0].reason.as_deref(), Some("DisruptionBudget"));
    assert_eq!(
        causes[0].message.as_deref(),
        Some("The disruption budget web needs 2 healthy pods and has 2 currently")
    );
    assert!(client.get(&format!("/api/v1/namespaces/{NS}/pods/web-1")).await.is_ok(), "the refused pod stays");
    controller.abort();
}
