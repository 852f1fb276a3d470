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

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::cache_watcher::CacheWatcher;
use super::state::WATCHER_INPUT_CAPACITY;
use super::Cacher;
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
        let requested = ResourceVersion::parse(&opts.resource_version)?;
        let generation = shared.lock().ready_generation(Instant::now())?;
        let fail = |e: StorageError| {
            let status = e.to_status(Operation::Watch, &shared.config.resource, "");
            Ok(Watcher::failed(WatchEvent::Error(Box::new(status))))
        };
        let send_initial_events = opts.send_initial_events == Some(true);
        let watch_list = send_initial_events && opts.allow_watch_bookmarks;
        if watch_list && !shared.config.request_watch_progress {
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
            if let Err(e) = shared.wait_until_fresh(required, shared.config.request_watch_progress).await {
                return fail(e);
            }
        }
        let (input_tx, input) = mpsc::channel(WATCHER_INPUT_CAPACITY);
        let (out, events) = mpsc::channel(OUT_BUFFER);
        let (initial, position, initial_end) = {
            let mut state = shared.lock();
            let cache_rv = state.cache.resource_version();
            let initial = if send_initial_events {
                Ok((state.cache.current_state(), cache_rv))
            } else if requested.0 == 0 && opts.send_initial_events == Some(false) {
                // "Start at any": from where the cache is, without its state.
                Ok((Vec::new(), cache_rv))
            } else {
                let position = if required.0 == 0 { cache_rv } else { required };
                state.cache.events_after(required).map(|events| (events, position))
            };
            let (initial, position) = match initial {
                Ok(found) => found,
                Err(e) => {
                    drop(state);
                    return fail(e);
                }
            };
            let next_bookmark = opts.allow_watch_bookmarks.then(|| Instant::now() + shared.config.bookmark_frequency);
            if state.register(generation, input_tx, next_bookmark).is_none() {
                // Re-initialized since the readiness check: the watch ends at once.
                drop(state);
                let (_, closed) = mpsc::channel(1);
                let (progress, _) = mpsc::unbounded_channel();
                return Ok(Watcher::new(closed, progress));
            }
            (initial, position, watch_list.then_some(cache_rv))
        };
        let watcher = CacheWatcher {
            key_prefix: format!("{}/", key.trim_end_matches('/')),
            predicate: opts.predicate.clone(),
            allow_bookmarks: opts.allow_watch_bookmarks,
            position,
            out,
        };
        tokio::spawn(watcher.run(initial, initial_end, input));
        let (progress, _) = mpsc::unbounded_channel();
        Ok(Watcher::new(events, progress))
    }
}
