//! End to end: the CronJob controller against a real apiserver in this process, on a fast clock. The
//! controller's `now_unix_us` runs [`SPEEDUP`] times faster than tokio's clock (from the apiserver's
//! 2023-11-14T22:13:20Z), and the controller divides its waits by the same factor, so a simulated minute
//! passes in two seconds. No Job controller runs: the test finishes Jobs itself by writing a `Complete`
//! condition through `jobs/NAME/status`.
//!
//! A `*/1` CronJob makes one Job per minute named by the minute (`tick-28333334` for 22:14), stamped with
//! the scheduled time, owned by the CronJob, listed as active with `lastScheduleTime`; completed Jobs leave
//! the active list, set `lastSuccessfulTime`, and all but the newest (`successfulJobsHistoryLimit: 1`) are
//! deleted; once suspended it makes no more. Under `concurrencyPolicy: Forbid` a running Job blocks the
//! next activations (`JobAlreadyActive`) until it completes.
//!
//! The fast clock is built here (support.rs's clock advances only per reading).
#![cfg(not(madsim))]

use crate::support::{self, eventually, items, name, NOW_UNIX_S};

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::registry::system::rfc3339;
use controllers::client::{Client, MERGE_PATCH};
use controllers::kcm::cronjob::{self, Options};
use controllers::runtime::events::Recorder;
use serde_json::{json, Value};

/// Simulated seconds per real second: a minute in two seconds.
const SPEEDUP: u32 = 30;
/// 2023-11-14T22:14:00Z, the first activation of a `*/1` CronJob created at 22:13:20, in minutes.
const FIRST_MINUTE: i64 = (NOW_UNIX_S + 40) / 60;
const STAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// A clock that starts at the apiserver's instant and runs [`SPEEDUP`] times faster than tokio's, plus a
/// microsecond per reading so that events (named after their instant) never collide.
fn fast_clock() -> Arc<dyn Fn() -> i64 + Send + Sync> {
    let origin = tokio::time::Instant::now();
    let tick = AtomicI64::new(0);
    Arc::new(move || {
        let elapsed_us = i64::try_from(origin.elapsed().as_micros()).expect("a short test");
        NOW_UNIX_S * 1_000_000 + elapsed_us * i64::from(SPEEDUP) + tick.fetch_add(1, Ordering::SeqCst)
    })
}

async fn start(test: &str, ns: &str) -> (Arc<Client>, tokio::task::JoinHandle<()>) {
    let (client, mut ctx) = support::context(test, cronjob::DESCRIPTOR.name).await;
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": ns}})).await.expect("the namespace is created");
    let clock = fast_clock();
    ctx.events = Recorder::new(client.clone(), cronjob::DESCRIPTOR.name, clock.clone());
    ctx.now_unix_us = clock;
    let options = Options { clock_speedup: SPEEDUP, ..Options::default() };
    (client, tokio::spawn(cronjob::run_with(ctx, options)))
}

fn a_cronjob(name: &str, spec: Value) -> Value {
    let mut cj = json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "*/1 * * * *",
            "jobTemplate": {
                "metadata": {"labels": {"app": name}},
                "spec": {"template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }}},
            },
        },
    });
    if let (Some(target), Value::Object(extra)) = (cj["spec"].as_object_mut(), spec) {
        target.extend(extra);
    }
    cj
}

fn cj_path(ns: &str, name: &str) -> String {
    format!("/apis/batch/v1/namespaces/{ns}/cronjobs/{name}")
}

/// The Jobs of the namespace, by name.
async fn job_names(client: &Client, ns: &str) -> Vec<String> {
    let mut names: Vec<String> =
        items(client, &format!("/apis/batch/v1/namespaces/{ns}/jobs")).await.iter().map(name).collect();
    names.sort();
    names
}

/// The minute a Job of `cronjob` is named after.
fn minute_of(cronjob: &str, job: &str) -> i64 {
    job.strip_prefix(&format!("{cronjob}-")).and_then(|m| m.parse().ok()).expect("a Job named by its minute")
}

/// Plays the Job controller: the Job ran and completed five seconds after its scheduled minute.
async fn complete(client: &Client, ns: &str, job: &str) {
    let path = format!("/apis/batch/v1/namespaces/{ns}/jobs/{job}");
    let mut fresh = client.get(&path).await.expect("the Job exists");
    let at = rfc3339(minute_of(job.rsplit_once('-').expect("a dash").0, job) * 60 + 5);
    fresh["status"] = json!({
        "startTime": at, "completionTime": at, "succeeded": 1,
        "conditions": [{"type": "Complete", "status": "True", "lastProbeTime": at, "lastTransitionTime": at}],
    });
    client.update(&format!("{path}/status"), &fresh).await.expect("the Job's status is written");
}

/// The messages of the events with `reason` about the CronJob `cj`.
async fn event_messages(client: &Client, ns: &str, cj: &str, reason: &str) -> Vec<String> {
    items(client, &format!("/api/v1/namespaces/{ns}/events"))
        .await
        .into_iter()
        .filter(|e| {
            e["involvedObject"]["name"] == cj && e["involvedObject"]["kind"] == "CronJob" && e["reason"] == reason
        })
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn active_names(cj: &Value) -> Vec<String> {
    cj["status"]["active"]
        .as_array()
        .map(|a| a.iter().map(|r| r["name"].as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cronjob_runs_every_minute_keeps_its_history_and_suspends() {
    const NS: &str = "cronjob-e2e";
    let (client, controller) = start("cronjob-e2e", NS).await;
    let spec = json!({"successfulJobsHistoryLimit": 1});
    let cj = client
        .create(&format!("/apis/batch/v1/namespaces/{NS}/cronjobs"), &a_cronjob("tick", spec))
        .await
        .expect("the CronJob is created");
    let first = format!("tick-{FIRST_MINUTE}");
    let second = format!("tick-{}", FIRST_MINUTE + 1);

    // The first minute's Job: named by the minute, stamped, labelled from the template, owned.
    let job = eventually("the first Job", || async {
        client.get(&format!("/apis/batch/v1/namespaces/{NS}/jobs/{first}")).await.map_err(|e| e.to_string())
    })
    .await;
    assert_eq!(job["metadata"]["annotations"][STAMP], "2023-11-14T22:14:00Z");
    assert_eq!(job["metadata"]["labels"]["app"], "tick");
    let owner = &job["metadata"]["ownerReferences"][0];
    assert_eq!((owner["kind"].as_str(), owner["uid"].clone()), (Some("CronJob"), cj["metadata"]["uid"].clone()));
    assert_eq!((owner["controller"].as_bool(), owner["blockOwnerDeletion"].as_bool()), (Some(true), Some(true)));

    // Allow: the next minute's Job runs beside it; both are active and the last schedule time moves on.
    let status = eventually("two active Jobs", || async {
        let cj = client.get(&cj_path(NS, "tick")).await.map_err(|e| e.to_string())?;
        let active = active_names(&cj);
        let last = cj["status"]["lastScheduleTime"].as_str().unwrap_or("").to_string();
        if active.contains(&first) && active.contains(&second) && last.as_str() >= "2023-11-14T22:15:00Z" {
            Ok(cj)
        } else {
            Err(format!("active {active:?}, last schedule {last}"))
        }
    })
    .await;
    assert_eq!(status["status"]["active"][0]["kind"], "Job");
    assert_eq!(status["status"]["active"][0]["uid"], job["metadata"]["uid"]);
    let created = event_messages(&client, NS, "tick", "SuccessfulCreate").await;
    assert!(created.contains(&format!("Created job {first}")), "{created:?}");

    // Both complete: they leave the active list, the older one goes past the history limit of one.
    complete(&client, NS, &first).await;
    complete(&client, NS, &second).await;
    eventually("the older completed Job deleted", || async {
        let names = job_names(&client, NS).await;
        let cj = client.get(&cj_path(NS, "tick")).await.map_err(|e| e.to_string())?;
        let active = active_names(&cj);
        let last_success = cj["status"]["lastSuccessfulTime"].as_str().unwrap_or("");
        if !names.contains(&first)
            && names.contains(&second)
            && !active.contains(&second)
            && last_success == "2023-11-14T22:15:05Z"
        {
            Ok(())
        } else {
            Err(format!("jobs {names:?}, active {active:?}, last success {last_success:?}"))
        }
    })
    .await;
    let saw = event_messages(&client, NS, "tick", "SawCompletedJob").await;
    assert!(saw.contains(&format!("Saw completed job: {first}, condition: Complete")), "{saw:?}");
    let deleted = event_messages(&client, NS, "tick", "SuccessfulDelete").await;
    assert!(deleted.contains(&format!("Deleted job {first}")), "{deleted:?}");

    // Suspended, it makes no more Jobs (one already under way when the patch lands may still appear).
    client.patch(&cj_path(NS, "tick"), &json!({"spec": {"suspend": true}}), MERGE_PATCH).await.expect("suspended");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = job_names(&client, NS).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(job_names(&client, NS).await, before, "no Job while suspended");
    controller.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbid_waits_for_the_running_job() {
    const NS: &str = "cronjob-e2e-forbid";
    let (client, controller) = start("cronjob-e2e-forbid", NS).await;
    let spec = json!({"concurrencyPolicy": "Forbid"});
    client
        .create(&format!("/apis/batch/v1/namespaces/{NS}/cronjobs"), &a_cronjob("solo", spec))
        .await
        .expect("the CronJob is created");
    let first = format!("solo-{FIRST_MINUTE}");
    eventually("the first Job", || async {
        let names = job_names(&client, NS).await;
        if names == [first.clone()] {
            Ok(())
        } else {
            Err(format!("jobs {names:?}"))
        }
    })
    .await;
    // The next minute comes and goes: the running Job blocks it.
    let blocked = eventually("a blocked activation", || async {
        let messages = event_messages(&client, NS, "solo", "JobAlreadyActive").await;
        messages.first().cloned().ok_or_else(|| "no JobAlreadyActive event yet".to_string())
    })
    .await;
    assert_eq!(blocked, "Not starting job because prior execution is running and concurrency policy is Forbid");
    assert_eq!(job_names(&client, NS).await, std::slice::from_ref(&first), "no second Job while the first runs");

    // Once it completes, the next activation starts a Job again.
    complete(&client, NS, &first).await;
    let names = eventually("a second Job", || async {
        let names = job_names(&client, NS).await;
        if names.len() == 2 {
            Ok(names)
        } else {
            Err(format!("jobs {names:?}"))
        }
    })
    .await;
    // The most recent activation not run yet: the blocked one, if it is still the latest.
    assert!(minute_of("solo", &names[1]) > FIRST_MINUTE, "a later minute than the first: {names:?}");
    controller.abort();
}
