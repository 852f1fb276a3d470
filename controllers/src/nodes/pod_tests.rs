//! The pod state machine's tests (a file of their own to keep `pod.rs` under the size limit): phases,
//! conditions, exit codes, restarts, graceful deletion's bounds and the deadlines in between.

use std::time::Duration;

use serde_json::{json, Value};

use super::*;

const T0_US: i64 = 1_700_000_000_000_000;

fn at_ms(ms: u64) -> Now {
    Now { at: Duration::from_millis(ms), unix_us: T0_US + ms as i64 * 1_000 }
}

fn pod(policy: &str, annotations: Value) -> Value {
    json!({
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "annotations": annotations},
        "spec": {"restartPolicy": policy, "nodeName": "node-1", "containers": [{"name": "c", "image": "nginx:1.27"}]},
        "status": {"phase": "Pending"},
    })
}

fn machine(pod: &Value) -> PodMachine {
    PodMachine::new(pod, "10.0.0.1", Some("10.244.1.2".into()), 7, at_ms(0))
}

/// Writes every pending status (acknowledged) and returns the last one written.
fn flush(m: &mut PodMachine, now: Now) -> Option<Value> {
    let mut last = None;
    while let Some(w) = m.pending_write(now) {
        m.written(&w);
        match w {
            Write::Status(s) => last = Some(s),
            Write::Delete => break,
        }
    }
    last
}

/// Runs the machine deadline by deadline up to `until_ms`, returning the last status written.
fn run_until(m: &mut PodMachine, until_ms: u64) -> Option<Value> {
    let mut last = flush(m, at_ms(0));
    while let Some(d) = m.next_deadline().filter(|d| *d <= Duration::from_millis(until_ms)) {
        let now = Now { at: d, unix_us: T0_US + d.as_micros() as i64 };
        m.advance(now);
        last = flush(m, now).or(last);
    }
    last
}

fn condition<'a>(status: &'a Value, kind: &str) -> &'a Value {
    status["conditions"].as_array().unwrap().iter().find(|c| c["type"] == kind).unwrap()
}

#[test]
fn an_admitted_pod_is_pending_then_runs_and_is_ready() {
    let mut m = machine(&pod("Always", json!({})));
    let Some(Write::Status(s)) = m.pending_write(at_ms(0)) else { panic!("the admission status") };
    assert_eq!(s["phase"], "Pending");
    assert_eq!(s["startTime"], "2023-11-14T22:13:20Z");
    assert_eq!(s["hostIP"], "10.0.0.1");
    assert!(s.get("podIP").is_none(), "no IP before the sandbox");
    assert_eq!(s["containerStatuses"][0]["state"]["waiting"]["reason"], "ContainerCreating");
    assert_eq!(condition(&s, "PodReadyToStartContainers")["status"], "False");
    assert_eq!(condition(&s, "Ready")["message"], "containers with unready status: [c]");
    m.written(&Write::Status(s));
    let start = m.next_deadline().expect("a start deadline");
    assert!((Duration::from_millis(20)..=Duration::from_millis(200)).contains(&start), "{start:?}");
    m.advance(Now { at: start - Duration::from_millis(1), unix_us: T0_US });
    assert_eq!(m.pending_write(at_ms(0)), None, "nothing before the deadline");
    let s = run_until(&mut m, 10_000).expect("the running status");
    assert_eq!(s["phase"], "Running");
    assert_eq!((s["podIP"].clone(), s["podIPs"].clone()), (json!("10.244.1.2"), json!([{"ip": "10.244.1.2"}])));
    let c = &s["containerStatuses"][0];
    assert_eq!(
        (c["ready"].clone(), c["started"].clone(), c["restartCount"].clone()),
        (json!(true), json!(true), json!(0))
    );
    assert!(c["containerID"].as_str().unwrap().starts_with("containerd://"));
    assert_eq!(c["containerID"].as_str().unwrap().len(), "containerd://".len() + 64);
    assert!(c["imageID"].as_str().unwrap().starts_with("docker.io/library/nginx@sha256:"));
    assert!(c["state"]["running"]["startedAt"].is_string());
    for kind in ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"] {
        assert_eq!(condition(&s, kind)["status"], "True", "{kind}");
    }
    assert_eq!(m.next_deadline(), None, "a running Always pod has nothing more to do");
}

#[test]
fn readiness_waits_for_the_probes_initial_delay() {
    let mut p = pod("Always", json!({}));
    p["spec"]["containers"][0]["readinessProbe"] = json!({"initialDelaySeconds": 5});
    let mut m = machine(&p);
    flush(&mut m, at_ms(0));
    let start = m.next_deadline().unwrap();
    let now = Now { at: start, unix_us: T0_US };
    m.advance(now);
    let s = flush(&mut m, now).unwrap();
    assert_eq!((s["phase"].clone(), s["containerStatuses"][0]["ready"].clone()), (json!("Running"), json!(false)));
    assert_eq!(condition(&s, "Ready")["reason"], "ContainersNotReady");
    assert_eq!(m.next_deadline(), Some(start + Duration::from_secs(5)));
    let s = run_until(&mut m, 60_000).unwrap();
    assert_eq!(condition(&s, "Ready")["status"], "True");
}

#[test]
fn init_containers_run_in_order_before_the_containers() {
    let mut p = pod("Always", json!({}));
    p["spec"]["initContainers"] = json!([{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]);
    let mut m = machine(&p);
    let s = flush(&mut m, at_ms(0)).unwrap();
    assert_eq!(s["containerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing");
    assert_eq!(condition(&s, "Initialized")["message"], "containers with incomplete status: [a b]");
    // The sandbox: `a` runs.
    let d = m.next_deadline().unwrap();
    m.advance(Now { at: d, unix_us: T0_US });
    let s = flush(&mut m, at_ms(0)).unwrap();
    assert_eq!(s["phase"], "Pending");
    assert!(s["initContainerStatuses"][0]["state"]["running"].is_object());
    assert!(s["initContainerStatuses"][1]["state"]["waiting"].is_object());
    // `a` done: `b` runs.
    let d = m.next_deadline().unwrap();
    m.advance(Now { at: d, unix_us: T0_US });
    let s = flush(&mut m, at_ms(0)).unwrap();
    assert_eq!(s["initContainerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
    assert_eq!(s["initContainerStatuses"][0]["ready"], true);
    assert!(s["initContainerStatuses"][1]["state"]["running"].is_object());
    assert_eq!(condition(&s, "Initialized")["message"], "containers with incomplete status: [b]");
    let s = run_until(&mut m, 10_000).unwrap();
    assert_eq!(s["phase"], "Running");
    assert_eq!(condition(&s, "Initialized")["status"], "True");
}

#[test]
fn run_to_completion_pods_end_by_their_policy_and_exit_code() {
    // (policy, annotations, phase, exit code, reason, restarts, finished at (ms after the start))
    let cases = [
        ("Never", json!({RUN_SECONDS: "0.2"}), "Succeeded", 0, "Completed", 0, Some(200)),
        ("Never", json!({RUN_SECONDS: "1.5", EXIT_CODE: "3"}), "Failed", 3, "Error", 0, Some(1_500)),
        ("OnFailure", json!({RUN_SECONDS: "0.5"}), "Succeeded", 0, "Completed", 0, Some(500)),
        ("Never", json!({EXIT_CODE: "3"}), "Failed", 3, "Error", 0, None),
    ];
    for (policy, annotations, phase, code, reason, restarts, finished_ms) in cases {
        let mut m = machine(&pod(policy, annotations.clone()));
        flush(&mut m, at_ms(0));
        let start = m.next_deadline().unwrap();
        let s = run_until(&mut m, 10_000).unwrap();
        let what = format!("{policy} {annotations}");
        assert_eq!(s["phase"], phase, "{what}");
        let t = &s["containerStatuses"][0]["state"]["terminated"];
        assert_eq!((t["exitCode"].clone(), t["reason"].clone()), (json!(code), json!(reason)), "{what}");
        assert_eq!(s["containerStatuses"][0]["restartCount"], restarts, "{what}");
        assert_eq!(condition(&s, "Ready")["reason"], if code == 0 { "PodCompleted" } else { "PodFailed" });
        assert_eq!(condition(&s, "PodReadyToStartContainers")["status"], "False", "the sandbox is gone");
        assert_eq!(m.next_deadline(), None, "{what}");
        assert!(m.released());
        assert_eq!(m.pending_write(at_ms(100_000)), None, "a finished pod is not deleted by the node: {what}");
        match finished_ms {
            // The drawn run time lies in its range.
            None => {}
            Some(ms) => {
                let finished = crate::runtime::time::parse_time_us(t["finishedAt"].as_str().unwrap()).unwrap();
                let expected = T0_US + (start + Duration::from_millis(ms)).as_micros() as i64;
                assert_eq!(finished.div_euclid(1_000_000), expected.div_euclid(1_000_000), "{what}");
            }
        }
    }
}

#[test]
fn on_failure_restarts_at_once_then_backs_off() {
    let mut m = machine(&pod("OnFailure", json!({RUN_SECONDS: "1", EXIT_CODE: "2"})));
    flush(&mut m, at_ms(0));
    let start = m.next_deadline().unwrap();
    // First failure at start + 1 s: restarted at once.
    let s = run_until(&mut m, (start + Duration::from_millis(1_000)).as_millis() as u64).unwrap();
    let c = &s["containerStatuses"][0];
    assert_eq!(s["phase"], "Running");
    assert_eq!((c["restartCount"].clone(), c["lastState"]["terminated"]["exitCode"].clone()), (json!(1), json!(2)));
    assert!(c["state"]["running"].is_object());
    // Second failure at start + 2 s: waits 10 s in CrashLoopBackOff.
    let s = run_until(&mut m, (start + Duration::from_millis(2_000)).as_millis() as u64).unwrap();
    let c = &s["containerStatuses"][0];
    assert_eq!((s["phase"].clone(), c["restartCount"].clone()), (json!("Running"), json!(2)));
    assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(c["state"]["waiting"]["message"], "back-off 10s restarting failed container=c pod=p_ns(u1)");
    assert_eq!(m.next_deadline(), Some(start + Duration::from_secs(12)));
    let s = run_until(&mut m, (start + Duration::from_secs(12)).as_millis() as u64).unwrap();
    assert!(s["containerStatuses"][0]["state"]["running"].is_object());
}

#[test]
fn graceful_deletion_stops_within_the_grace_period_then_deletes() {
    // (annotations, grace seconds, stop after (ms, None = drawn), exit code, phase)
    let cases = [
        (json!({SHUTDOWN_SECONDS: "2"}), 30, Some(2_000), 0, "Succeeded"),
        (json!({SHUTDOWN_SECONDS: "10"}), 3, Some(3_000), 137, "Failed"),
        (json!({SHUTDOWN_SECONDS: "0.5"}), 0, Some(0), 137, "Failed"),
        (json!({}), 30, None, 0, "Succeeded"),
    ];
    for (annotations, grace, stop_ms, code, phase) in cases {
        let mut p = pod("Always", annotations.clone());
        let mut m = machine(&p);
        let _ = run_until(&mut m, 1_000);
        p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:21Z");
        p["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
        m.observe(&p, at_ms(1_000));
        let stop = m.next_deadline().expect("a stop deadline") - Duration::from_millis(1_000);
        match stop_ms {
            Some(ms) => assert_eq!(stop, Duration::from_millis(ms), "{annotations}"),
            None => assert!((Duration::from_millis(10)..=Duration::from_millis(300)).contains(&stop), "{stop:?}"),
        }
        let now = Now { at: Duration::from_millis(1_000) + stop, unix_us: T0_US };
        m.advance(now);
        let Some(Write::Status(s)) = m.pending_write(now) else { panic!("the terminal status first") };
        assert_eq!(s["phase"], phase, "{annotations}");
        assert_eq!(s["containerStatuses"][0]["state"]["terminated"]["exitCode"], code, "{annotations}");
        assert_eq!(s["containerStatuses"][0]["ready"], false);
        m.written(&Write::Status(s));
        assert_eq!(m.pending_write(now), Some(Write::Delete), "then the deletion");
        m.written(&Write::Delete);
        assert_eq!(m.pending_write(now), None);
    }
}

#[test]
fn a_smaller_grace_period_shortens_the_shutdown() {
    let mut p = pod("Always", json!({SHUTDOWN_SECONDS: "20"}));
    let mut m = machine(&p);
    let _ = run_until(&mut m, 1_000);
    p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:21Z");
    p["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    m.observe(&p, at_ms(1_000));
    assert_eq!(m.next_deadline(), Some(Duration::from_secs(21)));
    p["metadata"]["deletionGracePeriodSeconds"] = json!(5);
    m.observe(&p, at_ms(2_000));
    assert_eq!(m.next_deadline(), Some(Duration::from_secs(7)));
}

#[test]
fn a_pod_deleted_before_it_started_or_after_it_finished_is_deleted_at_once() {
    let mut p = pod("Always", json!({}));
    p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:21Z");
    p["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    let m = machine(&p);
    assert_eq!(m.pending_write(at_ms(0)), Some(Write::Delete), "never started: no status, just the deletion");

    let mut p = pod("Never", json!({RUN_SECONDS: "0.1"}));
    let mut m = machine(&p);
    let _ = run_until(&mut m, 5_000);
    p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:21Z");
    m.observe(&p, at_ms(5_000));
    assert_eq!(m.pending_write(at_ms(5_000)), Some(Write::Delete));

    let mut p = pod("Never", json!({}));
    p["status"]["phase"] = json!("Succeeded");
    let m = machine(&p);
    assert_eq!(m.pending_write(at_ms(0)), None, "a finished pod taken over is left as it is");
}

#[test]
fn a_failed_write_is_retried_a_second_later() {
    let mut m = machine(&pod("Always", json!({})));
    m.write_failed(at_ms(0));
    assert_eq!(m.pending_write(at_ms(500)), None);
    assert!(m.next_deadline().unwrap() <= Duration::from_millis(1_000));
    assert!(matches!(m.pending_write(at_ms(1_000)), Some(Write::Status(_))));
}

#[test]
fn a_running_pod_taken_over_keeps_its_containers() {
    let mut p = pod("Always", json!({}));
    p["status"] = json!({
        "phase": "Running",
        "startTime": "2023-11-14T22:00:00Z",
        "containerStatuses": [{"name": "c", "containerID": "containerd://old", "restartCount": 4,
            "state": {"running": {"startedAt": "2023-11-14T22:00:01Z"}}}],
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:00:02Z"}],
    });
    let m = machine(&p);
    assert_eq!(m.pending_write(at_ms(0)), None, "nothing changed");
    let s = m.status();
    assert_eq!(s["phase"], "Running");
    assert_eq!(s["startTime"], "2023-11-14T22:00:00Z");
    assert_eq!(s["containerStatuses"][0]["containerID"], "containerd://old");
    assert_eq!(s["containerStatuses"][0]["restartCount"], 4);
    assert_eq!(condition(&s, "Ready")["lastTransitionTime"], "2023-11-14T22:00:02Z");
}

#[test]
fn image_ids_are_normalized_and_stable() {
    let cases = [
        ("nginx:1.27", "docker.io/library/nginx@sha256:"),
        ("bitnami/redis", "docker.io/bitnami/redis@sha256:"),
        ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause@sha256:"),
        ("localhost:5000/app:v1", "localhost:5000/app@sha256:"),
    ];
    for (image, prefix) in cases {
        let id = image_id(image);
        assert!(id.starts_with(prefix), "{image}: {id}");
        assert_eq!(id.len(), prefix.len() + 64, "{image}");
        assert_eq!(id, image_id(image));
    }
    assert_ne!(image_id("nginx:1"), image_id("nginx:2"));
}
