//! End to end: the TTL-after-finished controller with the Job controller, the scheduler and a simulated
//! node against a real apiserver in this process. A Job with `ttlSecondsAfterFinished: 1` whose pod runs
//! for 0.2 s completes and is deleted about a second after its `Complete` condition's time; a Job without
//! the field stays. The controllers here stamp and read time from a clock that follows tokio's (the real
//! one in this test), since a TTL is measured against the time of day.
#![cfg(not(madsim))]

use crate::support::{self, condition, eventually, NOW_UNIX_S};

use std::sync::Arc;
use std::time::Duration;

use controllers::kcm::{job, ttlafterfinished, Context};
use controllers::nodes::{self, Fleet};
use controllers::runtime::time::parse_time_us;
use controllers::scheduler;
use serde_json::{json, Value};

const NS: &str = "ttl-e2e";

fn a_job(name: &str, ttl: Option<i64>) -> Value {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {
            "metadata": {"annotations": {"kubesim.io/run-seconds": "0.2"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
        }},
    });
    if let Some(ttl) = ttl {
        job["spec"]["ttlSecondsAfterFinished"] = json!(ttl);
    }
    job
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_jobs_are_deleted_after_their_ttl() {
    let (client, ctx) = support::context("ttl-e2e", ttlafterfinished::DESCRIPTOR.name).await;
    // The time of day moves with tokio's clock from the apiserver's instant.
    let origin = tokio::time::Instant::now();
    let clock: Arc<dyn Fn() -> i64 + Send + Sync> =
        Arc::new(move || NOW_UNIX_S * 1_000_000 + i64::try_from(origin.elapsed().as_micros()).unwrap_or(i64::MAX));
    let ctx = Context { now_unix_us: clock.clone(), ..ctx };
    client.create("/api/v1/namespaces", &json!({"metadata": {"name": NS}})).await.expect("the namespace is created");
    let account = json!({"metadata": {"name": "default"}});
    client.create(&format!("/api/v1/namespaces/{NS}/serviceaccounts"), &account).await.expect("the account is created");
    let context = |component: &str| Context { events: ctx.events.for_component(component), ..ctx.clone() };
    let tasks = vec![
        tokio::spawn(nodes::run(context("kubelet"), Fleet { first: 1, count: 2, template: Default::default() })),
        tokio::spawn(scheduler::run(context("default-scheduler"))),
        tokio::spawn(job::run(context(job::DESCRIPTOR.name))),
        tokio::spawn(ttlafterfinished::run(context(ttlafterfinished::DESCRIPTOR.name))),
    ];

    let jobs = format!("/apis/batch/v1/namespaces/{NS}/jobs");
    client.create(&jobs, &a_job("short-lived", Some(1))).await.expect("the Job is created");
    client.create(&jobs, &a_job("kept", None)).await.expect("the Job is created");

    // The Job completes; note when it says it did.
    let finished_us = eventually("the Job completes", || async {
        let job = client.get(&format!("{jobs}/short-lived")).await.map_err(|e| e.to_string())?;
        match condition(&job, "Complete") {
            Some(c) if c["status"] == "True" => Ok(parse_time_us(c["lastTransitionTime"].as_str().unwrap()).unwrap()),
            _ => Err(format!("status {}", job["status"])),
        }
    })
    .await;
    // Gone (or being deleted in the foreground) about a second later, not before.
    let gone_us = eventually("the Job is deleted", || async {
        match client.get(&format!("{jobs}/short-lived")).await {
            Err(e) if e.is_not_found() => Ok(clock()),
            Ok(job) if !job["metadata"]["deletionTimestamp"].is_null() => Ok(clock()),
            Ok(_) => Err("still there".to_string()),
            Err(e) => Err(e.to_string()),
        }
    })
    .await;
    let after = Duration::from_micros(u64::try_from(gone_us - finished_us).unwrap());
    assert!(after >= Duration::from_millis(950), "deleted only {after:?} after finishing");
    assert!(after < Duration::from_secs(5), "deleted {after:?} after finishing");

    // The Job without a TTL completes and stays.
    eventually("the other Job completes", || async {
        let job = client.get(&format!("{jobs}/kept")).await.map_err(|e| e.to_string())?;
        condition(&job, "Complete")
            .filter(|c| c["status"] == "True")
            .map(|_| ())
            .ok_or_else(|| format!("{}", job["status"]))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let kept = client.get(&format!("{jobs}/kept")).await.expect("the Job without a TTL stays");
    assert!(kept["metadata"]["deletionTimestamp"].is_null());

    for task in tasks {
        task.abort();
    }
}
