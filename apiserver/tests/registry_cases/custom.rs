//! A custom resource through the generic registry, with a strategy of its own as a CRD with a status
//! subresource gets: the body's apiVersion must be the resource's (400), an update must carry a
//! resourceVersion (422), create clears status, the main endpoint keeps the stored status and bumps the
//! generation on any change outside metadata, and `/status` keeps everything but the new status
//! (apiextensions-apiserver's `pkg/registry/customresource/strategy.go` and `status_strategy.go`).

use std::sync::Arc;

use apiserver::registry::meta;
use apiserver::registry::names;
use apiserver::registry::{DeleteStrategy, FieldError, Resource, Strategy, Subresource, UpdateOptions};
use serde_json::{json, Value};

use super::harness::{custom_store, expect_err, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![custom_resource_with_status_subresource]
}

/// `widgets.example.com/v1`, kind Widget.
fn widgets() -> Resource {
    Resource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        etcd_prefix: "example.com/widgets".into(),
    }
}

/// What apiextensions-apiserver's `customResourceStrategy` does for a CRD with `subresources.status`.
struct Widgets;

/// Everything but metadata and status, the part whose change bumps a custom resource's generation.
fn intent(obj: &Value) -> Value {
    let mut rest = obj.clone();
    if let Some(map) = rest.as_object_mut() {
        for field in ["metadata", "status", "apiVersion", "kind"] {
            map.remove(field);
        }
    }
    rest
}

impl Strategy for Widgets {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj.as_object_mut().map(|o| o.remove("status"));
        meta::set(obj, "generation", Some(json!(1)));
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        match old.get("status") {
            Some(status) => new["status"] = status.clone(),
            None => {
                new.as_object_mut().map(|o| o.remove("status"));
            }
        }
        if intent(new) != intent(old) {
            let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
            meta::set(new, "generation", Some(json!(generation + 1)));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        meta::validate_object_meta(obj, true, names::name_is_dns_subdomain)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain)
    }
}

impl DeleteStrategy for Widgets {}

async fn custom_resource_with_status_subresource(ctx: Ctx) {
    ctx.namespace("ns").await;
    let widgets = custom_store(&ctx, widgets(), Arc::new(Widgets)).await;
    let body = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                      "spec": {"size": 1}, "status": {"ready": true}});
    let mut v2 = body.clone();
    v2["apiVersion"] = json!("example.com/v2");
    let status = expect_err(widgets.create("ns", v2).await);
    assert_eq!(status["code"], 400);
    assert_eq!(
        status["message"],
        "the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)"
    );
    let created = widgets.create("ns", body).await.unwrap();
    assert!(created.get("status").is_none(), "create clears the status: {created}");
    assert_eq!(created["metadata"]["generation"], 1);

    // Custom resources allow no unconditional update.
    let mut blind = created.clone();
    blind["metadata"].as_object_mut().unwrap().remove("resourceVersion");
    let status = expect_err(widgets.update("ns", "w", blind).await);
    assert_eq!(status["code"], 422);
    assert_eq!(
        status["message"],
        "Widget.example.com \"w\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
    );

    // /status takes only the status: spec, labels and finalizers sent with it are dropped.
    let mut report = created.clone();
    report["status"] = json!({"ready": true});
    report["spec"]["size"] = json!(9);
    report["metadata"]["labels"] = json!({"a": "b"});
    let reported =
        widgets.update_subresource("ns", "w", Subresource::Status, report, &UpdateOptions::default()).await.unwrap();
    assert_eq!(reported["status"], json!({"ready": true}));
    assert_eq!(reported["spec"], json!({"size": 1}));
    assert!(reported["metadata"].get("labels").is_none(), "{reported}");
    assert_eq!(reported["metadata"]["generation"], 1, "/status never bumps the generation");

    // The main endpoint keeps the status and bumps the generation on a spec change only.
    let mut relabel = reported.clone();
    relabel["metadata"]["labels"] = json!({"a": "b"});
    relabel["status"] = json!({"ready": false});
    let (relabelled, _) = widgets.update("ns", "w", relabel).await.unwrap();
    assert_eq!(relabelled["status"], json!({"ready": true}));
    assert_eq!(relabelled["metadata"]["generation"], 1);
    let mut resize = relabelled.clone();
    resize["spec"]["size"] = json!(2);
    let (resized, _) = widgets.update("ns", "w", resize).await.unwrap();
    assert_eq!(resized["metadata"]["generation"], 2);
}
