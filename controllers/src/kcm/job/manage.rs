//! Making and removing a Job's pods, and writing its status (kube-controller-manager 1.32,
//! `pkg/controller/job/job_controller.go`: `manageJob`, `activePodsForRemoval`,
//! `trackJobStatusAndRemoveFinalizers`, `flushUncountedAndRemoveFinalizers`, `removeTrackingFinalizerFromPods`,
//! `updateJobStatus`, `recordJobFinished`).
//!
//! `manageJob` either deletes pods (a suspended Job's, surplus ones, duplicate indexes) or creates them,
//! never both in one sync; creations wait out the failure backoff, are capped at 500 per sync, go in
//! slow-start batches, and take the lowest pending completion indexes of an Indexed Job.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use super::backoff::{self, Record};
use super::indexes;
use super::pods::{self as jpods, completion_index, is_terminating};
use super::sync::{Controller, Counts, MAX_POD_CREATE_DELETE_PER_SYNC};
use super::tracking::{self, Condition};
use crate::client::resource::builtin;
use crate::kcm::replicaset::manage::{slow_start_batch, SLOW_START_INITIAL_BATCH_SIZE};
use crate::kcm::replicaset::pods::object_key;
use crate::kcm::replicaset::ranking::delete_before;
use crate::kcm::replicaset::sync::error_text;
use crate::kcm::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use crate::runtime::events::EventType;

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// `activePodsForRemoval`: an Indexed Job's pods without a valid index or duplicating one, then as many
/// more as needed to reach `at_least`, in `controller.ActivePods` order.
pub fn active_pods_for_removal(job: &Value, pods: &[Value], at_least: usize) -> Vec<Value> {
    let first = |a: &Value, b: &Value| delete_before(a, 0, b, 0, None);
    let (mut remove, mut left) = if tracking::is_indexed(job) {
        indexes::split_duplicates(pods, tracking::completions(job).unwrap_or(0), first)
    } else {
        (Vec::new(), pods.to_vec())
    };
    if remove.len() < at_least {
        left.sort_by(|a, b| indexes::order(&first, a, b));
        let more = (at_least - remove.len()).min(left.len());
        remove.extend(left.into_iter().take(more));
    }
    remove
}

impl Controller {
    /// `manageJob`: returns a delay after which to look again (the failure backoff), or the first error.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn manage_job(
        &self,
        key: &str,
        job: &Value,
        pods: &[Value],
        active_pods: &[Value],
        succeeded_indexes: &BTreeSet<i64>,
        new_backoff: &Record,
        counts: &mut Counts,
        now_us: i64,
    ) -> Result<Option<Duration>, String> {
        if tracking::is_suspended(job) {
            let doomed = active_pods_for_removal(job, active_pods, active_pods.len());
            return self.delete_surplus(key, job, &doomed, counts).await.map(|_| None);
        }
        let want = tracking::want_active(job, counts.active, counts.succeeded);
        let at_least = usize::try_from(counts.active - want).unwrap_or(0);
        let mut doomed = active_pods_for_removal(job, active_pods, at_least);
        doomed.truncate(MAX_POD_CREATE_DELETE_PER_SYNC);
        if !doomed.is_empty() {
            // A sync either deletes or creates; deleting comes first.
            return self.delete_surplus(key, job, &doomed, counts).await.map(|_| None);
        }
        let only_failed = jpods::only_replace_failed_pods(job);
        let terminating = if only_failed { counts.terminating } else { 0 };
        let diff = want - terminating - counts.active;
        if diff <= 0 {
            return Ok(None);
        }
        let remaining = backoff::remaining(*new_backoff, now_us);
        if !remaining.is_zero() {
            return Ok(Some(remaining));
        }
        let mut count = usize::try_from(diff).unwrap_or(0).min(MAX_POD_CREATE_DELETE_PER_SYNC);
        let mut to_add = VecDeque::new();
        if tracking::is_indexed(job) {
            let mut non_pending = succeeded_indexes.clone();
            non_pending.extend(active_pods.iter().filter_map(completion_index));
            if only_failed {
                non_pending.extend(pods.iter().filter(|p| is_terminating(p)).filter_map(completion_index));
            }
            to_add.extend(indexes::first_pending(&non_pending, count, tracking::completions(job).unwrap_or(0)));
            count = to_add.len();
        }
        if count == 0 {
            return Ok(None);
        }
        self.expectations().expect_creations(key, count, self.since_origin());
        counts.active += count as i64;
        let indexed = tracking::is_indexed(job);
        let queue = Mutex::new(to_add);
        let (created, error) = slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE, || {
            let index = if indexed { queue.lock().expect("never poisoned").pop_front() } else { None };
            self.create_pod(job, index)
        })
        .await;
        // The creations that failed or were never tried will never be observed.
        let mut expectations = self.expectations();
        for _ in created..count {
            expectations.creation_observed(key);
        }
        counts.active -= (count - created) as i64;
        error.map_or(Ok(None), Err)
    }

    /// The deletions of `manageJob`, with their expectations and counts.
    async fn delete_surplus(
        &self,
        key: &str,
        job: &Value,
        doomed: &[Value],
        counts: &mut Counts,
    ) -> Result<(), String> {
        if doomed.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = doomed.iter().map(object_key).collect();
        self.expectations().expect_deletions(key, &keys, self.since_origin());
        let (ready, deleted, error) = self.delete_job_pods(key, job, doomed).await;
        counts.active -= deleted;
        counts.terminating += deleted;
        counts.ready -= ready;
        error.map_or(Ok(()), Err)
    }

    /// `CreatePodsWithGenerateName`, with its event.
    async fn create_pod(&self, job: &Value, index: Option<i64>) -> Result<(), String> {
        let pod = jpods::pod_for_job(job, index);
        let path = builtin::pods().collection_path(Some(meta(job, "namespace")));
        match self.client.create(&path, &pod).await {
            Ok(created) => {
                let message = format!("Created pod: {}", meta(&created, "name"));
                self.events.record(job, EventType::Normal, "SuccessfulCreate", &message).await;
                Ok(())
            }
            // A namespace being deleted takes no pods; not a failure to retry.
            Err(err) if has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => Ok(()),
            Err(err) => {
                let message = format!("Error creating: {}", error_text(&err));
                self.events.record(job, EventType::Warning, "FailedCreate", &message).await;
                Err(error_text(&err))
            }
        }
    }

    /// `updateJobStatus`: a PUT of `/status`.
    async fn update_status(&self, job: &Value) -> Result<Value, String> {
        let path = builtin::jobs().subresource_path(Some(meta(job, "namespace")), meta(job, "name"), "status");
        self.client.update(&path, job).await.map_err(|e| error_text(&e))
    }

    /// `trackJobStatusAndRemoveFinalizers` with `flushUncountedAndRemoveFinalizers`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn track_and_remove_finalizers(
        &self,
        key: &str,
        mut job: Value,
        pods: &[Value],
        finished: Option<Condition>,
        succeeded_indexes: (&BTreeSet<i64>, &BTreeSet<i64>),
        new_backoff: &Record,
        terminating: i64,
        needs_flush: bool,
    ) -> Result<(), String> {
        let now_us = (self.now_unix_us)();
        let expected_rm =
            self.finalizer_expectations.lock().expect("never poisoned").get(key).cloned().unwrap_or_default();
        let plan = tracking::track(&mut job, pods, &expected_rm, finished, succeeded_indexes, now_us, needs_flush);
        let mut with_finalizer = plan.with_finalizer;
        if plan.needs_flush {
            // Phase one: the results are on record before any finalizer goes.
            job = self.update_status(&job).await.map_err(|e| format!("adding uncounted pods to status: {e}"))?;
            self.backoff.lock().expect("never poisoned").insert(key.to_string(), *new_backoff);
        }
        let removal_error = self.remove_finalizers(key, &plan.remove_finalizer, &mut with_finalizer).await;
        let mut needs_flush = tracking::clean_uncounted(&mut job, &with_finalizer);
        if removal_error.is_some() && needs_flush {
            self.update_status(&job).await.map_err(|e| format!("removing uncounted pods from status: {e}"))?;
            return Err(removal_error.unwrap_or_default());
        }
        if let Some(err) = removal_error {
            return Err(err);
        }
        let finished_now = !plan.reached_max_uncounted
            && tracking::enact_finished(&mut job, plan.finished.as_ref(), terminating, now_us);
        needs_flush |= finished_now;
        if needs_flush {
            let written =
                self.update_status(&job).await.map_err(|e| format!("removing uncounted pods from status: {e}"))?;
            if finished_now {
                self.record_finished(&written, plan.finished.as_ref()).await;
            }
        }
        Ok(())
    }

    /// `removeTrackingFinalizerFromPods`: each removal is expected before it is sent; the uids whose
    /// removal succeeded (or whose pod is gone) leave `with_finalizer`. Returns the first error.
    async fn remove_finalizers(
        &self,
        key: &str,
        pods: &[Value],
        with_finalizer: &mut BTreeSet<String>,
    ) -> Option<String> {
        {
            let mut expected = self.finalizer_expectations.lock().expect("never poisoned");
            let set = expected.entry(key.to_string()).or_default();
            set.extend(pods.iter().filter(|p| jpods::has_tracking_finalizer(p)).map(|p| jpods::uid(p).to_string()));
        }
        let results = futures::future::join_all(pods.iter().map(|pod| async move {
            match jpods::remove_finalizer_patch(pod) {
                Some(patch) => self.patch_pod(pod, &patch).await.map(|_| ()),
                None => Ok(()),
            }
        }))
        .await;
        let mut first_error = None;
        for (pod, result) in pods.iter().zip(results) {
            let uid = jpods::uid(pod).to_string();
            match result {
                Ok(()) => {
                    with_finalizer.remove(&uid);
                }
                Err(err) => {
                    // No pod update will show this removal: stop waiting for it.
                    if let Some(set) = self.finalizer_expectations.lock().expect("never poisoned").get_mut(key) {
                        set.remove(&uid);
                    }
                    if err.is_not_found() {
                        with_finalizer.remove(&uid);
                    } else if first_error.is_none() {
                        first_error = Some(format!("removing tracking finalizer: {}", error_text(&err)));
                    }
                }
            }
        }
        first_error
    }

    /// `recordJobFinished`: the events of a Job that just finished.
    async fn record_finished(&self, job: &Value, finished: Option<&Condition>) {
        let Some(c) = finished else { return };
        if c.kind == "Complete" {
            let succeeded = tracking::status_count(job, "succeeded");
            if tracking::completions(job).is_some_and(|n| succeeded > n) {
                let message = "Too many succeeded pods running after completion count reached";
                self.events.record(job, EventType::Warning, "TooManySucceededPods", message).await;
            }
            self.events.record(job, EventType::Normal, "Completed", "Job completed").await;
        } else {
            self.events.record(job, EventType::Warning, &c.reason, &c.message).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, ix: Option<&str>, phase: &str) -> Value {
        let mut p = json!({"metadata": {"name": name, "uid": name}, "status": {"phase": phase}});
        if let Some(ix) = ix {
            p["metadata"]["annotations"] = json!({jpods::COMPLETION_INDEX_ANNOTATION: ix});
        }
        p
    }

    fn names(pods: &[Value]) -> Vec<&str> {
        pods.iter().map(|p| meta(p, "name")).collect()
    }

    #[test]
    fn pods_chosen_for_removal() {
        let plain = json!({"spec": {"completions": 3}});
        let indexed = json!({"spec": {"completions": 3, "completionMode": "Indexed"}});
        let cases = [
            ("none wanted", plain.clone(), vec![pod("a", None, "Running"), pod("b", None, "Pending")], 0, vec![]),
            // `controller.ActivePods` puts pending pods before running ones.
            ("pending first", plain.clone(), vec![pod("a", None, "Running"), pod("b", None, "Pending")], 1, vec!["b"]),
            ("all", plain, vec![pod("a", None, "Running"), pod("b", None, "Pending")], 5, vec!["b", "a"]),
            (
                "duplicates and strays of an Indexed Job",
                indexed.clone(),
                vec![pod("a", Some("0"), "Running"), pod("b", Some("0"), "Pending"), pod("c", Some("5"), "Running")],
                0,
                vec!["c", "b"],
            ),
            (
                "more than the duplicates",
                indexed,
                vec![pod("a", Some("0"), "Running"), pod("b", Some("1"), "Pending")],
                1,
                vec!["b"],
            ),
        ];
        for (name, job, pods, at_least, want) in cases {
            assert_eq!(names(&active_pods_for_removal(&job, &pods, at_least)), want, "{name}");
        }
    }
}
