//! The printers of `batch` resources (`printJob`).

use serde_json::Value;

use super::apps::{template_cells, template_columns};
use super::*;
use crate::registry::strategies::workloads::format_label_selector;

fn has_condition(job: &Value, kind: &str) -> bool {
    job.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|conditions| {
        conditions.iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(kind)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    })
}

/// The Status column: the first of Complete, Failed, Terminating, Suspended, FailureTarget, else Running.
fn job_status(job: &Value) -> &'static str {
    if has_condition(job, "Complete") {
        "Complete"
    } else if has_condition(job, "Failed") {
        "Failed"
    } else if !meta_str(job, "deletionTimestamp").is_empty() {
        "Terminating"
    } else if has_condition(job, "Suspended") {
        "Suspended"
    } else if has_condition(job, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
}

/// `succeeded/completions`, or `succeeded/1 of parallelism` for a work queue.
fn completions(job: &Value) -> String {
    let succeeded = job.pointer("/status/succeeded").and_then(Value::as_i64).unwrap_or(0);
    match job.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match job.pointer("/spec/parallelism").and_then(Value::as_i64).unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

/// How long the job ran (or has been running), empty before it started.
fn duration(job: &Value, now: i64) -> String {
    let time = |p: &str| job.pointer(p).and_then(Value::as_str).and_then(parse_rfc3339);
    match (time("/status/startTime"), time("/status/completionTime")) {
        (None, _) => String::new(),
        (Some(start), Some(end)) => human_duration(end - start),
        (Some(start), None) => human_duration(now - start),
    }
}

/// `printJob`: status, completions, duration.
pub(crate) fn jobs() -> Printer {
    let [containers, images] = template_columns();
    Printer {
        columns: vec![
            name_column(),
            column("Status", "string", "Status of the job.", 0),
            doc_column("Completions", "string", "io.k8s.api.batch.v1.JobStatus", "succeeded", 0),
            column("Duration", "string", "Time required to complete the job.", 0),
            age_column(),
            containers,
            images,
            doc_column("Selector", "string", "io.k8s.api.batch.v1.JobSpec", "selector", 1),
        ],
        cells: |obj, now, _| {
            let [containers, images] = template_cells(obj);
            vec![
                name(obj),
                Value::from(job_status(obj)),
                Value::from(completions(obj)),
                Value::from(duration(obj, now)),
                age(obj, now),
                containers,
                images,
                Value::from(format_label_selector(obj.pointer("/spec/selector"))),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_job_prints_its_progress() {
        let running = json!({"metadata": {"name": "j"}, "spec": {"completions": 3}, "status": {"succeeded": 1, "startTime": "2023-11-14T22:13:20Z"}});
        assert_eq!(job_status(&running), "Running");
        assert_eq!(completions(&running), "1/3");
        assert_eq!(duration(&running, 1_700_000_000 + 90), "90s");
        let done =
            json!({"spec": {"parallelism": 2}, "status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(job_status(&done), "Complete");
        assert_eq!(completions(&done), "0/1 of 2");
    }
}
