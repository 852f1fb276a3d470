//! The reconciler's table-driven tests: slice building, packing, in-place updates, placeholders, name
//! reuse and unknown nodes.

use serde_json::{json, Value};

use super::*;
use crate::kcm::endpointslice::endpoint::{LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY};
use crate::kcm::endpointslice::util::LABEL_TOPOLOGY_ZONE;

fn service(extra: Value) -> Value {
    let mut svc = json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "svc-uid", "labels": {"team": "a"}},
        "spec": {"clusterIP": "10.96.0.10", "ipFamilies": ["IPv4"], "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]},
    });
    if let (Some(spec), Some(extra)) = (svc["spec"].as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    svc
}

fn pod(i: usize, ready: bool) -> Value {
    json!({"metadata": {"name": format!("p{i:03}"), "namespace": "ns", "uid": format!("uid-{i}"), "labels": {"app": "web"}},
           "spec": {"nodeName": "n1", "containers": [{"ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
           "status": {"phase": "Running", "podIP": format!("10.1.{}.{}", i / 200, i % 200),
                      "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
}

fn node(name: &str) -> Option<Value> {
    (name == "n1").then(|| json!({"metadata": {"name": "n1", "labels": {LABEL_TOPOLOGY_ZONE: "zone-a"}}}))
}

fn plan_for(svc: &Value, pods: &[Value], existing: &[Value], max: usize) -> (Plan, Vec<String>) {
    let refs: Vec<&Value> = pods.iter().collect();
    reconcile(svc, &refs, &node, existing, max)
}

/// A stored slice from a planned one: named, versioned.
fn stored(mut slice: Value, name: &str) -> Value {
    slice["metadata"]["name"] = json!(name);
    slice["metadata"]["resourceVersion"] = json!("7");
    slice["metadata"]["uid"] = json!(format!("uid-{name}"));
    slice
}

fn sizes(slices: &[Value]) -> Vec<usize> {
    slices.iter().map(endpoint_count).collect()
}

fn names(slices: &[Value]) -> Vec<&str> {
    slices.iter().map(name).collect()
}

#[test]
fn a_new_service_gets_one_slice_of_its_pods() {
    let svc = service(json!({}));
    let pods = [pod(1, true), pod(2, true), pod(3, false)];
    let (plan, errors) = plan_for(&svc, &pods, &[], 100);
    assert!(errors.is_empty());
    assert_eq!((plan.create.len(), plan.update.len(), plan.delete.len()), (1, 0, 0));
    let slice = &plan.create[0];
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(slice["ports"], json!([{"name": "http", "port": 8080, "protocol": "TCP"}]));
    assert_eq!(
        slice["metadata"]["labels"],
        json!({"team": "a", LABEL_SERVICE_NAME: "web", LABEL_MANAGED_BY: MANAGED_BY})
    );
    assert_eq!(
        slice["endpoints"][2],
        json!({"addresses": ["10.1.0.3"], "conditions": {"ready": false, "serving": false, "terminating": false},
               "nodeName": "n1", "zone": "zone-a",
               "targetRef": {"kind": "Pod", "namespace": "ns", "name": "p003", "uid": "uid-3"}})
    );
}

#[test]
fn packing_new_and_existing_slices() {
    let svc = service(json!({}));
    let many: Vec<Value> = (0..250).map(|i| pod(i, true)).collect();
    // (what, pods now, existing slices as (name, pod range), max) -> (created sizes, updated (name, size), deleted)
    type Case<'a> =
        (&'a str, Vec<Value>, Vec<(&'a str, std::ops::Range<usize>)>, Vec<usize>, Vec<(&'a str, usize)>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        ("250 pods in slices of 100", many.clone(), vec![], vec![100, 100, 50], vec![], vec![]),
        ("nothing changed: nothing written", many[..5].to_vec(), vec![("a", 0..5)], vec![], vec![], vec![]),
        ("a new pod fills the unchanged slice", many[..6].to_vec(), vec![("a", 0..5)], vec![], vec![("a", 6)], vec![]),
        (
            "a removed pod: the changed slice is topped up first",
            [&many[1..5], &many[10..12]].concat(),
            vec![("a", 0..5), ("b", 5..7)],
            vec![],
            vec![("a", 6)],
            vec!["b"],
        ),
        ("a full unchanged slice is left alone", many[..4].to_vec(), vec![("a", 0..3)], vec![1], vec![], vec![]),
        (
            "everything gone: the last slice becomes the placeholder",
            vec![],
            vec![("a", 0..5)],
            vec![],
            vec![("a", 0)],
            vec![],
        ),
    ];
    for (what, pods, existing, created, updated, deleted) in cases {
        let max = if what.contains("full") { 3 } else { 100 };
        let existing: Vec<Value> = existing
            .into_iter()
            .map(|(n, range)| {
                let (plan, _) = plan_for(&svc, &many[range], &[], 100);
                stored(plan.create[0].clone(), n)
            })
            .collect();
        let (plan, errors) = plan_for(&svc, &pods, &existing, max);
        assert!(errors.is_empty(), "{what}");
        assert_eq!(sizes(&plan.create), created, "{what}: created");
        let got: Vec<(&str, usize)> = plan.update.iter().map(|s| (name(s), endpoint_count(s))).collect();
        assert_eq!(got, updated, "{what}: updated");
        assert_eq!(names(&plan.delete), deleted, "{what}: deleted");
        for slice in plan.create.iter().chain(&plan.update) {
            assert!(endpoint_count(slice) <= max, "{what}");
        }
    }
}

#[test]
fn changed_conditions_update_in_place() {
    let svc = service(json!({}));
    let (plan, _) = plan_for(&svc, &[pod(1, true), pod(2, true)], &[], 100);
    let existing = [stored(plan.create[0].clone(), "web-abc")];
    let mut terminating = pod(2, true);
    terminating["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
    let (plan, _) = plan_for(&svc, &[pod(1, true), terminating], &existing, 100);
    assert!(plan.create.is_empty() && plan.delete.is_empty());
    assert_eq!(names(&plan.update), ["web-abc"]);
    assert_eq!(plan.update[0]["metadata"]["resourceVersion"], "7", "an update of the stored slice");
    assert_eq!(
        plan.update[0]["endpoints"][1]["conditions"],
        json!({"ready": false, "serving": true, "terminating": true})
    );
}

#[test]
fn placeholders_and_foreign_slices() {
    let svc = service(json!({}));
    let (plan, _) = plan_for(&svc, &[], &[], 100);
    assert_eq!(sizes(&plan.create), [0], "a placeholder");
    assert_eq!(plan.create[0]["ports"], json!([]));
    let placeholder = stored(plan.create[0].clone(), "web-p");
    let (plan, _) = plan_for(&svc, &[], std::slice::from_ref(&placeholder), 100);
    assert_eq!(plan, Plan::default(), "the placeholder stays");
    let (plan, _) = plan_for(&svc, &[pod(1, true)], std::slice::from_ref(&placeholder), 100);
    assert_eq!(names(&plan.update), ["web-p"], "the placeholder is reused by name");
    assert_eq!((plan.create.len(), plan.delete.len(), endpoint_count(&plan.update[0])), (0, 0, 1));
    // A slice of an earlier Service of the same name (another UID) is deleted, not reused.
    let mut foreign = placeholder;
    foreign["metadata"]["ownerReferences"][0]["uid"] = json!("old-uid");
    let (plan, _) = plan_for(&svc, &[pod(1, true)], &[foreign], 100);
    assert_eq!((sizes(&plan.create), names(&plan.delete)), (vec![1], vec!["web-p"]));
    // An address type the Service no longer has is deleted.
    let mut v6 = stored(new_slice(&svc, &[], "IPv6"), "web-v6");
    v6["endpoints"] = json!([]);
    let (plan, _) = plan_for(&svc, &[pod(1, true)], &[v6], 100);
    assert_eq!((sizes(&plan.create), names(&plan.delete)), (vec![1], vec!["web-v6"]));
}

#[test]
fn unknown_nodes_and_dual_stack() {
    let svc = service(json!({}));
    let mut lost = pod(2, true);
    lost["spec"]["nodeName"] = json!("gone");
    let (plan, errors) = plan_for(&svc, &[pod(1, true), lost.clone()], &[], 100);
    assert_eq!(sizes(&plan.create), [1]);
    assert_eq!(errors, ["skipping Pod p002 for Service ns/web: Node gone Not Found"]);
    let published = service(json!({"publishNotReadyAddresses": true}));
    let (plan, errors) = plan_for(&published, &[pod(1, true), lost], &[], 100);
    assert!(errors.is_empty());
    assert_eq!(sizes(&plan.create), [2]);
    assert!(plan.create[0]["endpoints"][1].get("zone").is_none(), "no node, no zone");

    let dual = service(json!({"ipFamilies": ["IPv4", "IPv6"]}));
    let mut both = pod(1, true);
    both["status"]["podIPs"] = json!([{"ip": "10.1.0.1"}, {"ip": "fd00::1"}]);
    let (plan, _) = plan_for(&dual, &[both, pod(2, true)], &[], 100);
    let kinds: Vec<(&str, usize)> =
        plan.create.iter().map(|s| (s["addressType"].as_str().unwrap_or(""), endpoint_count(s))).collect();
    assert_eq!(kinds, [("IPv4", 2), ("IPv6", 1)]);
}

#[test]
fn trigger_time_annotation() {
    let mut slice = json!({"metadata": {"name": "s"}});
    set_trigger_time(&mut slice, Some(1_700_000_000_000_000));
    assert_eq!(slice["metadata"]["annotations"][LAST_CHANGE_TRIGGER_TIME], "2023-11-14T22:13:20Z");
    set_trigger_time(&mut slice, None);
    assert_eq!(slice["metadata"]["annotations"], json!({}));
}
