//! Starting a client watch on the cache (`Cacher.Watch` in kube-apiserver 1.33).
//!
//! A bad resourceVersion and a cache that is not ready fail the request itself (400, 429); every later
//! failure is one ERROR event on an accepted watch. The resourceVersion the cache must reach
//! first: the requested one; for "" with sendInitialEvents, etcd's current revision (a consistent start);
//! for "" without it, any (the legacy behaviour, like "0"). Only a watch with sendInitialEvents waits for
//! the cache (3 s, then the 504), because a plain watch from a future resourceVersion simply waits for
//! events (W4). The initial events are the current state (sendInitialEvents, or "0" without it), else the
//! history after the resourceVersion, or 410 "too old resource version" (W3). A watch-list request
//! (sendInitialEvents with bookmarks) ends its initial events with a bookmark annotated
//! `k8s.io/initial-events-end` at the cache's resourceVersion (B3, B6), and needs etcd's
//! `RequestWatchProgress` (B5).
//!
//! Between the readiness check and the registration sits the failpoint
//! `crate::failpoint::Point::CacherWatchBetweenReadyAndRegister`, where a harness holds a watch while the
//! cache re-initializes (kubernetes #116122). The bug switches that concern a new watch are read here and
//! in `state` and `cache_watcher`: `watcher-resends-initial-events`, `watch-registers-on-old-generation`,
//! `bookmarks-from-zero-after-init` and `no-initial-events-end-bookmark` (`crate::bug`).

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::cache_watcher::CacheWatcher;
use super::state::{Start, WATCHER_INPUT_CAPACITY};
use super::Cacher;
use crate::bug::Bug;
use crate::failpoint::{Injected, Point};
use crate::storage::error::StorageError;
use crate::storage::options::ListOptions;
use crate::storage::resource_version::ResourceVersion;
use crate::storage::status::Operation;
use crate::storage::watch::{WatchEvent, Watcher};
use crate::storage::Storage;

/// Events buffered for a client that reads slowly, before its watcher task waits for it.
const OUT_BUFFER: usize = 100;

impl Cacher {
    pub(super) async fn watch_objects(&self, key: &str, opts: &ListOptions) -> Result<Watcher, StorageError> {
        let shared = &self.shared;
        let config = &shared.config;
        let requested = ResourceVersion::parse(&opts.resource_version)?;
        let generation = shared.lock().ready_generation(Instant::now())?;
        let fail = |e: StorageError| {
            let status = e.to_status(Operation::Watch, &config.resource, "");
            Ok(Watcher::failed(WatchEvent::Error(Box::new(status))))
        };
        let point = Point::CacherWatchBetweenReadyAndRegister;
        match config.failpoints.eval(point).await {
            Ok(()) => {}
            Err(Injected::Drop) => return Ok(closed_watcher()),
            Err(Injected::Error) => return Err(StorageError::Internal(point.message())),
        }
        let send_initial_events = opts.send_initial_events == Some(true);
        let watch_list = send_initial_events && opts.allow_watch_bookmarks;
        if watch_list && !config.requests_watch_progress() {
            return fail(StorageError::FeatureDisabled("RequestWatchProgress".into()));
        }
        let required = if !opts.resource_version.is_empty() || opts.send_initial_events.is_none() {
            requested
        } else {
            match shared.store.current_resource_version().await {
                Ok(rv) => rv,
                Err(e) => return fail(e),
            }
        };
        if send_initial_events {
            if let Err(e) = shared.wait_until_fresh(required, config.requests_watch_progress()).await {
                return fail(e);
            }
        }
        let start = if send_initial_events {
            Start::State
        } else if requested.0 == 0 && opts.send_initial_events == Some(false) {
            Start::Now
        } else {
            Start::After(required)
        };
        // Before kubernetes PR #127012 the dispatcher sent a watch-list request's end bookmark, at its next
        // tick: such a watcher's bookmark is due at once.
        let end_from_dispatcher = watch_list && config.bugs.has(Bug::BookmarksFromZeroAfterInit);
        let now = Instant::now();
        let next_bookmark =
            opts.allow_watch_bookmarks.then(|| if end_from_dispatcher { now } else { now + config.bookmark_frequency });
        let (input_tx, input) = mpsc::channel(WATCHER_INPUT_CAPACITY);
        let started = shared.lock().start_watch(generation, start, input_tx, next_bookmark);
        let started = match started {
            Ok(Some(started)) => started,
            // Re-initialized since the readiness check: the watch ends at once.
            Ok(None) => return Ok(closed_watcher()),
            Err(e) => return fail(e),
        };
        let end = watch_list.then_some(started.cache_rv).filter(|_| !config.bugs.has(Bug::NoInitialEventsEndBookmark));
        let (initial_end, end_on_bookmark) = if end_from_dispatcher { (None, end) } else { (end, None) };
        let (out, events) = mpsc::channel(OUT_BUFFER);
        let watcher = CacheWatcher {
            key_prefix: format!("{}/", key.trim_end_matches('/')),
            predicate: opts.predicate.clone(),
            allow_bookmarks: opts.allow_watch_bookmarks,
            position: started.position,
            advance_past_initial: !config.bugs.has(Bug::WatcherResendsInitialEvents),
            end_on_bookmark,
            out,
            failpoints: config.failpoints.clone(),
        };
        tokio::spawn(watcher.run(started.initial, initial_end, input));
        let (progress, _) = mpsc::unbounded_channel();
        Ok(Watcher::new(events, progress))
    }
}

/// A watch that ends at once, without events (upstream's immediate-close watcher).
fn closed_watcher() -> Watcher {
    let (_, closed) = mpsc::channel(1);
    let (progress, _) = mpsc::unbounded_channel();
    Watcher::new(closed, progress)
}
