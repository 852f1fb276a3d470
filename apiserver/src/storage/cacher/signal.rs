//! Signals between the Cacher's tasks that wake waiters in a fixed order: the latest value of something
//! (the cache's resourceVersion) and a stop flag. They stand in for `tokio::sync::watch`, which spreads its
//! waiters over shards picked with tokio's thread-local random generator; under the simulation that
//! generator's state carries over from one run to the next, and two runs of one seed then woke tasks in
//! different orders. `Notify` wakes its waiters in the order they registered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use tokio::sync::Notify;

/// The latest value of something, and a way to wait until it satisfies a condition.
pub(super) struct Latest<T> {
    value: Mutex<T>,
    changed: Notify,
}

impl<T: Copy> Latest<T> {
    pub(super) fn new(value: T) -> Latest<T> {
        Latest { value: Mutex::new(value), changed: Notify::new() }
    }

    pub(super) fn get(&self) -> T {
        *self.value.lock().expect("a task panicked while setting a signal")
    }

    pub(super) fn set(&self, value: T) {
        *self.value.lock().expect("a task panicked while setting a signal") = value;
        self.changed.notify_waiters();
    }

    /// Waits until `condition` holds of the value.
    pub(super) async fn wait_for(&self, mut condition: impl FnMut(T) -> bool) {
        self.wait_until(|| condition(self.get())).await
    }

    /// Waits until `condition` holds, checking it whenever the value is set.
    pub(super) async fn wait_until(&self, mut condition: impl FnMut() -> bool) {
        loop {
            // Registered before the check, so a `set` between the check and the await still wakes us.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if condition() {
                return;
            }
            notified.await;
        }
    }
}

/// Set once, when the Cacher's last clone is dropped; its tasks stop on it.
#[derive(Default)]
pub(super) struct Stop {
    stopped: AtomicBool,
    notify: Notify,
}

impl Stop {
    pub(super) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Returns once `stop` has been called.
    pub(super) async fn stopped(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.stopped.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn a_waiter_wakes_when_the_value_reaches_its_condition() {
        let latest = Arc::new(Latest::new(1));
        let waiter = {
            let latest = latest.clone();
            tokio::spawn(async move { latest.wait_for(|v| v >= 3).await })
        };
        latest.set(2);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        latest.set(3);
        waiter.await.unwrap();
    }

    #[tokio::test]
    async fn stop_wakes_every_task_even_one_that_starts_waiting_after_it() {
        let stop = Arc::new(Stop::default());
        let early = {
            let stop = stop.clone();
            tokio::spawn(async move { stop.stopped().await })
        };
        tokio::task::yield_now().await;
        stop.stop();
        early.await.unwrap();
        stop.stopped().await;
    }
}
