//! Tests of the disruption controller's arithmetic: scaled values, expected counts through the finders,
//! healthy counts, disruption records, and the status and condition written.

use serde_json::{json, Value};

use super::*;

const T0: i64 = 1_700_000_000_000_000;
const T0_TEXT: &str = "2023-11-14T22:13:20Z";

fn pod(name: &str, ready: bool, owner: Option<(&str, &str, &str)>) -> Value {
    let mut p = json!({
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"}},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
    });
    if let Some((api_version, kind, uid)) = owner {
        p["metadata"]["ownerReferences"] = json!([{"apiVersion": api_version, "kind": kind, "name": kind.to_lowercase(), "uid": uid, "controller": true}]);
    }
    p
}

fn workload(kind: &str, uid: &str, replicas: i64, owner: Option<Value>) -> Value {
    let mut w = json!({"metadata": {"name": kind.to_lowercase(), "namespace": "ns", "uid": uid}, "spec": {"replicas": replicas}});
    if let Some(o) = owner {
        w["metadata"]["ownerReferences"] = json!([o]);
    }
    w
}

#[test]
fn scaled_values_round_as_upstream() {
    let cases: &[(Value, i64, bool, Result<i64, &str>)] = &[
        (json!(3), 10, true, Ok(3)),
        (json!("50%"), 3, true, Ok(2)),
        (json!("50%"), 3, false, Ok(1)),
        (json!("34%"), 3, true, Ok(2)),
        (json!("0%"), 7, true, Ok(0)),
        (json!("100%"), 7, true, Ok(7)),
        (json!("10"), 7, true, Err("invalid value for IntOrString: invalid type: string is not a percentage")),
        (
            json!("x%"),
            7,
            true,
            Err("invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": invalid syntax"),
        ),
    ];
    for (value, total, up, want) in cases {
        assert_eq!(scaled_value(value, *total, *up), want.map_err(String::from), "{value} of {total}");
    }
}

#[test]
fn expected_counts_by_budget_kind() {
    let rs_owned_by_d =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "deployment", "uid": "d1", "controller": true});
    let objects = [
        ("ReplicaSet", workload("ReplicaSet", "rs1", 4, Some(rs_owned_by_d))),
        ("Deployment", workload("Deployment", "d1", 5, None)),
        ("StatefulSet", workload("StatefulSet", "ss1", 3, None)),
        ("ReplicationController", workload("ReplicationController", "rc1", 2, None)),
    ];
    let lookup = |kind: &str, _ns: &str, name: &str| {
        objects.iter().find(|(k, o)| *k == kind && o["metadata"]["name"] == name).map(|(_, o)| o.clone())
    };
    let by_rs = |n: &str| pod(n, true, Some(("apps/v1", "ReplicaSet", "rs1")));
    let by_ss = |n: &str| pod(n, true, Some(("apps/v1", "StatefulSet", "ss1")));
    let by_rc = |n: &str| pod(n, true, Some(("v1", "ReplicationController", "rc1")));
    let budget = |spec: Value| json!({"metadata": {"name": "b", "namespace": "ns"}, "spec": spec});
    let ok = |expected, desired_healthy, unmanaged: &[&str]| {
        Ok(Expected { expected, desired_healthy, unmanaged: unmanaged.iter().map(|s| s.to_string()).collect() })
    };
    let cases: Vec<(Value, Vec<Value>, Result<Expected, String>)> = vec![
        // An integer minAvailable counts the selected pods, whatever controls them.
        (
            json!({"minAvailable": 2}),
            vec![pod("a", true, None), pod("b", true, None), pod("c", true, None)],
            ok(3, 2, &[]),
        ),
        // A ReplicaSet a Deployment owns scales as the Deployment (5), counted once for two pods.
        (json!({"minAvailable": "50%"}), vec![by_rs("a"), by_rs("b")], ok(5, 3, &[])),
        (json!({"maxUnavailable": 1}), vec![by_ss("a"), by_rc("b")], ok(5, 4, &[])),
        (json!({"maxUnavailable": "100%"}), vec![by_ss("a")], ok(3, 0, &[])),
        (json!({"maxUnavailable": "10%"}), vec![by_ss("a"), pod("lone", true, None)], ok(3, 2, &["lone"])),
        (
            json!({"maxUnavailable": 1}),
            vec![pod("x", true, Some(("apps/v1", "StatefulSet", "other-uid")))],
            Err("found no controllers for pod \"x\"".into()),
        ),
        (json!({}), vec![by_ss("a")], ok(0, 0, &[])),
    ];
    for (spec, pods, want) in cases {
        assert_eq!(expected_pod_count(&budget(spec.clone()), &pods, &lookup), want, "{spec}");
    }
}

#[test]
fn a_replica_set_without_a_deployment_scales_itself() {
    let rs = workload("ReplicaSet", "rs1", 4, None);
    let lookup = |kind: &str, _: &str, _: &str| (kind == "ReplicaSet").then(|| rs.clone());
    let reference = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "replicaset", "uid": "rs1"});
    assert_eq!(find_scale(&reference, "ns", &lookup), Some(("rs1".to_string(), 4)));
    // Of the wrong group, it is no ReplicaSet of the finders'.
    let foreign = json!({"apiVersion": "example.com/v1", "kind": "ReplicaSet", "name": "replicaset", "uid": "rs1"});
    assert_eq!(find_scale(&foreign, "ns", &lookup), None);
}

#[test]
fn disruptions_recorded_hold_for_two_minutes() {
    let mut deleting = pod("d", true, None);
    deleting["metadata"]["deletionTimestamp"] = json!(T0_TEXT);
    let pods = vec![pod("a", true, None), pod("b", true, None), pod("c", true, None), deleting];
    let budget = json!({"status": {"disruptedPods": {
        "a": T0_TEXT,                      // recent: still pending
        "b": "2023-11-14T22:10:00Z",       // 200 s ago: overdue
        "d": T0_TEXT,                      // being deleted: dropped
        "gone": T0_TEXT,                   // no such pod: dropped
    }}});
    let d = disrupted_pods(&budget, &pods, T0 + 1_000_000);
    assert_eq!(d.pods, [("a".to_string(), T0_TEXT.to_string())].into());
    assert_eq!(d.recheck_at_us, Some(T0 + DELETION_TIMEOUT_US));
    assert_eq!(d.overdue, vec!["b".to_string()]);
    // a is pending, d is going; b and c count.
    assert_eq!(healthy_pods(&pods, &d.pods, T0 + 1_000_000), 2);
    // Past the timeout a counts again.
    assert_eq!(healthy_pods(&pods, &d.pods, T0 + DELETION_TIMEOUT_US + 1), 3);
    assert_eq!(disrupted_pods(&json!({}), &pods, T0), Disrupted::default());
}

fn counts(current: i64, desired: i64, expected: i64) -> Counts {
    Counts { current_healthy: current, desired_healthy: desired, expected, disrupted: Default::default() }
}

#[test]
fn status_and_condition_follow_the_counts() {
    let fresh = json!({"metadata": {"name": "b", "namespace": "ns", "generation": 2}, "spec": {"minAvailable": 2}});
    let cases = [
        (counts(3, 2, 3), 1, "True", SUFFICIENT_PODS),
        (counts(2, 2, 3), 0, "False", INSUFFICIENT_PODS),
        (counts(1, 2, 3), 0, "False", INSUFFICIENT_PODS),
        // No expected pods: nothing allowed, whatever is healthy.
        (counts(3, 0, 0), 0, "False", INSUFFICIENT_PODS),
    ];
    for (c, allowed, status, reason) in cases {
        let out = next_status(&fresh, &c, T0_TEXT).expect("a fresh budget is written");
        let s = &out["status"];
        assert_eq!(s["disruptionsAllowed"], allowed, "{c:?}");
        assert_eq!(s["observedGeneration"], 2);
        assert_eq!(
            (s["currentHealthy"].clone(), s["desiredHealthy"].clone()),
            (json!(c.current_healthy), json!(c.desired_healthy))
        );
        assert_eq!(s["expectedPods"], c.expected);
        assert_eq!(
            s["conditions"],
            json!([{"type": "DisruptionAllowed", "status": status, "observedGeneration": 2, "reason": reason, "message": "", "lastTransitionTime": T0_TEXT}])
        );
        // Written once, the same counts leave it alone.
        assert_eq!(next_status(&out, &c, "2023-11-14T22:20:00Z"), None);
    }
}

#[test]
fn a_condition_keeps_its_transition_time_until_its_status_turns() {
    let budget = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "disruptionsAllowed": 1,
        "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3,
        "conditions": [{"type": "DisruptionAllowed", "status": "True", "observedGeneration": 1, "reason": SUFFICIENT_PODS, "message": "", "lastTransitionTime": "2023-01-01T00:00:00Z"}]}});
    // The eviction handler spent one and recorded the pod; the controller sees 2 healthy of 2 wanted.
    let out = next_status(&budget, &counts(2, 2, 3), T0_TEXT).unwrap();
    assert_eq!(out["status"]["conditions"][0]["lastTransitionTime"], T0_TEXT);
    assert_eq!(out["status"]["conditions"][0]["reason"], INSUFFICIENT_PODS);
    // A generation bump alone rewrites the status but not the transition time.
    let mut bumped = budget.clone();
    bumped["metadata"]["generation"] = json!(2);
    let out = next_status(&bumped, &counts(3, 2, 3), T0_TEXT).unwrap();
    assert_eq!(out["status"]["conditions"][0]["lastTransitionTime"], "2023-01-01T00:00:00Z");
    assert_eq!(out["status"]["conditions"][0]["observedGeneration"], 2);
    // A recorded disruption is kept in the status.
    let mut c = counts(2, 2, 3);
    c.disrupted.insert("a".into(), T0_TEXT.into());
    let out = next_status(&budget, &c, T0_TEXT).unwrap();
    assert_eq!(out["status"]["disruptedPods"], json!({"a": T0_TEXT}));
}

#[test]
fn fail_safe_allows_nothing_and_says_why() {
    let budget = json!({"status": {"observedGeneration": 3, "disruptionsAllowed": 2}});
    let out = fail_safe(&budget, "found no controllers for pod \"x\"", T0_TEXT);
    assert_eq!(out["status"]["disruptionsAllowed"], 0);
    assert_eq!(
        out["status"]["conditions"],
        json!([{"type": "DisruptionAllowed", "status": "False", "observedGeneration": 3, "reason": SYNC_FAILED, "message": "found no controllers for pod \"x\"", "lastTransitionTime": T0_TEXT}])
    );
}

#[test]
fn stale_disruption_conditions() {
    let with = |status: &str, reason: &str, at: &str| {
        let mut p = pod("a", true, None);
        p["status"]["conditions"] =
            json!([{"type": "DisruptionTarget", "status": status, "reason": reason, "lastTransitionTime": at}]);
        p
    };
    let recent = with("True", "EvictionByEvictionAPI", T0_TEXT);
    assert_eq!(stale_disruption_wait_us(&recent, T0 + 20_000_000), Some(STALE_POD_DISRUPTION_TIMEOUT_US - 20_000_000));
    assert_eq!(stale_disruption_wait_us(&recent, T0 + 600_000_000), Some(0));
    assert_eq!(stale_disruption_wait_us(&with("True", "TerminationByKubelet", T0_TEXT), T0), None);
    assert_eq!(stale_disruption_wait_us(&with("False", "", T0_TEXT), T0), None);
    let mut terminal = recent.clone();
    terminal["status"]["phase"] = json!("Failed");
    assert_eq!(stale_disruption_wait_us(&terminal, T0), None);
    let mut deleting = recent.clone();
    deleting["metadata"]["deletionTimestamp"] = json!(T0_TEXT);
    assert_eq!(stale_disruption_wait_us(&deleting, T0), None);
    let cleared = clear_disruption_condition(&recent, "2023-11-14T22:20:00Z").unwrap();
    assert_eq!(
        cleared["status"]["conditions"],
        json!([{"type": "DisruptionTarget", "status": "False", "lastProbeTime": null, "lastTransitionTime": "2023-11-14T22:20:00Z"}])
    );
    assert_eq!(clear_disruption_condition(&cleared, "later"), None);
}

#[test]
fn selectors_print_as_go_does() {
    let s = json!({"matchLabels": {"app": "web", "a": "b"}, "matchExpressions": [{"key": "t", "operator": "In", "values": ["x", "y"]}]});
    assert_eq!(
        selector_string(Some(&s)),
        "&LabelSelector{MatchLabels:map[string]string{a: b,app: web,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:t,Operator:In,Values:[x y],},},}"
    );
    assert_eq!(selector_string(None), "nil");
}
