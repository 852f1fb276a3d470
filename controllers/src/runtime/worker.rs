//! A controller's workers: take a key from the work queue, reconcile it, and tell the queue how it went
//! (client-go's `processNextWorkItem` pattern): done without error forgets the key's failures, an error
//! requeues it rate-limited, a reconcile that asks to look again later requeues it after that delay.
//! Several workers of one controller run as concurrent futures of its task, never as threads.

use std::future::Future;
use std::time::Duration;

use crate::runtime::workqueue::WorkQueue;

/// What one reconcile of one key came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing more to do for now.
    Done,
    /// Look again after this long (the namespace controller's estimate for content still going).
    RequeueAfter(Duration),
}

/// Runs `workers` workers over `queue` until it shuts down. `sync` reconciles one key; an `Err` is logged
/// with `name` and the key is retried with the queue's rate limiter.
pub async fn run<K, E, F, Fut>(name: &str, queue: &WorkQueue<K>, workers: usize, sync: F)
where
    K: Ord + Clone + std::fmt::Debug,
    E: std::fmt::Display,
    F: Fn(K) -> Fut,
    Fut: Future<Output = Result<Outcome, E>>,
{
    let worker = || async {
        while let Some(key) = queue.get().await {
            match sync(key.clone()).await {
                Ok(Outcome::Done) => queue.forget(&key),
                Ok(Outcome::RequeueAfter(delay)) => {
                    queue.forget(&key);
                    queue.add_after(key.clone(), delay);
                }
                Err(err) => {
                    tracing::info!(controller = name, key = ?key, "syncing failed, will retry: {err}");
                    queue.add_rate_limited(key.clone());
                }
            }
            queue.done(&key);
        }
    };
    futures::future::join_all((0..workers.max(1)).map(|_| worker())).await;
}
