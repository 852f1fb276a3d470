//! The Job controller's informer handlers (kube-controller-manager 1.32, `pkg/controller/job/job_controller.go`:
//! `addPod`, `updatePod`, `deletePod`, `addJob`, `updateJob`, `deleteJob`, `resolveControllerRef`,
//! `getPodJobs`, `syncJobBatchPeriod`). Sans-IO: a change in, the expectation updates and queue additions
//! it causes out, in order.
//!
//! Pod changes reach their Job after the one-second batch period, so that a burst of pod updates makes one
//! sync; Job changes are synced at once. A pod losing the tracking finalizer (or gone) is a finalizer
//! removal the Job may have been waiting for. A pod whose controlling Job is gone but which still carries
//! the finalizer has its Job's key queued, whose sync then takes the finalizer off.

use std::time::Duration;

use serde_json::Value;

use super::pods::{has_tracking_finalizer, uid, KIND};
use crate::kcm::replicaset::pods::{controller_ref, is_deleting, object_key};
use crate::kcm::replicaset::selector::label_selector_as_selector;

/// `syncJobBatchPeriod`.
pub const SYNC_JOB_BATCH_PERIOD: Duration = Duration::from_secs(1);

/// What the handlers read of the Job informer's cache.
pub trait Jobs {
    fn get(&self, key: &str) -> Option<Value>;
    fn in_namespace(&self, namespace: &str) -> Vec<Value>;
}

/// One consequence of a change, to apply in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    CreationObserved(String),
    DeletionObserved {
        job: String,
        pod: String,
    },
    /// `finalizerExpectations.finalizerRemovalObserved(job key, pod uid)`.
    FinalizerRemovalObserved {
        job: String,
        uid: String,
    },
    DeleteExpectations(String),
    Enqueue(String),
    EnqueueAfter(String, Duration),
}

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// How a pod's controller reference resolves.
enum Owner {
    /// A Job in the cache, by key.
    Job(String),
    /// A Job reference with no such Job cached (under that uid): the key of the name it names.
    Missing(String),
    /// Not a Job's pod.
    Other,
}

/// `resolveControllerRef`.
fn resolve(jobs: &dyn Jobs, pod: &Value) -> Owner {
    let Some(owner) = controller_ref(pod) else { return Owner::Other };
    if owner.get("kind").and_then(Value::as_str) != Some(KIND) {
        return Owner::Other;
    }
    let key = format!("{}/{}", meta(pod, "namespace"), owner.get("name").and_then(Value::as_str).unwrap_or(""));
    match jobs.get(&key) {
        Some(job) if meta(&job, "uid") == owner.get("uid").and_then(Value::as_str).unwrap_or("") => Owner::Job(key),
        _ => Owner::Missing(key),
    }
}

/// `getPodJobs`: the Jobs of the pod's namespace whose selector picks it.
fn pod_jobs(jobs: &dyn Jobs, pod: &Value) -> Vec<String> {
    let labels = pod.pointer("/metadata/labels");
    if labels.and_then(Value::as_object).is_none_or(|l| l.is_empty()) {
        return Vec::new();
    }
    jobs.in_namespace(meta(pod, "namespace"))
        .into_iter()
        .filter(|job| {
            label_selector_as_selector(job.pointer("/spec/selector")).is_ok_and(|s| !s.is_empty() && s.matches(labels))
        })
        .map(|job| object_key(&job))
        .collect()
}

fn batched(key: String) -> Action {
    Action::EnqueueAfter(key, SYNC_JOB_BATCH_PERIOD)
}

/// The orphan of a missing Job, if it still carries the finalizer.
fn orphan(key: String, pod: &Value) -> Vec<Action> {
    if has_tracking_finalizer(pod) {
        vec![Action::Enqueue(key)]
    } else {
        Vec::new()
    }
}

/// `addPod`.
pub fn pod_added(jobs: &dyn Jobs, pod: &Value) -> Vec<Action> {
    if is_deleting(pod) {
        return pod_deleted(jobs, pod, false);
    }
    match resolve(jobs, pod) {
        Owner::Job(key) => vec![Action::CreationObserved(key.clone()), batched(key)],
        Owner::Missing(key) => orphan(key, pod),
        Owner::Other => pod_jobs(jobs, pod).into_iter().map(batched).collect(),
    }
}

/// `updatePod`.
pub fn pod_updated(jobs: &dyn Jobs, old: &Value, cur: &Value) -> Vec<Action> {
    if meta(old, "resourceVersion") == meta(cur, "resourceVersion") {
        return Vec::new();
    }
    let labels_changed = old.pointer("/metadata/labels") != cur.pointer("/metadata/labels");
    if is_deleting(cur) {
        let mut actions = pod_deleted(jobs, cur, false);
        if labels_changed {
            actions.extend(pod_deleted(jobs, old, false));
        }
        return actions;
    }
    let finalizer_removed = has_tracking_finalizer(old) && !has_tracking_finalizer(cur);
    let ref_changed = controller_ref(old) != controller_ref(cur);
    let mut actions = Vec::new();
    if ref_changed {
        if let Owner::Job(key) = resolve(jobs, old) {
            if finalizer_removed {
                actions.push(Action::FinalizerRemovalObserved { job: key.clone(), uid: uid(old).to_string() });
            }
            actions.push(batched(key));
        }
    }
    match resolve(jobs, cur) {
        Owner::Job(key) => {
            if finalizer_removed {
                actions.push(Action::FinalizerRemovalObserved { job: key.clone(), uid: uid(cur).to_string() });
            }
            actions.push(batched(key));
        }
        Owner::Missing(key) => actions.extend(orphan(key, cur)),
        Owner::Other if labels_changed || ref_changed => actions.extend(pod_jobs(jobs, cur).into_iter().map(batched)),
        Owner::Other => {}
    }
    actions
}

/// `deletePod`: `is_final` for the informer's deletion, false for a pod given a `deletionTimestamp`.
pub fn pod_deleted(jobs: &dyn Jobs, pod: &Value, is_final: bool) -> Vec<Action> {
    match resolve(jobs, pod) {
        Owner::Job(key) => {
            let mut actions = vec![Action::DeletionObserved { job: key.clone(), pod: object_key(pod) }];
            if is_final || !has_tracking_finalizer(pod) {
                actions.push(Action::FinalizerRemovalObserved { job: key.clone(), uid: uid(pod).to_string() });
            }
            actions.push(batched(key));
            actions
        }
        Owner::Missing(key) if !is_final => orphan(key, pod),
        _ => Vec::new(),
    }
}

/// `addJob`.
pub fn job_added(job: &Value) -> Vec<Action> {
    vec![Action::Enqueue(object_key(job))]
}

/// `updateJob`: a Job replaced under the same name is first handled as deleted.
pub fn job_updated(old: &Value, cur: &Value) -> Vec<Action> {
    let mut actions = Vec::new();
    if meta(old, "uid") != meta(cur, "uid") {
        actions.extend(job_deleted(old));
    }
    actions.push(Action::Enqueue(object_key(cur)));
    actions
}

/// `deleteJob`: its expectations go, and its sync releases the pods' finalizers.
pub fn job_deleted(job: &Value) -> Vec<Action> {
    let key = object_key(job);
    vec![Action::DeleteExpectations(key.clone()), Action::Enqueue(key)]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::super::pods::JOB_TRACKING_FINALIZER;
    use super::*;

    impl Jobs for BTreeMap<String, Value> {
        fn get(&self, key: &str) -> Option<Value> {
            BTreeMap::get(self, key).cloned()
        }
        fn in_namespace(&self, namespace: &str) -> Vec<Value> {
            self.values().filter(|j| meta(j, "namespace") == namespace).cloned().collect()
        }
    }

    fn cache() -> BTreeMap<String, Value> {
        let job = json!({"metadata": {"name": "pi", "namespace": "ns", "uid": "u1"}, "spec": {"selector": {"matchLabels": {"app": "pi"}}}});
        BTreeMap::from([("ns/pi".to_string(), job)])
    }

    fn pod(rv: &str, owner: Option<(&str, &str)>, finalizer: bool, deleting: bool) -> Value {
        let mut p = json!({"metadata": {"name": "p", "namespace": "ns", "uid": "pu", "resourceVersion": rv, "labels": {"app": "pi"}}});
        if let Some((name, uid)) = owner {
            p["metadata"]["ownerReferences"] = json!([{"kind": "Job", "name": name, "uid": uid, "controller": true}]);
        }
        if finalizer {
            p["metadata"]["finalizers"] = json!([JOB_TRACKING_FINALIZER]);
        }
        if deleting {
            p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        }
        p
    }

    #[test]
    fn pod_changes_reach_their_job() {
        let jobs = cache();
        let key = || "ns/pi".to_string();
        let later = || Action::EnqueueAfter(key(), SYNC_JOB_BATCH_PERIOD);
        let ours = Some(("pi", "u1"));
        let cases: Vec<(&str, Vec<Action>, Vec<Action>)> = vec![
            ("created", pod_added(&jobs, &pod("1", ours, true, false)), vec![Action::CreationObserved(key()), later()]),
            ("an orphan that matches", pod_added(&jobs, &pod("1", None, false, false)), vec![later()]),
            (
                "a stale owner with the finalizer",
                pod_added(&jobs, &pod("1", Some(("pi", "old")), true, false)),
                vec![Action::Enqueue(key())],
            ),
            ("a stale owner without it", pod_added(&jobs, &pod("1", Some(("pi", "old")), false, false)), vec![]),
            ("unchanged", pod_updated(&jobs, &pod("1", ours, true, false), &pod("1", ours, false, false)), vec![]),
            (
                "finalizer removed",
                pod_updated(&jobs, &pod("1", ours, true, false), &pod("2", ours, false, false)),
                vec![Action::FinalizerRemovalObserved { job: key(), uid: "pu".into() }, later()],
            ),
            (
                "being deleted with the finalizer",
                pod_updated(&jobs, &pod("1", ours, true, false), &pod("2", ours, true, true)),
                vec![Action::DeletionObserved { job: key(), pod: "ns/p".into() }, later()],
            ),
            (
                "finally deleted",
                pod_deleted(&jobs, &pod("1", ours, true, false), true),
                vec![
                    Action::DeletionObserved { job: key(), pod: "ns/p".into() },
                    Action::FinalizerRemovalObserved { job: key(), uid: "pu".into() },
                    later(),
                ],
            ),
        ];
        for (name, got, want) in cases {
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn job_changes() {
        let job = cache()["ns/pi"].clone();
        assert_eq!(job_added(&job), vec![Action::Enqueue("ns/pi".into())]);
        let mut replaced = job.clone();
        replaced["metadata"]["uid"] = json!("u2");
        assert_eq!(
            job_updated(&job, &replaced),
            vec![
                Action::DeleteExpectations("ns/pi".into()),
                Action::Enqueue("ns/pi".into()),
                Action::Enqueue("ns/pi".into())
            ]
        );
        assert_eq!(job_updated(&job, &job), vec![Action::Enqueue("ns/pi".into())]);
    }
}
