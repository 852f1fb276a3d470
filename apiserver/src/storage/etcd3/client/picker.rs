//! Which endpoint a request goes to. Round robin over the endpoints believed healthy, from a first endpoint
//! the caller draws (from the seed, under simulation): the way kube-apiserver's etcd client (clientv3 on
//! gRPC's round-robin balancer) spreads requests over every `--etcd-servers` endpoint whose connection is
//! ready. An endpoint that failed is left for a while, as gRPC leaves a connection in transient failure
//! until its reconnect backoff has passed (1 s, then 1.6 times longer for each failure in a row, at most
//! 120 s; gRPC's jitter is left out so that runs replay), and is tried again after that; one success makes
//! it healthy again. When every endpoint is being left, the one whose wait ends first is tried.
//!
//! Sans IO: time comes in as milliseconds since any fixed instant.

/// The first wait after a failure (gRPC's `BaseDelay`).
const BASE_BACKOFF_MS: u64 = 1_000;
/// Each failure in a row waits this much longer (gRPC's `Multiplier`).
const BACKOFF_MULTIPLIER: f64 = 1.6;
/// The longest wait (gRPC's `MaxDelay`).
const MAX_BACKOFF_MS: u64 = 120_000;

/// What the client believes of one endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Health {
    /// Failures in a row since its last success.
    failures: u32,
    /// Until when it is left (milliseconds); healthy from then on.
    left_until_ms: u64,
}

/// The endpoint choice of one client.
#[derive(Debug)]
pub(crate) struct Picker {
    endpoints: Vec<Health>,
    /// Where the round robin goes on.
    next: usize,
}

impl Picker {
    /// A picker over `n` endpoints (at least one) whose first pick is `first` (taken modulo `n`).
    pub(crate) fn new(n: usize, first: usize) -> Picker {
        assert!(n > 0, "an etcd client has at least one endpoint");
        Picker { endpoints: vec![Health::default(); n], next: first % n }
    }

    /// The endpoint for the next request at `now_ms`.
    pub(crate) fn pick(&mut self, now_ms: u64) -> usize {
        let n = self.endpoints.len();
        let chosen = (0..n)
            .map(|k| (self.next + k) % n)
            .find(|&i| self.healthy(i, now_ms))
            .unwrap_or_else(|| (0..n).min_by_key(|&i| (self.endpoints[i].left_until_ms, i)).unwrap_or(0));
        self.next = (chosen + 1) % n;
        chosen
    }

    /// Endpoint `i` failed at `now_ms`: it is left until its backoff has passed.
    pub(crate) fn failed(&mut self, i: usize, now_ms: u64) {
        let health = &mut self.endpoints[i];
        health.failures = health.failures.saturating_add(1);
        health.left_until_ms = now_ms + backoff_ms(health.failures);
    }

    /// Endpoint `i` answered: it is healthy.
    pub(crate) fn succeeded(&mut self, i: usize) {
        self.endpoints[i] = Health::default();
    }

    /// Whether endpoint `i` is in use at `now_ms` (not being left after a failure).
    pub(crate) fn healthy(&self, i: usize, now_ms: u64) -> bool {
        self.endpoints[i].left_until_ms <= now_ms
    }
}

/// How long an endpoint is left after `failures` failures in a row.
fn backoff_ms(failures: u32) -> u64 {
    let grown = BASE_BACKOFF_MS as f64 * BACKOFF_MULTIPLIER.powi(failures.saturating_sub(1).min(64) as i32);
    (grown as u64).min(MAX_BACKOFF_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_go_round_from_the_first() {
        let mut p = Picker::new(3, 1);
        let picks: Vec<usize> = (0..5).map(|_| p.pick(0)).collect();
        assert_eq!(picks, [1, 2, 0, 1, 2]);
    }

    #[test]
    fn a_failed_endpoint_is_left_until_its_backoff_has_passed_then_tried_again() {
        let mut p = Picker::new(3, 0);
        p.failed(1, 0);
        assert!(!p.healthy(1, 999));
        let picks: Vec<usize> = (0..4).map(|_| p.pick(500)).collect();
        assert_eq!(picks, [0, 2, 0, 2]);
        assert!(p.healthy(1, 1_000));
        assert_eq!((0..3).map(|_| p.pick(1_000)).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn failures_in_a_row_wait_longer_up_to_two_minutes_and_one_success_forgets_them() {
        assert_eq!([1, 2, 3].map(backoff_ms), [1_000, 1_600, 2_560]);
        assert_eq!(backoff_ms(40), MAX_BACKOFF_MS);
        let mut p = Picker::new(2, 0);
        p.failed(0, 0);
        p.failed(0, 1_000);
        assert!(!p.healthy(0, 2_599));
        p.succeeded(0);
        assert!(p.healthy(0, 0));
    }

    #[test]
    fn with_every_endpoint_left_the_one_whose_wait_ends_first_is_tried() {
        let mut p = Picker::new(3, 0);
        p.failed(0, 500);
        p.failed(1, 0);
        p.failed(2, 200);
        assert_eq!(p.pick(300), 1);
    }
}
