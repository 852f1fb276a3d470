//! Tests of the ServiceAccount plugin: defaulting, the token volume and mounts, and every refusal with
//! upstream's text.

use serde_json::{json, Value};

use super::*;
use crate::admission::plugins::testing::{self, admin, attrs, message, pod, registry, run};
use crate::registry::resource::Resource;

fn account(ns: &str, name: &str, extra: Value) -> Value {
    let mut sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns}});
    if let (Some(sa), Some(extra)) = (sa.as_object_mut(), extra.as_object()) {
        sa.extend(extra.clone());
    }
    sa
}

#[tokio::test]
async fn pods_run_as_an_existing_account_with_its_token_mounted() {
    let pods = Resource::core("Pod", "pods");
    let user = admin();
    let mirror = json!({"kubernetes.io/config.mirror": "x"});
    let cases: Vec<(&str, Vec<Value>, Value, &str)> = vec![
        (
            "no default account",
            vec![],
            pod("ns", "web", &["c"]),
            r#"pods "web" is forbidden: error looking up service account ns/default: serviceaccount "default" not found"#,
        ),
        (
            "named account missing",
            vec![account("ns", "default", json!({}))],
            {
                let mut p = pod("ns", "web", &["c"]);
                p["spec"]["serviceAccountName"] = json!("robot");
                p
            },
            r#"pods "web" is forbidden: error looking up service account ns/robot: serviceaccount "robot" not found"#,
        ),
        (
            "generated name",
            vec![],
            json!({"metadata": {"generateName": "web-"}, "spec": {"containers": [{"name": "c"}]}}),
            r#"pods "web-" is forbidden: error looking up service account ns/default: serviceaccount "default" not found"#,
        ),
        (
            "mirror pod with an account",
            vec![],
            {
                let mut p = pod("ns", "m", &["c"]);
                p["metadata"]["annotations"] = mirror.clone();
                p["spec"]["serviceAccountName"] = json!("a");
                p
            },
            r#"pods "m" is forbidden: a mirror pod may not reference service accounts"#,
        ),
        (
            "mirror pod with a secret",
            vec![],
            {
                let mut p = pod("ns", "m", &["c"]);
                p["metadata"]["annotations"] = mirror.clone();
                p["spec"]["volumes"] = json!([{"name": "s", "secret": {"secretName": "s"}}]);
                p
            },
            r#"pods "m" is forbidden: a mirror pod may not reference secrets"#,
        ),
        (
            "mirror pod with a token projection",
            vec![],
            {
                let mut p = pod("ns", "m", &["c"]);
                p["metadata"]["annotations"] = mirror.clone();
                p["spec"]["volumes"] = json!([token_volume("t")]);
                p
            },
            r#"pods "m" is forbidden: a mirror pod may not use ServiceAccountToken volume projections"#,
        ),
        (
            "mirror pod as is",
            vec![],
            {
                let mut p = pod("ns", "m", &["c"]);
                p["metadata"]["annotations"] = mirror.clone();
                p
            },
            "",
        ),
        (
            "mountable secrets enforced",
            vec![account(
                "ns",
                "default",
                json!({"metadata": {"name": "default", "namespace": "ns",
                "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}, "secrets": [{"name": "ok"}]}),
            )],
            {
                let mut p = pod("ns", "web", &["c"]);
                p["spec"]["containers"][0]["env"] =
                    json!([{"name": "E", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}}]);
                p
            },
            r#"pods "web" is forbidden: container c with envVar E referencing secret.secretName="other" is not allowed because service account default does not reference that secret"#,
        ),
        (
            "pull secret not the account's",
            vec![account(
                "ns",
                "default",
                json!({"metadata": {"name": "default", "namespace": "ns",
                "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}}),
            )],
            {
                let mut p = pod("ns", "web", &["c"]);
                p["spec"]["imagePullSecrets"] = json!([{"name": "reg"}]);
                p
            },
            r#"pods "web" is forbidden: imagePullSecrets[0].name="reg" is not allowed because service account default does not reference that imagePullSecret"#,
        ),
        ("default account present", vec![account("ns", "default", json!({}))], pod("ns", "web", &["c"]), ""),
    ];
    for (what, objects, mut obj, want) in cases {
        let registry = registry(objects);
        let req = Request {
            attrs: attrs(&pods, Operation::Create, "ns", ""),
            user: &user,
            registry: &registry,
            now_unix_s: 7,
        };
        assert_eq!(message(&run(&ServiceAccount, &req, &mut obj, &Value::Null).await), want, "{what}");
    }
}

#[tokio::test]
async fn the_token_volume_is_mounted_in_every_container_once() {
    let pods = Resource::core("Pod", "pods");
    let user = admin();
    let registry = registry(vec![account("ns", "default", json!({"imagePullSecrets": [{"name": "reg"}]}))]);
    let req = Request {
        attrs: attrs(&pods, Operation::Create, "ns", "web"),
        user: &user,
        registry: &registry,
        now_unix_s: 7,
    };
    let mut obj = pod("ns", "web", &["a", "b"]);
    obj["spec"]["initContainers"] = json!([{"name": "init", "image": "busybox"}]);
    obj["spec"]["containers"][1]["volumeMounts"] = json!([{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]);
    run(&ServiceAccount, &req, &mut obj, &Value::Null).await.expect("admitted");
    let spec = &obj["spec"];
    assert_eq!(spec["serviceAccountName"], "default");
    assert_eq!(spec["serviceAccount"], "default");
    assert_eq!(spec["imagePullSecrets"], json!([{"name": "reg"}]));
    let volumes = spec["volumes"].as_array().expect("volumes");
    assert_eq!(volumes.len(), 1);
    let name = volumes[0]["name"].as_str().expect("a name");
    assert!(name.starts_with("kube-api-access-") && name.len() == "kube-api-access-".len() + 5, "{name}");
    assert_eq!(volumes[0], token_volume(name));
    assert_eq!(volumes[0]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"], 3607);
    let mount = json!({"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    assert_eq!(spec["containers"][0]["volumeMounts"], json!([mount]));
    assert_eq!(spec["initContainers"][0]["volumeMounts"], json!([mount]));
    assert_eq!(spec["containers"][1]["volumeMounts"][0]["name"], "own");
    assert_eq!(spec["containers"][1]["volumeMounts"].as_array().map(Vec::len), Some(1));

    // The same pod at the same time gets the same name: the suffix is drawn from the request, not a global RNG.
    let mut again = pod("ns", "web", &["a"]);
    run(&ServiceAccount, &req, &mut again, &Value::Null).await.expect("admitted");
    assert_eq!(again["spec"]["volumes"][0]["name"], name);

    // Automounting off, on the pod or on the account.
    let mut off = pod("ns", "web", &["a"]);
    off["spec"]["automountServiceAccountToken"] = json!(false);
    run(&ServiceAccount, &req, &mut off, &Value::Null).await.expect("admitted");
    assert!(off["spec"].get("volumes").is_none());
    let quiet = testing::registry(vec![account("ns", "default", json!({"automountServiceAccountToken": false}))]);
    let req = Request { registry: &quiet, ..req };
    let mut off = pod("ns", "web", &["a"]);
    run(&ServiceAccount, &req, &mut off, &Value::Null).await.expect("admitted");
    assert!(off["spec"].get("volumes").is_none());
    assert!(off["spec"]["containers"][0].get("volumeMounts").is_none());
}

#[tokio::test]
async fn updates_and_other_resources_pass_untouched() {
    let user = admin();
    let registry = registry(vec![]);
    for (resource, op) in [
        (Resource::core("Pod", "pods"), Operation::Update),
        (Resource::core("ConfigMap", "configmaps"), Operation::Create),
    ] {
        let req = Request { attrs: attrs(&resource, op, "ns", "web"), user: &user, registry: &registry, now_unix_s: 0 };
        let mut obj = pod("ns", "web", &["c"]);
        let before = obj.clone();
        run(&ServiceAccount, &req, &mut obj, &before.clone()).await.expect("admitted");
        assert_eq!(obj, before);
    }
}
