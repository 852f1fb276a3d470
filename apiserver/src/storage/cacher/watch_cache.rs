//! [`WatchCache`]: the watch cache's core, without IO: the current state of every object, a bounded
//! history of recent events, and the answer to "which events follow resourceVersion N?".
//!
//! Semantics: a watch from N gets every event with a
//! resourceVersion above N; from 0, the current state as ADDED events; from a resourceVersion older than
//! the history holds, 410 Expired `too old resource version: N (M)` with M the oldest servable version − 1.
//! Right after a (re)list at X, X itself is still servable (nothing was evicted since), even though no
//! event at X is in the buffer, and X − 1 is not: the change at X is in no event the cache could send
//! (kubernetes #49956, fixed; [`WatchCacheConfig::empty_history_accepts_older_rv`] puts the bug back).
//!
//! Invariants, asserted in pairs (when an event goes in, and when a watch reads the history out): the
//! history holds at most `capacity` events, in strictly increasing resourceVersion order, none above the
//! cache's resourceVersion; every added or modified object carries its event's resourceVersion. The O(1)
//! halves always run; the whole-ring halves run under debug assertions, which the simulation build keeps on.

use std::collections::{BTreeMap, VecDeque};

use serde_json::Value;

use crate::storage::error::StorageError;
use crate::storage::object::{Object, SharedObject};
use crate::storage::resource_version::ResourceVersion;
use crate::storage::watch::{CachedEvent, EventKind};

/// How a watch cache is set up: its size, and the historical bugs it can put back (each off by default; the
/// Cacher hands them in from `CacherConfig::bugs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WatchCacheConfig {
    /// Events the history keeps (at least one).
    pub capacity: usize,
    /// kubernetes #49956, before PR #49992: with an empty history, the oldest event the cache can still
    /// deliver is taken to be at its current resourceVersion rather than after it, so a watch from one below
    /// is accepted and never gets the change at that resourceVersion. See [`WatchCache::events_after`].
    pub empty_history_accepts_older_rv: bool,
}

/// The watch cache's state. Not thread-safe by design: its shell owns it.
#[derive(Debug)]
pub(crate) struct WatchCache {
    capacity: usize,
    empty_history_accepts_older_rv: bool,
    events: VecDeque<CachedEvent>,
    objects: BTreeMap<String, SharedObject>,
    /// Everything up to here has been applied (events or progress notifications).
    resource_version: ResourceVersion,
    /// The revision of the last (re)list, 0 before the first.
    list_resource_version: ResourceVersion,
    /// Whether an event has been evicted since the last (re)list.
    evicted_since_list: bool,
}

impl WatchCache {
    /// An empty, uninitialized cache that keeps at most `capacity` events (at least one), with no bug
    /// switched on: the tests' shorthand (the Cacher always sets the cache up from its configuration).
    #[cfg(test)]
    pub(crate) fn new(capacity: usize) -> WatchCache {
        WatchCache::with_config(WatchCacheConfig { capacity, empty_history_accepts_older_rv: false })
    }

    /// An empty, uninitialized cache set up as `config` says.
    pub(crate) fn with_config(config: WatchCacheConfig) -> WatchCache {
        WatchCache {
            capacity: config.capacity.max(1),
            empty_history_accepts_older_rv: config.empty_history_accepts_older_rv,
            events: VecDeque::new(),
            objects: BTreeMap::new(),
            resource_version: ResourceVersion(0),
            list_resource_version: ResourceVersion(0),
            evicted_since_list: false,
        }
    }

    /// (Re)initializes from a list of (key, object) read at `rv`: the history starts over.
    pub(crate) fn replace(&mut self, items: Vec<(String, Value)>, rv: ResourceVersion) {
        self.objects = items.into_iter().map(|(key, obj)| (key, SharedObject::new(obj))).collect();
        self.events.clear();
        self.resource_version = rv;
        self.list_resource_version = rv;
        self.evicted_since_list = false;
    }

    /// Applies one event from the store. Events must come in resourceVersion order. The event's previous
    /// object is taken from the cache's own state (what watchers with a selector compare against).
    pub(crate) fn apply(&mut self, mut event: CachedEvent) -> Result<(), StorageError> {
        if event.resource_version <= self.resource_version {
            return Err(StorageError::Internal(format!(
                "watch cache: event at resourceVersion {} does not follow {}",
                event.resource_version, self.resource_version
            )));
        }
        if event.kind != EventKind::Deleted {
            assert_eq!(
                event.object.value().resource_version(),
                event.resource_version.to_string(),
                "watch cache: the object of an event at {} carries another resourceVersion",
                event.resource_version
            );
        }
        event.prev_object = self.objects.get(&event.key).cloned();
        match event.kind {
            EventKind::Deleted => {
                self.objects.remove(&event.key);
            }
            EventKind::Added | EventKind::Modified => {
                self.objects.insert(event.key.clone(), event.object.clone());
            }
        }
        self.resource_version = event.resource_version;
        if self.events.len() == self.capacity {
            self.events.pop_front();
            self.evicted_since_list = true;
        }
        self.events.push_back(event);
        assert!(self.events.len() <= self.capacity, "watch cache: history over its capacity");
        self.debug_check_history();
        Ok(())
    }

    /// The whole-ring invariants: strictly increasing resourceVersions, none above the cache's, within
    /// capacity. Debug builds (and every simulated run) check them on each write and each read.
    fn debug_check_history(&self) {
        if cfg!(debug_assertions) {
            assert!(self.events.len() <= self.capacity, "watch cache: history over its capacity");
            let mut rvs = self.events.iter().map(|e| e.resource_version);
            if let Some(first) = rvs.next() {
                let last = rvs.try_fold(first, |prev, rv| (rv > prev).then_some(rv));
                let last = last.unwrap_or_else(|| panic!("watch cache: history out of order: {:?}", self.rvs()));
                assert!(last <= self.resource_version, "watch cache: history ends above the cache's resourceVersion");
            }
        }
    }

    fn rvs(&self) -> Vec<u64> {
        self.events.iter().map(|e| e.resource_version.0).collect()
    }

    /// A progress notification: every event up to `rv` has been applied.
    pub(crate) fn progress(&mut self, rv: ResourceVersion) {
        self.resource_version = self.resource_version.max(rv);
    }

    /// The resourceVersion the cache is at.
    pub(crate) fn resource_version(&self) -> ResourceVersion {
        self.resource_version
    }

    /// The current objects whose keys start with `prefix`, in key order.
    pub(crate) fn list(&self, prefix: &str) -> impl Iterator<Item = (&String, &SharedObject)> + '_ {
        let prefix = prefix.to_string();
        self.objects.range(prefix.clone()..).take_while(move |(key, _)| key.starts_with(&prefix))
    }

    /// The current state as ADDED events stamped with the cache's resourceVersion, in key order: how a
    /// watch from "0" or with sendInitialEvents starts.
    pub(crate) fn current_state(&self) -> Vec<CachedEvent> {
        self.objects
            .iter()
            .map(|(key, obj)| CachedEvent {
                kind: EventKind::Added,
                key: key.clone(),
                object: obj.clone(),
                prev_object: None,
                resource_version: self.resource_version,
            })
            .collect()
    }

    /// The newest event in the history.
    pub(crate) fn last_event(&self) -> Option<&CachedEvent> {
        self.events.back()
    }

    /// The current object at `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&SharedObject> {
        self.objects.get(key)
    }

    /// The events a watch from `rv` starts with: from 0 the current state as ADDED (in key order), else
    /// every buffered event above `rv` (none yet if `rv` is in the future: the watch waits).
    ///
    /// With [`WatchCacheConfig::empty_history_accepts_older_rv`], the code before kubernetes PR #49992: an
    /// empty history's oldest deliverable event is taken to be at the cache's resourceVersion, so a watch
    /// from one below it is served, with nothing for the change at it.
    pub(crate) fn events_after(&self, rv: ResourceVersion) -> Result<Vec<CachedEvent>, StorageError> {
        let oldest = if self.empty_history_accepts_older_rv && self.events.is_empty() && self.resource_version.0 > 0 {
            self.resource_version
        } else if self.list_resource_version.0 > 0 && !self.evicted_since_list {
            ResourceVersion(self.list_resource_version.0 + 1)
        } else if let Some(first) = self.events.front() {
            first.resource_version
        } else {
            return Err(StorageError::Internal("watch cache isn't correctly initialized".into()));
        };
        if rv.0 == 0 {
            return Ok(self.current_state());
        }
        if rv.0 < oldest.0 - 1 {
            return Err(StorageError::TooOldResourceVersion { requested: rv.0, oldest_servable: oldest.0 - 1 });
        }
        self.debug_check_history();
        let out: Vec<CachedEvent> = self.events.iter().filter(|e| e.resource_version > rv).cloned().collect();
        assert!(out.first().is_none_or(|e| e.resource_version > rv), "watch cache: served an event at or below {rv}");
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::storage::status::{GroupResource, Operation};

    fn event(kind: EventKind, name: &str, rv: u64) -> CachedEvent {
        CachedEvent {
            kind,
            key: format!("/pods/ns/{name}"),
            object: json!({"metadata": {"name": name, "resourceVersion": rv.to_string()}}).into(),
            prev_object: None,
            resource_version: ResourceVersion(rv),
        }
    }

    fn rvs(events: &[CachedEvent]) -> Vec<u64> {
        events.iter().map(|e| e.resource_version.0).collect()
    }

    #[test]
    fn serves_events_strictly_after_the_requested_version() {
        let mut cache = WatchCache::new(10);
        cache.replace(vec![], ResourceVersion(5));
        for rv in [6, 8, 9] {
            cache.apply(event(EventKind::Added, &format!("p{rv}"), rv)).unwrap();
        }
        let cases: &[(u64, &[u64])] = &[(5, &[6, 8, 9]), (6, &[8, 9]), (7, &[8, 9]), (9, &[]), (20, &[])];
        for (from, want) in cases {
            assert_eq!(rvs(&cache.events_after(ResourceVersion(*from)).unwrap()), *want, "from {from}");
        }
    }

    #[test]
    fn list_version_stays_servable_until_something_is_evicted() {
        let mut cache = WatchCache::new(2);
        cache.replace(vec![], ResourceVersion(10));
        // Empty buffer right after the list: watching from the list version works (no missed ADDED).
        assert_eq!(rvs(&cache.events_after(ResourceVersion(10)).unwrap()), Vec::<u64>::new());
        let err = cache.events_after(ResourceVersion(9)).unwrap_err();
        assert_eq!(err, StorageError::TooOldResourceVersion { requested: 9, oldest_servable: 10 });
        cache.apply(event(EventKind::Added, "a", 11)).unwrap();
        cache.apply(event(EventKind::Modified, "a", 12)).unwrap();
        assert_eq!(rvs(&cache.events_after(ResourceVersion(10)).unwrap()), vec![11, 12]);
        // The third event evicts rv 11: now 11 is the oldest servable start (events after 11).
        cache.apply(event(EventKind::Modified, "a", 13)).unwrap();
        assert_eq!(rvs(&cache.events_after(ResourceVersion(11)).unwrap()), vec![12, 13]);
        let err = cache.events_after(ResourceVersion(10)).unwrap_err();
        let status = err.to_status(Operation::Watch, &GroupResource::new("", "pods"), "");
        assert_eq!((status.code, status.reason.as_deref()), (Some(410), Some("Expired")));
        assert_eq!(status.message.as_deref(), Some("too old resource version: 10 (11)"));
    }

    /// `empty-history-accepts-older-rv` (kubernetes #49956): the cache lists at 11, which includes a create
    /// at 11; a client whose own list was at 10 watches from 10. Fixed, that is 410 (the create is in no event
    /// the cache holds); with the switch on, it is accepted with no events, so the client never sees the
    /// create. From 9 it is 410 either way, and once an event is buffered the switch changes nothing.
    #[test]
    fn empty_history_accepts_older_rv_switch() {
        for bug in [false, true] {
            let mut cache =
                WatchCache::with_config(WatchCacheConfig { capacity: 10, empty_history_accepts_older_rv: bug });
            cache.replace(vec![("/pods/ns/bob".into(), json!({"bob": 11}))], ResourceVersion(11));
            let from_10 = cache.events_after(ResourceVersion(10));
            if bug {
                assert_eq!(from_10, Ok(vec![]), "accepted, and nothing for the create at 11");
            } else {
                assert_eq!(from_10, Err(StorageError::TooOldResourceVersion { requested: 10, oldest_servable: 11 }));
            }
            let from_9 = cache.events_after(ResourceVersion(9)).unwrap_err();
            assert!(
                matches!(from_9, StorageError::TooOldResourceVersion { requested: 9, .. }),
                "switch {bug}: {from_9:?}"
            );
            assert_eq!(rvs(&cache.events_after(ResourceVersion(11)).unwrap()), Vec::<u64>::new(), "switch {bug}");
            cache.apply(event(EventKind::Added, "a", 12)).unwrap();
            let err = cache.events_after(ResourceVersion(10)).unwrap_err();
            assert_eq!(err, StorageError::TooOldResourceVersion { requested: 10, oldest_servable: 11 }, "switch {bug}");
        }
    }

    #[test]
    fn from_zero_is_the_current_state_as_added() {
        let mut cache = WatchCache::new(10);
        cache.replace(vec![("/pods/ns/b".into(), json!({"b": 1}))], ResourceVersion(3));
        cache.apply(event(EventKind::Added, "a", 4)).unwrap();
        cache.apply(event(EventKind::Deleted, "b", 5)).unwrap();
        let state = cache.events_after(ResourceVersion(0)).unwrap();
        assert_eq!(
            state.iter().map(|e| (e.kind, e.key.as_str())).collect::<Vec<_>>(),
            vec![(EventKind::Added, "/pods/ns/a")]
        );
        assert!(cache.get("/pods/ns/b").is_none());
    }

    #[test]
    fn refuses_out_of_order_events_and_tracks_progress() {
        let mut cache = WatchCache::new(10);
        assert!(cache.events_after(ResourceVersion(1)).is_err(), "uninitialized");
        cache.replace(vec![], ResourceVersion(5));
        assert!(cache.apply(event(EventKind::Added, "a", 5)).is_err());
        cache.progress(ResourceVersion(8));
        assert_eq!(cache.resource_version(), ResourceVersion(8));
        assert!(cache.apply(event(EventKind::Added, "a", 7)).is_err());
        cache.apply(event(EventKind::Added, "a", 9)).unwrap();
    }
}
