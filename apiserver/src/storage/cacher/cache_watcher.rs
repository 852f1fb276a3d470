//! [`CacheWatcher`]: one client watch served from the cache, as upstream's `cacheWatcher`. A task sends the
//! watch's initial events, then turns dispatched cache events into the client's [`WatchEvent`]s.
//!
//! Per event it applies the key prefix and the selector to the object before and after the change: an object
//! that starts matching is ADDED, one that stops matching is DELETED with its previous state at the event's
//! resourceVersion, one never matching is skipped. It forwards only events newer than
//! its starting point, so nothing of the initial events repeats or goes back in time (kubernetes PR #73845).
//! The stream ends, without an ERROR event, when the Cacher drops its queue (re-initialization or a full
//! queue).
//!
//! Two bug switches (`crate::bug`) change it: with `watcher-resends-initial-events` it stays at its
//! requested starting point while it sends its initial events (`advance_past_initial` is false); with
//! `bookmarks-from-zero-after-init` a watch-list request's initial-events-end bookmark waits for the
//! dispatcher's next bookmark (`end_on_bookmark`), as before kubernetes PR #127012 moved it here.
//!
//! Invariants it asserts on what it reads (the Cacher's dispatch asserts the same order on what it writes):
//! initial events come in resourceVersion order, and dispatched events each once, in strictly increasing
//! resourceVersion order; with its starting point advancing past the initial events, nothing it forwards
//! goes back in time.

use tokio::sync::mpsc;

use super::state::Input;
use crate::failpoint::{Failpoints, Injected, Point};
use crate::storage::object::{Object, SharedObject};
use crate::storage::options::SelectionPredicate;
use crate::storage::resource_version::ResourceVersion;
use crate::storage::watch::{CachedEvent, EventKind, WatchEvent};

/// A watch served from the cache.
pub(super) struct CacheWatcher {
    /// Keys this watch covers start with this (the watched key and a '/').
    pub(super) key_prefix: String,
    pub(super) predicate: SelectionPredicate,
    pub(super) allow_bookmarks: bool,
    /// Where the watch starts: its initial events cover everything up to here, so a dispatched event or
    /// bookmark is forwarded only if newer. It stays put afterwards, as upstream's: events arrive in order,
    /// and a bookmark at the last event's resourceVersion is still news.
    pub(super) position: ResourceVersion,
    /// Whether `position` moves up to the newest initial event as they are sent (kubernetes PR #73845);
    /// false only with the `watcher-resends-initial-events` switch.
    pub(super) advance_past_initial: bool,
    /// A watch-list request whose initial-events-end bookmark is owed at or after this resourceVersion and
    /// comes with the first dispatched bookmark that reaches it; only with `bookmarks-from-zero-after-init`
    /// (otherwise `run` sends it right after the initial events).
    pub(super) end_on_bookmark: Option<ResourceVersion>,
    pub(super) out: mpsc::Sender<WatchEvent>,
    /// The apiserver's failpoints (`before-bookmark-send`).
    pub(super) failpoints: Failpoints,
}

impl CacheWatcher {
    /// Sends `initial` (then the initial-events-end bookmark at `initial_end`, if asked for), then every
    /// event from `input` until the Cacher drops it or the client drops its watcher.
    pub(super) async fn run(
        mut self,
        initial: Vec<CachedEvent>,
        initial_end: Option<ResourceVersion>,
        mut input: mpsc::Receiver<Input>,
    ) {
        debug_assert!(
            initial.windows(2).all(|w| w[0].resource_version <= w[1].resource_version),
            "cache watcher: initial events out of order"
        );
        // The newest dispatched event: the Cacher hands each event once, in order.
        let mut last_dispatched = ResourceVersion(0);
        for event in &initial {
            if self.advance_past_initial {
                self.position = self.position.max(event.resource_version);
            }
            if !self.send(event).await {
                return;
            }
        }
        if let Some(rv) = initial_end {
            if self.out.send(WatchEvent::InitialEventsEnd(rv)).await.is_err() {
                return;
            }
        }
        loop {
            tokio::select! {
                biased;
                () = self.out.closed() => return,
                item = input.recv() => match item {
                    None => return,
                    Some(Input::Event(event)) => {
                        assert!(
                            event.resource_version > last_dispatched,
                            "cache watcher: dispatched {} after {last_dispatched}",
                            event.resource_version
                        );
                        last_dispatched = event.resource_version;
                        if event.resource_version > self.position && !self.send(&event).await {
                            return;
                        }
                    }
                    Some(Input::Bookmark(rv)) if self.end_on_bookmark.is_some_and(|end| rv >= end) => {
                        self.end_on_bookmark = None;
                        if self.out.send(WatchEvent::InitialEventsEnd(rv)).await.is_err() {
                            return;
                        }
                    }
                    Some(Input::Bookmark(rv)) => {
                        // A bookmark never claims more than this watcher has been sent.
                        if !self.allow_bookmarks || rv <= self.position {
                            continue;
                        }
                        match self.failpoints.eval(Point::BeforeBookmarkSend).await {
                            Ok(()) => {}
                            Err(Injected::Drop) => continue,
                            Err(Injected::Error) => return,
                        }
                        if self.out.send(WatchEvent::Bookmark(rv)).await.is_err() {
                            return;
                        }
                    }
                },
            }
        }
    }

    /// Sends what `event` is for this watch, if anything; false once the client is gone.
    async fn send(&self, event: &CachedEvent) -> bool {
        match self.convert(event) {
            Some(out) => self.out.send(out).await.is_ok(),
            None => true,
        }
    }

    fn convert(&self, event: &CachedEvent) -> Option<WatchEvent> {
        if !event.key.starts_with(&self.key_prefix) {
            return None;
        }
        let cur_passes = event.kind != EventKind::Deleted && self.predicate.matches(&event.object);
        let prev_passes = event.prev_object.as_ref().is_some_and(|p| self.predicate.matches(p));
        match (cur_passes, prev_passes) {
            (true, false) => Some(WatchEvent::Added(event.object.clone())),
            (true, true) => Some(WatchEvent::Modified(event.object.clone())),
            (false, true) => Some(WatchEvent::Deleted(at_event(event))),
            (false, false) => None,
        }
    }
}

/// The previous state of an object that left the watch, stamped with the event's resourceVersion.
fn at_event(event: &CachedEvent) -> SharedObject {
    // A deletion already carries the last state at the deletion's resourceVersion.
    if event.kind == EventKind::Deleted {
        return event.object.clone();
    }
    let prev = event.prev_object.as_ref().expect("the previous object matched, so it exists");
    let mut prev = prev.value().clone();
    prev.set_resource_version(event.resource_version);
    SharedObject::new(prev)
}
