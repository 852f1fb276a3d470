//! End to end: the Job controller against a real apiserver in this process, on the manager's shared
//! informers. No kubelet runs, so the test plays it: it marks pods `Succeeded` or `Failed` through
//! `pods/NAME/status`. A Job of three completions, two at a time, gets two tracked pods; a success is
//! counted, its finalizer removed and a third pod made; three successes complete the Job. A Job whose pods
//! fail past `backoffLimit` fails with `BackoffLimitExceeded`. An Indexed Job's pods carry their indexes.
#![cfg(not(madsim))]

use crate::support::{self, condition, eventually, name};

use std::sync::Arc;

use controllers::client::Client;
use controllers::kcm::job;
use serde_json::{json, Value};

/// How long the controller may take to settle (pod changes reach it after a one-second batch period).
const NS: &str = "job-e2e";
const TRACKING: &str = "batch.kubernetes.io/job-tracking";
const INDEX: &str = "batch.kubernetes.io/job-completion-index";

async fn start(name: &str) -> (Arc<Client>, tokio::task::JoinHandle<()>) {
    let (client, ctx) = support::context(name, job::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    (client, tokio::spawn(job::run(ctx)))
}

fn a_job(name: &str, spec: Value) -> Value {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    });
    if let (Some(target), Value::Object(extra)) = (job["spec"].as_object_mut(), spec) {
        target.extend(extra);
    }
    job
}

fn job_path(name: &str) -> String {
    format!("/apis/batch/v1/namespaces/{NS}/jobs/{name}")
}

/// The pods labelled with the Job's name, in name order.
async fn pods_of(client: &Client, job: &str) -> Vec<Value> {
    let path = format!("/api/v1/namespaces/{NS}/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D{job}");
    let mut pods =
        client.get(&path).await.expect("the list is served")["items"].as_array().cloned().unwrap_or_default();
    pods.sort_by_key(name);
    pods
}

/// Plays the kubelet: the pod finished in `phase`, its container terminated an hour ago (so that no
/// failure backoff is left to wait out).
async fn finish(client: &Client, pod: &Value, phase: &str) {
    let path = format!("/api/v1/namespaces/{NS}/pods/{}/status", name(pod));
    let mut fresh = client.get(&format!("/api/v1/namespaces/{NS}/pods/{}", name(pod))).await.expect("the pod exists");
    let exit_code = if phase == "Succeeded" { 0 } else { 1 };
    fresh["status"] = json!({
        "phase": phase,
        "containerStatuses": [{
            "name": "c", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": exit_code, "reason": if exit_code == 0 { "Completed" } else { "Error" },
                "startedAt": "2023-11-14T21:10:00Z", "finishedAt": "2023-11-14T21:13:20Z"}},
        }],
    });
    client.update(&path, &fresh).await.expect("the pod status is written");
}

fn live(pods: &[Value]) -> Vec<Value> {
    pods.iter().filter(|p| p["metadata"].get("deletionTimestamp").is_none()).cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_run_count_complete_and_fail() {
    let (client, controller) = start("job-e2e").await;
    let jobs = format!("/apis/batch/v1/namespaces/{NS}/jobs");

    // Three completions, two at a time: two pods, tracked and owned.
    client.create(&jobs, &a_job("pi", json!({"completions": 3, "parallelism": 2}))).await.expect("the Job is created");
    let pods = eventually("two pods", || async {
        let pods = pods_of(&client, "pi").await;
        if pods.len() == 2 {
            Ok(pods)
        } else {
            Err(format!("{} pods", pods.len()))
        }
    })
    .await;
    let job = client.get(&job_path("pi")).await.expect("the Job exists");
    for pod in &pods {
        let owner = &pod["metadata"]["ownerReferences"][0];
        assert_eq!(
            (&owner["kind"], &owner["name"], &owner["uid"]),
            (&json!("Job"), &json!("pi"), &job["metadata"]["uid"])
        );
        assert_eq!(owner["blockOwnerDeletion"], true);
        assert_eq!(pod["metadata"]["generateName"], "pi-");
        assert_eq!(pod["metadata"]["finalizers"], json!([TRACKING]), "{pod}");
        let labels = &pod["metadata"]["labels"];
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], job["metadata"]["uid"]);
        assert_eq!(labels["controller-uid"], job["metadata"]["uid"]);
        assert_eq!(labels["job-name"], "pi");
    }
    let started = eventually("the status", || async {
        let job = client.get(&job_path("pi")).await.map_err(|e| e.to_string())?;
        if job["status"]["active"] == 2 && job["status"]["startTime"].is_string() {
            Ok(job)
        } else {
            Err(job["status"].to_string())
        }
    })
    .await;
    assert_eq!(started["status"]["ready"], 0);

    // One success: counted, its finalizer gone, a third pod made.
    finish(&client, &pods[0], "Succeeded").await;
    let third = eventually("the success counted and a third pod", || async {
        let job = client.get(&job_path("pi")).await.map_err(|e| e.to_string())?;
        let pods = pods_of(&client, "pi").await;
        let first = pods.iter().find(|p| p["status"]["phase"] == "Succeeded");
        let finalizer_gone = first.is_some_and(|p| {
            p["metadata"].get("finalizers").is_none_or(|f| f.as_array().is_some_and(|f| f.is_empty()))
        });
        if job["status"]["succeeded"] == 1 && finalizer_gone && pods.len() == 3 && job["status"]["active"] == 2 {
            Ok(pods)
        } else {
            Err(format!("status {}, {} pods", job["status"], pods.len()))
        }
    })
    .await;

    // All three succeed: the Job completes.
    for pod in third.iter().filter(|p| p["status"]["phase"] != "Succeeded") {
        finish(&client, pod, "Succeeded").await;
    }
    let done = eventually("the Job completing", || async {
        let job = client.get(&job_path("pi")).await.map_err(|e| e.to_string())?;
        match condition(&job, "Complete") {
            Some(c) if c["status"] == "True" => Ok(job),
            _ => Err(job["status"].to_string()),
        }
    })
    .await;
    assert_eq!(done["status"]["succeeded"], 3);
    assert_eq!(done["status"]["active"], 0);
    assert!(done["status"]["completionTime"].is_string(), "{}", done["status"]);
    assert_eq!(condition(&done, "SuccessCriteriaMet").map(|c| c["reason"].clone()), Some(json!("CompletionsReached")));
    for pod in pods_of(&client, "pi").await {
        assert!(pod["metadata"].get("finalizers").is_none_or(|f| f.as_array().is_some_and(|f| f.is_empty())), "{pod}");
    }

    // Two failures past a backoff limit of one: the Job fails.
    let failing = json!({"completions": 2, "parallelism": 2, "backoffLimit": 1});
    client.create(&jobs, &a_job("flaky", failing)).await.expect("the Job is created");
    let pods = eventually("two pods", || async {
        let pods = pods_of(&client, "flaky").await;
        if pods.len() == 2 {
            Ok(pods)
        } else {
            Err(format!("{} pods", pods.len()))
        }
    })
    .await;
    for pod in &pods {
        finish(&client, pod, "Failed").await;
    }
    let failed = eventually("the Job failing", || async {
        let job = client.get(&job_path("flaky")).await.map_err(|e| e.to_string())?;
        match condition(&job, "Failed") {
            Some(c) if c["status"] == "True" => Ok(job),
            _ => Err(job["status"].to_string()),
        }
    })
    .await;
    let c = condition(&failed, "Failed").expect("just found");
    assert_eq!(
        (&c["reason"], &c["message"]),
        (&json!("BackoffLimitExceeded"), &json!("Job has reached the specified backoff limit"))
    );
    assert_eq!(condition(&failed, "FailureTarget").map(|c| c["reason"].clone()), Some(json!("BackoffLimitExceeded")));
    assert!(failed["status"]["failed"].as_i64().unwrap_or(0) >= 2, "{}", failed["status"]);
    assert!(live(&pods_of(&client, "flaky").await).iter().all(|p| p["status"]["phase"] == "Failed"));

    // An Indexed Job: each pod carries its index.
    let indexed = json!({"completions": 3, "parallelism": 3, "completionMode": "Indexed"});
    client.create(&jobs, &a_job("ix", indexed)).await.expect("the Job is created");
    let pods = eventually("three indexed pods", || async {
        let pods = pods_of(&client, "ix").await;
        if pods.len() == 3 {
            Ok(pods)
        } else {
            Err(format!("{} pods", pods.len()))
        }
    })
    .await;
    let mut seen: Vec<(String, String, String, String)> = pods
        .iter()
        .map(|p| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                s(&p["metadata"]["annotations"][INDEX]),
                s(&p["metadata"]["labels"][INDEX]),
                s(&p["spec"]["hostname"]),
                s(&p["metadata"]["generateName"]),
            )
        })
        .collect();
    seen.sort();
    let want: Vec<(String, String, String, String)> =
        (0..3).map(|i| (i.to_string(), i.to_string(), format!("ix-{i}"), format!("ix-{i}-"))).collect();
    assert_eq!(seen, want);
    controller.abort();
}
