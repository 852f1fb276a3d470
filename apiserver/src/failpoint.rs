//! Failpoints: the apiserver's named places where a test harness can make the storage stack go wrong on
//! purpose (delay, drop, fail, hold until released), declared over the shared `kubesim-failpoints` registry.
//!
//! A [`Failpoints`] registry belongs to one apiserver of one simulation. It reaches the code through
//! configuration ([`crate::storage::etcd3::Etcd3Config::failpoints`] and
//! [`crate::storage::cacher::CacherConfig::failpoints`]), never a global, and a real apiserver gets one with
//! nothing armed. The points ([`Point`]) and what each action means there:
//! - [`Point::BeforeCacherDispatch`] — the Cacher's reflector, after an event arrived from etcd and before it
//!   is applied to the watch cache and dispatched to the watchers. `Delay`/`Hold` stall the cache (and every
//!   watch and cached read waiting on it); `Drop` loses that one event, a deliberate bug that the simulation's
//!   watch checker must catch; `Error` ends the reflector's watch, so the cache relists.
//! - [`Point::CacherBetweenListAndWatch`] — the reflector, after its list and before it opens the watch from
//!   the list's revision. `Delay`/`Hold` let writes land in the gap (the watch from the list revision must
//!   still bring them); `Drop` and `Error` abandon the round, so the cache relists after its relist period.
//! - [`Point::CacherWatchBetweenReadyAndRegister`] — a watch on the Cacher, after it passed the readiness
//!   check and before it takes its initial events and registers. `Delay`/`Hold` let the cache re-initialize
//!   meanwhile (a failed reflector watch, then a relist): the watch must then end at once rather than be
//!   registered on the old cache's state (kubernetes #116122; the `watch-registers-on-old-generation` bug
//!   switch registers it anyway); `Drop` ends the watch at once without events, as a watch that lost that
//!   race does; `Error` fails the watch request with an internal error.
//! - [`Point::BeforeUpdateReread`] — the etcd3 store's guaranteed update, before it retries on a newer state:
//!   after its txn lost a race (a conflict) and before every fresh read that checks a cached suggestion.
//!   `Delay`/`Hold` widen the race window; `Error` fails the update with `StorageError::Unreachable`
//!   (kube-apiserver's answer when etcd cannot be reached mid-update); `Drop` skips the retry and reports what
//!   the state in hand says, the bug upstream fixed (kubernetes #82303: a stale cached suggestion gives a
//!   spurious 409, a conflict is not retried), the simulation's bug switch for the cache-parity check.
//! - [`Point::BeforeBookmarkSend`] — a watch on the Cacher, before it forwards a dispatched bookmark.
//!   `Delay`/`Hold` keep the watch's client behind (its next resume point is older); `Drop` skips that
//!   bookmark, as a watcher whose buffer was full misses one upstream; `Error` ends the watch, which the
//!   client must re-establish from the last resourceVersion it saw.
//! - [`Point::BeforeProgressRequest`] — the Cacher's progress requester, before it asks etcd for a progress
//!   notification on behalf of a read waiting for the cache to be fresh (KEP-2340). `Delay`/`Hold` keep the
//!   cache behind an idle etcd longer; `Drop` and `Error` skip that request (the next period asks again), so a
//!   wait that needs every one of them times out, as with `no-progress-requests` (kubernetes #91073).
//! - [`Point::BeforeHttpWatchSend`] — the HTTP watch handler, before it writes an event (or bookmark) to the
//!   client's stream. `Delay`/`Hold` make a slow stream; `Drop` loses that one event on the wire, a deliberate
//!   bug the simulation's watch checker must catch; `Error` ends the stream cleanly, as a dropped connection
//!   does, and the client must watch again from the last resourceVersion it saw.
//! - [`Point::BeforeCustomDiscovery`] — discovery, before `/apis/GROUP/VERSION` of a group that serves custom
//!   resources is answered. `Error` and `Drop` answer 503 `the server is currently unable to handle the
//!   request`, as kube-apiserver's aggregator answers for an APIService whose backend is down, so that a
//!   client's discovery of that group version fails while every built-in group is discovered;
//!   `Delay`/`Hold` stall that discovery.

pub(crate) use kubesim_failpoints::Injected;
pub use kubesim_failpoints::{Action, Arm};

kubesim_failpoints::points! {
    /// A named place in the apiserver where a failure can be injected.
    pub enum Point {
        BeforeCacherDispatch => "before-cacher-dispatch",
        CacherBetweenListAndWatch => "cacher-between-list-and-watch",
        CacherWatchBetweenReadyAndRegister => "cacher-watch-between-ready-and-register",
        BeforeUpdateReread => "before-guaranteed-update-reread",
        BeforeBookmarkSend => "before-bookmark-send",
        BeforeProgressRequest => "before-progress-request",
        BeforeHttpWatchSend => "before-http-watch-send",
        BeforeCustomDiscovery => "before-custom-discovery",
    }
}

/// One apiserver's failpoint registry; clones share it.
pub type Failpoints = kubesim_failpoints::Failpoints<Point>;

impl Point {
    /// The text of the error a failure injected here produces.
    pub(crate) fn message(self) -> String {
        format!("apiserver: failpoint {self} injected a failure")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &p in Point::ALL {
            assert_eq!(p.name().parse::<Point>(), Ok(p));
        }
        assert!("before-lunch".parse::<Point>().unwrap_err().to_string().contains("before-cacher-dispatch"));
    }
}
