//! Dry runs (`?dryRun=All`): create, update and delete are validated and answered as if done, and nothing
//! is written (no new revision); a taken name is still a 409, a stale resourceVersion still a 409; any
//! value other than `All` is a 422 on the options.

use apiserver::registry::{CreateOptions, DeleteOptions, UpdateOptions};
use apiserver::storage::GetOptions;
use serde_json::{json, Value};

use super::harness::{expect_err, raw, Case, Ctx, NOW};

pub fn cases() -> Vec<Case> {
    cases![
        dry_run_create_writes_nothing,
        dry_run_update_and_delete_write_nothing,
        dry_run_values_other_than_all_are_422s
    ]
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

/// The revision etcd is at, as a consistent list reports it.
async fn revision(ctx: &Ctx) -> u64 {
    ctx.configmaps.list("ns", &Default::default()).await.unwrap().resource_version.0
}

async fn dry_run_create_writes_nothing(ctx: Ctx) {
    ctx.namespace("ns").await;
    let before = revision(&ctx).await;
    let answer = ctx.configmaps.create_with("ns", cm("a"), &CreateOptions::dry_run()).await.unwrap();
    assert_eq!(answer["metadata"]["name"], "a");
    assert_eq!(answer["metadata"]["namespace"], "ns");
    assert_eq!(answer["metadata"]["creationTimestamp"], NOW);
    assert_eq!(answer["metadata"]["uid"].as_str().unwrap().len(), 36);
    assert!(answer["metadata"].get("resourceVersion").is_none(), "a dry run has no resourceVersion: {answer}");
    let generated = ctx
        .configmaps
        .create_with("ns", json!({"metadata": {"generateName": "web-"}}), &CreateOptions::dry_run())
        .await
        .unwrap();
    assert!(generated["metadata"]["name"].as_str().unwrap().starts_with("web-"));
    assert!(raw(&ctx, &format!("{}configmaps/ns/a", ctx.prefix)).await.is_none(), "nothing is stored");
    assert_eq!(revision(&ctx).await, before, "a dry run makes no revision");
    // Validation and admission still run.
    let status = expect_err(ctx.configmaps.create_with("ns", cm("A"), &CreateOptions::dry_run()).await);
    assert_eq!(status["code"], 422);
    let status = expect_err(ctx.configmaps.create_with("nope", cm("a"), &CreateOptions::dry_run()).await);
    assert_eq!(status["message"], "namespaces \"nope\" not found");
    // A name already taken is still a 409.
    ctx.configmaps.create("ns", cm("a")).await.unwrap();
    let status = expect_err(ctx.configmaps.create_with("ns", cm("a"), &CreateOptions::dry_run()).await);
    assert_eq!(status["code"], 409);
    assert_eq!(status["reason"], "AlreadyExists");
    assert_eq!(status["message"], "configmaps \"a\" already exists");
}

async fn dry_run_update_and_delete_write_nothing(ctx: Ctx) {
    ctx.namespace("ns").await;
    let created = ctx.configmaps.create("ns", cm("a")).await.unwrap();
    let before = revision(&ctx).await;
    let mut edit = created.clone();
    edit["data"]["k"] = json!("w");
    let (answer, was_created) =
        ctx.configmaps.update_with("ns", "a", edit.clone(), &UpdateOptions::dry_run()).await.unwrap();
    assert!(!was_created);
    assert_eq!(answer["data"]["k"], "w", "the answer is the would-be object");
    assert_eq!(answer["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
    let stored = ctx.configmaps.get("ns", "a", &GetOptions::default()).await.unwrap();
    assert_eq!(stored, created, "a dry-run update changes nothing");
    // The optimistic lock still holds.
    let mut stale = edit.clone();
    stale["metadata"]["resourceVersion"] = json!("1");
    let status = expect_err(ctx.configmaps.update_with("ns", "a", stale, &UpdateOptions::dry_run()).await);
    assert_eq!(status["code"], 409);
    let status = expect_err(ctx.configmaps.update_with("ns", "b", cm("b"), &UpdateOptions::dry_run()).await);
    assert_eq!(status["message"], "configmaps \"b\" not found");

    let dry_delete = DeleteOptions { dry_run: vec!["All".into()], ..DeleteOptions::default() };
    let deleted = ctx.configmaps.delete_with("ns", "a", &dry_delete).await.unwrap();
    assert!(deleted.deleted);
    assert_eq!(deleted.body["status"], "Success");
    assert_eq!(deleted.body["details"]["uid"], created["metadata"]["uid"]);
    assert_eq!(ctx.configmaps.get("ns", "a", &GetOptions::default()).await.unwrap(), created, "still there");
    let status = expect_err(ctx.configmaps.delete_with("ns", "b", &dry_delete).await);
    assert_eq!(status["code"], 404);
    // Preconditions are still checked.
    let wrong_uid = DeleteOptions {
        preconditions: apiserver::storage::Preconditions { uid: Some("x".into()), resource_version: None },
        ..dry_delete.clone()
    };
    assert_eq!(expect_err(ctx.configmaps.delete_with("ns", "a", &wrong_uid).await)["code"], 409);
    // Namespaces answer with the object marked Terminating, and stay Active.
    let ns = ctx.namespaces.delete_with("", "ns", &dry_delete).await.unwrap();
    assert!(!ns.deleted);
    assert_eq!(ns.body["status"]["phase"], "Terminating");
    assert_eq!(ns.body["metadata"]["deletionTimestamp"], NOW);
    let stored = ctx.namespaces.get("", "ns", &GetOptions::default()).await.unwrap();
    assert_eq!(stored["status"]["phase"], "Active");
    assert_eq!(revision(&ctx).await, before, "no dry run makes a revision");
}

async fn dry_run_values_other_than_all_are_422s(ctx: Ctx) {
    ctx.namespace("ns").await;
    let status = expect_err(
        ctx.configmaps
            .create_with("ns", cm("a"), &CreateOptions { dry_run: vec!["Some".into()], ..CreateOptions::default() })
            .await,
    );
    assert_eq!(
        status,
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 422, "reason": "Invalid",
               "message": "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\"",
               "details": {"name": "", "group": "meta.k8s.io", "kind": "CreateOptions",
                           "causes": [{"reason": "FieldValueNotSupported", "message": "Unsupported value: []string{\"Some\"}: supported values: \"All\"", "field": "dryRun"}]}})
    );
    let options = UpdateOptions { dry_run: vec!["All".into(), "x".into()], ..UpdateOptions::default() };
    let status = expect_err(ctx.configmaps.update_with("ns", "a", cm("a"), &options).await);
    assert_eq!(
        status["message"],
        "UpdateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"All\", \"x\"}: supported values: \"All\""
    );
    let options = DeleteOptions { dry_run: vec!["".into()], ..DeleteOptions::default() };
    let status = expect_err(ctx.configmaps.delete_with("ns", "a", &options).await);
    assert_eq!(
        status["message"],
        "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"\"}: supported values: \"All\""
    );
}
