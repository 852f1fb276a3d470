//! What the Job controller reads off its pods and how it makes them (kube-controller-manager 1.32,
//! `pkg/controller/job/job_controller.go`: `hasJobTrackingFinalizer`, `isPodFailed`, `onlyReplaceFailedPods`,
//! `countReadyPods`, `appendJobCompletionFinalizerIfNotFound`, `removeTrackingFinalizerPatch`,
//! `pastBackoffLimitOnFailure`; `indexed_job_utils.go`: `getCompletionIndex`, `addCompletionIndexAnnotation`,
//! `addCompletionIndexLabel`, `addCompletionIndexEnvVariables`, `podGenerateNameWithIndex`;
//! `controller_utils.go`: `GetPodFromTemplate`, `CountTerminatingPods`). Sans-IO: JSON in, JSON out.
//!
//! Every pod a Job makes carries the `batch.kubernetes.io/job-tracking` finalizer, so that it cannot vanish
//! before its result is counted; the pods of an Indexed Job also carry their completion index as an
//! annotation, a label and the `JOB_COMPLETION_INDEX` variable, and the hostname `<job>-<index>`.

use serde_json::{json, Value};

use crate::kcm::replicaset::pods::is_deleting;
use crate::kcm::replicaset::refs::pods_prefix;

/// `batch.JobTrackingFinalizer`.
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// `batch.JobCompletionIndexAnnotation`, also the label's key (`PodIndexLabel`, on in 1.32).
pub const COMPLETION_INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
/// `batch.JobCompletionIndexEnvName`.
pub const COMPLETION_INDEX_ENV_NAME: &str = "JOB_COMPLETION_INDEX";
/// The kind and group version pods are owned as.
pub const KIND: &str = "Job";
pub const API_VERSION: &str = "batch/v1";
/// `names.MaxGeneratedNameLength`: 63 less the five random characters.
const MAX_GENERATED_NAME_LENGTH: usize = 58;

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

pub fn uid(obj: &Value) -> &str {
    meta(obj, "uid")
}

pub fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("")
}

/// `hasJobTrackingFinalizer`.
pub fn has_tracking_finalizer(pod: &Value) -> bool {
    pod.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f.as_str() == Some(JOB_TRACKING_FINALIZER)))
}

/// `onlyReplaceFailedPods`: `podReplacementPolicy: Failed`, or any pod failure policy.
pub fn only_replace_failed_pods(job: &Value) -> bool {
    job.pointer("/spec/podReplacementPolicy").and_then(Value::as_str) == Some("Failed")
        || job.pointer("/spec/podFailurePolicy").is_some_and(|p| !p.is_null())
}

/// `isPodFailed`: phase `Failed`, or (unless only failed pods are replaced) being deleted before it
/// succeeded, which counts orphans that never reach `Failed`.
pub fn is_pod_failed(pod: &Value, job: &Value) -> bool {
    if phase(pod) == "Failed" {
        return true;
    }
    if only_replace_failed_pods(job) {
        return false;
    }
    is_deleting(pod) && phase(pod) != "Succeeded"
}

/// `CountTerminatingPods`'s test: being deleted and not finished.
pub fn is_terminating(pod: &Value) -> bool {
    is_deleting(pod) && !matches!(phase(pod), "Succeeded" | "Failed")
}

/// `getCompletionIndex`: the annotation as a non-negative number, `None` when absent or invalid.
pub fn completion_index(pod: &Value) -> Option<i64> {
    let text = pod.pointer("/metadata/annotations")?.get(COMPLETION_INDEX_ANNOTATION)?.as_str()?;
    text.parse::<i64>().ok().filter(|i| *i >= 0)
}

/// `removeTrackingFinalizerPatch`: a strategic merge patch deleting the finalizer, or `None` without it.
pub fn remove_finalizer_patch(pod: &Value) -> Option<Value> {
    has_tracking_finalizer(pod)
        .then(|| json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}))
}

/// `pastBackoffLimitOnFailure`: with `restartPolicy: OnFailure`, the restarts of the running and pending
/// pods' containers reach `backoffLimit` (any restart when it is 0).
pub fn past_backoff_limit_on_failure(job: &Value, pods: &[Value]) -> bool {
    if job.pointer("/spec/template/spec/restartPolicy").and_then(Value::as_str) != Some("OnFailure") {
        return false;
    }
    let restarts: i64 = pods
        .iter()
        .filter(|p| matches!(phase(p), "Running" | "Pending"))
        .flat_map(|p| ["initContainerStatuses", "containerStatuses"].map(|f| p.pointer(&format!("/status/{f}"))))
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
        .sum();
    let limit = job.pointer("/spec/backoffLimit").and_then(Value::as_i64).unwrap_or(6);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// `metav1.NewControllerRef(job, batch/v1 Job)`.
pub fn controller_ref_to(job: &Value) -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND, "name": meta(job, "name"), "uid": uid(job), "controller": true, "blockOwnerDeletion": true})
}

/// `podGenerateNameWithIndex`: `<job>-<index>-`, the job's name cut short when that would be too long.
pub fn generate_name_with_index(job_name: &str, index: i64) -> String {
    let suffix = format!("-{index}-");
    let full = format!("{job_name}{suffix}");
    if full.len() <= MAX_GENERATED_NAME_LENGTH {
        return full;
    }
    let keep = MAX_GENERATED_NAME_LENGTH.saturating_sub(suffix.len()).min(job_name.len());
    format!("{}{suffix}", &job_name[..keep])
}

/// `addCompletionIndexEnvVariables` for one container list: the variable, from the annotation, where it
/// is not already set.
fn add_index_env(containers: Option<&mut Value>) {
    let Some(Value::Array(containers)) = containers else { return };
    for container in containers {
        let env = container.as_object_mut().map(|c| c.entry("env").or_insert_with(|| json!([])));
        let Some(Value::Array(env)) = env else { continue };
        if env.iter().any(|e| e.get("name").and_then(Value::as_str) == Some(COMPLETION_INDEX_ENV_NAME)) {
            continue;
        }
        let path = format!("metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']");
        env.push(json!({"name": COMPLETION_INDEX_ENV_NAME, "valueFrom": {"fieldRef": {"fieldPath": path}}}));
    }
}

/// The pod `manageJob` creates for `job` (at completion `index` for an Indexed Job): the template with the
/// tracking finalizer and the index, named from `<job>-` (`<job>-<index>-`), owned by the job.
pub fn pod_for_job(job: &Value, index: Option<i64>) -> Value {
    let template = job.pointer("/spec/template").cloned().unwrap_or(Value::Null);
    let mut metadata = json!({"ownerReferences": [controller_ref_to(job)]});
    for field in ["labels", "annotations", "finalizers"] {
        if let Some(value) = template.pointer(&format!("/metadata/{field}")).filter(|v| !v.is_null()) {
            metadata[field] = value.clone();
        }
    }
    let mut finalizers = metadata.get("finalizers").and_then(Value::as_array).cloned().unwrap_or_default();
    if !finalizers.iter().any(|f| f.as_str() == Some(JOB_TRACKING_FINALIZER)) {
        finalizers.push(json!(JOB_TRACKING_FINALIZER));
    }
    metadata["finalizers"] = Value::Array(finalizers);
    let mut spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
    let job_name = meta(job, "name");
    metadata["generateName"] = json!(pods_prefix(job_name));
    if let Some(index) = index {
        add_index_env(spec.get_mut("containers"));
        add_index_env(spec.get_mut("initContainers"));
        for field in ["annotations", "labels"] {
            if !metadata.get(field).is_some_and(Value::is_object) {
                metadata[field] = json!({});
            }
            metadata[field][COMPLETION_INDEX_ANNOTATION] = json!(index.to_string());
        }
        spec["hostname"] = json!(format!("{job_name}-{index}"));
        metadata["generateName"] = json!(generate_name_with_index(job_name, index));
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(extra: Value) -> Value {
        let mut job = json!({
            "metadata": {"name": "pi", "namespace": "ns", "uid": "job-uid"},
            "spec": {"backoffLimit": 2, "template": {
                "metadata": {"labels": {"batch.kubernetes.io/job-name": "pi"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]},
            }},
        });
        if let (Some(spec), Value::Object(extra)) = (job["spec"].as_object_mut(), extra) {
            spec.extend(extra);
        }
        job
    }

    #[test]
    fn pods_from_the_template() {
        let plain = pod_for_job(&job(json!({})), None);
        assert_eq!(plain["metadata"]["generateName"], "pi-");
        assert_eq!(plain["metadata"]["finalizers"], json!([JOB_TRACKING_FINALIZER]));
        assert_eq!(plain["metadata"]["ownerReferences"][0]["kind"], "Job");
        assert_eq!(plain["metadata"]["ownerReferences"][0]["blockOwnerDeletion"], true);
        assert!(plain["metadata"].get("annotations").is_none());
        assert!(plain["spec"].get("hostname").is_none());

        let indexed = pod_for_job(&job(json!({})), Some(2));
        assert_eq!(indexed["metadata"]["generateName"], "pi-2-");
        assert_eq!(indexed["metadata"]["annotations"][COMPLETION_INDEX_ANNOTATION], "2");
        assert_eq!(indexed["metadata"]["labels"][COMPLETION_INDEX_ANNOTATION], "2");
        assert_eq!(indexed["metadata"]["labels"]["batch.kubernetes.io/job-name"], "pi");
        assert_eq!(indexed["spec"]["hostname"], "pi-2");
        assert_eq!(indexed["spec"]["containers"][0]["env"][0]["name"], COMPLETION_INDEX_ENV_NAME);
        assert_eq!(
            indexed["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        );
    }

    #[test]
    fn generated_names_with_an_index() {
        let long = "a".repeat(60);
        let cases = [("pi", 3, "pi-3-".to_string()), (long.as_str(), 12, format!("{}-12-", "a".repeat(54)))];
        for (name, index, want) in cases {
            assert_eq!(generate_name_with_index(name, index), want);
            assert!(generate_name_with_index(name, index).len() <= MAX_GENERATED_NAME_LENGTH);
        }
    }

    #[test]
    fn failed_pods_and_indexes() {
        let deleting =
            json!({"metadata": {"deletionTimestamp": "2023-11-14T22:13:20Z"}, "status": {"phase": "Running"}});
        let failed = json!({"status": {"phase": "Failed"}});
        let running = json!({"status": {"phase": "Running"}});
        let with_policy = job(json!({"podFailurePolicy": {"rules": []}}));
        let cases = [
            (&failed, job(json!({})), true),
            (&running, job(json!({})), false),
            (&deleting, job(json!({})), true),
            (&deleting, with_policy.clone(), false),
            (&deleting, job(json!({"podReplacementPolicy": "Failed"})), false),
            (&failed, with_policy, true),
        ];
        for (i, (pod, job, want)) in cases.into_iter().enumerate() {
            assert_eq!(is_pod_failed(pod, &job), want, "case {i}");
        }
        assert!(is_terminating(&deleting));
        let annotated = |v: &str| json!({"metadata": {"annotations": {COMPLETION_INDEX_ANNOTATION: v}}});
        assert_eq!(completion_index(&annotated("4")), Some(4));
        assert_eq!(completion_index(&annotated("-1")), None);
        assert_eq!(completion_index(&annotated("x")), None);
        assert_eq!(completion_index(&json!({})), None);
    }

    #[test]
    fn restarts_against_the_backoff_limit() {
        let pod = |phase: &str, restarts: i64| json!({"status": {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}});
        let on_failure = |limit: i64| {
            let mut j = job(json!({"backoffLimit": limit}));
            j["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
            j
        };
        let cases = [
            (on_failure(2), vec![pod("Running", 1)], false),
            (on_failure(2), vec![pod("Running", 1), pod("Pending", 1)], true),
            (on_failure(2), vec![pod("Failed", 5)], false),
            (on_failure(0), vec![pod("Running", 1)], true),
            (job(json!({})), vec![pod("Running", 9)], false),
        ];
        for (i, (job, pods, want)) in cases.into_iter().enumerate() {
            assert_eq!(past_backoff_limit_on_failure(&job, &pods), want, "case {i}");
        }
        let finalized = json!({"metadata": {"finalizers": [JOB_TRACKING_FINALIZER]}});
        assert!(has_tracking_finalizer(&finalized));
        assert!(remove_finalizer_patch(&finalized).is_some());
        assert!(remove_finalizer_patch(&json!({})).is_none());
    }
}
