//! The CronJob controller (`cronjob-controller`, alias `cronjob`; kube-controller-manager 1.32's
//! "CronJob controller v2", `pkg/controller/cronjob/cronjob_controllerv2.go` and `utils.go`): every CronJob
//! gets a Job per activation of its schedule, named `<cronjob>-<activation in minutes since the epoch>`,
//! within `startingDeadlineSeconds`, under its `concurrencyPolicy`, not while `suspend`ed; its status lists
//! the active Jobs and the last schedule and success times; finished Jobs past the history limits go,
//! oldest first.
//!
//! This module is the shell: the CronJob and Job informers feed the [`handlers`], whose actions fill the
//! work queue; five workers (`--concurrent-cron-job-syncs`) run [`sync::Controller::sync`] once both
//! informers have synced, and each sync requeues its CronJob for the next activation. The rules are
//! sans-IO: robfig/cron's parser and its "next activation after t" are the apiserver's ([`apiserver::cron`],
//! the port CronJob validation uses too); the other files hold `timing` (the most recent activation due, missed ones, the wait to the next), `decide` (what one sync
//! starts), `jobs` (the Job made from the template, finished Jobs, the history limits).
//!
//! Time: the time of day (which activation is due, `lastScheduleTime`) comes from the context's
//! `now_unix_us`; the waits between activations run on tokio's clock (madsim's simulated one under
//! simulation). [`Options::clock_speedup`] lets a test run `now_unix_us` faster than tokio's clock.
//!
//! Time zones: `spec.timeZone` (and a `TZ=`/`CRON_TZ=` prefix, which the apiserver refuses on create and
//! this controller still reads, warning `UnsupportedSchedule`, as upstream) is read by
//! [`apiserver::cron::load_location`], Go's `time.LoadLocation` over the IANA database, daylight saving
//! included. A zone it does not know is reported as upstream reports one (`UnknownTimeZone`, no Job
//! started).

pub mod decide;
pub mod handlers;
pub mod jobs;
pub mod sync;
pub mod timing;

use super::Context;
use crate::client::resource::builtin;
use crate::runtime::events::EventType;
use crate::runtime::selection::Descriptor;
use crate::runtime::store::Notice;
use crate::runtime::worker;
use crate::runtime::workqueue::{RateLimiter, WorkQueue};
use handlers::Action;
use sync::Controller;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "cronjob-controller", aliases: &["cronjob"], disabled_by_default: false };

/// `--concurrent-cron-job-syncs`' default.
pub const CONCURRENT_SYNCS: usize = 5;

/// The controller's settings; [`run`] uses upstream's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub workers: usize,
    /// How many times faster the context's `now_unix_us` runs than tokio's clock: 1 in kubesim, more in a
    /// test that wants a minute's schedule to pass in a second.
    pub clock_speedup: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options { workers: CONCURRENT_SYNCS, clock_speedup: 1 }
    }
}

pub async fn run(ctx: Context) {
    run_with(ctx, Options::default()).await;
}

/// The controller with `options`, for as long as the future lives.
pub async fn run_with(ctx: Context, options: Options) {
    let controller = Controller {
        client: ctx.client.clone(),
        cron_jobs: ctx.informers.get(&builtin::cron_jobs()),
        jobs: ctx.informers.get(&builtin::jobs()),
        events: ctx.events.clone(),
        now_unix_us: ctx.now_unix_us.clone(),
        clock_speedup: options.clock_speedup.max(1),
    };
    let queue = WorkQueue::new(RateLimiter::default_controller());
    let mut cron_job_events = controller.cron_jobs.subscribe();
    let mut job_events = controller.jobs.subscribe();
    // Warnings from the handlers are recorded by the feed itself, in the order they came.
    let apply = |actions: Vec<Action>| {
        let mut warnings = Vec::new();
        for action in actions {
            match action {
                Action::Enqueue(key) => queue.add(key),
                Action::EnqueueAfter(key, after) => queue.add_after(key, after / controller.clock_speedup),
                Action::Warn { cronjob, reason, message } => warnings.push((cronjob, reason, message)),
            }
        }
        warnings
    };
    let feed = async {
        let cron_jobs = |key: &str| controller.cron_jobs.get(key);
        loop {
            let warnings = tokio::select! {
                biased;
                Some(delta) = cron_job_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Update, Some(old)) => {
                        handlers::cron_job_updated(old, &delta.object, (controller.now_unix_us)())
                    }
                    _ => handlers::cron_job_added_or_deleted(&delta.object),
                }),
                Some(delta) = job_events.recv() => apply(match (delta.notice, &delta.old) {
                    (Notice::Add, _) | (Notice::Update, None) => handlers::job_added(&delta.object, &cron_jobs),
                    (Notice::Update, Some(old)) => handlers::job_updated(old, &delta.object, &cron_jobs),
                    (Notice::Delete | Notice::DeleteTombstone, _) => handlers::job_deleted(&delta.object, &cron_jobs),
                }),
                else => break,
            };
            for (mut cronjob, reason, message) in warnings {
                cronjob["kind"] = "CronJob".into();
                cronjob["apiVersion"] = "batch/v1".into();
                controller.events.record(&cronjob, EventType::Warning, reason, &message).await;
            }
        }
    };
    let work = async {
        controller.cron_jobs.wait_synced().await;
        controller.jobs.wait_synced().await;
        worker::run(DESCRIPTOR.name, &queue, options.workers, |key| controller.sync(key)).await;
    };
    tokio::select! {
        biased;
        _ = feed => {}
        _ = work => {}
    }
}
