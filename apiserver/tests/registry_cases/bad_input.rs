//! Bad input: a body of another kind or apiVersion is a 400 with the decoder's text, as is a field of the
//! wrong JSON type (Go's `json: cannot unmarshal ...`); invalid label and annotation keys and values are
//! 422s with apimachinery's texts; an object beyond etcd's request limit (1.5 MiB) fails as kube-apiserver
//! fails it, with etcd's `etcdserver: request is too large`.

use apiserver::storage::GetOptions;
use serde_json::{json, Value};

use super::harness::{expect_err, raw, Case, Ctx};

pub fn cases() -> Vec<Case> {
    cases![
        another_kind_or_api_version_is_a_400,
        wrong_field_types_are_decode_errors,
        invalid_labels_and_annotations_are_422s,
        oversized_objects_are_refused_by_etcd,
    ]
}

const SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

fn bad_request(message: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 400, "reason": "BadRequest",
           "message": message})
}

async fn another_kind_or_api_version_is_a_400(ctx: Ctx) {
    ctx.namespace("ns").await;
    let table: &[(Value, String)] = &[
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}),
            "Pod in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Pod) to (core.ConfigMap): unknown conversion".into(),
        ),
        (
            json!({"apiVersion": "v1", "kind": "configmap", "metadata": {"name": "a"}}),
            format!("configmap in version \"v1\" cannot be handled as a ConfigMap: no kind \"configmap\" is registered for version \"v1\" in scheme \"{SCHEME}\""),
        ),
        (
            json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            format!("ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"apps/v1\" in scheme \"{SCHEME}\""),
        ),
        (
            json!({"apiVersion": "v2", "metadata": {"name": "a"}}),
            format!("ConfigMap in version \"v2\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"v2\" in scheme \"{SCHEME}\""),
        ),
    ];
    for (body, message) in table {
        assert_eq!(expect_err(ctx.configmaps.create("ns", body.clone()).await), bad_request(message), "create {body}");
    }
    assert!(raw(&ctx, &format!("{}configmaps/ns/a", ctx.prefix)).await.is_none());
    let created = ctx.configmaps.create("ns", json!({"metadata": {"name": "a"}})).await.unwrap();
    for (body, message) in table {
        assert_eq!(
            expect_err(ctx.configmaps.update("ns", "a", body.clone()).await),
            bad_request(message),
            "update {body}"
        );
    }
    assert_eq!(ctx.configmaps.get("ns", "a", &GetOptions::default()).await.unwrap(), created);
    let status = expect_err(ctx.pods.create("ns", json!({"kind": "ConfigMap", "metadata": {"name": "p"}})).await);
    assert_eq!(
        status["message"],
        "ConfigMap in version \"v1\" cannot be handled as a Pod: converting (v1.ConfigMap) to (core.Pod): unknown conversion"
    );
}

async fn wrong_field_types_are_decode_errors(ctx: Ctx) {
    ctx.namespace("ns").await;
    let cannot =
        |kind: &str, why: &str| bad_request(&format!("{kind} in version \"v1\" cannot be handled as a {kind}: {why}"));
    let status = expect_err(ctx.configmaps.create("ns", json!({"metadata": {"name": "a"}, "data": {"k": 1}})).await);
    assert_eq!(
        status,
        cannot("ConfigMap", "json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
    );
    let status = expect_err(ctx.configmaps.create("ns", json!({"metadata": {"name": "a"}, "data": ["k"]})).await);
    assert_eq!(
        status,
        cannot(
            "ConfigMap",
            "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"
        )
    );
    let status =
        expect_err(ctx.configmaps.create("ns", json!({"metadata": {"name": "a", "labels": {"x": true}}})).await);
    assert_eq!(
        status,
        cannot(
            "ConfigMap",
            "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
        )
    );
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": 5}]}});
    let status = expect_err(ctx.pods.create("ns", pod).await);
    assert_eq!(
        status,
        cannot(
            "Pod",
            "json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string"
        )
    );
    let mut grace = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    grace["spec"]["terminationGracePeriodSeconds"] = json!(1.5);
    let status = expect_err(ctx.pods.create("ns", grace).await);
    assert_eq!(
        status,
        cannot(
            "Pod",
            "json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64"
        )
    );
    // A field Go leaves at its zero value decodes; validation reports it.
    let status = expect_err(ctx.pods.create("ns", json!({"metadata": {"name": "p"}, "spec": {}})).await);
    assert_eq!(status["code"], 422);
    assert_eq!(status["message"], "Pod \"p\" is invalid: spec.containers: Required value");
    let nameless = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"image": "i"}]}});
    let status = expect_err(ctx.pods.create("ns", nameless).await);
    assert_eq!(status["message"], "Pod \"p\" is invalid: spec.containers[0].name: Required value");
    let ns = json!({"metadata": {"name": "x"}, "spec": {"finalizers": "kubernetes"}});
    let status = expect_err(ctx.namespaces.create("", ns).await);
    assert_eq!(
        status,
        cannot(
            "Namespace",
            "json: cannot unmarshal string into Go struct field NamespaceSpec.spec.finalizers of type []v1.FinalizerName"
        )
    );
}

async fn invalid_labels_and_annotations_are_422s(ctx: Ctx) {
    ctx.namespace("ns").await;
    let name_part = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    let long = "v".repeat(64);
    let table: Vec<(Value, String)> = vec![
        (json!({"labels": {"bad key": "v"}}), format!("metadata.labels: Invalid value: \"bad key\": {name_part}")),
        (json!({"labels": {"k": "-v"}}), format!("metadata.labels: Invalid value: \"-v\": {value}")),
        (
            json!({"labels": {"k": long}}),
            format!("metadata.labels: Invalid value: \"{long}\": must be no more than 63 characters"),
        ),
        (
            json!({"labels": {"Example.com/k": "v"}}),
            "metadata.labels: Invalid value: \"Example.com/k\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
        ),
        (
            json!({"labels": {"a/b/c": "v"}}),
            "metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into(),
        ),
        (json!({"annotations": {"/x": "v"}}), "metadata.annotations: Invalid value: \"/x\": prefix part must be non-empty".into()),
        (
            json!({"annotations": {"big": "x".repeat(256 * 1024)}}),
            "metadata.annotations: Too long: must have at most 262144 bytes".into(),
        ),
    ];
    for (extra, message) in table {
        let mut metadata = json!({"name": "a"});
        metadata.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let status = expect_err(ctx.configmaps.create("ns", json!({"metadata": metadata})).await);
        assert_eq!(status["code"], 422, "{message}");
        assert_eq!(status["message"], format!("ConfigMap \"a\" is invalid: {message}"));
    }
    // Empty label values and prefixed keys are fine.
    ctx.configmaps
        .create("ns", json!({"metadata": {"name": "a", "labels": {"example.com/k": "", "k": "V_1.x"}}}))
        .await
        .unwrap();
}

async fn oversized_objects_are_refused_by_etcd(ctx: Ctx) {
    ctx.namespace("ns").await;
    // 1.75 MiB is past etcd's 1.5 MiB request limit, within the 512 KiB more its gRPC server reads before
    // refusing a message itself, and within the 3 MiB kube-apiserver accepts as a body.
    let big = json!({"metadata": {"name": "big"}, "data": {"k": "x".repeat(1_835_008)}});
    let status = expect_err(ctx.configmaps.create("ns", big).await);
    // kube-apiserver passes etcd's error through uninterpreted: 500, no reason, etcd's text exactly.
    assert_eq!(status["code"], 500);
    assert!(status.get("reason").is_none(), "{status}");
    assert_eq!(status["message"], "etcdserver: request is too large", "{status}");
    assert!(raw(&ctx, &format!("{}configmaps/ns/big", ctx.prefix)).await.is_none());
}
