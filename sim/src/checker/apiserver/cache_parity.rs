//! "Write outcomes are the same with the watch cache on and off": one seed's scripted client runs a fixed
//! sequence of creates, updates (with its latest or a stale resourceVersion as optimistic lock), deletes
//! (with and without resourceVersion preconditions) and gets on keys nobody else touches, once with the
//! Cacher in front of etcd and once without. Each step's outcome is then fixed by the sequence's own
//! semantics (conflicts, AlreadyExists, NotFound), whatever the schedule or the faults, so the two runs must
//! agree step for step, except where availability decides: a write with an ambiguous outcome in either run
//! (it may or may not have happened) leaves its key's later steps uncomparable, and a read that failed for
//! availability is skipped.

use std::collections::BTreeSet;

use super::{ApiGuarantee, ApiViolation};
use crate::history::apiserver::{ApiOp, ApiOutcome};

/// What a step's outcome says about the state, without the revisions (which differ between runs).
fn semantic(outcome: &ApiOutcome) -> String {
    match outcome {
        ApiOutcome::Written { data, .. } => format!("written v={data}"),
        ApiOutcome::Deleted { .. } => "deleted".into(),
        ApiOutcome::Found { data, .. } => format!("found v={data}"),
        ApiOutcome::Listed { items, .. } => format!("listed {:?}", items.keys().collect::<Vec<_>>()),
        ApiOutcome::Refused(r) => format!("refused {r:?}"),
        ApiOutcome::Unavailable(_) | ApiOutcome::Unknown => "ambiguous".into(),
    }
}

/// Compares the scripted steps of a run with the cache (`cached`) and without (`uncached`), step by step.
pub fn check(cached: &[ApiOp], uncached: &[ApiOp]) -> Vec<ApiViolation> {
    compare(cached, uncached).0
}

/// [`check`], and how many steps could be compared (neither ambiguous nor after an ambiguous write).
pub fn compare(cached: &[ApiOp], uncached: &[ApiOp]) -> (Vec<ApiViolation>, usize) {
    let mut compared = 0;
    let mut found = Vec::new();
    if cached.len() != uncached.len() {
        found.push(violation(format!(
            "the script ran {} steps with the cache and {} without",
            cached.len(),
            uncached.len()
        )));
    }
    let mut tainted = BTreeSet::new();
    for (step, (a, b)) in cached.iter().zip(uncached).enumerate() {
        let key = a.call.key().unwrap_or_default().to_string();
        if b.call.key() != a.call.key() {
            found.push(violation(format!("step {step} is `{}` in one run and `{}` in the other", a.call, b.call)));
            break;
        }
        if tainted.contains(&key) {
            continue;
        }
        if a.outcome.is_ambiguous() || b.outcome.is_ambiguous() {
            if a.call.is_write() {
                tainted.insert(key);
            }
            continue;
        }
        compared += 1;
        let (sa, sb) = (semantic(&a.outcome), semantic(&b.outcome));
        if sa != sb {
            found.push(violation(format!(
                "step {step} `{}`: with the cache {sa} ({}), without it {sb} ({})",
                a.call, a.outcome, b.outcome
            )));
        }
    }
    (found, compared)
}

fn violation(details: String) -> ApiViolation {
    ApiViolation { guarantee: ApiGuarantee::WriteOutcomesIndependentOfCache, details }
}
