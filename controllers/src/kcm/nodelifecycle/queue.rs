//! The per-zone rate-limited queue of nodes waiting for their NoExecute taint (kube-controller-manager
//! 1.32, `pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go`: `RateLimitedTimedQueue`,
//! `UniqueQueue`, `SwapLimiter`; client-go's `flowcontrol.NewTokenBucketRateLimiter`). Sans-IO: times are
//! the controller's clock in unix µs.
//!
//! A node stays in the queue's set after its taint went on (only its place in line is dropped), so that it
//! is not queued again until the controller sees it healthy and removes it.

use std::collections::{BTreeMap, BTreeSet};

/// `EvictionRateLimiterBurst`.
pub const EVICTION_BURST: f64 = 1.0;

/// A token bucket of `burst` tokens refilled at `qps`; a rate of 0 or less refuses everything.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    last_us: i64,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(qps: f32, burst: f64, now_us: i64) -> TokenBucket {
        TokenBucket { qps: f64::from(qps), burst, tokens: burst, last_us: now_us }
    }

    fn refill(&mut self, now_us: i64) {
        if self.qps > 0.0 && now_us > self.last_us {
            self.tokens = (self.tokens + (now_us - self.last_us) as f64 / 1e6 * self.qps).min(self.burst);
        }
        self.last_us = self.last_us.max(now_us);
    }

    /// `TryAccept`: takes a token if one is there.
    pub fn try_accept(&mut self, now_us: i64) -> bool {
        if self.qps <= 0.0 {
            return false;
        }
        self.refill(now_us);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// `Saturation`: how much of the burst is used (1 for a bucket that refuses everything).
    pub fn saturation(&mut self, now_us: i64) -> f64 {
        if self.qps <= 0.0 {
            return 1.0;
        }
        self.refill(now_us);
        1.0 - self.tokens / self.burst
    }
}

/// One zone's queue of nodes to taint, in order of when each is due.
#[derive(Clone, Debug)]
pub struct TaintQueue {
    /// Nodes in line by (due time, name).
    line: BTreeSet<(i64, String)>,
    /// Every node queued, in line or already tainted, with its due time while in line.
    members: BTreeMap<String, Option<i64>>,
    limiter: TokenBucket,
}

impl TaintQueue {
    pub fn new(qps: f32, now_us: i64) -> TaintQueue {
        TaintQueue {
            line: BTreeSet::new(),
            members: BTreeMap::new(),
            limiter: TokenBucket::new(qps, EVICTION_BURST, now_us),
        }
    }

    /// `Add`: queues `node`, due now; false if it is already a member.
    pub fn add(&mut self, node: &str, now_us: i64) -> bool {
        if self.members.contains_key(node) {
            return false;
        }
        self.members.insert(node.to_string(), Some(now_us));
        self.line.insert((now_us, node.to_string()));
        true
    }

    /// `Remove`: forgets `node` entirely; whether it was a member.
    pub fn remove(&mut self, node: &str) -> bool {
        match self.members.remove(node) {
            Some(due) => {
                if let Some(due) = due {
                    self.line.remove(&(due, node.to_string()));
                }
                true
            }
            None => false,
        }
    }

    /// The next node `Try` would hand out: the first in line if a token is free and it is due. As
    /// upstream's, a token is spent on the check even when the head is not yet due.
    pub fn next_due(&mut self, now_us: i64) -> Option<String> {
        let (due, node) = self.line.first().cloned()?;
        if !self.limiter.try_accept(now_us) || now_us < due {
            return None;
        }
        Some(node)
    }

    /// The outcome for a node `next_due` handed out: done (it leaves the line, staying a member), or to be
    /// retried after `retry_us`.
    pub fn finish(&mut self, node: &str, done: bool, retry_us: i64, now_us: i64) {
        let Some(Some(due)) = self.members.get(node).cloned() else { return };
        self.line.remove(&(due, node.to_string()));
        if done {
            self.members.insert(node.to_string(), None);
        } else {
            let due = now_us + retry_us + 1;
            self.members.insert(node.to_string(), Some(due));
            self.line.insert((due, node.to_string()));
        }
    }

    /// `SwapLimiter`: a new rate (0 refuses all); a new bucket starts drained if the old one was.
    pub fn swap_limiter(&mut self, qps: f32, now_us: i64) {
        if f64::from(qps) == self.limiter.qps {
            return;
        }
        let mut limiter = TokenBucket::new(qps, EVICTION_BURST, now_us);
        if self.limiter.saturation(now_us) >= 1.0 {
            limiter.try_accept(now_us);
        }
        self.limiter = limiter;
    }

    /// Whether `node` is a member.
    pub fn contains(&self, node: &str) -> bool {
        self.members.contains_key(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;

    #[test]
    fn nodes_come_out_at_the_rate_and_stay_members_once_done() {
        let mut q = TaintQueue::new(0.1, 0);
        assert!(q.add("a", 0));
        assert!(q.add("b", 0));
        assert!(!q.add("a", 1), "a member is not queued twice");
        // (time, node handed out)
        let steps = [(0, Some("a")), (S, None), (9 * S, None), (11 * S, Some("b"))];
        for (now, want) in steps {
            let got = q.next_due(now);
            assert_eq!(got.as_deref(), want, "at {now}");
            if let Some(node) = got {
                q.finish(&node, true, 0, now);
            }
        }
        assert_eq!(q.next_due(100 * S), None, "the line is empty");
        assert!(q.contains("a") && !q.add("a", 100 * S));
        assert!(q.remove("a") && !q.remove("a"));
        assert!(q.add("a", 100 * S));
        assert_eq!(q.next_due(100 * S).as_deref(), Some("a"));
    }

    #[test]
    fn a_failed_node_is_retried_after_its_wait() {
        let mut q = TaintQueue::new(1000.0, 0);
        q.add("a", 0);
        assert_eq!(q.next_due(0).as_deref(), Some("a"));
        q.finish("a", false, 50_000, 0);
        assert_eq!(q.next_due(40_000), None);
        assert_eq!(q.next_due(60_000).as_deref(), Some("a"));
    }

    #[test]
    fn a_zero_rate_stops_tainting_and_a_drained_bucket_stays_drained() {
        let mut q = TaintQueue::new(0.1, 0);
        q.add("a", 0);
        q.swap_limiter(0.0, 0);
        assert_eq!(q.next_due(1000 * S), None);
        q.swap_limiter(0.1, 1000 * S);
        assert_eq!(q.next_due(1000 * S), None, "the swapped-in bucket starts drained");
        assert_eq!(q.next_due(1011 * S).as_deref(), Some("a"));
        let mut full = TokenBucket::new(1.0, 1.0, 0);
        assert_eq!(full.saturation(0), 0.0);
        assert!(full.try_accept(0) && !full.try_accept(0));
        assert_eq!(full.saturation(500_000), 0.5);
    }
}
