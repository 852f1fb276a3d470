//! What a `wait` step waits for: a leader, or a condition on a watch's stream, polled on the simulated
//! clock (which is deterministic).

use std::time::Duration;

use super::ctx::Ctx;
use crate::scenario::plan::{WaitPlan, WatchCondition};
use crate::scenario::request::Known;

/// Checks `condition` every 10ms of simulated time until it gives a value or `timeout` passes.
pub(super) async fn poll<T>(timeout: Duration, mut condition: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = madsim::time::Instant::now() + timeout;
    loop {
        if let Some(v) = condition() {
            return Some(v);
        }
        if madsim::time::Instant::now() >= deadline {
            return None;
        }
        madsim::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(super) async fn wait(ctx: &Ctx, plan: &WaitPlan) -> Result<(), String> {
    match plan {
        WaitPlan::Leader { timeout_ms } => {
            if crate::cluster::leader_elected(&ctx.endpoints, Duration::from_millis(*timeout_ms)).await {
                Ok(())
            } else {
                Err(format!("timed out after {timeout_ms}ms: no member reported a leader"))
            }
        }
        WaitPlan::Watch { watch, condition, timeout_ms } => {
            let id = ctx.board.lock().watches.get(watch).map(|w| w.id);
            let Some(id) = id else {
                return Err(format!("watch {watch} is not open"));
            };
            let board = ctx.board.clone();
            let holds = poll(Duration::from_millis(*timeout_ms), || {
                let h = ctx.history.lock();
                let responses = &h.watches[id.0].responses;
                let ok = match condition {
                    WatchCondition::Events(n) => responses.iter().map(|r| r.response.events.len()).sum::<usize>() >= *n,
                    WatchCondition::Canceled => responses.iter().any(|r| r.response.canceled),
                    WatchCondition::Progress => responses.iter().any(|r| r.response.is_progress_notify()),
                    WatchCondition::Revision(e) => responses.iter().any(|r| {
                        let vouched = match r.response.events.last() {
                            Some(ev) => ev.revision().0,
                            None if r.response.is_progress_notify() => r.response.header_revision.0,
                            None => return false,
                        };
                        e.matches(vouched, &|s| board.revision(s)).unwrap_or(false)
                    }),
                };
                ok.then_some(())
            })
            .await;
            holds.ok_or_else(|| format!("timed out after {timeout_ms}ms"))
        }
    }
}
