//! The reflector: lists the resource from etcd, then watches from the list's revision, feeding the watch
//! cache; when the watch fails (compaction gives 410, a broken stream, a canceled watch) it starts over, as
//! client-go's reflector inside kube-apiserver's Cacher does.
//!
//! Order of one round, upstream's (`startCaching`): end every watcher, list (a quorum read), replace the
//! cache's contents (ready again, new generation), watch from the list revision with progress notifications.
//! When the watch fails the cache turns pending at once (reads fall back or get 429) and the next round
//! starts after `relist_period`.
//!
//! Two failpoints sit here (`crate::failpoint`): between the list and the watch, and before each event is
//! applied and dispatched.

use std::sync::Arc;

use tokio::time::Instant;

use super::Shared;
use crate::bug::Bug;
use crate::failpoint::{Injected, Point};
use crate::storage::error::StorageError;
use crate::storage::etcd3::FeedItem;

/// Runs list-and-watch rounds until the Cacher is dropped.
pub(super) async fn run(shared: Arc<Shared>, stop: Arc<super::signal::Stop>) {
    loop {
        let outcome = tokio::select! {
            biased;
            () = stop.stopped() => return,
            outcome = list_and_watch(&shared) => outcome,
        };
        let error = outcome.err().map(|e| e.to_string());
        tracing::debug!(resource = %shared.config.resource.qualified(), ?error, "cacher: list-and-watch ended; reinitializing");
        shared.lock().set_pending(Instant::now(), error);
        tokio::select! {
            biased;
            () = stop.stopped() => return,
            () = tokio::time::sleep(shared.config.relist_period) => {}
        }
    }
}

/// One round. Returns when the watch ends: `Ok` for a watch that expired (the reflector treats 410 as a
/// reason to relist, not as an error), `Err` for anything else.
async fn list_and_watch(shared: &Shared) -> Result<(), StorageError> {
    shared.lock().terminate_all_watchers();
    let prefix = &shared.config.resource_prefix;
    let (items, list_rv) = shared.store.list_keyed(prefix).await?;
    // Writes that land while the reflector stalls here must still reach the cache: the watch starts at the
    // list's revision, not at whatever etcd has when it opens.
    let point = Point::CacherBetweenListAndWatch;
    shared.config.failpoints.eval(point).await.map_err(|_| StorageError::Internal(point.message()))?;
    let (mut feed, progress) = shared.store.watch_keyed(prefix, list_rv);
    {
        let mut state = shared.lock();
        state.replace(items, list_rv);
        state.progress = Some(progress);
    }
    shared.fresh.set(list_rv);
    loop {
        let item = match feed.recv().await {
            Some(Ok(item)) => item,
            Some(Err(StorageError::WatchExpired)) => return Ok(()),
            Some(Err(e)) => return Err(e),
            None => return Err(StorageError::Internal("the cacher's etcd watch ended".into())),
        };
        if let FeedItem::Event(_) = &item {
            let point = Point::BeforeCacherDispatch;
            match shared.config.failpoints.eval(point).await {
                Ok(()) => {}
                // The deliberate bug: the cache and its watchers never learn of this change.
                Err(Injected::Drop) => continue,
                Err(Injected::Error) => return Err(StorageError::Internal(point.message())),
            }
        }
        let rv = {
            let mut state = shared.lock();
            match item {
                FeedItem::Event(event) => state.apply(event)?,
                FeedItem::Progress(rv) => state.progress(rv),
            }
            state.cache.resource_version()
        };
        if shared.config.bugs.has(Bug::WatcherResendsInitialEvents) {
            // The event is applied but not dispatched: upstream's dispatcher took it from a channel later,
            // and a watch could start in between (`CacherState::apply`).
            tokio::task::yield_now().await;
            shared.lock().dispatch_undispatched();
        }
        shared.fresh.set(rv);
    }
}
