//! Namespace lifecycle: a new namespace is Active with the `kubernetes` finalizer and its name label;
//! creating in a missing namespace is a 404, in a terminating one a 403 NamespaceTerminating; deleting a
//! namespace marks it Terminating and returns it; the finalization pass empties and removes it; the
//! immortal namespaces cannot be deleted.

use apiserver::registry::namespace_controller::{finalize, Finalized};
use apiserver::storage::{GetOptions, Preconditions};
use serde_json::json;

use super::harness::{expect_err, Case, Ctx, NOW};

pub fn cases() -> Vec<Case> {
    cases![
        namespace_create_sets_phase_finalizer_and_label,
        create_in_a_missing_namespace_is_a_404,
        namespace_delete_terminates_and_create_in_it_is_a_403,
        immortal_namespaces_cannot_be_deleted,
    ]
}

async fn namespace_create_sets_phase_finalizer_and_label(ctx: Ctx) {
    let ns = ctx
        .namespaces
        .create("", json!({"metadata": {"name": "ns", "namespace": "ignored"}, "status": {"phase": "Terminating"}}))
        .await
        .unwrap();
    assert_eq!(ns["status"], json!({"phase": "Active"}));
    assert_eq!(ns["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(ns["metadata"]["labels"], json!({"kubernetes.io/metadata.name": "ns"}));
    assert!(ns["metadata"].get("namespace").is_none(), "a cluster-scoped object has no namespace");
    // The main endpoint changes neither spec.finalizers nor status.
    let mut edit = ns.clone();
    edit["spec"]["finalizers"] = json!([]);
    edit["status"]["phase"] = json!("Terminating");
    let (updated, _) = ctx.namespaces.update("", "ns", edit).await.unwrap();
    assert_eq!(updated["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(updated["status"], json!({"phase": "Active"}));
}

async fn create_in_a_missing_namespace_is_a_404(ctx: Ctx) {
    let status = expect_err(ctx.configmaps.create("nope", json!({"metadata": {"name": "a"}})).await);
    assert_eq!(
        status,
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 404, "reason": "NotFound",
               "message": "namespaces \"nope\" not found", "details": {"name": "nope", "kind": "namespaces"}})
    );
}

async fn namespace_delete_terminates_and_create_in_it_is_a_403(ctx: Ctx) {
    ctx.namespace("ns").await;
    ctx.configmaps.create("ns", json!({"metadata": {"name": "a"}})).await.unwrap();
    let deleted = ctx.namespaces.delete("", "ns", &Preconditions::default()).await.unwrap();
    assert!(!deleted.deleted, "the kubernetes finalizer keeps the namespace");
    assert_eq!(deleted.body["status"], json!({"phase": "Terminating"}));
    assert_eq!(deleted.body["metadata"]["deletionTimestamp"], NOW);
    assert_eq!(deleted.body["metadata"]["deletionGracePeriodSeconds"], 0);
    let status = expect_err(ctx.configmaps.create("ns", json!({"metadata": {"generateName": "b-"}})).await);
    assert_eq!(
        status,
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 403, "reason": "Forbidden",
               "message": "configmaps \"b-\" is forbidden: unable to create new content in namespace ns because it is being terminated",
               "details": {"name": "b-", "kind": "configmaps",
                           "causes": [{"reason": "NamespaceTerminating", "message": "namespace ns is being terminated", "field": "metadata.namespace"}]}})
    );
    // Updates inside a terminating namespace are allowed.
    let cm = ctx.configmaps.get("ns", "a", &GetOptions::default()).await.unwrap();
    ctx.configmaps.update("ns", "a", cm).await.unwrap();
    // A second delete leaves the namespace as it is.
    let again = ctx.namespaces.delete("", "ns", &Preconditions::default()).await.unwrap();
    assert_eq!(again.body["metadata"]["deletionTimestamp"], NOW);
    let done = finalize(&ctx.namespaces, &[&ctx.configmaps, &ctx.pods], "ns").await.unwrap();
    assert_eq!(done, Finalized { n_deleted: 1, namespace_deleted: true });
    assert_eq!(expect_err(ctx.namespaces.get("", "ns", &GetOptions::default()).await)["code"], 404);
    let status = expect_err(ctx.configmaps.create("ns", json!({"metadata": {"name": "c"}})).await);
    assert_eq!(status["message"], "namespaces \"ns\" not found");
}

async fn immortal_namespaces_cannot_be_deleted(ctx: Ctx) {
    ctx.namespace("default").await;
    let status = expect_err(ctx.namespaces.delete("", "default", &Preconditions::default()).await);
    assert_eq!(status["code"], 403);
    assert_eq!(status["message"], "namespaces \"default\" is forbidden: this namespace may not be deleted");
}
