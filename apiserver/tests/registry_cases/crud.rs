//! Create, get, list, update and delete of configmaps: system fields from the seeded generator and fixed
//! clock, the key layout, generateName determinism, 409 conflicts, 422 validation, selectors, delete
//! preconditions and the Success Status.

use apiserver::registry::ListRequest;
use apiserver::storage::{GetOptions, Preconditions};
use serde_json::{json, Value};

use super::harness::{expect_err, raw, Case, Ctx, NOW, SEED};

pub fn cases() -> Vec<Case> {
    cases![
        create_get_update_delete,
        generate_name_is_deterministic_for_a_seed,
        stale_resource_version_is_a_409_conflict,
        invalid_name_is_a_422_with_field_causes,
        list_with_label_and_field_selectors,
        delete_preconditions_are_409s,
    ]
}

fn cm(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

async fn create_get_update_delete(ctx: Ctx) {
    ctx.namespace("ns").await;
    let created = ctx.configmaps.create("ns", cm("a", json!({}))).await.unwrap();
    assert_eq!(created["metadata"]["namespace"], "ns");
    assert_eq!(created["metadata"]["creationTimestamp"], NOW);
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();
    assert_eq!(uid.len(), 36);
    assert!(created["metadata"].get("generation").is_none(), "configmaps track no generation");
    // kube's key layout: <prefix>configmaps/<namespace>/<name>, namespaces at <prefix>namespaces/<name>.
    let stored = raw(&ctx, &format!("{}configmaps/ns/a", ctx.prefix)).await.expect("stored under configmaps/ns/a");
    assert_eq!(stored["metadata"]["uid"], uid.as_str());
    assert!(raw(&ctx, &format!("{}namespaces/ns", ctx.prefix)).await.is_some());
    let got = ctx.configmaps.get("ns", "a", &GetOptions::default()).await.unwrap();
    assert_eq!(got, created);

    let mut changed = got.clone();
    changed["data"]["k"] = json!("w");
    let (updated, was_created) = ctx.configmaps.update("ns", "a", changed).await.unwrap();
    assert!(!was_created);
    assert_eq!(updated["data"]["k"], "w");
    assert_eq!(updated["metadata"]["uid"], uid.as_str());
    let rv = |o: &Value| o["metadata"]["resourceVersion"].as_str().unwrap().parse::<u64>().unwrap();
    assert!(rv(&updated) > rv(&created));

    // An update without a resourceVersion is unconditional for configmaps.
    let mut blind = cm("a", json!({}));
    blind["data"]["k"] = json!("x");
    let (blind_result, _) = ctx.configmaps.update("ns", "a", blind).await.unwrap();
    assert_eq!(blind_result["data"]["k"], "x");
    assert_eq!(blind_result["metadata"]["creationTimestamp"], NOW, "system fields come from the stored object");

    let deleted = ctx.configmaps.delete("ns", "a", &Preconditions::default()).await.unwrap();
    assert!(deleted.deleted);
    assert_eq!(
        deleted.body,
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Success",
               "details": {"name": "a", "kind": "configmaps", "uid": uid}})
    );
    let missing = expect_err(ctx.configmaps.get("ns", "a", &GetOptions::default()).await);
    assert_eq!(missing["code"], 404);
    assert_eq!(missing["message"], "configmaps \"a\" not found");
    let missing = expect_err(ctx.configmaps.update("ns", "a", cm("a", json!({}))).await);
    assert_eq!(missing["message"], "configmaps \"a\" not found");
}

async fn generate_name_is_deterministic_for_a_seed(ctx: Ctx) {
    ctx.namespace("ns").await;
    let obj = json!({"metadata": {"generateName": "web-"}, "data": {}});
    let first = ctx.configmaps.create("ns", obj.clone()).await.unwrap();
    let name = first["metadata"]["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("web-") && name.len() == 9, "{name}");
    // A second registry with the same seed, against a fresh prefix, draws the same name and uid.
    let prefix = format!("{}again/", ctx.prefix);
    let (namespaces, configmaps, _) = ctx.registries(&prefix, SEED).await;
    namespaces.create("", json!({"metadata": {"name": "ns"}})).await.unwrap();
    let mut again = configmaps.create("ns", obj.clone()).await.unwrap();
    assert_eq!(again["metadata"]["name"], name.as_str());
    assert_eq!(again["metadata"]["uid"], first["metadata"]["uid"]);
    // Another seed draws another name.
    let (namespaces, configmaps, _) = ctx.registries(&format!("{}other/", ctx.prefix), SEED + 1).await;
    namespaces.create("", json!({"metadata": {"name": "ns"}})).await.unwrap();
    again = configmaps.create("ns", obj).await.unwrap();
    assert_ne!(again["metadata"]["name"], name.as_str());
}

async fn stale_resource_version_is_a_409_conflict(ctx: Ctx) {
    ctx.namespace("ns").await;
    let created = ctx.configmaps.create("ns", cm("a", json!({}))).await.unwrap();
    let mut first = created.clone();
    first["data"]["k"] = json!("1");
    ctx.configmaps.update("ns", "a", first).await.unwrap();
    let mut stale = created.clone();
    stale["data"]["k"] = json!("2");
    let status = expect_err(ctx.configmaps.update("ns", "a", stale).await);
    assert_eq!(
        status,
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 409, "reason": "Conflict",
               "message": "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again",
               "details": {"name": "a", "kind": "configmaps"}})
    );
}

async fn invalid_name_is_a_422_with_field_causes(ctx: Ctx) {
    ctx.namespace("ns").await;
    let status = expect_err(ctx.configmaps.create("ns", cm("Bad_Name", json!({}))).await);
    let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    assert_eq!(
        status,
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 422, "reason": "Invalid",
               "message": format!("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": {subdomain}"),
               "details": {"name": "Bad_Name", "kind": "ConfigMap",
                           "causes": [{"reason": "FieldValueInvalid", "message": format!("Invalid value: \"Bad_Name\": {subdomain}"), "field": "metadata.name"}]}})
    );
    let status = expect_err(ctx.configmaps.create("ns", json!({"metadata": {}, "data": {"bad key": "v"}})).await);
    assert_eq!(
        status["message"],
        "ConfigMap \"\" is invalid: [metadata.name: Required value: name or generateName is required, data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')]"
    );
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "FieldValueRequired", "message": "Required value: name or generateName is required", "field": "metadata.name"})
    );
    // Namespaces are DNS labels: a dot is allowed in a configmap name but not in a namespace's.
    let status = expect_err(ctx.namespaces.create("", json!({"metadata": {"name": "a.b"}})).await);
    assert_eq!(status["message"], "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    ctx.configmaps.create("ns", cm("a.b", json!({}))).await.unwrap();
}

async fn list_with_label_and_field_selectors(ctx: Ctx) {
    ctx.namespace("ns").await;
    ctx.namespace("other").await;
    ctx.configmaps.create("ns", cm("a", json!({"app": "web", "tier": "front"}))).await.unwrap();
    ctx.configmaps.create("ns", cm("b", json!({"app": "db"}))).await.unwrap();
    ctx.configmaps.create("other", cm("c", json!({"app": "web"}))).await.unwrap();
    let names = |list: apiserver::storage::ObjectList| {
        list.items
            .iter()
            .map(|o| {
                format!("{}/{}", o["metadata"]["namespace"].as_str().unwrap(), o["metadata"]["name"].as_str().unwrap())
            })
            .collect::<Vec<_>>()
    };
    let list = |ns: &'static str, labels: &'static str, fields: &'static str| {
        let ctx = ctx.clone();
        async move {
            let request =
                ListRequest { label_selector: labels.into(), field_selector: fields.into(), ..ListRequest::default() };
            ctx.configmaps.list(ns, &request).await
        }
    };
    assert_eq!(names(list("ns", "", "").await.unwrap()), ["ns/a", "ns/b"]);
    assert_eq!(names(list("", "", "").await.unwrap()), ["ns/a", "ns/b", "other/c"]);
    assert_eq!(names(list("", "app=web", "").await.unwrap()), ["ns/a", "other/c"]);
    assert_eq!(names(list("", "app!=web", "").await.unwrap()), ["ns/b"]);
    assert_eq!(names(list("", "app in (db,x),!tier", "").await.unwrap()), ["ns/b"]);
    assert_eq!(names(list("", "tier", "").await.unwrap()), ["ns/a"]);
    assert_eq!(names(list("", "app=web", "metadata.namespace=other").await.unwrap()), ["other/c"]);
    assert_eq!(names(list("", "", "metadata.name!=a,metadata.namespace==ns").await.unwrap()), ["ns/b"]);
    let status = expect_err(list("", "", "spec.nodeName=x").await);
    assert_eq!(status["code"], 400);
    // ConfigMaps have no field-label conversion of their own: apimachinery's default words it.
    assert_eq!(
        status["message"],
        r#""spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
    let active = ListRequest { field_selector: "status.phase=Active".into(), ..ListRequest::default() };
    assert_eq!(ctx.namespaces.list("", &active).await.unwrap().items.len(), 2);
    let by_label = ListRequest { label_selector: "kubernetes.io/metadata.name=other".into(), ..ListRequest::default() };
    assert_eq!(ctx.namespaces.list("", &by_label).await.unwrap().items.len(), 1);
}

async fn delete_preconditions_are_409s(ctx: Ctx) {
    ctx.namespace("ns").await;
    let created = ctx.configmaps.create("ns", cm("a", json!({}))).await.unwrap();
    let uid = created["metadata"]["uid"].as_str().unwrap();
    let rv = created["metadata"]["resourceVersion"].as_str().unwrap();
    let wrong_uid = Preconditions { uid: Some("x".into()), resource_version: None };
    let status = expect_err(ctx.configmaps.delete("ns", "a", &wrong_uid).await);
    assert_eq!(status["code"], 409);
    assert_eq!(status["message"], format!("Operation cannot be fulfilled on ConfigMap \"a\": the UID in the precondition (x) does not match the UID in record ({uid}). The object might have been deleted and then recreated"));
    let wrong_rv = Preconditions { uid: None, resource_version: Some("1".into()) };
    let status = expect_err(ctx.configmaps.delete("ns", "a", &wrong_rv).await);
    assert_eq!(status["message"], format!("Operation cannot be fulfilled on ConfigMap \"a\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified"));
    let right = Preconditions { uid: Some(uid.into()), resource_version: Some(rv.into()) };
    assert!(ctx.configmaps.delete("ns", "a", &right).await.unwrap().deleted);
}
