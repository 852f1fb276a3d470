//! One sync of one CronJob (`sync`, `syncCronJob`, `cleanupFinishedJobs`, `deleteJob` of
//! `pkg/controller/cronjob/cronjob_controllerv2.go`, 1.32): account for its Jobs (a finished one leaves
//! `status.active` with `SawCompletedJob`, a successful one moves `lastSuccessfulTime`, an unknown running
//! one is reported as `UnexpectedJob`, an active one that is gone as `MissingJob`), then act on
//! [`decide`]'s verdict (delete the active Jobs for `Replace`, create the activation's Job and list it as
//! active with `lastScheduleTime`), trim the finished Jobs to the history limits, write the status once
//! through `/status`, and requeue for the next activation.
//!
//! The Jobs a CronJob reconciles are those whose controller reference names it by UID (upstream matches by
//! name; a UID cannot adopt the Jobs of an earlier CronJob of the same name).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use apiserver::registry::system::rfc3339;
use serde_json::{json, Value};

use super::decide::{self, Verdict};
use super::jobs::{self, controller_of, finished_condition, job_from_template, job_reference};
use super::timing::next_schedule_time_duration;
use crate::client::resource::builtin;
use crate::client::{Client, ClientError};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::time::parse_time_us;
use crate::runtime::worker::Outcome;

/// The controller's state shared by its workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub cron_jobs: Informer,
    pub jobs: Informer,
    pub events: Recorder,
    pub now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// How many times faster `now_unix_us` runs than tokio's clock (1 but in tests): waits computed on the
    /// former are divided by it before they are waited out on the latter.
    pub clock_speedup: u32,
}

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn uid(obj: &Value) -> &str {
    str_at(obj, "/metadata/uid")
}

fn in_active(cronjob: &Value, job_uid: &str) -> bool {
    decide::active(cronjob).iter().any(|r| r["uid"] == job_uid)
}

fn remove_from_active(cronjob: &mut Value, job_uid: &str) {
    if let Some(active) = cronjob.pointer_mut("/status/active").and_then(Value::as_array_mut) {
        active.retain(|r| r["uid"] != job_uid);
    }
}

/// The status object of `cronjob`, made if absent.
fn status_mut(cronjob: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !cronjob["status"].is_object() {
        cronjob["status"] = json!({});
    }
    cronjob["status"].as_object_mut().expect("just made an object")
}

/// Whether the error says the namespace is being terminated (`NamespaceTerminatingCause`).
fn namespace_terminating(err: &ClientError) -> bool {
    match err {
        ClientError::Status { status, .. } => status
            .details
            .as_ref()
            .and_then(|d| d.causes.as_ref())
            .is_some_and(|causes| causes.iter().any(|c| c.reason.as_deref() == Some("NamespaceTerminating"))),
        _ => false,
    }
}

impl Controller {
    /// `sync`: reconciles the CronJob at `key` (`namespace/name`).
    pub async fn sync(&self, key: String) -> Result<Outcome, ClientError> {
        let Some(cronjob) = self.cron_jobs.get(&key) else { return Ok(Outcome::Done) };
        let namespace = str_at(&cronjob, "/metadata/namespace").to_string();
        let owned: Vec<Value> = self
            .jobs
            .list_namespace(&namespace)
            .into_iter()
            .filter(|j| controller_of(j).is_some_and(|r| r["kind"] == "CronJob" && r["uid"] == uid(&cronjob)))
            .collect();
        let mut cronjob = cronjob;
        let mut update_status = false;
        let requeue = match self.sync_cron_job(&mut cronjob, &owned, &mut update_status).await {
            Ok(requeue) => requeue,
            Err(err) => {
                if update_status {
                    self.update_status(&cronjob).await?;
                }
                return Err(err);
            }
        };
        if self.cleanup_finished_jobs(&mut cronjob, &owned).await {
            update_status = true;
        }
        if update_status {
            self.update_status(&cronjob).await?;
        }
        Ok(match requeue {
            Some(after) => Outcome::RequeueAfter(after / self.clock_speedup.max(1)),
            None => Outcome::Done,
        })
    }

    async fn update_status(&self, cronjob: &Value) -> Result<(), ClientError> {
        let path = builtin::cron_jobs().subresource_path(
            Some(str_at(cronjob, "/metadata/namespace")),
            str_at(cronjob, "/metadata/name"),
            "status",
        );
        self.client.update(&path, cronjob).await.map(|_| ())
    }

    async fn record(&self, cronjob: &Value, kind: EventType, reason: &str, message: &str) {
        let mut about = cronjob.clone();
        about["kind"] = json!("CronJob");
        about["apiVersion"] = json!("batch/v1");
        self.events.record(&about, kind, reason, message).await;
    }

    async fn get_job(&self, namespace: &str, name: &str) -> Result<Value, ClientError> {
        self.client.get(&builtin::jobs().object_path(Some(namespace), name)).await
    }

    /// `syncCronJob`: updates `cronjob` in place; `update_status` says whether its status changed.
    async fn sync_cron_job(
        &self,
        cronjob: &mut Value,
        owned: &[Value],
        update_status: &mut bool,
    ) -> Result<Option<Duration>, ClientError> {
        let now_us = (self.now_unix_us)();
        let namespace = str_at(cronjob, "/metadata/namespace").to_string();
        let mut children = BTreeSet::new();
        for job in owned {
            children.insert(uid(job).to_string());
            let found = in_active(cronjob, uid(job));
            let finished = finished_condition(job);
            if !found && finished.is_none() {
                // Our status may be older than the Job: read the CronJob itself before calling it unknown.
                let path = builtin::cron_jobs().object_path(Some(&namespace), str_at(cronjob, "/metadata/name"));
                let fresh = self.client.get(&path).await?;
                if in_active(&fresh, uid(job)) {
                    *cronjob = fresh;
                    continue;
                }
                let message = format!("Saw a job that the controller did not create or forgot: {}", jobs_name(job));
                self.record(cronjob, EventType::Warning, "UnexpectedJob", &message).await;
            } else if let (true, Some(condition)) = (found, finished) {
                remove_from_active(cronjob, uid(job));
                let message = format!("Saw completed job: {}, condition: {condition}", jobs_name(job));
                self.record(cronjob, EventType::Normal, "SawCompletedJob", &message).await;
                *update_status = true;
            } else if jobs::succeeded(job) {
                // A successful Job need not be active for its completion to count.
                let completion = job.pointer("/status/completionTime").filter(|v| v.is_string()).cloned();
                let last = cronjob.pointer("/status/lastSuccessfulTime").and_then(Value::as_str).map(parse_time_us);
                let completion_us = completion.as_ref().and_then(Value::as_str).and_then(parse_time_us);
                match (last, completion) {
                    (None, completion) => {
                        if let Some(completion) = completion {
                            status_mut(cronjob).insert("lastSuccessfulTime".into(), completion);
                        }
                        *update_status = true;
                    }
                    (Some(last_us), Some(completion)) if completion_us > last_us => {
                        status_mut(cronjob).insert("lastSuccessfulTime".into(), completion);
                        *update_status = true;
                    }
                    _ => {}
                }
            }
        }
        // An active Job that is gone would keep the CronJob active forever: drop it, after asking the
        // apiserver rather than trusting a possibly slow cache.
        for reference in decide::active(cronjob).to_vec() {
            let ref_uid = reference["uid"].as_str().unwrap_or("");
            if children.contains(ref_uid) {
                continue;
            }
            let ref_name = reference["name"].as_str().unwrap_or("");
            match self.get_job(reference["namespace"].as_str().unwrap_or(&namespace), ref_name).await {
                Err(err) if err.is_not_found() => {
                    let message = format!("Active job went missing: {ref_name}");
                    self.record(cronjob, EventType::Normal, "MissingJob", &message).await;
                    remove_from_active(cronjob, ref_uid);
                    *update_status = true;
                }
                Err(err) => return Err(err),
                Ok(_) => {}
            }
        }
        if cronjob.pointer("/metadata/deletionTimestamp").is_some_and(|v| !v.is_null()) {
            return Ok(None);
        }
        let decision = decide::decide(cronjob, now_us);
        for note in &decision.notes {
            self.record(cronjob, note.kind, note.reason, &note.message).await;
        }
        let (scheduled_s, zone, replace, schedule) = match decision.verdict {
            Verdict::Wait(after) => return Ok(after),
            Verdict::Start { scheduled_s, zone, replace, schedule } => (scheduled_s, zone, replace, schedule),
        };
        if replace {
            for reference in decide::active(cronjob).to_vec() {
                let ref_ns = reference["namespace"].as_str().unwrap_or(&namespace).to_string();
                let ref_name = reference["name"].as_str().unwrap_or("");
                let job = match self.get_job(&ref_ns, ref_name).await {
                    Ok(job) => job,
                    Err(err) => {
                        self.record(cronjob, EventType::Warning, "FailedGet", &format!("Get job: {err}")).await;
                        return Err(err);
                    }
                };
                if !self.delete_job(cronjob, &job).await {
                    return Err(ClientError::Transport(format!("could not replace job {ref_ns}/{ref_name}")));
                }
                *update_status = true;
            }
        }
        let request = job_from_template(cronjob, scheduled_s, zone);
        let collection = builtin::jobs().collection_path(Some(&namespace));
        let created = match self.client.create(&collection, &request).await {
            Ok(job) => {
                let message = format!("Created job {}", jobs_name(&job));
                self.record(cronjob, EventType::Normal, "SuccessfulCreate", &message).await;
                job
            }
            Err(err) if namespace_terminating(&err) => return Err(err),
            Err(err) if err.is_already_exists() => {
                // Made before, but perhaps never listed as active: list it now if it is ours.
                let job = self.get_job(&namespace, jobs_name(&request)).await?;
                let ours = controller_of(&job).is_some_and(|r| r["uid"] == uid(cronjob));
                if !ours || in_active(cronjob, uid(&job)) {
                    return Ok(None);
                }
                job
            }
            Err(err) => {
                self.record(cronjob, EventType::Warning, "FailedCreate", &format!("Error creating job: {err}")).await;
                return Err(err);
            }
        };
        let status = status_mut(cronjob);
        let active = status.entry("active").or_insert_with(|| json!([]));
        if !active.is_array() {
            *active = json!([]);
        }
        active.as_array_mut().expect("an array").push(job_reference(&created));
        status.insert("lastScheduleTime".into(), json!(rfc3339(scheduled_s)));
        *update_status = true;
        Ok(next_schedule_time_duration(&decide::times(cronjob), now_us, &schedule))
    }

    /// `deleteJob`: deletes the Job (its pods in the background) and drops it from `status.active`.
    async fn delete_job(&self, cronjob: &mut Value, job: &Value) -> bool {
        let path = builtin::jobs().object_path(Some(str_at(job, "/metadata/namespace")), jobs_name(job));
        let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"});
        if let Err(err) = self.client.delete(&path, Some(&options)).await {
            self.record(cronjob, EventType::Warning, "FailedDelete", &format!("Deleted job: {err}")).await;
            return false;
        }
        remove_from_active(cronjob, uid(job));
        self.record(cronjob, EventType::Normal, "SuccessfulDelete", &format!("Deleted job {}", jobs_name(job))).await;
        true
    }

    /// `cleanupFinishedJobs`: whether any Job was deleted.
    async fn cleanup_finished_jobs(&self, cronjob: &mut Value, owned: &[Value]) -> bool {
        let limit = |field: &str| cronjob.pointer(&format!("/spec/{field}")).and_then(Value::as_i64);
        let (successful, failed) = (limit("successfulJobsHistoryLimit"), limit("failedJobsHistoryLimit"));
        let mut deleted = false;
        for job in jobs::jobs_to_clean_up(owned, successful, failed) {
            if self.delete_job(cronjob, &job).await {
                deleted = true;
            }
        }
        deleted
    }
}

fn jobs_name(job: &Value) -> &str {
    str_at(job, "/metadata/name")
}
