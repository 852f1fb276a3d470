//! Leader election over a `coordination.k8s.io/v1` Lease, as client-go 1.32 runs it for
//! kube-controller-manager (`staging/src/k8s.io/client-go/tools/leaderelection/leaderelection.go`,
//! `resourcelock/leaselock.go`, and the waits of `k8s.io/apimachinery/pkg/util/wait`).
//!
//! `elector` is the sans-IO core (what to write, and what was observed when); this module is its async
//! shell: `LeaseLock`, the lease's GET/create/update, which the caller implements over the HTTP client, and
//! `run`, client-go's `LeaderElector.Run`: try to acquire every retry period stretched by up to 120 % of
//! jitter until a try succeeds, then run the leading work while renewing every retry period, and stop it
//! the moment a renewal has not succeeded within the renew deadline.
//!
//! Not here: `ReleaseOnCancel` (dropping `run` just stops; the lease then expires), coordinated leader
//! election, `OnNewLeader`, the healthz adaptor, events and metrics.

mod elector;

use std::future::Future;
use std::time::Duration;

use rand::Rng;
use tokio::time::{sleep, sleep_until, timeout, Instant};

pub use elector::{
    jitter, Action, Attempt, ConfigError, Elector, ElectorConfig, LeaderElectionRecord, LockError, JITTER_FACTOR,
};

/// `wait.ErrWaitTimeout`'s text: what a renewal that missed its deadline reports.
pub const RENEW_TIMEOUT: &str = "timed out waiting for the condition";

/// The Lease the election runs over (client-go's `resourcelock.Interface`, for a `LeaseLock`).
pub trait LeaseLock {
    /// "namespace/name", for the logs (`Describe`).
    fn describe(&self) -> String;

    /// The lease's record and resource version; `Ok(None)` when it does not exist (404).
    fn get(&self) -> impl Future<Output = Result<Option<(LeaderElectionRecord, String)>, LockError>> + Send;

    /// Creates the lease with this record; its resource version once created.
    fn create(&self, record: LeaderElectionRecord) -> impl Future<Output = Result<String, LockError>> + Send;

    /// Replaces the lease's spec with this record if the lease is still at `resource_version` (otherwise a
    /// `LockError::Conflict`); its new resource version.
    fn update(
        &self,
        record: LeaderElectionRecord,
        resource_version: String,
    ) -> impl Future<Output = Result<String, LockError>> + Send;
}

/// Why `run` returned: leadership was lost (kube-controller-manager then exits, "leaderelection lost").
#[derive(Debug)]
pub struct LeadershipLost {
    /// The elector's state at the end, for inspection.
    pub elector: Elector,
    /// client-go's error text: `RENEW_TIMEOUT`.
    pub reason: String,
}

/// client-go's `LeaderElector.Run` without a context: acquires the lease, then runs `leading()` while
/// renewing, and returns once a renewal has failed for the whole renew deadline, after dropping the
/// leading future. A `leading` future that finishes early leaves the renewals running, as upstream's
/// `OnStartedLeading` returning does. Dropping the returned future stops everything at once.
///
/// `clock` is the unix time in microseconds, for the record's stamps; expiry is judged on the runtime's
/// monotonic clock (tokio's, or madsim's under simulation). `rng` draws the acquire loop's jitter.
pub async fn run<L, R, F>(
    mut elector: Elector,
    lock: &L,
    clock: &(dyn Fn() -> i64 + Send + Sync),
    rng: &mut R,
    leading: impl FnOnce() -> F,
) -> LeadershipLost
where
    L: LeaseLock,
    R: Rng,
    F: Future<Output = ()>,
{
    let shell = Shell { lock, clock, origin: Instant::now(), desc: lock.describe() };
    shell.acquire(&mut elector, rng).await;
    let reason = {
        let renew = shell.renew(&mut elector);
        let work = leading();
        tokio::pin!(renew, work);
        let mut work_done = false;
        loop {
            // Renewal first: once it has given up, the leading work must not be polled again.
            tokio::select! {
                biased;
                reason = &mut renew => break reason,
                () = &mut work, if !work_done => work_done = true,
            }
        }
    };
    LeadershipLost { elector, reason }
}

/// What every try needs: the lock, the clocks and the lock's name for the logs.
struct Shell<'a, L> {
    lock: &'a L,
    clock: &'a (dyn Fn() -> i64 + Send + Sync),
    /// Local time zero for the elector's monotonic `Duration`s.
    origin: Instant,
    desc: String,
}

impl<L: LeaseLock> Shell<'_, L> {
    /// `acquire`: `wait.JitterUntil(..., RetryPeriod, JitterFactor, sliding)`. The first try is immediate;
    /// after each failed one the wait is drawn afresh and starts once the try has returned.
    async fn acquire(&self, elector: &mut Elector, rng: &mut impl Rng) {
        tracing::info!("attempting to acquire leader lease {}...", self.desc);
        loop {
            if self.try_acquire_or_renew(elector).await {
                tracing::info!("successfully acquired lease {}", self.desc);
                return;
            }
            tracing::debug!("failed to acquire lease {}", self.desc);
            sleep(jitter(elector.config().retry_period, JITTER_FACTOR, rng)).await;
        }
    }

    /// `renew`: `wait.Until` rounds one retry period apart (sliding), each a
    /// `wait.PollImmediateUntil(RetryPeriod, ...)` bounded by the renew deadline. Returns the error of the
    /// first round that ran out of time.
    async fn renew(&self, elector: &mut Elector) -> String {
        let (renew_deadline, retry_period) = (elector.config().renew_deadline, elector.config().retry_period);
        loop {
            // The deadline cancels a request in flight too, as the timeout context does upstream.
            if timeout(renew_deadline, self.poll_immediate(elector, retry_period)).await.is_err() {
                tracing::info!("failed to renew lease {}: {RENEW_TIMEOUT}", self.desc);
                return RENEW_TIMEOUT.to_string();
            }
            tracing::trace!("successfully renewed lease {}", self.desc);
            sleep(retry_period).await;
        }
    }

    /// One renewal round until a try succeeds: the first try at once, the next ones on the ticks of a
    /// ticker started when the first try returned. A tick that falls while a try is running is dropped
    /// (the poller's unbuffered hand-off), so a slow try is followed by the next whole tick.
    async fn poll_immediate(&self, elector: &mut Elector, period: Duration) {
        if self.try_acquire_or_renew(elector).await {
            return;
        }
        let ticker_start = Instant::now();
        loop {
            let ticks_passed = ticker_start.elapsed().as_nanos() / period.as_nanos();
            let next_tick = ticker_start + period * (ticks_passed as u32 + 1);
            sleep_until(next_tick).await;
            if self.try_acquire_or_renew(elector).await {
                return;
            }
        }
    }

    /// `tryAcquireOrRenew`: the optimistic update if we lead, else (or if it fails) read the lease and
    /// write what the elector decides. True when we hold the lease afterwards.
    async fn try_acquire_or_renew(&self, elector: &mut Elector) -> bool {
        let attempt = elector.begin(self.origin.elapsed(), (self.clock)());
        if let Some(action) = elector.fast_path(&attempt) {
            match self.write(&action).await {
                Ok(new_rv) => {
                    elector.write_succeeded(action, new_rv, self.origin.elapsed());
                    return true;
                }
                Err(err) => {
                    tracing::error!("Failed to update lock optimitically: {err}, falling back to slow path");
                    elector.write_failed(&action);
                }
            }
        }
        let got = match self.lock.get().await {
            Ok(got) => got,
            Err(err) => {
                tracing::error!("error retrieving resource lock {}: {err}", self.desc);
                elector.get_failed();
                return false;
            }
        };
        let action = elector.try_acquire_or_renew(&attempt, got, self.origin.elapsed());
        if action == Action::NotAcquired {
            tracing::debug!("lock is held by {} and has not yet expired", elector.leader());
            return false;
        }
        match self.write(&action).await {
            Ok(new_rv) => {
                elector.write_succeeded(action, new_rv, self.origin.elapsed());
                true
            }
            Err(err) => {
                match action {
                    Action::Create(_) => tracing::error!("error initially creating leader election record: {err}"),
                    _ => tracing::error!("Failed to update lock: {err}"),
                }
                elector.write_failed(&action);
                false
            }
        }
    }

    /// Performs a create or an update. Callers never pass `NotAcquired`; were one to, it writes nothing
    /// and fails like a refused write.
    async fn write(&self, action: &Action) -> Result<String, LockError> {
        match action {
            Action::Create(record) => self.lock.create(record.clone()).await,
            Action::Update(record, rv) => self.lock.update(record.clone(), rv.clone()).await,
            Action::NotAcquired => Err(LockError::Other("nothing to write".to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// A lease in memory with the apiserver's optimistic concurrency, that can be made to fail every
    /// request.
    #[derive(Default)]
    struct FakeLock {
        state: Mutex<FakeState>,
    }

    #[derive(Default)]
    struct FakeState {
        lease: Option<(LeaderElectionRecord, u64)>,
        failing: bool,
        writes: u64,
    }

    impl FakeLock {
        fn holder(&self) -> Option<LeaderElectionRecord> {
            self.state.lock().unwrap().lease.as_ref().map(|(record, _)| record.clone())
        }

        fn write(&self, record: LeaderElectionRecord, expect_rv: Option<String>) -> Result<String, LockError> {
            let mut state = self.state.lock().unwrap();
            if state.failing {
                return Err(LockError::Other("connection refused".to_string()));
            }
            let current = state.lease.as_ref().map(|(_, rv)| rv.to_string());
            if current != expect_rv {
                return Err(LockError::Conflict("the object has been modified".to_string()));
            }
            state.writes += 1;
            let rv = state.writes + 100;
            state.lease = Some((record, rv));
            Ok(rv.to_string())
        }
    }

    impl LeaseLock for FakeLock {
        fn describe(&self) -> String {
            "kube-system/kube-controller-manager".to_string()
        }

        async fn get(&self) -> Result<Option<(LeaderElectionRecord, String)>, LockError> {
            let state = self.state.lock().unwrap();
            if state.failing {
                return Err(LockError::Other("connection refused".to_string()));
            }
            Ok(state.lease.as_ref().map(|(record, rv)| (record.clone(), rv.to_string())))
        }

        async fn create(&self, record: LeaderElectionRecord) -> Result<String, LockError> {
            self.write(record, None)
        }

        async fn update(&self, record: LeaderElectionRecord, resource_version: String) -> Result<String, LockError> {
            self.write(record, Some(resource_version))
        }
    }

    /// Sets its flag when dropped: tells whether the leading work was stopped.
    struct DropFlag(Arc<AtomicBool>);

    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn config(identity: &str) -> ElectorConfig {
        ElectorConfig {
            identity: identity.to_string(),
            lease_duration: Duration::from_secs(1),
            renew_deadline: Duration::from_millis(500),
            retry_period: Duration::from_millis(100),
        }
    }

    fn unix_clock() -> i64 {
        1_767_323_045_123_456
    }

    #[tokio::test]
    async fn leads_until_renewals_fail_for_the_renew_deadline() {
        let lock = FakeLock::default();
        let (started, stopped) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let begun = Instant::now();
        let leading = || {
            let (started, guard) = (started.clone(), DropFlag(stopped.clone()));
            async move {
                let _guard = guard;
                started.store(true, Ordering::SeqCst);
                std::future::pending::<()>().await
            }
        };
        let elector = Elector::new(config("me")).unwrap();
        let break_lock = async {
            sleep(Duration::from_millis(300)).await;
            lock.state.lock().unwrap().failing = true;
        };
        let (lost, ()) = tokio::join!(run(elector, &lock, &unix_clock, &mut rng, leading), break_lock);

        assert_eq!(lost.reason, "timed out waiting for the condition");
        assert!(started.load(Ordering::SeqCst) && stopped.load(Ordering::SeqCst));
        // The first failing round began after the lock broke and lasted the whole renew deadline.
        assert!(begun.elapsed() >= Duration::from_millis(800), "{:?}", begun.elapsed());
        let held = lock.holder().unwrap();
        assert_eq!((held.holder_identity.as_str(), held.leader_transitions), ("me", 0));
        assert_eq!(held.acquire_time, "2026-01-02T03:04:05.123456Z");
        // A create, the immediate renewal after it and the renewals every 100 ms until 300 ms.
        assert!(lock.state.lock().unwrap().writes >= 3);
    }

    #[tokio::test]
    async fn takes_over_only_after_the_observed_lease_runs_out() {
        let lock = FakeLock::default();
        let other = LeaderElectionRecord {
            holder_identity: "other".to_string(),
            lease_duration_s: 1,
            acquire_time: crate::runtime::time::format_micro_time(0),
            renew_time: crate::runtime::time::format_micro_time(0),
            leader_transitions: 2,
        };
        lock.write(other, None).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let begun = Instant::now();
        let elector = Elector::new(config("me")).unwrap();
        let taken_at = Mutex::new(None);
        // The leading work notes when it started, then returns: renewals go on until the lock breaks.
        let leading = || async {
            *taken_at.lock().unwrap() = Some(begun.elapsed());
            sleep(Duration::from_millis(200)).await;
            lock.state.lock().unwrap().failing = true;
        };
        let lost = run(elector, &lock, &unix_clock, &mut rng, leading).await;

        let taken_at = taken_at.lock().unwrap().unwrap();
        assert!(taken_at >= Duration::from_secs(1), "took over after {taken_at:?}");
        let held = lock.holder().unwrap();
        assert_eq!((held.holder_identity.as_str(), held.leader_transitions), ("me", 3));
        // The failed renewals changed nothing observed: the elector last saw its own takeover record.
        assert_eq!(lost.elector.observed_record().leader_transitions, 3);
        assert_eq!(lost.reason, RENEW_TIMEOUT);
    }
}
