//! How many pods one sync creates or deletes, and how creations are paced (kube-controller-manager 1.32:
//! `pkg/controller/replicaset/replica_set.go` `manageReplicas`'s arithmetic and `slowStartBatch`,
//! `BurstReplicas`; `pkg/controller/controller_utils.go` `SlowStartInitialBatchSize`).
//!
//! One sync changes at most `burstReplicas` (500) pods. Creations go in batches that start at one and
//! double while every call of a batch succeeds; the first batch with a failure is the last, so a
//! ReplicaSet over its quota makes one doomed request per sync rather than hundreds. The calls of a batch
//! run concurrently, as futures of the caller's task.

use std::future::Future;

/// `BurstReplicas`: the most pods one sync creates or deletes.
pub const BURST_REPLICAS: usize = 500;
/// `SlowStartInitialBatchSize`.
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;

/// What a sync does to the number of pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    None,
    Create(usize),
    Delete(usize),
}

/// `manageReplicas`'s `diff`: `active` claimed active pods against `replicas` wanted, capped at `burst`.
pub fn change(active: usize, replicas: i64, burst: usize) -> Change {
    let diff = i64::try_from(active).unwrap_or(i64::MAX).saturating_sub(replicas);
    let capped = |n: i64| usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX).min(burst);
    match diff {
        d if d < 0 => Change::Create(capped(d)),
        d if d > 0 => Change::Delete(capped(d)),
        _ => Change::None,
    }
}

/// The batch sizes `slowStartBatch` uses for `count` calls when every call succeeds.
pub fn slow_start_sizes(count: usize, initial: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut remaining = count;
    let mut size = remaining.min(initial);
    while size > 0 {
        sizes.push(size);
        remaining -= size;
        size = size.saturating_mul(2).min(remaining);
    }
    sizes
}

/// `slowStartBatch`: makes up to `count` calls of `call` in doubling batches, stopping after the first
/// batch with a failure. Returns the calls that succeeded and the first failure (in call order).
pub async fn slow_start_batch<E, F, Fut>(count: usize, initial: usize, call: F) -> (usize, Option<E>)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut successes = 0;
    for size in slow_start_sizes(count, initial) {
        let results = futures::future::join_all((0..size).map(|_| call())).await;
        let mut errors = results.into_iter().filter_map(Result::err);
        let first = errors.next();
        let failed = first.as_ref().map_or(0, |_| 1 + errors.count());
        successes += size - failed;
        if first.is_some() {
            return (successes, first);
        }
    }
    (successes, None)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn the_change_is_capped_at_the_burst() {
        let cases = [
            (0, 3, Change::Create(3)),
            (3, 3, Change::None),
            (5, 1, Change::Delete(4)),
            (0, 1000, Change::Create(BURST_REPLICAS)),
            (1200, 0, Change::Delete(BURST_REPLICAS)),
            (2, 0, Change::Delete(2)),
        ];
        for (active, replicas, want) in cases {
            assert_eq!(change(active, replicas, BURST_REPLICAS), want, "{active} for {replicas}");
        }
    }

    #[test]
    fn batches_double_from_the_initial_size() {
        let cases = [
            (0, 1, vec![]),
            (1, 1, vec![1]),
            (3, 1, vec![1, 2]),
            (10, 1, vec![1, 2, 4, 3]),
            (500, 1, vec![1, 2, 4, 8, 16, 32, 64, 128, 245]),
            (25, 10, vec![10, 15]),
        ];
        for (count, initial, want) in cases {
            assert_eq!(slow_start_sizes(count, initial), want, "{count} from {initial}");
        }
    }

    #[test]
    fn a_failing_batch_is_the_last() {
        // (calls, the calls that fail (1-based), calls made, successes, whether an error comes back)
        let cases = [
            (10, vec![], 10, 10, false),
            (10, vec![1], 1, 0, true),
            // The second batch (calls 2 and 3) has one failure: calls 4 on are never made.
            (10, vec![3], 3, 2, true),
            (10, vec![4, 6], 7, 5, true),
        ];
        for (count, failing, made_want, successes_want, error_want) in cases {
            let made = Cell::new(0);
            let (successes, error) = futures::executor::block_on(slow_start_batch(count, 1, || {
                made.set(made.get() + 1);
                let n = made.get();
                let fail = failing.contains(&n);
                async move {
                    if fail {
                        Err(format!("call {n} failed"))
                    } else {
                        Ok(())
                    }
                }
            }));
            assert_eq!(
                (made.get(), successes, error.is_some()),
                (made_want, successes_want, error_want),
                "{failing:?}"
            );
            if let Some(first) = failing.first().filter(|_| error_want) {
                assert_eq!(error.unwrap(), format!("call {first} failed"));
            }
        }
    }
}
