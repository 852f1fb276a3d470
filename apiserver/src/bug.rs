//! The apiserver's bug switches: historical kube-apiserver bugs that a simulation can put back, each in
//! the part of the storage stack where it lived, so that a scenario shows the race failing with the switch
//! on and passing with it off (the fixed behaviour is the default). Declared once over the shared
//! `kubesim-failpoints` vocabulary; a server's set comes in through its configuration
//! ([`crate::server::ServerOptions::bugs`], handed on to [`crate::storage::etcd3::Etcd3Config::bugs`] and
//! [`crate::storage::cacher::CacherConfig::bugs`]), never a global.
//!
//! The Cacher's switches come first, in the order a request meets them (the watch cache's history, a new
//! watcher, its registration, bookmarks, freshness), then the etcd3 store's, then the registry's (handed to
//! each [`crate::registry::store::Store`] through `Store::with_bugs`).

pub use kubesim_failpoints::Bug as _;

kubesim_failpoints::bugs! {
    /// A historical kube-apiserver bug kubesim can put back.
    pub enum Bug {
        /// The watch cache takes its current resourceVersion, not the one after it, as the oldest event it
        /// can still deliver while its history is empty
        /// (`crate::storage::cacher::watch_cache::WatchCacheConfig::empty_history_accepts_older_rv`).
        EmptyHistoryAcceptsOlderRv => (
            "empty-history-accepts-older-rv",
            "kubernetes #49956",
            "a watch from just below the cache's list resourceVersion, made while the cache's event history is empty, is accepted instead of getting 410 and never gets the change at the list resourceVersion"
        ),
        /// The Cacher dispatches an applied event in a later step than it applies it, and a new watcher
        /// does not move its starting point past the initial events it sent.
        WatcherResendsInitialEvents => (
            "watcher-resends-initial-events",
            "kubernetes PR #73845",
            "a watch that starts while an applied event still waits for dispatch gets that event twice, in its initial events and again from the dispatcher, so the watch goes back in time"
        ),
        /// The Cacher registers a watch whatever happened since its readiness check, and a relist does not
        /// end the watchers registered meanwhile.
        WatchRegistersOnOldGeneration => (
            "watch-registers-on-old-generation",
            "kubernetes #116122",
            "a watch that passed the readiness check before the cache re-initialized is registered anyway, with initial events from the old cache, and silently misses every change between the old cache and the new list"
        ),
        /// The bookmark dispatcher's last processed resourceVersion starts at 0 and only events and progress
        /// notifications move it, and a watch-list request's initial-events-end bookmark comes from it.
        BookmarksFromZeroAfterInit => (
            "bookmarks-from-zero-after-init",
            "kubernetes #125288, PR #117014",
            "after the cache initializes, an idle resource's watchers get no bookmarks and a watch-list request gets no initial-events-end bookmark until some write happens"
        ),
        /// A watch-list request's initial events are not followed by the annotated bookmark.
        NoInitialEventsEndBookmark => (
            "no-initial-events-end-bookmark",
            "kubernetes #129408, kcp-dev/kcp#3871",
            "a watch-list request gets its initial events but never the k8s.io/initial-events-end bookmark, so the client never counts itself synced"
        ),
        /// The Cacher never asks etcd for progress, as if `CacherConfig::request_watch_progress` were off.
        NoProgressRequests => (
            "no-progress-requests",
            "kubernetes #91073",
            "the cache of an idle resource stays behind etcd's revision, so a read at a newer resourceVersion waits and fails with 504 Too large resource version until that resource is written"
        ),
        /// The etcd3 store trusts the watch cache's copy: a guaranteed update or delete whose precondition
        /// or update function fails on it reports that failure without reading etcd again.
        StaleSuggestionTrusted => (
            "stale-suggestion-trusted",
            "kubernetes #82303",
            "a write judged against the watch cache's stale copy gets a spurious 409 or precondition failure"
        ),
        /// The etcd3 store opens its etcd watches without etcd's require-leader option.
        WatchWithoutRequireLeader => (
            "watch-without-require-leader",
            "kubernetes #89488, PR #89881",
            "the apiserver's etcd watches are opened without etcd's require-leader option, so a watch on a member cut off from the others stays open and silent: the watch cache, and every watch it serves, misses every change made meanwhile"
        ),
        /// The registry store drops a DELETE's `preconditions.resourceVersion` before it checks anything, as
        /// kube-apiserver did before `metav1.Preconditions` had the field: only a uid precondition is kept.
        DeleteIgnoresRvPrecondition => (
            "delete-ignores-rv-precondition",
            "kubernetes #73648, PR #74040",
            "a DELETE sent with the resourceVersion its client read as precondition deletes the object even after another client changed it, so that change is lost"
        ),
        /// The registry store retries an update that admission refused on the watch cache's copy against a
        /// live read even when that copy was current, running admission again.
        AdmissionRejectionRetried => (
            "admission-rejection-retried",
            "kubernetes PR #104182",
            "an update that admission refuses is retried once against a live read even though the cached copy it was judged on was current, so a webhook that refuses it is called twice with the same request"
        ),
    }
}

/// The switches on for one apiserver.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;
