//! End to end: the clusterrole-aggregation controller against a real apiserver in this process. An
//! aggregated ClusterRole picks up the rules of the roles its selector matches, in name order and each rule
//! once, through a server-side apply under the controller's field manager; a role labelled later adds its
//! new rules. The bootstrap `admin`, `edit` and `view` roles already hold what the controller computes, so
//! it leaves them untouched.
#![cfg(not(madsim))]

use crate::support::{self, eventually};

use controllers::client::Client;
use controllers::kcm::clusterroleaggregation;
use serde_json::{json, Value};

const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
const LABEL: &str = "e2e.kubesim.io/aggregate-to-monitoring";

fn role(name: &str, rules: Value) -> Value {
    json!({"metadata": {"name": name, "labels": {LABEL: "true"}}, "rules": rules})
}

async fn rules_become(client: &Client, what: &str, want: Value) -> Value {
    eventually(what, || async {
        let r = client.get(&format!("{ROLES}/monitoring")).await.map_err(|e| e.to_string())?;
        (r["rules"] == want).then_some(r.clone()).ok_or_else(|| r["rules"].to_string())
    })
    .await
}

#[tokio::test]
async fn an_aggregated_role_collects_the_labelled_rules() {
    let (client, ctx) = support::context("clusterrole-aggregation-e2e", clusterroleaggregation::DESCRIPTOR.name).await;
    let versions = |names: &'static [&'static str]| {
        let client = client.clone();
        async move {
            let mut out = Vec::new();
            for name in names {
                let r = client.get(&format!("{ROLES}/{name}")).await.expect("a bootstrap role");
                out.push(r["metadata"]["resourceVersion"].clone());
            }
            out
        }
    };
    let bootstrap_before = versions(&["admin", "edit", "view"]).await;
    let pods_get = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]});
    let deploy_list = json!({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list"]});
    let aggregated = json!({
        "metadata": {"name": "monitoring"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {LABEL: "true"}}]},
    });
    client.create(ROLES, &aggregated).await.expect("the aggregated role is created");
    client.create(ROLES, &role("z-pods", json!([pods_get.clone()]))).await.expect("a part is created");
    let controller = tokio::spawn(clusterroleaggregation::run(ctx));

    let first = rules_become(&client, "the first part's rules are aggregated", json!([pods_get.clone()])).await;
    let managers: Vec<Value> = first["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m["manager"] == clusterroleaggregation::FIELD_MANAGER)
        .collect();
    assert_eq!(managers.len(), 1, "{}", first["metadata"]);
    assert_eq!(managers[0]["operation"], "Apply");

    // A role named earlier goes first; its copy of the pods rule is not added twice.
    client
        .create(ROLES, &role("a-apps", json!([deploy_list.clone(), pods_get.clone()])))
        .await
        .expect("a part is created");
    rules_become(&client, "the new part's rules are aggregated", json!([deploy_list.clone(), pods_get.clone()])).await;

    client.delete(&format!("{ROLES}/a-apps"), None).await.expect("a part is deleted");
    rules_become(&client, "the deleted part's rules go", json!([pods_get.clone()])).await;

    assert_eq!(versions(&["admin", "edit", "view"]).await, bootstrap_before, "the bootstrap aggregates were rewritten");
    controller.abort();
}
