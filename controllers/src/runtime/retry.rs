//! client-go's `retry.RetryOnConflict` with `retry.DefaultRetry` (`util/retry/util.go`): a read-modify-write
//! is tried at most 5 times, and after each 409 Conflict it waits 10 ms stretched by up to 10 % of jitter
//! before the next try. Sans-IO: the caller runs the attempts and sleeps; this says whether and how long.
//! The jitter is drawn from the caller's seeded generator, never the machine's.

use std::time::Duration;

use rand::Rng;

/// `DefaultRetry`: 5 steps, 10 ms, factor 1, jitter 0.1.
pub const STEPS: u32 = 5;
pub const DURATION: Duration = Duration::from_millis(10);
pub const JITTER: f64 = 0.1;

/// The attempts left of one read-modify-write.
#[derive(Clone, Debug)]
pub struct RetryOnConflict {
    attempts_left: u32,
}

impl Default for RetryOnConflict {
    fn default() -> RetryOnConflict {
        RetryOnConflict { attempts_left: STEPS }
    }
}

impl RetryOnConflict {
    /// An attempt is starting; false once all of them are used.
    pub fn start_attempt(&mut self) -> bool {
        if self.attempts_left == 0 {
            return false;
        }
        self.attempts_left -= 1;
        true
    }

    /// The attempt just made got a 409: how long to wait before the next, or `None` when none is left
    /// (the conflict is then the caller's answer).
    pub fn after_conflict(&self, rng: &mut impl Rng) -> Option<Duration> {
        if self.attempts_left == 0 {
            return None;
        }
        // wait.Jitter: duration + duration * jitter * rand.Float64().
        Some(DURATION.mul_f64(1.0 + JITTER * rng.random::<f64>()))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn five_attempts_with_jittered_waits_between() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut retry = RetryOnConflict::default();
        let mut waits = Vec::new();
        while retry.start_attempt() {
            match retry.after_conflict(&mut rng) {
                Some(wait) => waits.push(wait),
                None => break,
            }
        }
        assert_eq!(waits.len(), 4, "five attempts, four waits between them");
        assert!(waits.iter().all(|w| *w >= DURATION && *w <= DURATION.mul_f64(1.1)), "{waits:?}");
    }
}
