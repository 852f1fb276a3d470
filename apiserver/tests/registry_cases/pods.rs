//! Pods: status and QoS class set on create, status kept from the stored object on update, generation 1 on
//! create and bumped only on spec changes, and the minimal spec validation.

use serde_json::{json, Value};

use super::harness::{expect_err, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![pod_status_and_generation, pod_spec_validation]
}

fn pod(name: &str, image: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": image}]}, "status": {"phase": "Running"}})
}

async fn pod_status_and_generation(ctx: Ctx) {
    ctx.namespace("ns").await;
    let created = ctx.pods.create("ns", pod("p", "nginx:1")).await.unwrap();
    assert_eq!(created["status"], json!({"phase": "Pending", "qosClass": "BestEffort"}));
    assert_eq!(created["metadata"].get("generation"), None, "kube 1.32 tracks no generation for pods (1.33 does)");
    let mut labelled = created.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    labelled["status"] = json!({"phase": "Succeeded"});
    let (labelled, _) = ctx.pods.update("ns", "p", labelled).await.unwrap();
    assert_eq!(labelled["status"]["phase"], "Pending", "the main endpoint ignores status");
    let mut image = labelled.clone();
    image["spec"]["containers"][0]["image"] = json!("nginx:2");
    image["metadata"]["generation"] = json!(40);
    let (image, _) = ctx.pods.update("ns", "p", image).await.unwrap();
    assert_eq!(image["spec"]["containers"][0]["image"], "nginx:2", "an image may change");
    assert_eq!(image["metadata"].get("generation"), None, "a client cannot set the generation");
}

async fn pod_spec_validation(ctx: Ctx) {
    ctx.namespace("ns").await;
    let status =
        expect_err(ctx.pods.create("ns", json!({"metadata": {"name": "p"}, "spec": {"containers": []}})).await);
    assert_eq!(status["code"], 422);
    assert_eq!(status["message"], "Pod \"p\" is invalid: spec.containers: Required value");
    let status = expect_err(ctx.pods.create("ns", pod("p", "")).await);
    assert_eq!(status["message"], "Pod \"p\" is invalid: spec.containers[0].image: Required value");
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].image"}])
    );
}
