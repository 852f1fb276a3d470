//! Subresources: a pod's `/status` changes only status (spec and ownerReferences come from the stored
//! pod, a dropped QoS class is backfilled, no generation appears), with the same optimistic lock and no create; a namespace's `/status`
//! changes only status and `/finalize` only `spec.finalizers`, and the `/finalize` that removes the last
//! finalizer of a deleted namespace deletes it; a resource without the subresource answers 404

use apiserver::registry::{Subresource, UpdateOptions};
use apiserver::storage::{GetOptions, Preconditions};
use serde_json::json;

use super::harness::{expect_err, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![pod_status_changes_only_status, namespace_status_and_finalize, missing_subresources_are_404s]
}

async fn pod_status_changes_only_status(ctx: Ctx) {
    ctx.namespace("ns").await;
    let owner =
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-1", "controller": true}]);
    let created = ctx
        .pods
        .create(
            "ns",
            json!({"metadata": {"name": "p", "ownerReferences": owner},
                   "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "nginx:1"}]}}),
        )
        .await
        .unwrap();
    assert_eq!(created["metadata"]["ownerReferences"], owner, "ownerReferences are kept");
    let mut edit = created.clone();
    edit["status"] = json!({"phase": "Running", "podIP": "10.0.0.5"});
    edit["spec"]["containers"][0]["image"] = json!("nginx:2");
    edit["metadata"]["ownerReferences"] = json!([]);
    edit["metadata"]["labels"] = json!({"a": "b"});
    let status = Subresource::Status;
    let updated = ctx.pods.update_subresource("ns", "p", status, edit, &UpdateOptions::default()).await.unwrap();
    assert_eq!(
        updated["status"],
        json!({"phase": "Running", "podIP": "10.0.0.5", "qosClass": "BestEffort"}),
        "/status takes the new status, and the QoS class set on create is backfilled"
    );
    assert_eq!(updated["spec"], created["spec"], "/status keeps the spec");
    assert_eq!(updated["metadata"]["ownerReferences"], owner, "/status keeps ownerReferences");
    assert_eq!(updated["metadata"]["labels"], json!({"a": "b"}), "pod /status takes metadata");
    assert_eq!(updated["metadata"].get("generation"), None, "/status adds no generation");
    // The main endpoint keeps the status the kubelet wrote.
    let mut main = updated.clone();
    main["status"] = json!({"phase": "Failed"});
    let (main, _) = ctx.pods.update("ns", "p", main).await.unwrap();
    assert_eq!(main["status"]["phase"], "Running");
    // Same optimistic lock as the main endpoint.
    let conflict = expect_err(ctx.pods.update_subresource("ns", "p", status, created, &UpdateOptions::default()).await);
    assert_eq!(conflict["code"], 409);
    assert_eq!(conflict["reason"], "Conflict");
    // /status never creates.
    let missing = json!({"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let status_err =
        expect_err(ctx.pods.update_subresource("ns", "q", status, missing, &UpdateOptions::default()).await);
    assert_eq!(status_err["message"], "pods \"q\" not found");
    // A dry run answers and writes nothing.
    let mut dry = main.clone();
    dry["status"] = json!({"phase": "Succeeded"});
    let answer = ctx.pods.update_subresource("ns", "p", status, dry, &UpdateOptions::dry_run()).await.unwrap();
    assert_eq!(answer["status"], json!({"phase": "Succeeded", "qosClass": "BestEffort"}));
    assert_eq!(ctx.pods.get("ns", "p", &GetOptions::default()).await.unwrap(), main);
}

async fn namespace_status_and_finalize(ctx: Ctx) {
    let ns = ctx.namespace("ns").await;
    let opts = UpdateOptions::default();
    let mut edit = ns.clone();
    edit["status"]["conditions"] = json!([{"type": "X", "status": "True"}]);
    edit["spec"]["finalizers"] = json!([]);
    let updated = ctx.namespaces.update_subresource("", "ns", Subresource::Status, edit, &opts).await.unwrap();
    assert_eq!(updated["status"], json!({"phase": "Active", "conditions": [{"type": "X", "status": "True"}]}));
    assert_eq!(updated["spec"], json!({"finalizers": ["kubernetes"]}), "/status keeps the spec");
    let mut finalize = updated.clone();
    finalize["spec"]["finalizers"] = json!(["kubernetes", "example.com/x"]);
    finalize["status"] = json!({"phase": "Terminating"});
    let finalized = ctx.namespaces.update_subresource("", "ns", Subresource::Finalize, finalize, &opts).await.unwrap();
    assert_eq!(finalized["spec"], json!({"finalizers": ["kubernetes", "example.com/x"]}));
    assert_eq!(finalized["status"], updated["status"], "/finalize keeps the status");

    // While finalizers remain, the namespace stays Terminating; the /finalize that removes the last one
    // deletes it and answers with the namespace it was sent.
    ctx.namespaces.delete("", "ns", &Preconditions::default()).await.unwrap();
    let mut one = ctx.namespaces.get("", "ns", &GetOptions::default()).await.unwrap();
    one["spec"]["finalizers"] = json!(["example.com/x"]);
    let kept = ctx.namespaces.update_subresource("", "ns", Subresource::Finalize, one, &opts).await.unwrap();
    assert_eq!(kept["status"]["phase"], "Terminating");
    let mut none = kept.clone();
    none["spec"]["finalizers"] = json!([]);
    let answer = ctx.namespaces.update_subresource("", "ns", Subresource::Finalize, none, &opts).await.unwrap();
    assert_eq!(answer["spec"]["finalizers"], json!([]));
    assert_eq!(expect_err(ctx.namespaces.get("", "ns", &GetOptions::default()).await)["code"], 404);
}

async fn missing_subresources_are_404s(ctx: Ctx) {
    ctx.namespace("ns").await;
    let cm = ctx.configmaps.create("ns", json!({"metadata": {"name": "a"}})).await.unwrap();
    let status = expect_err(
        ctx.configmaps.update_subresource("ns", "a", Subresource::Status, cm, &UpdateOptions::default()).await,
    );
    assert_eq!(
        status,
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 404, "reason": "NotFound",
               "message": "the server could not find the requested resource", "details": {}})
    );
    let pod = json!({"metadata": {"name": "p"}});
    let status =
        expect_err(ctx.pods.update_subresource("ns", "p", Subresource::Finalize, pod, &UpdateOptions::default()).await);
    assert_eq!(status["code"], 404);
}
