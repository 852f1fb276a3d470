//! Cases for `PodsAsSpecifiedAtQuiescence`: each workload kind met, and each way of missing it.

use serde_json::{json, Value};

use super::*;

fn owner(uid: &str) -> Value {
    json!([{"uid": uid, "controller": true}])
}

fn pod(name: &str, owner_uid: &str, phase: &str) -> Value {
    json!({"kind": "Pod", "metadata": {"namespace": "ns", "name": name, "uid": format!("u-{name}"),
           "ownerReferences": owner(owner_uid)}, "status": {"phase": phase}})
}

fn deleted_pod(name: &str, owner_uid: &str) -> Value {
    let mut p = pod(name, owner_uid, "Running");
    p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    p
}

fn rs(uid: &str, replicas: i64, owner_uid: Option<&str>) -> Value {
    let mut o = json!({"kind": "ReplicaSet", "metadata": {"namespace": "ns", "name": uid, "uid": uid},
                       "spec": {"replicas": replicas}});
    if let Some(u) = owner_uid {
        o["metadata"]["ownerReferences"] = owner(u);
    }
    o
}

fn deployment(uid: &str, replicas: i64, reported: i64) -> Value {
    json!({"kind": "Deployment", "metadata": {"namespace": "ns", "name": uid, "uid": uid},
           "spec": {"replicas": replicas}, "status": {"replicas": reported}})
}

fn job(uid: &str, completions: i64, parallelism: i64, condition: Option<&str>, succeeded: i64) -> Value {
    let conditions: Vec<Value> = condition.map(|c| json!({"type": c, "status": "True"})).into_iter().collect();
    json!({"kind": "Job", "metadata": {"namespace": "ns", "name": uid, "uid": uid},
           "spec": {"completions": completions, "parallelism": parallelism},
           "status": {"succeeded": succeeded, "conditions": conditions}})
}

fn service() -> Value {
    json!({"kind": "Service", "metadata": {"namespace": "ns", "name": "web", "uid": "svc"},
           "spec": {"selector": {"app": "web"}}})
}

fn slice(name: &str, pods: &[&str]) -> Value {
    let endpoints: Vec<Value> = pods
        .iter()
        .map(|p| json!({"addresses": ["10.0.0.1"], "targetRef": {"kind": "Pod", "namespace": "ns", "name": p, "uid": format!("u-{p}")}}))
        .collect();
    json!({"kind": "EndpointSlice", "addressType": "IPv4", "endpoints": endpoints,
           "metadata": {"namespace": "ns", "name": name, "labels": {
               "kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": MANAGED_BY}}})
}

#[test]
fn each_workload_is_judged_against_its_spec() {
    // (name, objects, objects judged, the violations' details, each as a fragment it must contain)
    let cases: Vec<(&str, Vec<Value>, usize, Vec<&str>)> = vec![
        ("empty", vec![], 0, vec![]),
        (
            "replica set met; deleting and finished pods do not count",
            vec![
                rs("a", 2, None),
                pod("p1", "a", "Running"),
                pod("p2", "a", "Pending"),
                deleted_pod("p3", "a"),
                pod("p4", "a", "Failed"),
            ],
            1,
            vec![],
        ),
        (
            "replica set with an extra pod",
            vec![rs("a", 1, None), pod("p1", "a", "Running"), pod("p2", "a", "Running")],
            1,
            vec!["ReplicaSet ns/a wants 1 active pods, has 2"],
        ),
        ("replica set short of pods", vec![rs("a", 1, None)], 1, vec!["ReplicaSet ns/a wants 1 active pods, has 0"]),
        (
            "deployment met across its replica sets",
            vec![
                deployment("d", 2, 2),
                rs("old", 1, Some("d")),
                rs("new", 1, Some("d")),
                pod("p1", "old", "Running"),
                pod("p2", "new", "Running"),
            ],
            3,
            vec![],
        ),
        (
            "deployment whose status lags",
            vec![deployment("d", 1, 2), rs("new", 1, Some("d")), pod("p1", "new", "Running")],
            2,
            vec!["Deployment ns/d wants 1 active pods, has 1 (status.replicas 2)"],
        ),
        (
            "job complete with its completions",
            vec![job("j", 2, 1, Some("Complete"), 2), pod("p1", "j", "Succeeded"), pod("p2", "j", "Succeeded")],
            1,
            vec![],
        ),
        (
            "job that succeeded once too often",
            vec![job("j", 1, 1, Some("Complete"), 1), pod("p1", "j", "Succeeded"), pod("p2", "j", "Succeeded")],
            1,
            vec!["Job ns/j is Complete and wants 1 succeeded pods, has 2"],
        ),
        (
            "job complete with a pod still active",
            vec![job("j", 1, 1, Some("Complete"), 1), pod("p1", "j", "Succeeded"), pod("p2", "j", "Running")],
            1,
            vec!["(1 still active)"],
        ),
        (
            "running job over its parallelism",
            vec![job("j", 3, 1, None, 0), pod("p1", "j", "Running"), pod("p2", "j", "Running")],
            1,
            vec!["Job ns/j runs with parallelism 1, has 2 active pods"],
        ),
        (
            "failed job with nothing running",
            vec![job("j", 1, 1, Some("Failed"), 0), pod("p1", "j", "Failed")],
            1,
            vec![],
        ),
        (
            "service with one slice naming live pods",
            vec![service(), slice("web-a", &["p1"]), pod("p1", "x", "Running")],
            1,
            vec![],
        ),
        (
            "service with a duplicate slice",
            vec![service(), slice("web-a", &["p1"]), slice("web-b", &["p1"]), pod("p1", "x", "Running")],
            1,
            vec!["Service ns/web wants its 2 IPv4 endpoints in 1 EndpointSlice, has 2 (web-a, web-b)"],
        ),
        (
            "service whose slice names a deleted pod",
            vec![service(), slice("web-a", &["gone"])],
            1,
            vec!["Service ns/web has an EndpointSlice naming pod ns/gone, which no longer exists"],
        ),
        (
            "service whose slice names a pod recreated under the same name",
            vec![service(), slice("web-a", &["p1"]), {
                let mut p = pod("p1", "x", "Running");
                p["metadata"]["uid"] = json!("another");
                p
            }],
            1,
            vec!["naming pod ns/p1, which no longer exists"],
        ),
    ];
    for (name, objects, judged, wanted) in cases {
        let verdict = pods_as_specified(&objects);
        assert_eq!(verdict.judged, judged, "{name}: judged");
        assert_eq!(verdict.violations.len(), wanted.len(), "{name}: {:?}", verdict.violations);
        for (v, fragment) in verdict.violations.iter().zip(&wanted) {
            assert!(v.details.contains(fragment), "{name}: {} lacks {fragment}", v.details);
        }
    }
}
