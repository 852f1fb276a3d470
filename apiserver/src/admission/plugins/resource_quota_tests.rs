//! Tests of the ResourceQuota plugin: the usage of each kind, the refusals with upstream's texts, the
//! charge written to the quota's status, the first count of a new quota, and the release on delete.

use serde_json::{json, Value};

use super::*;
use crate::admission::plugins::resource_quota_usage::Evaluator;
use crate::admission::plugins::testing::{admin, attrs, message, pod, registry, stored};
use crate::registry::admission::Attributes;
use crate::registry::resource::Resource;

fn quota(name: &str, hard: Value, status: Option<Value>) -> Value {
    let mut q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": "ns"},
        "spec": {"hard": hard}});
    if let Some(status) = status {
        q["status"] = status;
    }
    q
}

fn sized_pod(name: &str, requests: Value, limits: Value) -> Value {
    let mut p = pod("ns", name, &["c"]);
    p["spec"]["containers"][0]["resources"] = json!({"requests": requests, "limits": limits});
    p
}

async fn quotas(registry: &Registry) -> Vec<Value> {
    stored(registry, QUOTAS).await
}

#[tokio::test]
async fn writes_past_a_quota_are_refused_with_upstreams_text() {
    let pods = Resource::core("Pod", "pods");
    let cms = Resource::core("ConfigMap", "configmaps");
    let deployments = Resource { group: "apps".into(), ..Resource::core("Deployment", "deployments") };
    let user = admin();
    let synced = |hard: Value, used: Value| Some(json!({"hard": hard, "used": used}));
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}});
    let deploy = json!({"metadata": {"name": "d", "namespace": "ns"}});
    let cases: Vec<(&str, Vec<Value>, &Resource, Value, &str)> = vec![
        (
            "pods at the limit",
            vec![quota("q", json!({"pods": "1"}), synced(json!({"pods": "1"}), json!({"pods": "1"})))],
            &pods,
            pod("ns", "p", &["c"]),
            r#"pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"#,
        ),
        (
            "count/pods",
            vec![quota("q", json!({"count/pods": "0"}), None)],
            &pods,
            pod("ns", "p", &["c"]),
            r#"pods "p" is forbidden: exceeded quota: q, requested: count/pods=1, used: count/pods=0, limited: count/pods=0"#,
        ),
        (
            "cpu and memory over",
            vec![quota(
                "q",
                json!({"requests.cpu": "1", "requests.memory": "1Gi", "limits.cpu": "2"}),
                synced(
                    json!({"requests.cpu": "1", "requests.memory": "1Gi", "limits.cpu": "2"}),
                    json!({"requests.cpu": "800m", "requests.memory": "1000Mi", "limits.cpu": "0"}),
                ),
            )],
            &pods,
            sized_pod("p", json!({"cpu": "500m", "memory": "128Mi"}), json!({"cpu": "500m"})),
            r#"pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=500m,requests.memory=128Mi, used: requests.cpu=800m,requests.memory=1000Mi, limited: requests.cpu=1,requests.memory=1Gi"#,
        ),
        (
            "containers must state what is limited",
            vec![quota("q", json!({"limits.cpu": "2", "requests.memory": "1Gi"}), None)],
            &pods,
            pod("ns", "p", &["c"]),
            r#"pods "p" is forbidden: failed quota: q: must specify limits.cpu for: c; requests.memory for: c"#,
        ),
        (
            "status not counted",
            vec![quota("q", json!({"pods": "2"}), synced(json!({"pods": "2"}), json!({})))],
            &pods,
            pod("ns", "p", &["c"]),
            r#"pods "p" is forbidden: status unknown for quota: q, resources: pods"#,
        ),
        (
            "configmaps by their legacy name",
            vec![quota("q", json!({"configmaps": "0"}), None)],
            &cms,
            cm.clone(),
            r#"configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=0, limited: configmaps=0"#,
        ),
        (
            "a group's count",
            vec![quota("q", json!({"count/deployments.apps": "0"}), None)],
            &deployments,
            deploy.clone(),
            r#"deployments.apps "d" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=0, limited: count/deployments.apps=0"#,
        ),
        (
            "a scoped quota the pod is outside",
            vec![quota("q", json!({"pods": "0"}), None)]
                .into_iter()
                .map(|mut q| {
                    q["spec"]["scopes"] = json!(["NotBestEffort"]);
                    q
                })
                .collect(),
            &pods,
            pod("ns", "p", &["c"]),
            "",
        ),
        (
            "within the quota",
            vec![quota("q", json!({"pods": "2", "configmaps": "1"}), None)],
            &pods,
            pod("ns", "p", &["c"]),
            "",
        ),
        ("no quota", vec![], &cms, cm.clone(), ""),
    ];
    for (what, objects, resource, obj, want) in cases {
        let registry = registry(objects);
        let req = Request {
            attrs: attrs(resource, Operation::Create, "ns", ""),
            user: &user,
            registry: &registry,
            now_unix_s: 0,
        };
        assert_eq!(message(&ResourceQuota.validate(&req, &obj, &Value::Null).await), want, "{what}");
    }
}

#[tokio::test]
async fn admitted_writes_are_charged_and_deletes_release_them() {
    let pods = Resource::core("Pod", "pods");
    let user = admin();
    let running = {
        let mut p = sized_pod("old", json!({"cpu": "250m", "memory": "64Mi"}), json!({}));
        p["status"] = json!({"phase": "Running"});
        p
    };
    let done = {
        let mut p = sized_pod("done", json!({"cpu": "1"}), json!({}));
        p["status"] = json!({"phase": "Succeeded"});
        p
    };
    let hard = json!({"pods": "3", "count/pods": "5", "requests.cpu": "2", "requests.memory": "1Gi"});
    let registry = registry(vec![quota("q", hard.clone(), None), running, done]);

    // The first request counts the quota as the controller would: the finished pod counts only in count/pods.
    let req =
        Request { attrs: attrs(&pods, Operation::Create, "ns", "p"), user: &user, registry: &registry, now_unix_s: 0 };
    let new = sized_pod("p", json!({"cpu": "500m", "memory": "128Mi"}), json!({}));
    ResourceQuota.validate(&req, &new, &Value::Null).await.expect("admitted");
    let q = &quotas(&registry).await[0];
    assert_eq!(q["status"]["hard"], hard);
    assert_eq!(
        q["status"]["used"],
        json!({"pods": "2", "count/pods": "3", "requests.cpu": "750m", "requests.memory": "192Mi"})
    );

    // A dry run is judged but not charged.
    let dry = Request { attrs: Attributes { dry_run: true, ..req.attrs }, ..req };
    ResourceQuota.validate(&dry, &new, &Value::Null).await.expect("admitted");
    assert_eq!(quotas(&registry).await[0]["status"]["used"]["pods"], "2");

    // Deleting the pod gives back what it used; deleting it again once it is terminating does not.
    let del = Request { attrs: attrs(&pods, Operation::Delete, "ns", "p"), ..req };
    ResourceQuota.validate(&del, &Value::Null, &new).await.expect("admitted");
    let mut terminating = new.clone();
    terminating["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    ResourceQuota.validate(&del, &Value::Null, &terminating).await.expect("admitted");
    assert_eq!(
        quotas(&registry).await[0]["status"]["used"],
        json!({"pods": "1", "count/pods": "2", "requests.cpu": "250m", "requests.memory": "64Mi"})
    );
}

#[tokio::test]
async fn a_charge_at_a_stale_resource_version_conflicts() {
    let cms = Resource::core("ConfigMap", "configmaps");
    let user = admin();
    let cm = json!({"metadata": {"name": "c", "namespace": "ns"}});
    let registry = registry(vec![quota(
        "q",
        json!({"configmaps": "2"}),
        Some(json!({"hard": {"configmaps": "2"}, "used": {"configmaps": "1"}})),
    )]);
    // Another write charges the quota first: the plugin's write at the old resourceVersion conflicts.
    let mut current = quotas(&registry).await.remove(0);
    current["status"]["used"]["configmaps"] = json!("2");
    match write_status(&registry, &current).await {
        Ok(_) => {}
        Err(_) => panic!("the fixture's write"),
    }
    let stale =
        quota("q", json!({"configmaps": "2"}), Some(json!({"hard": {"configmaps": "2"}, "used": {"configmaps": "1"}})));
    let check = Check {
        evaluator: &Evaluator::of("", "configmaps").expect("counted"),
        operation: Operation::Create,
        subresource: "",
        obj: &cm,
        old: &Value::Null,
    };
    let changes = usage::check_request(std::slice::from_ref(&stale), &check).expect("within the stale quota");
    assert!(matches!(charge(&registry, &[stale], changes).await, Err(WriteError::Conflict(_))));
    // The plugin reads the quota as it is now, and it is full.
    let req =
        Request { attrs: attrs(&cms, Operation::Create, "ns", "c"), user: &user, registry: &registry, now_unix_s: 0 };
    assert_eq!(
        message(&ResourceQuota.validate(&req, &cm, &Value::Null).await),
        r#"configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2"#
    );
}

#[test]
fn usage_is_measured_as_upstreams_evaluators_measure_it() {
    let svc = |ty: &str| json!({"spec": {"type": ty, "ports": [{"port": 80}, {"port": 443}]}});
    let pvc = json!({"spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"allocatedResources": {"storage": "2Gi"}}});
    let with_init = {
        let mut p = sized_pod("p", json!({"cpu": "100m"}), json!({"cpu": "200m"}));
        p["spec"]["initContainers"] = json!([{"name": "i", "resources": {"requests": {"cpu": "1"}}}]);
        p
    };
    let text =
        |u: usage::Usage| u.into_iter().map(|(k, v)| format!("{k}={}", v.to_text())).collect::<Vec<_>>().join(",");
    let cases: Vec<(Evaluator, Value, &str)> = vec![
        (Evaluator::Services, svc("ClusterIP"), "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0"),
        (Evaluator::Services, svc("NodePort"), "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2"),
        (Evaluator::Services, svc("LoadBalancer"), "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"),
        (Evaluator::Claims, pvc, "count/persistentvolumeclaims=1,fast.storageclass.storage.k8s.io/persistentvolumeclaims=1,fast.storageclass.storage.k8s.io/requests.storage=2Gi,persistentvolumeclaims=1,requests.storage=2Gi"),
        (Evaluator::Pods, with_init, "count/pods=1,cpu=1,limits.cpu=200m,pods=1,requests.cpu=1"),
        (Evaluator::of("", "secrets").expect("counted"), json!({}), "count/secrets=1,secrets=1"),
    ];
    for (ev, obj, want) in cases {
        assert_eq!(text(ev.usage(&obj, None)), want, "{ev:?}");
    }
    assert_eq!(Evaluator::of("", "events"), None);
}
