//! The plan's tests: ordered and parallel creation, scale-down order, failed pods, partitioned rolling
//! updates, `OnDelete`, claims, and the status each sync reports.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::*;
use crate::kcm::statefulset::identity::{new_pod, REVISION_LABEL};

const T0: i64 = 1_700_000_000_000_000;

fn set(replicas: i64, policy: &str, strategy: Value) -> Value {
    json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid", "generation": 4},
        "spec": {
            "replicas": replicas,
            "podManagementPolicy": policy,
            "updateStrategy": strategy,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}],
        },
    })
}

fn rolling(partition: i64) -> Value {
    json!({"type": "RollingUpdate", "rollingUpdate": {"partition": partition}})
}

/// A pod as the apiserver holds it: `state` is `R` (running and ready), `P` (pending), `U` (running, not
/// ready), `F` (failed), `T` (running and ready, terminating); `rev` its revision.
fn pod(ordinal: i64, state: char, rev: &str) -> Value {
    let s = set(3, "OrderedReady", rolling(0));
    let mut p = new_pod(&s, ordinal);
    p["metadata"]["uid"] = json!(format!("pod-{ordinal}"));
    p["metadata"]["labels"][REVISION_LABEL] = json!(rev);
    let (phase, ready) = match state {
        'R' | 'T' => ("Running", true),
        'U' => ("Running", false),
        'P' => ("Pending", false),
        'F' => ("Failed", false),
        other => panic!("no state {other}"),
    };
    p["status"] = json!({"phase": phase});
    if ready {
        p["status"]["conditions"] =
            json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z"}]);
    }
    if state == 'T' {
        p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
    }
    p
}

fn plan_for(set: &Value, pods: &[Value], claims: &BTreeMap<String, Value>) -> Plan {
    let lookup = |name: &str| claims.get(name).cloned();
    plan(&Inputs {
        set,
        current_set: set,
        update_set: set,
        current_revision: "web-a",
        update_revision: "web-b",
        collision_count: 0,
        pods,
        claims: &lookup,
        now_us: T0 + 60_000_000,
    })
}

/// The plan as text: phases separated by ` | `, `*` before a parallel one, units by `;`, steps as
/// `verb:pod`.
fn describe(plan: &Plan) -> String {
    plan.phases
        .iter()
        .map(|phase| {
            let units = phase
                .units
                .iter()
                .map(|unit| {
                    unit.iter()
                        .map(|step| {
                            let (verb, pod) = match step {
                                Step::Delete(p) => ("delete", p),
                                Step::DeleteForUpdate(p) => ("roll", p),
                                Step::Create(p) => ("create", p),
                                Step::CreateMissingClaims(p) => ("claims", p),
                                Step::Update(p) => ("update", p),
                                Step::FixClaims(p) => ("fix", p),
                            };
                            format!("{verb}:{}", meta(pod, "name"))
                        })
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect::<Vec<_>>()
                .join(";");
            if phase.parallel {
                format!("*{units}")
            } else {
                units
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn ordered_and_parallel_decisions() {
    let ordered = |n| set(n, "OrderedReady", rolling(0));
    let parallel = |n| set(n, "Parallel", rolling(0));
    let b = "web-b";
    let cases: Vec<(&str, Value, Vec<Value>, &str)> = vec![
        ("ordered: the first pod only", ordered(3), vec![], "create:web-0"),
        ("ordered: waits for web-0 to be ready", ordered(3), vec![pod(0, 'P', b)], "claims:web-0"),
        ("ordered: waits for a running pod not ready", ordered(3), vec![pod(0, 'U', b)], ""),
        ("ordered: the next once ready", ordered(3), vec![pod(0, 'R', b)], "create:web-1"),
        ("ordered: fills a gap first", ordered(3), vec![pod(0, 'R', b), pod(2, 'R', b)], "create:web-1"),
        ("ordered: a failed pod is deleted", ordered(3), vec![pod(0, 'F', b), pod(1, 'R', b)], "delete:web-0"),
        ("ordered: a terminating replica blocks", ordered(3), vec![pod(0, 'T', b)], ""),
        ("parallel: all at once", parallel(3), vec![], "*create:web-0;create:web-1;create:web-2"),
        ("parallel: past an unready pod", parallel(3), vec![pod(0, 'P', b)], "*claims:web-0;create:web-1;create:web-2"),
        (
            "ordered: scale down highest first, one at a time",
            ordered(1),
            vec![pod(0, 'R', b), pod(1, 'R', b), pod(2, 'R', b)],
            "delete:web-2",
        ),
        (
            "ordered: scale down waits for an unhealthy replica",
            ordered(1),
            vec![pod(0, 'U', b), pod(1, 'R', b), pod(2, 'R', b)],
            "",
        ),
        (
            "ordered: the first unhealthy condemned pod may go",
            ordered(1),
            vec![pod(0, 'R', b), pod(1, 'U', b)],
            "delete:web-1",
        ),
        (
            "ordered: an unhealthy pod above the first blocks",
            ordered(1),
            vec![pod(0, 'R', b), pod(1, 'U', b), pod(2, 'U', b)],
            "",
        ),
        (
            "ordered: a terminating condemned pod is waited for",
            ordered(1),
            vec![pod(0, 'R', b), pod(1, 'R', b), pod(2, 'T', b)],
            "",
        ),
        (
            "parallel: every condemned pod at once",
            parallel(1),
            vec![pod(0, 'R', b), pod(1, 'U', b), pod(2, 'R', b)],
            "*delete:web-2;delete:web-1",
        ),
    ];
    for (name, s, pods, want) in cases {
        assert_eq!(describe(&plan_for(&s, &pods, &BTreeMap::new())), want, "{name}");
    }
}

#[test]
fn start_ordinals_shift_the_range() {
    let mut s = set(2, "OrderedReady", rolling(0));
    s["spec"]["ordinals"] = json!({"start": 3});
    let p = plan_for(&s, &[], &BTreeMap::new());
    assert_eq!(describe(&p), "create:web-3");
    assert_eq!(p.replicas.iter().map(|r| meta(r, "name")).collect::<Vec<_>>(), ["web-3", "web-4"]);
    // web-0 is out of range now: condemned.
    let mut pods: Vec<Value> = [3, 4].iter().map(|&o| pod(o, 'R', "web-b")).collect();
    pods.push(pod(0, 'R', "web-b"));
    assert_eq!(describe(&plan_for(&s, &pods, &BTreeMap::new())), "delete:web-0");
}

#[test]
fn partitioned_rolling_updates() {
    let (a, b) = ("web-a", "web-b");
    // (strategy, pods, plan)
    let cases: Vec<(Value, Vec<Value>, &str)> = vec![
        (rolling(0), vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'R', a)], "roll:web-2"),
        (rolling(0), vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'R', b)], "roll:web-1"),
        (rolling(2), vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'R', a)], "roll:web-2"),
        (rolling(2), vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'R', b)], ""),
        (rolling(3), vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'R', a)], ""),
        (json!({"type": "OnDelete"}), vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'R', a)], ""),
    ];
    for (strategy, pods, want) in cases {
        let s = set(3, "OrderedReady", strategy.clone());
        assert_eq!(describe(&plan_for(&s, &pods, &BTreeMap::new())), want, "{strategy}");
    }
    // Under Parallel an updated pod that is not yet ready holds the update back.
    let s = set(3, "Parallel", rolling(0));
    let pods = vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'U', b)];
    assert_eq!(describe(&plan_for(&s, &pods, &BTreeMap::new())), "");
    let pods = vec![pod(0, 'R', a), pod(1, 'R', a), pod(2, 'R', b)];
    assert_eq!(describe(&plan_for(&s, &pods, &BTreeMap::new())), "roll:web-1");
}

#[test]
fn new_pods_take_the_revision_the_partition_gives() {
    let s = set(3, "Parallel", rolling(2));
    let p = plan_for(&s, &[], &BTreeMap::new());
    let revs: Vec<&str> = p.replicas.iter().map(pod_revision).collect();
    assert_eq!(revs, ["web-a", "web-a", "web-b"]);
}

#[test]
fn status_counts_of_a_sync() {
    let s = set(3, "OrderedReady", rolling(0));
    let pods = vec![pod(0, 'R', "web-a"), pod(1, 'P', "web-b"), pod(4, 'R', "web-b")];
    let p = plan_for(&s, &pods, &BTreeMap::new());
    let st = &p.status;
    assert_eq!(
        (st.replicas, st.ready_replicas, st.available_replicas, st.current_replicas, st.updated_replicas),
        (3, 2, 2, 1, 2)
    );
    assert_eq!(
        (st.observed_generation, st.current_revision.as_str(), st.update_revision.as_str()),
        (4, "web-a", "web-b")
    );
    // Pods without a valid ordinal count only while the set is being deleted.
    let mut stray = pod(0, 'R', "web-a");
    stray["metadata"]["name"] = json!("web-x");
    let mut deleting = s.clone();
    deleting["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
    assert_eq!(plan_for(&s, &[stray.clone()], &BTreeMap::new()).status.replicas, 0);
    let p = plan_for(&deleting, &[stray], &BTreeMap::new());
    assert_eq!((p.status.replicas, p.phases.len()), (1, 0));
}

#[test]
fn claims_under_the_retention_policy() {
    let mut s = set(1, "OrderedReady", rolling(0));
    s["spec"]["persistentVolumeClaimRetentionPolicy"] = json!({"whenDeleted": "Retain", "whenScaled": "Delete"});
    let stale = json!({"metadata": {"name": "data-web-0", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": "old", "controller": true}]}});
    let claims: BTreeMap<String, Value> = [("data-web-0".to_string(), stale)].into();
    assert_eq!(describe(&plan_for(&s, &[], &claims)), "", "a stale claim blocks the new pod");

    // A scaled-down pod's claim takes a reference to it before the pod goes.
    let unowned = json!({"metadata": {"name": "data-web-1", "ownerReferences": []}});
    let claims: BTreeMap<String, Value> = [("data-web-1".to_string(), unowned)].into();
    let pods = vec![pod(0, 'R', "web-b"), pod(1, 'R', "web-b")];
    assert_eq!(describe(&plan_for(&s, &pods, &claims)), "fix:web-1 | delete:web-1");

    // A replica whose claim has a reference the policy does not want is updated.
    let owned = json!({"metadata": {"name": "data-web-0", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": "pod-0", "controller": true}]}});
    let claims: BTreeMap<String, Value> = [("data-web-0".to_string(), owned)].into();
    assert_eq!(describe(&plan_for(&s, &[pod(0, 'R', "web-b")], &claims)), "update:web-0");
}
