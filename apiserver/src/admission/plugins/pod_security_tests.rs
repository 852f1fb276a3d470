//! Tests of the PodSecurity plugin: each check's detail at each level, in upstream's order, and the
//! namespace label validation.

use serde_json::{json, Value};

use super::*;
use crate::admission::plugins::testing::{admin, attrs, message, pod, registry};
use crate::registry::resource::Resource;

fn namespace(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
}

/// A pod that meets `restricted`.
fn hardened() -> Value {
    let mut p = pod("ns", "web", &["c"]);
    p["spec"]["securityContext"] = json!({"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}});
    p["spec"]["containers"][0]["securityContext"] =
        json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}});
    p
}

fn with(base: Value, f: impl Fn(&mut Value)) -> Value {
    let mut p = base;
    f(&mut p);
    p
}

#[test]
fn pods_are_judged_by_the_standards_checks_in_upstreams_order() {
    let plain = pod("ns", "web", &["c"]);
    let cases: Vec<(&str, Level, Value, Option<&str>)> = vec![
        (
            "privileged allows anything",
            Level::Privileged,
            with(plain.clone(), |p| p["spec"]["hostNetwork"] = json!(true)),
            None,
        ),
        ("a plain pod meets baseline", Level::Baseline, plain.clone(), None),
        (
            "host namespaces",
            Level::Baseline,
            with(plain.clone(), |p| {
                p["spec"]["hostNetwork"] = json!(true);
                p["spec"]["hostPID"] = json!(true)
            }),
            Some("host namespaces (hostNetwork=true, hostPID=true)"),
        ),
        (
            "privileged and a hostPath",
            Level::Baseline,
            with(plain.clone(), |p| {
                p["spec"]["containers"][0]["securityContext"] = json!({"privileged": true});
                p["spec"]["volumes"] = json!([{"name": "root", "hostPath": {"path": "/"}}]);
            }),
            Some(
                r#"hostPath volumes (volume "root"), privileged (container "c" must not set securityContext.privileged=true)"#,
            ),
        ),
        (
            "capabilities and host ports",
            Level::Baseline,
            with(plain.clone(), |p| {
                p["spec"]["containers"][0]["securityContext"] =
                    json!({"capabilities": {"add": ["NET_ADMIN", "CHOWN", "SYS_TIME"]}});
                p["spec"]["containers"][0]["ports"] =
                    json!([{"containerPort": 80, "hostPort": 8080}, {"containerPort": 90, "hostPort": 9090}]);
            }),
            Some(
                r#"non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add), hostPort (container "c" uses hostPorts 8080, 9090)"#,
            ),
        ),
        (
            "unconfined seccomp",
            Level::Baseline,
            with(plain.clone(), |p| p["spec"]["securityContext"] = json!({"seccompProfile": {"type": "Unconfined"}})),
            Some(r#"seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")"#),
        ),
        (
            "a plain pod fails restricted",
            Level::Restricted,
            plain.clone(),
            Some(
                r#"allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#,
            ),
        ),
        ("a hardened pod meets restricted", Level::Restricted, hardened(), None),
        (
            "restricted volumes and root",
            Level::Restricted,
            with(hardened(), |p| {
                p["spec"]["volumes"] =
                    json!([{"name": "root", "hostPath": {"path": "/"}}, {"name": "data", "emptyDir": {}}]);
                p["spec"]["containers"][0]["securityContext"]["runAsUser"] = json!(0);
                p["spec"]["containers"][0]["securityContext"]["runAsNonRoot"] = json!(false);
            }),
            Some(
                r#"restricted volume types (volume "root" uses restricted volume type "hostPath"), runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false), runAsUser=0 (container "c" must not set runAsUser=0)"#,
            ),
        ),
        (
            "a capability restricted allows",
            Level::Restricted,
            with(hardened(), |p| {
                p["spec"]["containers"][0]["securityContext"]["capabilities"]["add"] = json!(["NET_BIND_SERVICE"])
            }),
            None,
        ),
        (
            "two containers",
            Level::Restricted,
            with(hardened(), |p| p["spec"]["containers"] = json!([{"name": "a"}, {"name": "b"}])),
            Some(
                r#"allowPrivilegeEscalation != false (containers "a", "b" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (containers "a", "b" must set securityContext.capabilities.drop=["ALL"])"#,
            ),
        ),
    ];
    for (what, level, obj, want) in cases {
        assert_eq!(checks::violations(level, &obj).as_deref(), want, "{what}");
    }
}

#[tokio::test]
async fn a_namespaces_enforce_label_refuses_pods_with_upstreams_403() {
    let pods = Resource::core("Pod", "pods");
    let user = admin();
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "restricted",
            json!({"pod-security.kubernetes.io/enforce": "restricted"}),
            with(hardened(), |p| p["spec"]["hostIPC"] = json!(true)),
            r#"pods "web" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostIPC=true)"#,
        ),
        (
            "baseline at a version",
            json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.30"}),
            with(pod("ns", "web", &["c"]), |p| p["spec"]["hostPID"] = json!(true)),
            r#"pods "web" is forbidden: violates PodSecurity "baseline:v1.30": host namespaces (hostPID=true)"#,
        ),
        (
            "an invalid level enforces restricted",
            json!({"pod-security.kubernetes.io/enforce": "strict"}),
            with(hardened(), |p| p["spec"]["hostIPC"] = json!(true)),
            r#"pods "web" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostIPC=true)"#,
        ),
        ("no label", json!({}), with(pod("ns", "web", &["c"]), |p| p["spec"]["hostPID"] = json!(true)), ""),
        ("warn only", json!({"pod-security.kubernetes.io/warn": "restricted"}), pod("ns", "web", &["c"]), ""),
    ];
    for (what, labels, obj, want) in cases {
        let registry = registry(vec![namespace("ns", labels)]);
        let req = Request {
            attrs: attrs(&pods, Operation::Create, "ns", "web"),
            user: &user,
            registry: &registry,
            now_unix_s: 0,
        };
        assert_eq!(message(&PodSecurity.validate(&req, &obj, &Value::Null).await), want, "{what}");
    }

    // An update that changes no image is not judged again.
    let registry = registry(vec![namespace("ns", json!({"pod-security.kubernetes.io/enforce": "restricted"}))]);
    let req = Request {
        attrs: attrs(&pods, Operation::Update, "ns", "web"),
        user: &user,
        registry: &registry,
        now_unix_s: 0,
    };
    let old = pod("ns", "web", &["c"]);
    let relabelled = with(old.clone(), |p| p["metadata"]["labels"] = json!({"a": "b"}));
    assert_eq!(message(&PodSecurity.validate(&req, &relabelled, &old).await), "");
    let new_image = with(old.clone(), |p| p["spec"]["containers"][0]["image"] = json!("nginx:2"));
    assert!(message(&PodSecurity.validate(&req, &new_image, &old).await)
        .contains("violates PodSecurity \"restricted:latest\""));
}

#[tokio::test]
async fn namespace_policy_labels_must_be_valid() {
    let namespaces = Resource::core("Namespace", "namespaces");
    let user = admin();
    let registry = registry(vec![]);
    let bad = namespace(
        "team",
        json!({"pod-security.kubernetes.io/enforce": "strict", "pod-security.kubernetes.io/warn-version": "1.30"}),
    );
    let req = Request {
        attrs: attrs(&namespaces, Operation::Create, "", "team"),
        user: &user,
        registry: &registry,
        now_unix_s: 0,
    };
    assert_eq!(
        message(&PodSecurity.validate(&req, &bad, &Value::Null).await),
        r#"Namespace "team" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.30": must be "latest" or "v1.x"]"#
    );
    let good = namespace(
        "team",
        json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.32"}),
    );
    assert_eq!(message(&PodSecurity.validate(&req, &good, &Value::Null).await), "");
    // An update that leaves invalid labels as they were is let through.
    let update = Request { attrs: attrs(&namespaces, Operation::Update, "", "team"), ..req };
    assert_eq!(message(&PodSecurity.validate(&update, &bad, &bad).await), "");
    assert!(!message(&PodSecurity.validate(&update, &bad, &good).await).is_empty());
}
