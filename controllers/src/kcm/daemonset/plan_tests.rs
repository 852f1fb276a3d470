//! Tables for `plan`: what one node needs, which pods a rolling update replaces, the status counts.

use serde_json::{json, Value};

use super::*;

const NOW_US: i64 = 1_700_000_000_000_000;

/// A pod `name` on `node` (bound when `bound`), created `age_s` seconds ago, with revision `hash`, in
/// `phase`, ready since `ready_s` seconds ago (not ready for `None`).
fn pod(name: &str, node: &str, hash: &str, phase: &str, ready_s: Option<i64>, age_s: i64) -> Value {
    let stamp = |s: i64| crate::runtime::time::format_micro_time(NOW_US - s * 1_000_000);
    let mut p = json!({
        "metadata": {"name": name, "namespace": "ns", "labels": {HASH_LABEL: hash}, "creationTimestamp": stamp(age_s)},
        "spec": {"nodeName": node},
        "status": {"phase": phase},
    });
    if let Some(r) = ready_s {
        p["status"]["conditions"] = json!([{"type": "Ready", "status": "True", "lastTransitionTime": stamp(r)}]);
    }
    p
}

fn running(name: &str, node: &str, hash: &str) -> Value {
    pod(name, node, hash, "Running", Some(100), 100)
}

fn ds(strategy: Value) -> Value {
    json!({"metadata": {"name": "d", "namespace": "ns", "uid": "u1"}, "spec": {"updateStrategy": strategy}, "status": {"observedGeneration": 2}})
}

fn rolling(unavailable: Value, surge: Value) -> Value {
    ds(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge}}))
}

#[test]
fn each_node_gets_exactly_one_live_pod() {
    let no_surge = rolling(json!(1), json!(0));
    let surge = rolling(json!(0), json!(1));
    let new_ready = || running("new", "n1", "h2");
    let new_unready = || pod("new", "n1", "h2", "Running", None, 5);
    let cases: Vec<(&str, &Value, (bool, bool), Option<Vec<Value>>, bool, Vec<&str>)> = vec![
        ("should run, none there: create", &no_surge, (true, true), None, true, vec![]),
        ("should not run, none there", &no_surge, (false, false), None, false, vec![]),
        ("one running: nothing", &no_surge, (true, true), Some(vec![running("a", "n1", "h1")]), false, vec![]),
        (
            "two running without surge: the younger goes",
            &no_surge,
            (true, true),
            Some(vec![
                pod("young", "n1", "h1", "Running", Some(1), 10),
                pod("old", "n1", "h1", "Running", Some(1), 50),
            ]),
            false,
            vec!["young"],
        ),
        (
            "succeeded pods are deleted",
            &no_surge,
            (true, true),
            Some(vec![pod("done", "n1", "h1", "Succeeded", None, 5)]),
            false,
            vec!["done"],
        ),
        (
            "a pod being deleted is left alone",
            &no_surge,
            (true, true),
            Some(vec![{
                let mut p = running("going", "n1", "h1");
                p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
                p
            }]),
            false,
            vec![],
        ),
        (
            "not to continue running: every live pod goes",
            &no_surge,
            (false, false),
            Some(vec![running("a", "n1", "h1"), running("b", "n1", "h1")]),
            false,
            vec!["a", "b"],
        ),
        (
            "tainted NoSchedule: the pod there stays",
            &no_surge,
            (false, true),
            Some(vec![running("a", "n1", "h1")]),
            false,
            vec![],
        ),
        (
            "surge: an unready old pod goes next to a new one",
            &surge,
            (true, true),
            Some(vec![pod("old", "n1", "h1", "Running", None, 50), new_unready()]),
            false,
            vec!["old"],
        ),
        (
            "surge: a ready old pod waits for the new one",
            &surge,
            (true, true),
            Some(vec![running("old", "n1", "h1"), new_unready()]),
            false,
            vec![],
        ),
        (
            "surge: an available new pod replaces the old",
            &surge,
            (true, true),
            Some(vec![running("old", "n1", "h1"), new_ready()]),
            false,
            vec!["old"],
        ),
        (
            "surge: only a terminal pod left, a new one is made",
            &surge,
            (true, true),
            Some(vec![pod("done", "n1", "h1", "Succeeded", None, 5)]),
            true,
            vec!["done"],
        ),
    ];
    for (name, ds, should, pods, create, delete) in cases {
        let mut backoff = Backoff::default();
        let got = pods_should_be_on_node(
            ds,
            "n1",
            should,
            pods.as_deref(),
            "h2",
            allows_surge(ds),
            &mut backoff,
            Duration::ZERO,
            NOW_US,
        );
        assert_eq!((got.create, got.delete.iter().map(String::as_str).collect::<Vec<_>>()), (create, delete), "{name}");
    }
}

#[test]
fn failed_pods_are_deleted_with_backoff() {
    let d = rolling(json!(1), json!(0));
    let failed = vec![pod("f", "n1", "h1", "Failed", None, 5)];
    let mut backoff = Backoff::default();
    let sec = Duration::from_secs;
    // (time, deleted?, requeue after)
    let steps = [
        (sec(0), true, None),
        (sec(0), false, Some(sec(1))),
        (sec(1), true, None),
        (sec(2), false, Some(sec(2))),
        (sec(3), true, None),
        (sec(3) + sec(15 * 60 * 2) + sec(5), true, None),
    ];
    for (i, (now, deleted, requeue)) in steps.into_iter().enumerate() {
        let got = pods_should_be_on_node(&d, "n1", (true, true), Some(&failed), "h2", false, &mut backoff, now, NOW_US);
        assert_eq!((got.delete == ["f"], got.requeue_after), (deleted, requeue), "step {i}");
        if deleted {
            assert_eq!(
                got.events,
                [Event {
                    warning: true,
                    reason: FAILED_DAEMON_POD,
                    message: "Found failed daemon pod ns/f on node n1, will try to kill it".into()
                }]
            );
        }
    }
    // After more than twice the maximum without a failure, the delay starts over at a second.
    assert_eq!(backoff.get(&backoff_key(&d, "n1")), sec(1));
    assert_eq!(backoff_key(&d, "n1"), "u1/2/n1");
}

#[test]
fn surge_and_unavailability_scale_up() {
    let cases = [
        (rolling(json!(1), json!(0)), 10, 1, 0),
        (rolling(json!("25%"), json!("10%")), 10, 3, 1),
        (rolling(json!("0%"), json!("50%")), 3, 0, 2),
        (ds(json!({"type": "OnDelete"})), 10, 0, 0),
    ];
    for (d, total, unavailable, surge) in cases {
        assert_eq!((unavailable_count(&d, total), surge_count(&d, total)), (Ok(unavailable), Ok(surge)), "{d}");
    }
    assert!(unavailable_count(&rolling(json!("x"), json!(0)), 3).is_err());
}

fn names(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}

#[test]
fn rolling_updates_replace_within_the_budget() {
    let nodes = |n: usize| (1..=n).map(|i| (format!("n{i}"), true)).collect::<Vec<_>>();
    let old = |i: usize| running(&format!("old{i}"), &format!("n{i}"), "h1");
    let group = |pods: Vec<Value>| {
        let mut map = NodePods::new();
        for p in pods {
            map.entry(p["spec"]["nodeName"].as_str().unwrap().to_string()).or_default().push(p);
        }
        map
    };
    // (case, ds, nodes, pods, deleted, created)
    let cases: Vec<(&str, Value, Vec<(String, bool)>, NodePods, Vec<&str>, Vec<&str>)> = vec![
        (
            "one at a time",
            rolling(json!(1), json!(0)),
            nodes(3),
            group(vec![old(1), old(2), old(3)]),
            vec!["old1"],
            vec![],
        ),
        (
            "two at a time",
            rolling(json!(2), json!(0)),
            nodes(3),
            group(vec![old(1), old(2), old(3)]),
            vec!["old1", "old2"],
            vec![],
        ),
        (
            "a new pod not yet available uses the budget",
            rolling(json!(1), json!(0)),
            nodes(3),
            group(vec![pod("new1", "n1", "h2", "Running", None, 1), old(2), old(3)]),
            vec![],
            vec![],
        ),
        (
            "a node without a pod uses the budget",
            rolling(json!(1), json!(0)),
            nodes(3),
            group(vec![old(2), old(3)]),
            vec![],
            vec![],
        ),
        (
            "unavailable old pods are replaced regardless",
            rolling(json!(1), json!(0)),
            nodes(3),
            group(vec![
                pod("sick1", "n1", "h1", "Running", None, 9),
                pod("sick2", "n2", "h1", "Running", None, 9),
                old(3),
            ]),
            vec!["sick1", "sick2"],
            vec![],
        ),
        (
            "done",
            rolling(json!(1), json!(0)),
            nodes(2),
            group(vec![running("a", "n1", "h2"), running("b", "n2", "h2")]),
            vec![],
            vec![],
        ),
        (
            "zero and zero means one unavailable",
            rolling(json!(0), json!(0)),
            nodes(2),
            group(vec![old(1), old(2)]),
            vec!["old1"],
            vec![],
        ),
        ("surge one", rolling(json!(0), json!(1)), nodes(3), group(vec![old(1), old(2), old(3)]), vec![], vec!["n1"]),
        (
            "surge: waiting for the new pod",
            rolling(json!(0), json!(1)),
            nodes(2),
            group(vec![old(1), pod("new1", "n1", "h2", "Running", None, 1), old(2)]),
            vec![],
            vec![],
        ),
        (
            "surge: the new pod is available",
            rolling(json!(0), json!(1)),
            nodes(2),
            group(vec![old(1), running("new1", "n1", "h2"), old(2)]),
            vec!["old1"],
            vec!["n2"],
        ),
        (
            "surge: an unavailable old pod is replaced at once",
            rolling(json!(0), json!(1)),
            nodes(2),
            group(vec![pod("sick", "n1", "h1", "Running", None, 9), old(2)]),
            vec![],
            vec!["n1", "n2"],
        ),
    ];
    for (name, d, nodes, pods, deleted, created) in cases {
        let got = rolling_update(&d, &nodes, &pods, "h2", NOW_US).unwrap();
        assert_eq!((names(&got.delete), names(&got.create)), (deleted, created), "{name}");
    }
}

#[test]
fn status_counts_follow_the_oldest_pod_per_node() {
    let mut d = rolling(json!(1), json!(0));
    d["spec"]["minReadySeconds"] = json!(30);
    let nodes =
        vec![("n1".to_string(), true), ("n2".to_string(), true), ("n3".to_string(), true), ("n4".to_string(), false)];
    let mut pods = NodePods::new();
    // n1: updated, ready long ago. n2: old, ready 10 s ago (not yet available). n3: none. n4: misscheduled.
    pods.insert("n1".into(), vec![running("a", "n1", "h2")]);
    pods.insert(
        "n2".into(),
        vec![pod("young", "n2", "h2", "Running", None, 1), pod("b", "n2", "h1", "Running", Some(10), 60)],
    );
    pods.insert("n4".into(), vec![running("c", "n4", "h2")]);
    let counts = Counts::of(&d, &nodes, &pods, "h2", NOW_US);
    assert_eq!(
        counts,
        Counts {
            desired_number_scheduled: 3,
            current_number_scheduled: 2,
            number_misscheduled: 1,
            number_ready: 2,
            updated_number_scheduled: 1,
            number_available: 1,
            number_unavailable: 2,
        }
    );
    let mut written = d.clone();
    written["metadata"]["generation"] = json!(3);
    counts.write_into(&mut written);
    assert!(!counts.is_current(&written), "generation 3 is not observed yet");
    written["status"]["observedGeneration"] = json!(3);
    assert!(counts.is_current(&written));
    assert_eq!(Counts::from_status(&written), counts);
}

#[test]
fn unbound_pods_for_missing_nodes_go() {
    let mut pods = NodePods::new();
    let mut unbound = running("u", "", "h");
    unbound["spec"] = json!({});
    pods.insert("gone".into(), vec![unbound, running("bound", "gone", "h")]);
    pods.insert("n1".into(), vec![running("x", "", "h")]);
    assert_eq!(unscheduled_pods_without_node(&["n1".to_string()], &pods), ["u"]);
}
