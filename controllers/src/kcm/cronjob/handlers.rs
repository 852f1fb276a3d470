//! What the CronJob controller does when its informers report a change (`addJob`, `updateJob`,
//! `deleteJob`, `updateCronJob`, `resolveControllerRef` of `pkg/controller/cronjob/cronjob_controllerv2.go`,
//! 1.32): a Job's change wakes the CronJob its controller reference names (by name, then checked by UID);
//! a CronJob's add or delete wakes it now; an update wakes it now, unless the schedule or time zone
//! changed, in which case it is woken at its next activation (or, for a schedule that does not parse,
//! not at all, with an `UnParseableCronJobSchedule` warning).
//!
//! Sans-IO: the handlers read the CronJob cache through a closure and answer [`Action`]s.

use std::time::Duration;

use serde_json::Value;

use super::decide::{format_schedule, schedule_text, time_zone, times};
use super::jobs::controller_of;
use super::timing::next_schedule_time_duration;
use crate::runtime::store::object_key;
use apiserver::cron::Schedule;

/// What a handler asks of the controller.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Enqueue(String),
    /// Wake the key after this long on the CronJob's clock (the shell scales it to tokio's).
    EnqueueAfter(String, Duration),
    /// Record a warning about this CronJob.
    Warn {
        cronjob: Value,
        reason: &'static str,
        message: String,
    },
}

/// `resolveControllerRef`: the key of the cached CronJob `reference` names, if it is that very object.
fn resolve(namespace: &str, reference: &Value, cron_jobs: &dyn Fn(&str) -> Option<Value>) -> Option<String> {
    if reference["kind"] != "CronJob" {
        return None;
    }
    let key = format!("{namespace}/{}", reference["name"].as_str().unwrap_or(""));
    let cronjob = cron_jobs(&key)?;
    (cronjob.pointer("/metadata/uid") == reference.get("uid")).then_some(key)
}

fn namespace(obj: &Value) -> &str {
    obj.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("")
}

/// `addJob` (a Job already being deleted is handled as a delete, which amounts to the same here).
pub fn job_added(job: &Value, cron_jobs: &dyn Fn(&str) -> Option<Value>) -> Vec<Action> {
    job_deleted(job, cron_jobs)
}

/// `updateJob`.
pub fn job_updated(old: &Value, new: &Value, cron_jobs: &dyn Fn(&str) -> Option<Value>) -> Vec<Action> {
    let rv = |j: &Value| j.pointer("/metadata/resourceVersion").cloned();
    if rv(old) == rv(new) {
        return Vec::new();
    }
    let mut actions = Vec::new();
    let (old_ref, new_ref) = (controller_of(old), controller_of(new));
    if let (true, Some(old_ref)) = (old_ref != new_ref, old_ref) {
        actions.extend(resolve(namespace(old), old_ref, cron_jobs).map(Action::Enqueue));
    }
    if let Some(new_ref) = new_ref {
        actions.extend(resolve(namespace(new), new_ref, cron_jobs).map(Action::Enqueue));
    }
    actions
}

/// `deleteJob`: orphans wake nobody.
pub fn job_deleted(job: &Value, cron_jobs: &dyn Fn(&str) -> Option<Value>) -> Vec<Action> {
    controller_of(job).and_then(|r| resolve(namespace(job), r, cron_jobs)).map(Action::Enqueue).into_iter().collect()
}

/// A CronJob added or deleted: sync it now.
pub fn cron_job_added_or_deleted(cronjob: &Value) -> Vec<Action> {
    vec![Action::Enqueue(object_key(cronjob))]
}

/// `updateCronJob`.
pub fn cron_job_updated(old: &Value, new: &Value, now_us: i64) -> Vec<Action> {
    let key = object_key(new);
    if schedule_text(old) == schedule_text(new) && time_zone(old) == time_zone(new) {
        return vec![Action::Enqueue(key)];
    }
    match Schedule::parse_standard(&format_schedule(new, false, &mut Vec::new())) {
        Err(_) => vec![Action::Warn {
            cronjob: new.clone(),
            reason: "UnParseableCronJobSchedule",
            message: format!("unparseable schedule for cronjob: {}", schedule_text(new)),
        }],
        Ok(schedule) => match next_schedule_time_duration(&times(new), now_us, &schedule) {
            Some(after) => vec![Action::EnqueueAfter(key, after)],
            None => Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cronjob(schedule: &str, uid: &str) -> Value {
        let created = "2023-11-14T22:13:20Z";
        let metadata =
            json!({"name": "cj", "namespace": "ns", "uid": uid, "creationTimestamp": created, "resourceVersion": "1"});
        json!({"metadata": metadata, "spec": {"schedule": schedule}})
    }

    fn job(owner: Option<(&str, &str, &str)>, rv: &str) -> Value {
        let refs: Vec<Value> = owner
            .map(|(kind, name, uid)| json!({"kind": kind, "name": name, "uid": uid, "controller": true}))
            .into_iter()
            .collect();
        json!({"metadata": {"name": "j", "namespace": "ns", "resourceVersion": rv, "ownerReferences": refs}})
    }

    #[test]
    fn job_changes_wake_their_cronjob() {
        let cache = |key: &str| (key == "ns/cj").then(|| cronjob("*/1 * * * *", "u1"));
        let ours = job(Some(("CronJob", "cj", "u1")), "5");
        let wake = vec![Action::Enqueue("ns/cj".into())];
        let cases: Vec<(&str, Vec<Action>, Vec<Action>)> = vec![
            ("added", job_added(&ours, &cache), wake.clone()),
            ("deleted", job_deleted(&ours, &cache), wake.clone()),
            ("orphan", job_added(&job(None, "5"), &cache), vec![]),
            ("another kind", job_added(&job(Some(("Deployment", "cj", "u1")), "5"), &cache), vec![]),
            ("a former cronjob of that name", job_added(&job(Some(("CronJob", "cj", "u0")), "5"), &cache), vec![]),
            ("updated", job_updated(&job(Some(("CronJob", "cj", "u1")), "4"), &ours, &cache), wake.clone()),
            ("resync", job_updated(&ours, &ours, &cache), vec![]),
            ("released", job_updated(&ours, &job(None, "6"), &cache), wake.clone()),
        ];
        for (name, got, want) in cases {
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn cronjob_updates_wake_now_or_at_the_next_activation() {
        let now_us = 1_700_000_000_000_000;
        let old = cronjob("*/1 * * * *", "u1");
        let mut suspended = old.clone();
        suspended["spec"]["suspend"] = json!(true);
        assert_eq!(cron_job_updated(&old, &suspended, now_us), vec![Action::Enqueue("ns/cj".into())]);
        let hourly = cronjob("0 * * * *", "u1");
        // 22:13:20 to 23:00:00, plus the 100 ms delta.
        let after = Duration::from_millis(46 * 60_000 + 40_000 + 100);
        assert_eq!(cron_job_updated(&old, &hourly, now_us), vec![Action::EnqueueAfter("ns/cj".into(), after)]);
        let broken = cronjob("*/0 * * * *", "u1");
        let actions = cron_job_updated(&old, &broken, now_us);
        assert!(matches!(&actions[..], [Action::Warn { reason: "UnParseableCronJobSchedule", message, .. }]
            if message == "unparseable schedule for cronjob: */0 * * * *"));
        assert_eq!(cron_job_added_or_deleted(&old), vec![Action::Enqueue("ns/cj".into())]);
    }
}
