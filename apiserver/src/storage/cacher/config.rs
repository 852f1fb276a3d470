//! [`CacherConfig`]: what a Cacher caches, which upstream features it has, and its timing constants.
//!
//! The features are switches because kube-apiserver's behaviour depends on them and on the etcd it runs
//! against: `ConsistentListFromCache` (on by default in
//! 1.31+) serves consistent lists and gets from the cache after a progress-notify barrier, and both it and
//! watch-list requests need etcd's `RequestWatchProgress`, which kube-apiserver 1.33 only trusts on etcd
//! 3.4.31+ or 3.5.13+ (etcd#15220 and #17507), so not on the real etcd 3.4.23 the tests use. The timing
//! defaults are upstream's constants; tests may shorten the bookmark cadence to keep real-time runs short.

use std::time::Duration;

use crate::bug::{Bug, Bugs};
use crate::failpoint::Failpoints;
use crate::storage::status::GroupResource;

/// How a Cacher is set up.
#[derive(Clone, Debug)]
pub struct CacherConfig {
    /// The key prefix the cache covers, relative to the store's path prefix (`/configmaps`).
    pub resource_prefix: String,
    /// The resource, for statuses.
    pub resource: GroupResource,
    /// Events the history keeps (upstream starts at 100 and adapts between 100 and 102,400; fixed here).
    pub history_capacity: usize,
    /// `ConsistentListFromCache`: serve reads with resourceVersion "" from the cache once it has caught up
    /// with etcd's current revision.
    pub consistent_list_from_cache: bool,
    /// Whether etcd's `RequestWatchProgress` may be relied on (see the module doc): false for real etcd
    /// before 3.4.31. The code asks [`CacherConfig::requests_watch_progress`], which the
    /// `no-progress-requests` bug switch also turns off.
    pub request_watch_progress: bool,
    /// How long a read waits for the cache to reach its resourceVersion (`blockTimeout`).
    pub block_timeout: Duration,
    /// How often a waiting read asks etcd for progress (`progressRequestPeriod`).
    pub progress_request_period: Duration,
    /// How often a watcher that allows bookmarks gets one (`defaultBookmarkFrequency`).
    pub bookmark_frequency: Duration,
    /// How often the dispatcher looks for watchers due a bookmark (upstream: 1 s with 25 % jitter; no jitter
    /// here, so that runs are reproducible without drawing from the seed).
    pub bookmark_tick: Duration,
    /// The pause between a failed list-and-watch and the next (`wait.Until` period in `startCaching`).
    pub relist_period: Duration,
    /// The apiserver's failpoint registry, for the reflector's points (nothing armed unless a harness arms it).
    pub failpoints: Failpoints,
    /// The bug switches on (none in a real server).
    pub bugs: Bugs,
}

impl CacherConfig {
    /// Upstream's defaults for the resource under `resource_prefix`, with every feature on.
    pub fn new(resource_prefix: &str, resource: GroupResource) -> CacherConfig {
        CacherConfig {
            resource_prefix: resource_prefix.trim_end_matches('/').to_string(),
            resource,
            history_capacity: 100,
            consistent_list_from_cache: true,
            request_watch_progress: true,
            block_timeout: Duration::from_secs(3),
            progress_request_period: Duration::from_millis(100),
            bookmark_frequency: Duration::from_secs(60),
            bookmark_tick: Duration::from_secs(1),
            relist_period: Duration::from_secs(1),
            failpoints: Failpoints::new(),
            bugs: Bugs::none(),
        }
    }

    /// Whether the cache asks etcd for progress: `request_watch_progress`, unless the `no-progress-requests`
    /// bug switch models kube-apiserver before KEP-1904 and KEP-2340, whose cache never asked (kubernetes
    /// #91073). Consistent reads from the cache and watch-list requests depend on it, as upstream's do.
    pub(crate) fn requests_watch_progress(&self) -> bool {
        self.request_watch_progress && !self.bugs.has(Bug::NoProgressRequests)
    }

    /// Whether consistent reads are served from the cache (`delegator.ConsistentReadSupported`).
    pub(crate) fn consistent_read_supported(&self) -> bool {
        self.consistent_list_from_cache && self.requests_watch_progress()
    }
}
