//! A CronJob's Jobs (`pkg/controller/cronjob/utils.go` and `cronjob_controllerv2.go`, 1.32; `IsJobFinished`
//! and `FinishedCondition` of `pkg/controller/job/util`): the Job made for one activation
//! (`getJobFromTemplate2`: named `<cronjob>-<activation in minutes since the epoch>`, the template's labels
//! and annotations plus `batch.kubernetes.io/cronjob-scheduled-timestamp`, a controller reference), the
//! `ObjectReference` kept in `status.active`, whether a Job finished and how, and which finished Jobs the
//! history limits remove (`cleanupFinishedJobs`, oldest start time first).
//!
//! Sans-IO, over the objects' JSON.

use serde_json::{json, Map, Value};

use super::timing::rfc3339_in;
use crate::runtime::time::parse_time_us;
use apiserver::cron::Zone;

/// `batchv1.CronJobScheduledTimestampAnnotation`.
pub const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// `getJobName`: the Job of the activation at `scheduled_s`.
pub fn job_name(cronjob_name: &str, scheduled_s: i64) -> String {
    format!("{cronjob_name}-{}", scheduled_s / 60)
}

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `getJobFromTemplate2`: the Job for `cronjob`'s activation at `scheduled_s`, stamped in `zone`.
pub fn job_from_template(cronjob: &Value, scheduled_s: i64, zone: Zone) -> Value {
    let template = cronjob.pointer("/spec/jobTemplate").cloned().unwrap_or_else(|| json!({}));
    let map_at = |pointer: &str| template.pointer(pointer).and_then(Value::as_object).cloned().unwrap_or_default();
    let labels = map_at("/metadata/labels");
    let mut annotations = map_at("/metadata/annotations");
    annotations.insert(SCHEDULED_TIMESTAMP.into(), json!(rfc3339_in(scheduled_s, zone)));
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(job_name(str_at(cronjob, "/metadata/name"), scheduled_s)));
    // Go's empty label set is omitted from the JSON.
    if !labels.is_empty() {
        metadata.insert("labels".into(), Value::Object(labels));
    }
    metadata.insert("annotations".into(), Value::Object(annotations));
    metadata.insert(
        "ownerReferences".into(),
        json!([{
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": str_at(cronjob, "/metadata/name"),
            "uid": str_at(cronjob, "/metadata/uid"),
            "controller": true,
            "blockOwnerDeletion": true,
        }]),
    );
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

/// `ref.GetReference` of a Job: what `status.active` lists.
pub fn job_reference(job: &Value) -> Value {
    json!({
        "kind": "Job",
        "namespace": str_at(job, "/metadata/namespace"),
        "name": str_at(job, "/metadata/name"),
        "uid": str_at(job, "/metadata/uid"),
        "apiVersion": "batch/v1",
        "resourceVersion": str_at(job, "/metadata/resourceVersion"),
    })
}

/// The object's controller reference, if any (`metav1.GetControllerOf`).
pub fn controller_of(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/ownerReferences")?.as_array()?.iter().find(|r| r["controller"] == json!(true))
}

/// `jobutil.FinishedCondition`: `Complete` or `Failed` when a condition of that type is `True`.
pub fn finished_condition(job: &Value) -> Option<&str> {
    job.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| matches!(c["type"].as_str(), Some("Complete" | "Failed")) && c["status"] == "True")
        .and_then(|c| c["type"].as_str())
}

/// `IsJobSucceeded`.
pub fn succeeded(job: &Value) -> bool {
    finished_condition(job) == Some("Complete")
}

/// `byJobStartTime`: by `status.startTime` (jobs not started last), then by name.
fn by_start_time(a: &Value, b: &Value) -> std::cmp::Ordering {
    let start = |j: &Value| j.pointer("/status/startTime").and_then(Value::as_str).and_then(parse_time_us);
    let name = |j: &Value| str_at(j, "/metadata/name").to_string();
    match (start(a), start(b)) {
        (Some(x), Some(y)) if x != y => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        _ => name(a).cmp(&name(b)),
    }
}

/// `cleanupFinishedJobs`' choice: the finished Jobs past each history limit, oldest first, successful
/// ones before failed ones (the order upstream deletes them in). A limit that is absent keeps every Job.
pub fn jobs_to_clean_up(jobs: &[Value], successful_limit: Option<i64>, failed_limit: Option<i64>) -> Vec<Value> {
    let mut out = Vec::new();
    for (kind, limit) in [("Complete", successful_limit), ("Failed", failed_limit)] {
        let Some(limit) = limit else { continue };
        let mut finished: Vec<Value> = jobs.iter().filter(|j| finished_condition(j) == Some(kind)).cloned().collect();
        let excess = finished.len().saturating_sub(usize::try_from(limit).unwrap_or(0));
        finished.sort_by(by_start_time);
        out.extend(finished.into_iter().take(excess));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cronjob() -> Value {
        json!({
            "apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "backup", "namespace": "ns", "uid": "cj-uid"},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {
                "metadata": {"labels": {"app": "backup"}, "annotations": {"team": "ops"}},
                "spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never"}}},
            }},
        })
    }

    #[test]
    fn a_job_is_named_and_stamped_by_its_activation() {
        // 2023-11-14T22:14:00Z is minute 28333334 since the epoch.
        let cases = [
            (1_700_000_040, Zone::UTC, "backup-28333334", "2023-11-14T22:14:00Z"),
            (1_700_000_059, Zone::UTC, "backup-28333334", "2023-11-14T22:14:19Z"),
            (1_700_000_100, Zone::Fixed { offset_s: -5 * 3_600 }, "backup-28333335", "2023-11-14T17:15:00-05:00"),
        ];
        for (scheduled_s, zone, name, stamp) in cases {
            let job = job_from_template(&cronjob(), scheduled_s, zone);
            assert_eq!(job["metadata"]["name"], name);
            assert_eq!(job["metadata"]["annotations"][SCHEDULED_TIMESTAMP], stamp);
            assert_eq!(job["metadata"]["annotations"]["team"], "ops");
            assert_eq!(job["metadata"]["labels"], json!({"app": "backup"}));
            assert_eq!(job["spec"]["backoffLimit"], 2);
            let owner = &job["metadata"]["ownerReferences"][0];
            assert_eq!(owner["kind"], "CronJob");
            assert_eq!(owner["uid"], "cj-uid");
            assert_eq!(owner["controller"], true);
            assert_eq!(owner["blockOwnerDeletion"], true);
            assert_eq!(controller_of(&job), Some(owner));
        }
        let mut bare = cronjob();
        bare["spec"]["jobTemplate"]["metadata"] = json!({});
        let job = job_from_template(&bare, 1_700_000_040, Zone::UTC);
        assert!(job["metadata"].get("labels").is_none());
        assert_eq!(job["metadata"]["annotations"].as_object().map(Map::len), Some(1));
    }

    fn job(name: &str, finished: Option<&str>, start: Option<&str>) -> Value {
        let mut conditions = vec![json!({"type": "Suspended", "status": "False"})];
        if let Some(kind) = finished {
            conditions.push(json!({"type": kind, "status": "True"}));
        }
        let mut status = json!({"conditions": conditions});
        if let Some(start) = start {
            status["startTime"] = json!(start);
        }
        let uid = format!("{name}-uid");
        json!({"metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": "5"}, "status": status})
    }

    #[test]
    fn finished_jobs_are_told_apart() {
        assert_eq!(finished_condition(&job("a", Some("Complete"), None)), Some("Complete"));
        assert_eq!(finished_condition(&job("a", Some("Failed"), None)), Some("Failed"));
        assert_eq!(finished_condition(&job("a", None, None)), None);
        let mut not_true = job("a", None, None);
        not_true["status"]["conditions"] = json!([{"type": "Complete", "status": "False"}]);
        assert_eq!(finished_condition(&not_true), None);
        assert!(succeeded(&job("a", Some("Complete"), None)));
        assert!(!succeeded(&job("a", Some("Failed"), None)));
        let reference = job_reference(&job("a", None, None));
        assert_eq!(
            reference,
            json!({"kind": "Job", "namespace": "ns", "name": "a", "uid": "a-uid", "apiVersion": "batch/v1",
                   "resourceVersion": "5"})
        );
    }

    #[test]
    fn history_limits_remove_the_oldest_finished_jobs() {
        let jobs = vec![
            job("s3", Some("Complete"), Some("2023-11-14T22:16:00Z")),
            job("s1", Some("Complete"), Some("2023-11-14T22:14:00Z")),
            job("s2", Some("Complete"), Some("2023-11-14T22:15:00Z")),
            job("s0", Some("Complete"), None),
            job("f1", Some("Failed"), Some("2023-11-14T22:14:00Z")),
            job("f2", Some("Failed"), Some("2023-11-14T22:14:00Z")),
            job("running", None, Some("2023-11-14T22:10:00Z")),
        ];
        let names =
            |v: Vec<Value>| v.iter().map(|j| j["metadata"]["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
        let cases: [(Option<i64>, Option<i64>, &[&str]); 5] = [
            (None, None, &[]),
            (Some(3), Some(1), &["s1", "f1"]),
            // Jobs without a start time go last, so they are kept longest.
            (Some(1), None, &["s1", "s2", "s3"]),
            (Some(0), Some(0), &["s1", "s2", "s3", "s0", "f1", "f2"]),
            (Some(10), Some(2), &[]),
        ];
        for (successful, failed, want) in cases {
            assert_eq!(names(jobs_to_clean_up(&jobs, successful, failed)), want, "{successful:?} {failed:?}");
        }
    }
}
