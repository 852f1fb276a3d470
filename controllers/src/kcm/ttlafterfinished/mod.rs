//! The TTL-after-finished controller (`ttl-after-finished-controller`, kube-controller-manager 1.32,
//! `pkg/controller/ttlafterfinished/ttlafterfinished_controller.go`, with `pkg/controller/job/util`'s
//! `IsJobFinished`): a Job with `spec.ttlSecondsAfterFinished` is deleted that many seconds after it
//! finished.
//!
//! A Job is finished when its `Complete` or `Failed` condition is `True`; it finished at that condition's
//! `lastTransitionTime` (the first such condition in the list). Added and updated Jobs that are finished,
//! carry a TTL and are not being deleted are queued; a worker checks the cached Job and, while time is left,
//! looks again when it runs out. Once expired, it reads the Job afresh (the TTL may have changed) and
//! checks again before deleting it with `propagationPolicy: Foreground` and a precondition on its uid, so
//! that a Job recreated under the same name is never deleted by mistake. (Upstream's precondition is the
//! uid alone; it sets no resourceVersion precondition, and neither does this.)
//!
//! The time of day is the context's `now_unix_us`; the wait until a TTL expires is the work queue's delay
//! on tokio's clock (madsim's under simulation). Five workers (`--concurrent-ttl-after-finished-syncs`).
//! Upstream records no events and neither does this; its deletion-latency metric is left out.

use std::time::Duration;

use serde_json::{json, Value};

use super::Context;
use crate::client::resource::builtin;
use crate::client::Client;
use crate::kcm::replicaset::pods::{is_deleting, object_key};
use crate::kcm::replicaset::sync::error_text;
use crate::runtime::informer::Informer;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::time::parse_time_us;
use crate::runtime::worker::{self, Outcome};
use crate::runtime::workqueue::{RateLimiter, WorkQueue};

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "ttl-after-finished-controller", aliases: &["ttl-after-finished"], disabled_by_default: false };

/// `--concurrent-ttl-after-finished-syncs`'s default.
pub const CONCURRENT_SYNCS: usize = 5;

fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

/// `spec.ttlSecondsAfterFinished`.
pub fn ttl_seconds(job: &Value) -> Option<i64> {
    job.pointer("/spec/ttlSecondsAfterFinished").and_then(Value::as_i64)
}

/// The first `Complete` or `Failed` condition that is `True`.
fn finished_condition(job: &Value) -> Option<&Value> {
    job.pointer("/status/conditions")?.as_array()?.iter().find(|c| {
        matches!(c.get("type").and_then(Value::as_str), Some("Complete" | "Failed"))
            && c.get("status").and_then(Value::as_str) == Some("True")
    })
}

/// `IsJobFinished`.
pub fn is_finished(job: &Value) -> bool {
    finished_condition(job).is_some()
}

/// `needsCleanup`: a TTL is set and the Job has finished.
pub fn needs_cleanup(job: &Value) -> bool {
    ttl_seconds(job).is_some() && is_finished(job)
}

/// `jobFinishTime` in Unix microseconds, or upstream's error.
pub fn finish_time_us(job: &Value) -> Result<i64, String> {
    let (ns, name) = (meta(job, "namespace"), meta(job, "name"));
    let condition =
        finished_condition(job).ok_or_else(|| format!("unable to find the status of the finished Job {ns}/{name}"))?;
    condition
        .get("lastTransitionTime")
        .and_then(Value::as_str)
        .and_then(parse_time_us)
        .ok_or_else(|| format!("unable to find the time when the Job {ns}/{name} finished"))
}

/// `timeLeft`: microseconds until the TTL expires at `now_us` (zero or less: expired).
pub fn time_left_us(job: &Value, now_us: i64) -> Result<i64, String> {
    let Some(ttl) = ttl_seconds(job).filter(|_| is_finished(job)) else {
        return Err(format!("job {}/{} should not be cleaned up", meta(job, "namespace"), meta(job, "name")));
    };
    let finish_us = finish_time_us(job)?;
    if finish_us > now_us {
        tracing::info!(job = %object_key(job), "Warning: Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup will be deferred.");
    }
    Ok(finish_us.saturating_add(ttl.saturating_mul(1_000_000)).saturating_sub(now_us))
}

/// What `processTTL` concludes about one Job at one time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// Nothing to do: not finished, no TTL, or already being deleted.
    Ignore,
    /// Look again after this long.
    Wait(Duration),
    /// Delete it.
    Expired,
}

/// `processTTL`, without the enqueue: the caller requeues on [`Ttl::Wait`].
pub fn process_ttl(job: &Value, now_us: i64) -> Result<Ttl, String> {
    if is_deleting(job) || !needs_cleanup(job) {
        return Ok(Ttl::Ignore);
    }
    let left = time_left_us(job, now_us)?;
    if left <= 0 {
        return Ok(Ttl::Expired);
    }
    Ok(Ttl::Wait(Duration::from_micros(u64::try_from(left).unwrap_or(0))))
}

/// `addJob` and `updateJob`: whether the change queues the Job.
pub fn should_enqueue(job: &Value) -> bool {
    !is_deleting(job) && needs_cleanup(job)
}

/// The delete options: foreground propagation, on condition the uid is still the one checked.
pub fn delete_options(fresh: &Value) -> Value {
    json!({
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Foreground",
        "preconditions": {"uid": meta(fresh, "uid")},
    })
}

struct Controller<'a> {
    client: &'a Client,
    jobs: Informer,
    now_unix_us: &'a (dyn Fn() -> i64 + Send + Sync),
}

impl Controller<'_> {
    /// `processJob` for `key`.
    async fn sync(&self, key: String) -> Result<Outcome, String> {
        let Some(job) = self.jobs.get(&key) else { return Ok(Outcome::Done) };
        match process_ttl(&job, (self.now_unix_us)())? {
            Ttl::Ignore => return Ok(Outcome::Done),
            Ttl::Wait(delay) => return Ok(Outcome::RequeueAfter(delay)),
            Ttl::Expired => {}
        }
        // The cached TTL may be stale: decide again on a fresh read.
        let path = builtin::jobs().object_path(Some(meta(&job, "namespace")), meta(&job, "name"));
        let fresh = match self.client.get(&path).await {
            Ok(fresh) => fresh,
            Err(err) if err.is_not_found() => return Ok(Outcome::Done),
            Err(err) => return Err(error_text(&err)),
        };
        match process_ttl(&fresh, (self.now_unix_us)())? {
            Ttl::Ignore => Ok(Outcome::Done),
            Ttl::Wait(delay) => Ok(Outcome::RequeueAfter(delay)),
            Ttl::Expired => {
                tracing::debug!(job = %key, "cleaning up Job");
                match self.client.delete(&path, Some(&delete_options(&fresh))).await {
                    Ok(_) => Ok(Outcome::Done),
                    Err(err) => Err(error_text(&err)),
                }
            }
        }
    }
}

pub async fn run(ctx: Context) {
    let controller =
        Controller { client: &ctx.client, jobs: ctx.informers.get(&builtin::jobs()), now_unix_us: &*ctx.now_unix_us };
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut job_events = controller.jobs.subscribe();
    let feed = async {
        while let Some(delta) = job_events.recv().await {
            // Deleted Jobs need nothing; added and updated ones are looked at if they may need cleaning up.
            if matches!(delta.notice, Notice::Add | Notice::Update) && should_enqueue(&delta.object) {
                queue.add(object_key(&delta.object));
            }
        }
    };
    let work = async {
        controller.jobs.wait_synced().await;
        worker::run(DESCRIPTOR.name, &queue, CONCURRENT_SYNCS, |key| controller.sync(key)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::time::format_micro_time;

    const NOW_US: i64 = 1_700_000_000_000_000;

    fn job(ttl: Option<i64>, conditions: Value) -> Value {
        let mut j = json!({"metadata": {"name": "j", "namespace": "ns", "uid": "u1"}, "spec": {}, "status": {"conditions": conditions}});
        if let Some(t) = ttl {
            j["spec"]["ttlSecondsAfterFinished"] = json!(t);
        }
        j
    }

    fn cond(kind: &str, status: &str, at_us: i64) -> Value {
        json!({"type": kind, "status": status, "lastTransitionTime": format_micro_time(at_us)})
    }

    const S: i64 = 1_000_000;

    #[test]
    fn ttls_expire_after_the_finish_time() {
        let ms = Duration::from_millis;
        let cases = [
            ("no TTL", job(None, json!([cond("Complete", "True", NOW_US)])), Ok(Ttl::Ignore)),
            ("not finished", job(Some(1), json!([])), Ok(Ttl::Ignore)),
            ("a false condition", job(Some(1), json!([cond("Complete", "False", NOW_US)])), Ok(Ttl::Ignore)),
            ("suspended is no finish", job(Some(1), json!([cond("Suspended", "True", NOW_US)])), Ok(Ttl::Ignore)),
            ("finished just now", job(Some(1), json!([cond("Complete", "True", NOW_US)])), Ok(Ttl::Wait(ms(1000)))),
            (
                "finished 400 ms ago",
                job(Some(1), json!([cond("Complete", "True", NOW_US - 400_000)])),
                Ok(Ttl::Wait(ms(600))),
            ),
            ("exactly expired", job(Some(1), json!([cond("Complete", "True", NOW_US - S)])), Ok(Ttl::Expired)),
            ("failed long ago", job(Some(10), json!([cond("Failed", "True", NOW_US - 60 * S)])), Ok(Ttl::Expired)),
            ("TTL zero", job(Some(0), json!([cond("Failed", "True", NOW_US)])), Ok(Ttl::Expired)),
            (
                "finished in the future waits longer",
                job(Some(1), json!([cond("Complete", "True", NOW_US + 2 * S)])),
                Ok(Ttl::Wait(ms(3000))),
            ),
            (
                "the first finishing condition counts",
                job(Some(5), json!([cond("Failed", "False", NOW_US), cond("Complete", "True", NOW_US - 4 * S)])),
                Ok(Ttl::Wait(ms(1000))),
            ),
            (
                "no finish time",
                job(Some(1), json!([{"type": "Complete", "status": "True"}])),
                Err("unable to find the time when the Job ns/j finished".to_string()),
            ),
        ];
        for (name, job, want) in cases {
            assert_eq!(process_ttl(&job, NOW_US), want, "{name}");
        }
        let mut deleting = job(Some(0), json!([cond("Complete", "True", NOW_US - S)]));
        assert!(should_enqueue(&deleting));
        deleting["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        assert_eq!(process_ttl(&deleting, NOW_US), Ok(Ttl::Ignore));
        assert!(!should_enqueue(&deleting));
    }

    #[test]
    fn deletion_is_foreground_and_guarded_by_uid() {
        let options = delete_options(&job(Some(1), json!([])));
        assert_eq!(options["propagationPolicy"], "Foreground");
        assert_eq!(options["preconditions"], json!({"uid": "u1"}));
        assert_eq!(
            time_left_us(&job(Some(1), json!([])), NOW_US),
            Err("job ns/j should not be cleaned up".to_string())
        );
    }
}
