//! [`CacherState`]: everything the Cacher's tasks share, kept under one lock and changed only by short,
//! synchronous methods (never across an `.await`): the watch cache, readiness, and the registered watchers.
//!
//! Applying an event and dispatching it to watchers happen in the same critical section, and so do
//! computing a new watcher's initial events and registering it: a watcher therefore sees every event after
//! its start exactly once (kubernetes #49956, kubernetes PR #73845). A (re)list ends every watcher (their streams close
//! without an ERROR event) and starts a new readiness generation, so a watch that passed the
//! readiness check before the relist is not registered on the new one (A6).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::watch_cache::{CachedEvent, WatchCache};
use crate::storage::error::StorageError;
use crate::storage::resource_version::ResourceVersion;

/// What the dispatcher hands a watcher.
#[derive(Clone, Debug)]
pub(super) enum Input {
    Event(Arc<CachedEvent>),
    Bookmark(ResourceVersion),
}

/// Events a watcher may have queued before it counts as unresponsive and is closed (upstream sizes this
/// between 10 and 1,000 from the history's rate; 100 is its value without an index).
pub(super) const WATCHER_INPUT_CAPACITY: usize = 100;

/// Whether the cache serves requests.
#[derive(Clone, Debug)]
enum Readiness {
    /// Initializing or re-listing since `since`; `error` is why the last list-and-watch failed, if it did.
    Pending {
        since: Instant,
        error: Option<String>,
    },
    Ready,
}

/// A registered watcher: where its events go and, if it takes bookmarks, when the next one is due.
struct Slot {
    input: mpsc::Sender<Input>,
    next_bookmark: Option<Instant>,
}

/// The Cacher's shared state.
pub(super) struct CacherState {
    pub(super) cache: WatchCache,
    readiness: Readiness,
    /// Bumped by every (re)list; a watch registers only on the generation it checked readiness in.
    generation: u64,
    watchers: BTreeMap<u64, Slot>,
    next_watcher: u64,
    /// Reads waiting for the cache to catch up; while nonzero, etcd is asked for progress.
    pub(super) waiting_fresh: usize,
    /// Asks the reflector's current etcd watch for a progress notification.
    pub(super) progress: Option<mpsc::UnboundedSender<()>>,
}

impl CacherState {
    pub(super) fn new(capacity: usize, now: Instant) -> CacherState {
        CacherState {
            cache: WatchCache::new(capacity),
            readiness: Readiness::Pending { since: now, error: None },
            generation: 0,
            watchers: BTreeMap::new(),
            next_watcher: 0,
            waiting_fresh: 0,
            progress: None,
        }
    }

    /// The readiness generation, or the 429 kube-apiserver answers while the cache is not ready.
    pub(super) fn ready_generation(&self, now: Instant) -> Result<u64, StorageError> {
        match &self.readiness {
            Readiness::Ready => Ok(self.generation),
            Readiness::Pending { since, error } => {
                let message = match error {
                    None => "storage is (re)initializing".to_string(),
                    Some(e) => format!("storage is (re)initializing: {e}"),
                };
                Err(StorageError::NotReady { message, retry_after_s: retry_after_unready(now - *since) })
            }
        }
    }

    pub(super) fn is_ready(&self) -> bool {
        matches!(self.readiness, Readiness::Ready)
    }

    /// The list-and-watch stopped (with `error` if it failed): the cache is pending until the next list.
    pub(super) fn set_pending(&mut self, now: Instant, error: Option<String>) {
        if self.is_ready() {
            self.readiness = Readiness::Pending { since: now, error };
        } else if let Readiness::Pending { error: last, .. } = &mut self.readiness {
            *last = error;
        }
        self.progress = None;
    }

    /// Ends every watcher's stream (they see the end, not an error).
    pub(super) fn terminate_all_watchers(&mut self) {
        self.watchers.clear();
    }

    /// A (re)list at `rv`: the cache starts over from `items`, every watcher ends, and a new generation is ready.
    pub(super) fn replace(&mut self, items: Vec<(String, Value)>, rv: ResourceVersion) {
        self.terminate_all_watchers();
        self.cache.replace(items, rv);
        self.generation += 1;
        self.readiness = Readiness::Ready;
    }

    /// Applies an event from etcd and dispatches it. A watcher whose queue is full is closed, as upstream
    /// closes watchers that do not keep up (without its 100 ms grace budget).
    pub(super) fn apply(&mut self, event: CachedEvent) -> Result<(), StorageError> {
        self.cache.apply(event)?;
        let applied = self.cache.last_event().cloned().expect("an event was just applied");
        let applied = Arc::new(applied);
        self.watchers.retain(|_, slot| slot.input.try_send(Input::Event(applied.clone())).is_ok());
        Ok(())
    }

    /// Registers a watcher on generation `generation`; `None` if the cache was re-initialized since (the
    /// watch then ends at once, as upstream's immediate-close watcher).
    pub(super) fn register(
        &mut self,
        generation: u64,
        input: mpsc::Sender<Input>,
        next_bookmark: Option<Instant>,
    ) -> Option<u64> {
        if !self.is_ready() || generation != self.generation {
            return None;
        }
        let id = self.next_watcher;
        self.next_watcher += 1;
        self.watchers.insert(id, Slot { input, next_bookmark });
        Some(id)
    }

    /// Hands a bookmark at the cache's resourceVersion to every watcher whose bookmark is due at `now`, and
    /// schedules its next one `frequency` later. A full queue just skips the bookmark.
    pub(super) fn dispatch_bookmarks(&mut self, now: Instant, frequency: Duration) {
        let rv = self.cache.resource_version();
        if rv.0 == 0 || !self.is_ready() {
            return;
        }
        self.watchers.retain(|_, slot| {
            if let Some(due) = slot.next_bookmark.filter(|due| *due <= now) {
                slot.next_bookmark = Some(due.max(now) + frequency);
                if let Err(mpsc::error::TrySendError::Closed(_)) = slot.input.try_send(Input::Bookmark(rv)) {
                    return false;
                }
            }
            !slot.input.is_closed()
        });
    }
}

/// kube-apiserver's Retry-After for a cache that has not been ready for `downtime`: e^(0.06 s), kept within
/// 1..=30 s and truncated (`calculateRetryAfterForUnreadyCache`).
fn retry_after_unready(downtime: Duration) -> i32 {
    (0.06 * downtime.as_secs_f64()).exp().clamp(1.0, 30.0) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_grows_with_downtime() {
        let cases = [(0, 1), (10, 1), (12, 2), (30, 6), (56, 28), (57, 30), (600, 30)];
        for (secs, want) in cases {
            assert_eq!(retry_after_unready(Duration::from_secs(secs)), want, "{secs} s");
        }
    }
}
