//! Tests of the quota controller's counting: per-resource usage of pods, services, claims and object counts,
//! scopes, and the status a sync writes.

use serde_json::{json, Value};

use super::*;
use apiserver::quantity::Quantity;

const T0: i64 = 1_700_000_000_000_000;

fn pod(cpu: Option<&str>, memory_limit: Option<&str>) -> Value {
    let mut resources = json!({});
    if let Some(cpu) = cpu {
        resources["requests"] = json!({"cpu": cpu});
    }
    if let Some(memory) = memory_limit {
        resources["limits"] = json!({"memory": memory});
    }
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": [{"name": "c", "resources": resources}]}, "status": {"phase": "Running"}})
}

fn quota(hard: Value) -> Value {
    json!({"metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": hard}})
}

fn texts(usage: &Usage) -> Vec<(String, String)> {
    usage.iter().map(|(k, v)| (k.clone(), v.to_text())).collect()
}

#[test]
fn which_evaluator_counts_which_name() {
    let count = |g: &str, r: &str| Some(Evaluator::Count { group: g.into(), resource: r.into() });
    let cases = [
        ("pods", Some(Evaluator::Pods)),
        ("count/pods", Some(Evaluator::Pods)),
        ("requests.cpu", Some(Evaluator::Pods)),
        ("limits.memory", Some(Evaluator::Pods)),
        ("ephemeral-storage", Some(Evaluator::Pods)),
        ("requests.example.com/gpu", Some(Evaluator::Pods)),
        ("services.nodeports", Some(Evaluator::Services)),
        ("requests.storage", Some(Evaluator::Claims)),
        ("gold.storageclass.storage.k8s.io/requests.storage", Some(Evaluator::Claims)),
        ("configmaps", count("", "configmaps")),
        ("count/configmaps", count("", "configmaps")),
        ("count/deployments.apps", count("apps", "deployments")),
        ("secrets", count("", "secrets")),
        ("nonsense", None),
    ];
    for (name, want) in cases {
        assert_eq!(Evaluator::for_name(name), want, "{name}");
        if let Some(ev) = want {
            assert!(ev.counts(name), "{name}");
        }
    }
}

#[test]
fn usage_per_resource() {
    let mut terminal = pod(Some("500m"), Some("1Gi"));
    terminal["status"]["phase"] = json!("Succeeded");
    let mut stuck = pod(Some("500m"), None);
    stuck["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:10:00Z");
    stuck["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    let mut graceful = stuck.clone();
    graceful["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:10Z");
    let lb = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}});
    let np = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}});
    let pvc = json!({"spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "1Gi"}}}, "status": {"allocatedResources": {"storage": "2Gi"}}});
    let s = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
    let cases: Vec<(Evaluator, Value, Vec<(String, String)>)> = vec![
        (
            Evaluator::Pods,
            pod(Some("250m"), Some("128Mi")),
            s(&[
                ("count/pods", "1"),
                ("cpu", "250m"),
                ("limits.memory", "128Mi"),
                ("pods", "1"),
                ("requests.cpu", "250m"),
            ]),
        ),
        (Evaluator::Pods, terminal, s(&[("count/pods", "1")])),
        (Evaluator::Pods, stuck, s(&[("count/pods", "1")])),
        (
            Evaluator::Pods,
            graceful,
            s(&[("count/pods", "1"), ("cpu", "500m"), ("pods", "1"), ("requests.cpu", "500m")]),
        ),
        (
            Evaluator::Services,
            lb,
            s(&[
                ("count/services", "1"),
                ("services", "1"),
                ("services.loadbalancers", "1"),
                ("services.nodeports", "2"),
            ]),
        ),
        (
            Evaluator::Services,
            np,
            s(&[
                ("count/services", "1"),
                ("services", "1"),
                ("services.loadbalancers", "0"),
                ("services.nodeports", "1"),
            ]),
        ),
        (
            Evaluator::Claims,
            pvc,
            s(&[
                ("count/persistentvolumeclaims", "1"),
                ("gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1"),
                ("gold.storageclass.storage.k8s.io/requests.storage", "2Gi"),
                ("persistentvolumeclaims", "1"),
                ("requests.storage", "2Gi"),
            ]),
        ),
        (Evaluator::for_name("configmaps").unwrap(), json!({}), s(&[("configmaps", "1"), ("count/configmaps", "1")])),
        (Evaluator::for_name("count/jobs.batch").unwrap(), json!({}), s(&[("count/jobs.batch", "1")])),
    ];
    for (ev, obj, want) in cases {
        assert_eq!(texts(&ev.usage(&obj, Some(T0))), want, "{ev:?} {obj}");
    }
}

#[test]
fn a_quota_counts_what_it_limits() {
    let q = quota(json!({"pods": "10", "requests.cpu": "2", "limits.memory": "1Gi", "configmaps": "5"}));
    let mut done = pod(Some("1"), Some("1Gi"));
    done["status"]["phase"] = json!("Failed");
    let pods = vec![pod(Some("250m"), None), pod(Some("500m"), Some("256Mi")), done];
    assert_eq!(
        evaluators_for(&q),
        vec![Evaluator::Pods, Evaluator::Count { group: "".into(), resource: "configmaps".into() }]
    );
    let used = calculate(&q, &Evaluator::Pods, &pods, Some(T0));
    assert_eq!(
        texts(&used),
        vec![
            ("limits.memory".into(), "256Mi".into()),
            ("pods".into(), "2".into()),
            ("requests.cpu".into(), "750m".into())
        ]
    );
    // No objects: zero for what is tracked.
    let used = calculate(&q, &Evaluator::for_name("configmaps").unwrap(), &[], Some(T0));
    assert_eq!(texts(&used), vec![("configmaps".into(), "0".into())]);
}

#[test]
fn scopes_select_pods_only() {
    let best_effort = pod(None, None);
    let burstable = pod(Some("100m"), None);
    let mut terminating = pod(None, None);
    terminating["spec"]["activeDeadlineSeconds"] = json!(30);
    let mut classy = pod(None, None);
    classy["spec"]["priorityClassName"] = json!("high");
    let scoped = |scopes: Value| json!({"spec": {"hard": {"pods": "5"}, "scopes": scopes}});
    let selected = |q: &Value, p: &Value| Evaluator::Pods.in_scopes(q, p);
    assert!(selected(&scoped(json!(["BestEffort"])), &best_effort));
    assert!(!selected(&scoped(json!(["BestEffort"])), &burstable));
    assert!(selected(&scoped(json!(["NotBestEffort"])), &burstable));
    assert!(selected(&scoped(json!(["Terminating"])), &terminating));
    assert!(!selected(&scoped(json!(["NotTerminating"])), &terminating));
    assert!(selected(&scoped(json!(["NotTerminating", "BestEffort"])), &best_effort));
    let by_class = json!({"spec": {"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}});
    assert!(selected(&by_class, &classy));
    assert!(!selected(&by_class, &best_effort));
    // A scoped quota counts no other kind.
    assert!(!Evaluator::Services.in_scopes(&scoped(json!(["BestEffort"])), &json!({})));
    assert!(Evaluator::Services.in_scopes(&quota(json!({})), &json!({})));
    let q = scoped(json!(["BestEffort"]));
    assert_eq!(
        texts(&calculate(&q, &Evaluator::Pods, &[best_effort, burstable], Some(T0))),
        vec![("pods".into(), "1".into())]
    );
}

#[test]
fn the_status_written_and_when() {
    let q = quota(json!({"pods": "10", "cpu": "2000m", "unknown": "3"}));
    let counted: Usage =
        [("pods".to_string(), Quantity::int(2)), ("cpu".to_string(), Quantity::parse("500m").unwrap())].into();
    let out = new_status(&q, &counted).expect("a quota without status is written");
    // Hard is printed canonically; a resource nothing counts has no usage.
    assert_eq!(
        out["status"],
        json!({"hard": {"cpu": "2", "pods": "10", "unknown": "3"}, "used": {"cpu": "500m", "pods": "2"}})
    );
    assert_eq!(new_status(&out, &counted), None);
    // A usage someone else recorded for the unknown resource is kept; a resource no longer limited is dropped.
    let mut recorded = out.clone();
    recorded["status"]["used"]["unknown"] = json!("0");
    recorded["status"]["used"]["secrets"] = json!("4");
    let again = new_status(&recorded, &counted).expect("the dropped resource is a change");
    assert_eq!(again["status"]["used"], json!({"cpu": "500m", "pods": "2", "unknown": "0"}));
    // Changed usage or limits are written.
    let fewer: Usage = [("pods".to_string(), Quantity::int(1))].into();
    assert_eq!(new_status(&out, &fewer).unwrap()["status"]["used"]["pods"], "1");
    let mut raised = out.clone();
    raised["spec"]["hard"]["pods"] = json!("20");
    assert_eq!(new_status(&raised, &counted).unwrap()["status"]["hard"]["pods"], "20");
}

#[test]
fn updates_that_replenish() {
    let running = pod(Some("1"), None);
    let mut done = running.clone();
    done["status"]["phase"] = json!("Succeeded");
    assert!(update_replenishes(&Evaluator::Pods, &running, &done, T0));
    assert!(!update_replenishes(&Evaluator::Pods, &running, &running, T0));
    let a = json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}});
    let b = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}});
    assert!(update_replenishes(&Evaluator::Services, &a, &b, T0));
    assert!(!update_replenishes(&Evaluator::for_name("secrets").unwrap(), &a, &b, T0));
}
