//! client-go's work queue (1.32, `staging/src/k8s.io/client-go/util/workqueue/`): the deduplicating FIFO of
//! `queue.go`, the delayed adds of `delaying_queue.go`, the rate-limited re-adds of `rate_limiting_queue.go`
//! and the limiters of `default_rate_limiters.go`, whose token bucket is golang.org/x/time/rate's `Limiter`
//! (v0.7.0, the version client-go 1.32 builds with).
//!
//! Two layers. `Queue` is the whole behaviour, sans IO: time comes in as `now`, a `Duration` since an
//! origin the caller picks, so that every delay it hands out is a pure function of the calls made. Go's
//! delaying queue moves due keys from its waiting heap into the queue on a goroutine of its own; here the
//! caller does that with `advance(now)` and learns when to next do it from `next_ready_at`. `WorkQueue` is
//! the async shell controllers use: a cloneable handle whose `get` waits on a `Notify` and on the next
//! delayed key's time, under real tokio or madsim's simulated clock alike.
//!
//! The semantics kept from upstream: a key already queued and not yet taken is not queued twice; a key
//! added while it is being processed is queued again only when `done` is called for it, so no two workers
//! ever hold the same key; after a shut down adds are ignored but `get` still drains what is queued;
//! `add_after` for a key already waiting keeps the earlier time; the default controller limiter is the
//! larger of a per-key exponential backoff (5 ms doubling to 1000 s) and an overall 10 qps bucket of 100.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// `DefaultTypedControllerRateLimiter`'s per-key backoff: the first failure waits 5 ms.
pub const BASE_DELAY: Duration = Duration::from_millis(5);
/// `DefaultTypedControllerRateLimiter`'s per-key backoff cap.
pub const MAX_DELAY: Duration = Duration::from_secs(1000);
/// `DefaultTypedControllerRateLimiter`'s overall bucket: tokens per second (`rate.Limit(10)`).
pub const QPS: f64 = 10.0;
/// `DefaultTypedControllerRateLimiter`'s overall bucket size.
pub const BURST: u32 = 100;
/// The namespace controller's backoff cap (`nsControllerRateLimiter`, `pkg/controller/namespace`): it
/// retries a namespace's deletion at least once a minute.
pub const NAMESPACE_MAX_DELAY: Duration = Duration::from_secs(60);

/// Go's `rate.InfDuration` (`math.MaxInt64` nanoseconds), what a reservation that can never be met waits.
const INF_DURATION: Duration = Duration::from_nanos(i64::MAX as u64);

/// golang.org/x/time/rate's `Limiter` as `BucketRateLimiter` uses it: one token reserved per call. The
/// arithmetic is the library's, in `f64`, so the delays match Go's to the nanosecond.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: u32,
    tokens: f64,
    /// When the tokens were last counted. Go's limiter starts at the zero time, arbitrarily far in the
    /// past; since it also starts full, counting from our origin instead gives the same tokens.
    last: Duration,
}

impl TokenBucket {
    /// `rate.NewLimiter(rate.Limit(qps), burst)`: full at the start.
    pub fn new(qps: f64, burst: u32) -> TokenBucket {
        TokenBucket { qps, burst, tokens: f64::from(burst), last: Duration::ZERO }
    }

    /// `Reserve().Delay()` at `now`: takes one token and says how long its holder must wait for it.
    pub fn reserve(&mut self, now: Duration) -> Duration {
        // `rate.Inf` (or anything as large) lets every event through without counting.
        if self.qps >= f64::MAX {
            return Duration::ZERO;
        }
        // A bucket that holds no token can never serve one: the reservation fails and changes nothing.
        if self.burst == 0 {
            return INF_DURATION;
        }
        // `advance`: a clock that went backwards adds nothing.
        let elapsed = now.saturating_sub(self.last);
        let tokens = (self.tokens + self.tokens_from_duration(elapsed)).min(f64::from(self.burst)) - 1.0;
        let wait = if tokens < 0.0 { self.duration_from_tokens(-tokens) } else { Duration::ZERO };
        self.last = now;
        self.tokens = tokens;
        wait
    }

    /// `Limit.tokensFromDuration`: `d.Seconds() * limit`, with Go's `Seconds` (whole seconds plus the
    /// nanoseconds over 1e9).
    fn tokens_from_duration(&self, d: Duration) -> f64 {
        if self.qps <= 0.0 {
            return 0.0;
        }
        (d.as_secs() as f64 + f64::from(d.subsec_nanos()) / 1e9) * self.qps
    }

    /// `Limit.durationFromTokens`: the seconds those tokens take, converted to nanoseconds by truncation
    /// as Go's float-to-`Duration` conversion does.
    fn duration_from_tokens(&self, tokens: f64) -> Duration {
        if self.qps <= 0.0 {
            return INF_DURATION;
        }
        let nanos = 1e9 * (tokens / self.qps);
        if nanos >= i64::MAX as f64 {
            return INF_DURATION;
        }
        Duration::from_nanos(nanos as u64)
    }
}

/// A work queue's rate limiter: `ItemExponentialFailureRateLimiter` (`base * 2^failures`, capped), and
/// optionally the larger of that and a `BucketRateLimiter`, as `MaxOfRateLimiter` combines them.
#[derive(Clone, Debug)]
pub struct RateLimiter<K> {
    base_delay: Duration,
    max_delay: Duration,
    failures: BTreeMap<K, u32>,
    bucket: Option<TokenBucket>,
}

impl<K: Ord + Clone> RateLimiter<K> {
    /// `DefaultTypedControllerRateLimiter`: the garbage collector's three queues, and most controllers'.
    pub fn default_controller() -> RateLimiter<K> {
        RateLimiter::exponential_with_bucket(BASE_DELAY, MAX_DELAY, QPS, BURST)
    }

    /// The namespace controller's `nsControllerRateLimiter`: the default, with the backoff capped at a minute.
    pub fn namespace_controller() -> RateLimiter<K> {
        RateLimiter::exponential_with_bucket(BASE_DELAY, NAMESPACE_MAX_DELAY, QPS, BURST)
    }

    /// `NewTypedItemExponentialFailureRateLimiter(base, max)` alone, no overall bucket.
    pub fn exponential(base_delay: Duration, max_delay: Duration) -> RateLimiter<K> {
        RateLimiter { base_delay, max_delay, failures: BTreeMap::new(), bucket: None }
    }

    /// `NewTypedMaxOfRateLimiter` of an exponential limiter and a `BucketRateLimiter` of `qps` and `burst`.
    pub fn exponential_with_bucket(base_delay: Duration, max_delay: Duration, qps: f64, burst: u32) -> RateLimiter<K> {
        RateLimiter { bucket: Some(TokenBucket::new(qps, burst)), ..RateLimiter::exponential(base_delay, max_delay) }
    }

    /// `When`: counts one more failure of `key` and says how long to wait before retrying it. Both limiters
    /// are asked, as `MaxOfRateLimiter` does, so the bucket spends a token even when the backoff is longer.
    pub fn when(&mut self, key: &K, now: Duration) -> Duration {
        let failures = self.failures.entry(key.clone()).or_insert(0);
        let exp = *failures;
        *failures = failures.saturating_add(1);
        // The backoff is computed in floating point so that it saturates instead of overflowing; past 2^1024
        // the power is infinite, which the cap below catches like any other large value.
        let backoff = self.base_delay.as_nanos() as f64 * 2f64.powi(exp.min(1100) as i32);
        let item_delay = if backoff > i64::MAX as f64 {
            self.max_delay
        } else {
            Duration::from_nanos(backoff as u64).min(self.max_delay)
        };
        let bucket_delay = self.bucket.as_mut().map_or(Duration::ZERO, |b| b.reserve(now));
        item_delay.max(bucket_delay)
    }

    /// `Forget`: the key's retries are over (it succeeded, or was given up); its backoff starts again.
    pub fn forget(&mut self, key: &K) {
        self.failures.remove(key);
    }

    /// `NumRequeues`: the failures counted for `key` since it was last forgotten.
    pub fn num_requeues(&self, key: &K) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }
}

/// The work queue, sans IO: a rate-limiting, delaying, deduplicating FIFO of keys.
#[derive(Clone, Debug)]
pub struct Queue<K> {
    /// Keys ready to be taken, in order. Each is dirty and not being processed.
    queue: VecDeque<K>,
    /// Keys that need processing: those queued, and those added again while being processed.
    dirty: BTreeSet<K>,
    /// Keys taken by `get` whose `done` has not come yet.
    processing: BTreeSet<K>,
    /// Keys added with a delay, by key, with the time each becomes ready.
    waiting: BTreeMap<K, Duration>,
    /// The same keys by ready time, ties broken by key, so that `advance` is deterministic.
    waiting_by_time: BTreeSet<(Duration, K)>,
    limiter: RateLimiter<K>,
    shutting_down: bool,
    /// Set by `shut_down_with_drain`, cleared by `shut_down`: whether a shut down waits for processing.
    drain: bool,
}

impl<K: Ord + Clone> Default for Queue<K> {
    /// A queue with `DefaultTypedControllerRateLimiter`.
    fn default() -> Queue<K> {
        Queue::new(RateLimiter::default_controller())
    }
}

impl<K: Ord + Clone> Queue<K> {
    pub fn new(limiter: RateLimiter<K>) -> Queue<K> {
        Queue {
            queue: VecDeque::new(),
            dirty: BTreeSet::new(),
            processing: BTreeSet::new(),
            waiting: BTreeMap::new(),
            waiting_by_time: BTreeSet::new(),
            limiter,
            shutting_down: false,
            drain: false,
        }
    }

    /// `Add`: marks `key` as needing processing. Already dirty, nothing changes; being processed, it is
    /// queued when `done` is called for it; otherwise it goes to the back of the queue. Ignored once shut down.
    pub fn add(&mut self, key: K) {
        if self.shutting_down || self.dirty.contains(&key) {
            return;
        }
        self.dirty.insert(key.clone());
        if !self.processing.contains(&key) {
            self.queue.push_back(key);
        }
    }

    /// `Len`: the keys ready to be taken (not those waiting for their time, nor those being processed).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// `Get` without the blocking: takes the next ready key, which is then being processed until `done`.
    /// `None` when nothing is ready (the shell tells an empty queue from a shut-down one).
    pub fn get(&mut self) -> Option<K> {
        let key = self.queue.pop_front()?;
        self.dirty.remove(&key);
        self.processing.insert(key.clone());
        Some(key)
    }

    /// `Done`: processing of `key` is over; if it was added meanwhile it is queued again now. A key that
    /// is not being processed is left alone: upstream would queue a dirty one a second time, which breaks
    /// the one-worker-per-key promise, and only a caller's mistake gets there.
    pub fn done(&mut self, key: &K) {
        if self.processing.remove(key) && self.dirty.contains(key) {
            self.queue.push_back(key.clone());
        }
    }

    /// `ShutDown`: adds are ignored from now on, and keys waiting for their time are dropped (upstream's
    /// waiting loop exits). What is queued can still be taken.
    pub fn shut_down(&mut self) {
        self.drain = false;
        self.shut_down_keeping_drain();
    }

    /// The state change of `ShutDownWithDrain`; the shell does the waiting for processing to finish.
    pub fn shut_down_with_drain(&mut self) {
        self.drain = true;
        self.shut_down_keeping_drain();
    }

    fn shut_down_keeping_drain(&mut self) {
        self.shutting_down = true;
        self.waiting.clear();
        self.waiting_by_time.clear();
    }

    /// Whether a `shut_down_with_drain` has nothing left to wait for: no key is being processed, or a
    /// plain `shut_down` has since cut the drain short.
    pub fn drained(&self) -> bool {
        !self.drain || self.processing.is_empty()
    }

    /// `ShuttingDown`.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// `AddAfter`: adds `key` once `delay` has passed since `now`. A zero delay adds it at once; a key
    /// already waiting keeps the earlier of its two times. Ignored once shut down.
    pub fn add_after(&mut self, key: K, delay: Duration, now: Duration) {
        if self.shutting_down {
            return;
        }
        if delay.is_zero() {
            self.add(key);
            return;
        }
        let ready_at = now.saturating_add(delay);
        if let Some(existing) = self.waiting.get_mut(&key) {
            if *existing <= ready_at {
                return;
            }
            self.waiting_by_time.remove(&(*existing, key.clone()));
            *existing = ready_at;
        } else {
            self.waiting.insert(key.clone(), ready_at);
        }
        self.waiting_by_time.insert((ready_at, key));
    }

    /// Adds every waiting key whose time is `now` or earlier, earliest first (ties by key), as upstream's
    /// waiting loop does each time it wakes.
    pub fn advance(&mut self, now: Duration) {
        while let Some((ready_at, _)) = self.waiting_by_time.first() {
            if *ready_at > now {
                break;
            }
            let Some((_, key)) = self.waiting_by_time.pop_first() else { break };
            self.waiting.remove(&key);
            self.add(key);
        }
    }

    /// When the earliest waiting key becomes ready, if any key is waiting.
    pub fn next_ready_at(&self) -> Option<Duration> {
        self.waiting_by_time.first().map(|(ready_at, _)| *ready_at)
    }

    /// `AddRateLimited`: adds `key` after the delay the limiter gives it. The limiter counts the failure
    /// even when the queue is shut down, as upstream's does.
    pub fn add_rate_limited(&mut self, key: K, now: Duration) {
        let delay = self.limiter.when(&key, now);
        self.add_after(key, delay, now);
    }

    /// `Forget`: clears the key's backoff. It does not replace `done`.
    pub fn forget(&mut self, key: &K) {
        self.limiter.forget(key);
    }

    /// `NumRequeues`.
    pub fn num_requeues(&self, key: &K) -> u32 {
        self.limiter.num_requeues(key)
    }
}

/// The async work queue controllers hold: clones share one queue. Time is the runtime's (`tokio::time`,
/// simulated under madsim), measured from when the queue was made.
pub struct WorkQueue<K> {
    shared: Arc<Shared<K>>,
}

struct Shared<K> {
    queue: Mutex<Queue<K>>,
    /// Woken, all at once, on every change that may let a waiting `get` (or drain) proceed.
    changed: Notify,
    origin: Instant,
}

impl<K> Clone for WorkQueue<K> {
    fn clone(&self) -> WorkQueue<K> {
        WorkQueue { shared: Arc::clone(&self.shared) }
    }
}

impl<K: Ord + Clone> Default for WorkQueue<K> {
    /// A queue with `DefaultTypedControllerRateLimiter`.
    fn default() -> WorkQueue<K> {
        WorkQueue::new(RateLimiter::default_controller())
    }
}

impl<K: Ord + Clone> WorkQueue<K> {
    pub fn new(limiter: RateLimiter<K>) -> WorkQueue<K> {
        WorkQueue {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue::new(limiter)),
                changed: Notify::new(),
                origin: Instant::now(),
            }),
        }
    }

    /// The queue's state. No code panics while holding it, so a poisoned lock still guards a sound queue.
    fn lock(&self) -> MutexGuard<'_, Queue<K>> {
        self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.shared.origin)
    }

    /// Applies `change` to the queue and wakes every waiter to look again.
    fn update<T>(&self, change: impl FnOnce(&mut Queue<K>, Duration) -> T) -> T {
        let now = self.now();
        let out = change(&mut self.lock(), now);
        self.shared.changed.notify_waiters();
        out
    }

    pub fn add(&self, key: K) {
        self.update(|q, _| q.add(key));
    }

    pub fn add_after(&self, key: K, delay: Duration) {
        self.update(|q, now| q.add_after(key, delay, now));
    }

    pub fn add_rate_limited(&self, key: K) {
        self.update(|q, now| q.add_rate_limited(key, now));
    }

    pub fn forget(&self, key: &K) {
        self.lock().forget(key);
    }

    pub fn num_requeues(&self, key: &K) -> u32 {
        self.lock().num_requeues(key)
    }

    pub fn done(&self, key: &K) {
        self.update(|q, _| q.done(key));
    }

    pub fn shut_down(&self) {
        self.update(|q, _| q.shut_down());
    }

    pub fn shutting_down(&self) -> bool {
        self.lock().shutting_down()
    }

    /// `ShutDownWithDrain`: shuts down, then waits until every key taken has been marked done (or a
    /// `shut_down` cuts the wait short). Workers must keep calling `done` for this to return.
    pub async fn shut_down_with_drain(&self) {
        self.update(|q, _| q.shut_down_with_drain());
        loop {
            // Registered before the check, so a `done` between the check and the wait is not missed.
            let changed = self.shared.changed.notified();
            if self.lock().drained() {
                return;
            }
            changed.await;
        }
    }

    /// The keys ready to be taken, counting delayed keys whose time has come.
    pub fn len(&self) -> usize {
        let now = self.now();
        let mut q = self.lock();
        q.advance(now);
        q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `Get`: waits for a key to be ready and takes it; the caller must call `done` with it when finished.
    /// `None` once the queue is shut down and nothing queued is left.
    pub async fn get(&self) -> Option<K> {
        loop {
            // Registered before the queue is looked at: `notify_waiters` wakes every `Notified` made before
            // it, so an add between the look and the wait still wakes this one.
            let changed = self.shared.changed.notified();
            let next_ready_at = {
                let now = self.now();
                let mut q = self.lock();
                q.advance(now);
                if let Some(key) = q.get() {
                    return Some(key);
                }
                if q.shutting_down() {
                    return None;
                }
                q.next_ready_at()
            };
            match next_ready_at.and_then(|at| self.shared.origin.checked_add(at)) {
                Some(deadline) => {
                    tokio::select! {
                        biased;
                        _ = changed => {}
                        _ = tokio::time::sleep_until(deadline) => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Takes every ready key, marking each done, in the order `get` gives them.
    fn drain(q: &mut Queue<&'static str>) -> Vec<&'static str> {
        let mut out = Vec::new();
        while let Some(key) = q.get() {
            q.done(&key);
            out.push(key);
        }
        out
    }

    #[test]
    fn adds_are_fifo_and_deduplicated_while_queued() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["a", "b", "c"], &["a", "b", "c"]),
            (&["c", "a", "b"], &["c", "a", "b"]),
            (&["a", "a", "b", "a"], &["a", "b"]),
            (&["b", "a", "b", "a", "c"], &["b", "a", "c"]),
            (&[], &[]),
        ];
        for (adds, want) in cases {
            let mut q = Queue::default();
            for key in *adds {
                q.add(*key);
            }
            assert_eq!(q.len(), want.len(), "adds {adds:?}");
            assert_eq!(drain(&mut q), *want, "adds {adds:?}");
        }
    }

    #[test]
    fn a_key_added_while_processing_is_queued_again_only_on_done() {
        let mut q = Queue::default();
        q.add("a");
        q.add("b");
        assert_eq!(q.get(), Some("a"));
        // Added twice while a worker holds it: not handed to a second worker, and owed once.
        q.add("a");
        q.add("a");
        assert_eq!(q.len(), 1, "only b is ready");
        assert_eq!(q.get(), Some("b"));
        assert_eq!(q.get(), None, "a is still being processed");
        q.done(&"a");
        assert_eq!(q.len(), 1);
        assert_eq!(q.get(), Some("a"));
        q.done(&"a");
        q.done(&"b");
        assert_eq!(q.get(), None, "a was owed once, not twice");
    }

    #[test]
    fn done_without_a_re_add_does_not_queue_and_done_on_an_untaken_key_is_ignored() {
        let mut q = Queue::default();
        q.add("a");
        assert_eq!(q.get(), Some("a"));
        q.done(&"a");
        assert!(q.is_empty());
        // A done for a key queued but never taken must not queue it a second time.
        q.add("b");
        q.done(&"b");
        assert_eq!(drain(&mut q), ["b"]);
    }

    #[test]
    fn add_after_keeps_the_earliest_time() {
        let mut q: Queue<&str> = Queue::default();
        q.add_after("a", ms(50), Duration::ZERO);
        assert_eq!(q.next_ready_at(), Some(ms(50)));
        q.add_after("a", ms(20), Duration::ZERO);
        assert_eq!(q.next_ready_at(), Some(ms(20)), "an earlier time replaces a later one");
        q.add_after("a", ms(100), Duration::ZERO);
        q.add_after("a", ms(10), ms(15));
        assert_eq!(q.next_ready_at(), Some(ms(20)), "later times (10 ms after 15 ms is 25 ms) do not");
        q.advance(ms(19));
        assert!(q.is_empty(), "not ready before its time");
        q.advance(ms(20));
        assert_eq!(q.next_ready_at(), None);
        assert_eq!(drain(&mut q), ["a"], "queued once");
        q.advance(ms(100));
        assert!(q.is_empty(), "the replaced 50 ms and 100 ms times left nothing behind");
    }

    #[test]
    fn add_after_zero_adds_at_once_and_a_waiting_key_still_dedups_when_due() {
        let mut q = Queue::default();
        q.add_after("a", Duration::ZERO, ms(7));
        assert_eq!(q.len(), 1);
        assert_eq!(q.next_ready_at(), None);
        q.add_after("a", ms(5), ms(7));
        q.advance(ms(12));
        assert_eq!(drain(&mut q), ["a"], "due while still queued: deduplicated");
    }

    #[test]
    fn advance_adds_due_keys_by_time_then_key() {
        // (key, delay in ms from 0), the time advanced to, the keys queued after it.
        let cases: &[(&[(&str, u64)], u64, &[&str])] = &[
            (&[("c", 30), ("a", 10), ("b", 20)], 30, &["a", "b", "c"]),
            (&[("c", 30), ("a", 10), ("b", 20)], 25, &["a", "b"]),
            (&[("b", 10), ("c", 10), ("a", 10)], 10, &["a", "b", "c"]),
            (&[("z", 5), ("y", 10), ("x", 10)], 10, &["z", "x", "y"]),
            (&[("a", 10)], 9, &[]),
        ];
        for (adds, to, want) in cases {
            let mut q = Queue::default();
            for (key, delay) in *adds {
                q.add_after(*key, ms(*delay), Duration::ZERO);
            }
            q.advance(ms(*to));
            assert_eq!(drain(&mut q), *want, "adds {adds:?} advanced to {to} ms");
        }
    }

    #[test]
    fn exponential_backoff_doubles_from_the_base_to_the_cap() {
        // (limiter, the delays of its first calls for one key); 5 ms * 2^17 = 655.36 s is the last under
        // 1000 s, 5 ms * 2^13 = 40.96 s the last under a minute.
        let mut default_delays: Vec<Duration> = (0..18).map(|n| 5 * MS * (1 << n)).collect();
        default_delays.extend([MAX_DELAY, MAX_DELAY]);
        let mut ns_delays: Vec<Duration> = (0..14).map(|n| 5 * MS * (1 << n)).collect();
        ns_delays.push(NAMESPACE_MAX_DELAY);
        let cases: Vec<(&str, RateLimiter<&str>, Vec<Duration>)> = vec![
            ("default_controller", RateLimiter::default_controller(), default_delays),
            (
                "exponential",
                RateLimiter::exponential(BASE_DELAY, MAX_DELAY),
                (0..4).map(|n| 5 * MS * (1 << n)).collect(),
            ),
            ("namespace_controller", RateLimiter::namespace_controller(), ns_delays),
            ("exponential(1s, 3s)", RateLimiter::exponential(ms(1000), ms(3000)), vec![ms(1000), ms(2000), ms(3000)]),
        ];
        for (name, mut limiter, want) in cases {
            // One call a minute apart, so that the bucket never limits.
            let got: Vec<Duration> =
                (0..want.len()).map(|n| limiter.when(&"k", Duration::from_secs(60 * n as u64))).collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(limiter.num_requeues(&"k"), want.len() as u32, "{name}");
            assert_eq!(limiter.num_requeues(&"other"), 0, "{name}: counts are per key");
        }
    }

    #[test]
    fn backoff_saturates_at_the_cap_after_very_many_failures() {
        let mut limiter = RateLimiter::exponential(BASE_DELAY, MAX_DELAY);
        for _ in 0..2000 {
            limiter.when(&"k", Duration::ZERO);
        }
        assert_eq!(limiter.when(&"k", Duration::ZERO), MAX_DELAY);
    }

    #[test]
    fn forget_resets_the_backoff() {
        let mut q = Queue::new(RateLimiter::exponential(BASE_DELAY, MAX_DELAY));
        for _ in 0..3 {
            q.add_rate_limited("a", Duration::ZERO);
        }
        assert_eq!(q.num_requeues(&"a"), 3);
        assert_eq!(q.next_ready_at(), Some(ms(5)), "the earliest of 5, 10 and 20 ms");
        q.forget(&"a");
        assert_eq!(q.num_requeues(&"a"), 0);
        q.advance(ms(5));
        assert_eq!(drain(&mut q), ["a"]);
        q.add_rate_limited("a", ms(100));
        assert_eq!(q.next_ready_at(), Some(ms(105)), "back to the base delay");
    }

    #[test]
    fn token_bucket_limits_after_its_burst_and_refills_at_its_rate() {
        let mut bucket = TokenBucket::new(QPS, BURST);
        for n in 0..BURST {
            assert_eq!(bucket.reserve(Duration::ZERO), Duration::ZERO, "token {n} is in the burst");
        }
        // (now, the wait of one more reservation at that time).
        let steps = [
            (0, 100),  // the 101st token: a tenth of a second away
            (0, 200),  // the 102nd: two tenths
            (50, 250), // 0.5 tokens came back, but the 103rd is still due at 300 ms
            (1000, 0), // 9.5 tokens came back: 2.5 pay the debt, 1 is spent here
            (1000, 0),
        ];
        for (now_ms, want_ms) in steps {
            assert_eq!(bucket.reserve(ms(now_ms)), ms(want_ms), "at {now_ms} ms");
        }
        // After a long idle the bucket is full again, and no fuller.
        for _ in 0..BURST {
            assert_eq!(bucket.reserve(Duration::from_secs(3600)), Duration::ZERO);
        }
        assert_eq!(bucket.reserve(Duration::from_secs(3600)), ms(100));
    }

    #[test]
    fn the_default_limiter_is_the_larger_of_backoff_and_bucket() {
        let mut limiter = RateLimiter::default_controller();
        let keys: Vec<String> = (0..102).map(|n| format!("k{n}")).collect();
        let got: Vec<Duration> = keys.iter().map(|k| limiter.when(k, Duration::ZERO)).collect();
        assert!(got[..100].iter().all(|d| *d == BASE_DELAY), "the burst: each key's first backoff");
        assert_eq!(got[100..], [ms(100), ms(200)], "past the burst the bucket's wait is longer");
        // A key's backoff grows past the bucket's wait, which still counts the token.
        assert_eq!(limiter.when(&keys[0], Duration::ZERO), ms(300));
    }

    #[test]
    fn the_101st_immediate_rate_limited_add_waits_100_ms() {
        let mut q = Queue::default();
        for n in 0..101u32 {
            q.add_rate_limited(n, Duration::ZERO);
        }
        q.advance(ms(5));
        assert_eq!(q.len(), 100);
        assert_eq!(q.next_ready_at(), Some(ms(100)));
        q.advance(ms(99));
        assert_eq!(q.len(), 100);
        q.advance(ms(100));
        assert_eq!(q.len(), 101);
    }

    #[test]
    fn shut_down_ignores_adds_and_drains_what_is_queued() {
        let mut q = Queue::default();
        q.add("a");
        q.add("b");
        q.add_after("w", ms(10), Duration::ZERO);
        assert_eq!(q.get(), Some("a"));
        q.add("a");
        assert!(!q.shutting_down());
        q.shut_down();
        assert!(q.shutting_down());
        assert_eq!(q.next_ready_at(), None, "keys waiting for their time are dropped");
        q.add("c");
        q.add_after("d", ms(1), Duration::ZERO);
        q.add_rate_limited("e", Duration::ZERO);
        q.advance(ms(100));
        assert_eq!(q.get(), Some("b"), "what was queued is still handed out");
        // a was added before the shut down while processing: upstream still queues it on done.
        q.done(&"a");
        q.done(&"b");
        assert_eq!(drain(&mut q), ["a"]);
        assert_eq!(q.num_requeues(&"e"), 1, "the limiter counted the failure all the same");
    }

    #[test]
    fn drained_waits_for_processing_only_when_draining() {
        let mut q = Queue::default();
        q.add("a");
        assert_eq!(q.get(), Some("a"));
        q.shut_down_with_drain();
        assert!(!q.drained(), "a is still being processed");
        q.done(&"a");
        assert!(q.drained());
        q.add("b");
        assert!(q.is_empty(), "shut down");

        let mut q = Queue::default();
        q.add("a");
        assert_eq!(q.get(), Some("a"));
        q.shut_down_with_drain();
        q.shut_down();
        assert!(q.drained(), "a plain shut down ends the drain");
    }

    #[tokio::test]
    async fn the_async_queue_waits_for_adds_and_delays_and_ends_on_shut_down() {
        let q: WorkQueue<&str> = WorkQueue::default();
        q.add("a");
        q.add("b");
        q.add("a");
        assert_eq!(q.len(), 2);
        assert_eq!(q.get().await, Some("a"));
        q.add("a");
        q.done(&"a");
        assert_eq!(q.get().await, Some("b"));
        assert_eq!(q.get().await, Some("a"), "re-queued by done");
        q.done(&"a");
        q.done(&"b");

        // A delayed key is handed out once its time has come, not before.
        let start = tokio::time::Instant::now();
        q.add_after("late", ms(10));
        q.add_after("later", ms(20));
        assert_eq!(q.get().await, Some("late"));
        assert!(start.elapsed() >= ms(10), "handed out after {:?}", start.elapsed());
        assert_eq!(q.get().await, Some("later"));
        q.done(&"late");
        q.done(&"later");

        // A waiting get is woken by an add from another handle.
        let waiter = {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        };
        tokio::task::yield_now().await;
        q.add("woken");
        assert_eq!(waiter.await.expect("the waiter runs"), Some("woken"));
        q.done(&"woken");

        // And a waiting get ends when the queue shuts down with nothing queued.
        let waiter = {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        };
        tokio::task::yield_now().await;
        q.add_after("never", ms(5));
        q.shut_down();
        assert_eq!(waiter.await.expect("the waiter runs"), None);
        assert_eq!(q.get().await, None);
        assert!(q.shutting_down());
    }
}
