//! [`CacherState`]: everything the Cacher's tasks share, kept under one lock and changed only by short,
//! synchronous methods (never across an `.await`): the watch cache, readiness, and the registered watchers.
//!
//! Applying an event and dispatching it to watchers happen in the same critical section, and so do
//! computing a new watcher's initial events and registering it ([`CacherState::start_watch`]): a watcher
//! therefore sees every event after its start exactly once (kubernetes #49956, kubernetes PR #73845). A
//! (re)list ends every watcher (their streams close without an ERROR event) and starts a new readiness
//! generation, so a watch that passed the readiness check before the relist is not registered on the new
//! one (kubernetes #116122).
//!
//! Three bug switches (`crate::bug`) undo parts of this: `watcher-resends-initial-events` dispatches an
//! applied event in a later critical section, as upstream's Cacher did through its `incoming` channel;
//! `watch-registers-on-old-generation` registers a watch whatever happened since its readiness check, and
//! lets a relist keep the watchers registered meanwhile; `bookmarks-from-zero-after-init` gives bookmarks
//! the dispatcher's own last processed resourceVersion, which starts at 0.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::config::CacherConfig;
use super::watch_cache::{WatchCache, WatchCacheConfig};
use crate::bug::{Bug, Bugs};
use crate::storage::error::StorageError;
use crate::storage::resource_version::ResourceVersion;
use crate::storage::watch::CachedEvent;

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

/// Where a new watch starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Start {
    /// sendInitialEvents: the current state, then what follows.
    State,
    /// "0" with sendInitialEvents=false ("start at any"): from where the cache is, without its state.
    Now,
    /// The events after this resourceVersion; after 0, the current state (the legacy "0").
    After(ResourceVersion),
}

/// A registered watch's beginning.
#[derive(Debug)]
pub(super) struct Started {
    pub(super) initial: Vec<CachedEvent>,
    /// Where the watcher starts: it forwards only dispatched events and bookmarks above this.
    pub(super) position: ResourceVersion,
    /// The cache's resourceVersion when the initial events were taken.
    pub(super) cache_rv: ResourceVersion,
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
    bugs: Bugs,
    /// Applied but not yet dispatched; only ever non-empty with `watcher-resends-initial-events`.
    undispatched: VecDeque<Arc<CachedEvent>>,
    /// The resourceVersion of the last event or progress notification, 0 until the first: upstream's
    /// dispatcher's `lastProcessedResourceVersion`, which bookmarks carry with
    /// `bookmarks-from-zero-after-init`.
    last_processed: ResourceVersion,
    /// The newest event dispatched in this generation: every event goes to the watchers once, in order
    /// (each `CacheWatcher` asserts the same on what it reads).
    last_dispatched: ResourceVersion,
}

impl CacherState {
    pub(super) fn new(config: &CacherConfig, now: Instant) -> CacherState {
        let cache = WatchCache::with_config(WatchCacheConfig {
            capacity: config.history_capacity,
            empty_history_accepts_older_rv: config.bugs.has(Bug::EmptyHistoryAcceptsOlderRv),
        });
        CacherState {
            cache,
            readiness: Readiness::Pending { since: now, error: None },
            generation: 0,
            watchers: BTreeMap::new(),
            next_watcher: 0,
            waiting_fresh: 0,
            progress: None,
            bugs: config.bugs.clone(),
            undispatched: VecDeque::new(),
            last_processed: ResourceVersion(0),
            last_dispatched: ResourceVersion(0),
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
    ///
    /// With `watch-registers-on-old-generation` the watchers registered since the round began stay, as with
    /// upstream's `watchCache.Replace`, which never touched them: only the round's start ended watchers.
    pub(super) fn replace(&mut self, items: Vec<(String, Value)>, rv: ResourceVersion) {
        if !self.bugs.has(Bug::WatchRegistersOnOldGeneration) {
            self.terminate_all_watchers();
        }
        self.undispatched.clear();
        self.last_dispatched = ResourceVersion(0);
        self.cache.replace(items, rv);
        self.generation += 1;
        self.readiness = Readiness::Ready;
    }

    /// Applies an event from etcd and dispatches it. A watcher whose queue is full is closed, as upstream
    /// closes watchers that do not keep up (without its 100 ms grace budget).
    ///
    /// With `watcher-resends-initial-events` the event only joins the undispatched queue, and the reflector
    /// dispatches it in a later critical section ([`CacherState::dispatch_undispatched`]): upstream's Cacher
    /// applied an event to its watch cache and handed it to the dispatcher through a channel, so a watch
    /// could start in between and find the event both in the cache and, later, in its input.
    pub(super) fn apply(&mut self, event: CachedEvent) -> Result<(), StorageError> {
        self.cache.apply(event)?;
        let applied = self.cache.last_event().cloned().expect("an event was just applied");
        self.last_processed = applied.resource_version;
        let applied = Arc::new(applied);
        if self.bugs.has(Bug::WatcherResendsInitialEvents) {
            self.undispatched.push_back(applied);
        } else {
            self.dispatch(applied);
        }
        Ok(())
    }

    /// Dispatches what was applied but not yet dispatched (see [`CacherState::apply`]).
    pub(super) fn dispatch_undispatched(&mut self) {
        while let Some(event) = self.undispatched.pop_front() {
            self.dispatch(event);
        }
    }

    fn dispatch(&mut self, event: Arc<CachedEvent>) {
        assert!(
            event.resource_version > self.last_dispatched,
            "cacher: dispatching {} after {}",
            event.resource_version,
            self.last_dispatched
        );
        self.last_dispatched = event.resource_version;
        self.watchers.retain(|_, slot| slot.input.try_send(Input::Event(event.clone())).is_ok());
    }

    /// A progress notification from etcd: every event up to `rv` has been applied.
    pub(super) fn progress(&mut self, rv: ResourceVersion) {
        self.cache.progress(rv);
        self.last_processed = self.cache.resource_version();
    }

    /// Starts a watch that checked readiness in generation `generation`, in one critical section: its
    /// initial events, where it starts, and its registration. `Ok(None)` if the cache was re-initialized
    /// since (the watch ends at once, as upstream's immediate-close watcher); `Err` if the cache cannot
    /// serve `start` (410).
    ///
    /// With `watcher-resends-initial-events`, a watch from N starts at N, and one from "0" at 0, as before
    /// kubernetes PR #73845 (the watcher then does not move past its initial events either).
    pub(super) fn start_watch(
        &mut self,
        generation: u64,
        start: Start,
        input: mpsc::Sender<Input>,
        next_bookmark: Option<Instant>,
    ) -> Result<Option<Started>, StorageError> {
        let cache_rv = self.cache.resource_version();
        let (initial, position) = match start {
            Start::State => (self.cache.current_state(), cache_rv),
            Start::Now => (Vec::new(), cache_rv),
            Start::After(rv) => {
                let from_requested = rv.0 != 0 || self.bugs.has(Bug::WatcherResendsInitialEvents);
                (self.cache.events_after(rv)?, if from_requested { rv } else { cache_rv })
            }
        };
        if self.register(generation, input, next_bookmark).is_none() {
            return Ok(None);
        }
        Ok(Some(Started { initial, position, cache_rv }))
    }

    /// Registers a watcher on generation `generation`; `None` if the cache was re-initialized since.
    ///
    /// With `watch-registers-on-old-generation`, the code before kubernetes PR #116172: the watcher is
    /// registered whether or not the cache is still ready and on that generation.
    fn register(&mut self, generation: u64, input: mpsc::Sender<Input>, next_bookmark: Option<Instant>) -> Option<u64> {
        let current = self.is_ready() && generation == self.generation;
        if !current && !self.bugs.has(Bug::WatchRegistersOnOldGeneration) {
            return None;
        }
        let id = self.next_watcher;
        self.next_watcher += 1;
        self.watchers.insert(id, Slot { input, next_bookmark });
        Some(id)
    }

    /// Hands a bookmark at the cache's resourceVersion to every watcher whose bookmark is due at `now`, and
    /// schedules its next one `frequency` later. A full queue just skips the bookmark.
    ///
    /// With `bookmarks-from-zero-after-init` the bookmark's resourceVersion is the last processed one, which
    /// stays 0 after the first list until an event or a progress notification arrives (upstream's dispatcher
    /// did not learn the list's resourceVersion before its fix of kubernetes #125288), and no watcher gets a
    /// bookmark while it is 0.
    pub(super) fn dispatch_bookmarks(&mut self, now: Instant, frequency: Duration) {
        // A bookmark must not overtake an event still waiting for dispatch.
        self.dispatch_undispatched();
        let rv = if self.bugs.has(Bug::BookmarksFromZeroAfterInit) {
            self.last_processed
        } else {
            self.cache.resource_version()
        };
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
