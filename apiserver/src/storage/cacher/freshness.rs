//! Waiting for the cache to be fresh enough: `waitUntilFreshAndBlock` and its progress requester.
//!
//! A read at resourceVersion N waits until the cache has reached N, for at most `block_timeout` (3 s), then
//! fails with 504 `Too large resource version: N, current: M` and Retry-After 1. When the
//! wait relies on etcd's progress notifications (consistent reads, watch-list), the requester asks the
//! reflector's etcd watch for progress every `progress_request_period` while anybody waits (KEP-2340), so
//! the cache learns etcd's revision even when nothing of its own resource changes.

use std::sync::Arc;

use super::Shared;
use crate::failpoint::Point;
use crate::storage::error::StorageError;
use crate::storage::resource_version::ResourceVersion;

/// The retry hint of the cache's "Too large resource version" (`resourceVersionTooHighRetrySeconds`).
const TOO_LARGE_RETRY_AFTER_S: i32 = 1;

/// Counts a read as waiting while it lives, so that the requester asks etcd for progress.
struct Waiting<'a>(&'a Shared);

impl<'a> Waiting<'a> {
    fn start(shared: &'a Shared) -> Waiting<'a> {
        shared.lock().waiting_fresh += 1;
        shared.wake_requester.notify_one();
        Waiting(shared)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.lock().waiting_fresh -= 1;
    }
}

impl Shared {
    /// Waits until the cache is at `rv` or newer; `with_progress` asks etcd for progress meanwhile (only if
    /// the cache is behind, as upstream). Returns the 504 error after the block timeout.
    pub(super) async fn wait_until_fresh(&self, rv: ResourceVersion, with_progress: bool) -> Result<(), StorageError> {
        if rv.0 == 0 {
            return Ok(());
        }
        let behind = self.fresh.get() < rv;
        let _waiting = (with_progress && behind).then(|| Waiting::start(self));
        let reached =
            tokio::time::timeout(self.config.block_timeout, self.fresh.wait_for(|current| current >= rv)).await;
        match reached {
            Ok(()) => Ok(()),
            // Timed out: report how far the cache got.
            Err(_) => Err(StorageError::TooLargeResourceVersion {
                requested: rv.0,
                current: self.lock().cache.resource_version().0,
                retry_after_s: TOO_LARGE_RETRY_AFTER_S,
            }),
        }
    }
}

/// The progress requester task: while some read waits, asks etcd for progress every period.
pub(super) async fn request_progress_while_waiting(shared: Arc<Shared>, stop: Arc<super::signal::Stop>) {
    loop {
        let woken = shared.wake_requester.notified();
        if shared.lock().waiting_fresh == 0 {
            tokio::select! {
                biased;
                () = stop.stopped() => return,
                () = woken => continue,
            }
        }
        tokio::select! {
            biased;
            () = stop.stopped() => return,
            () = tokio::time::sleep(shared.config.progress_request_period) => {}
        }
        if shared.lock().waiting_fresh == 0 {
            continue;
        }
        // The lock is not held across the failpoint, which may wait.
        if shared.config.failpoints.eval(Point::BeforeProgressRequest).await.is_err() {
            continue;
        }
        let state = shared.lock();
        if state.waiting_fresh > 0 {
            if let Some(progress) = &state.progress {
                let _ = progress.send(());
            }
        }
    }
}
