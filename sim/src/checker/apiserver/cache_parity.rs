//! "Write outcomes are the same without the watch cache": one seed runs twice, once with the apiservers'
//! watch caches in front of etcd and once without, and the writes whose outcome follows from the order of
//! the requests (a scripted client's creates, updates with its latest or a stale resourceVersion as
//! optimistic lock, deletes with and without resourceVersion preconditions, on keys nobody else touches; a
//! scenario's `kube` write steps) must come out the same step for step, whatever the schedule or the faults,
//! except where availability decides: a write with an ambiguous outcome in either run (it may or may not
//! have happened) leaves its key's later steps uncomparable, and a read that failed for availability is
//! skipped.
//!
//! Both kinds of step become a [`Step`]: a label, the key it acts on, and its outcome in words that leave out
//! revisions (which differ between runs), or `None` when it is ambiguous.

use std::collections::BTreeSet;

use super::{ApiGuarantee, ApiViolation};
use crate::history::apiserver::{ApiOp, ApiOutcome};

/// One step of a sequence the check compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// How a violation names the step (`script step 4 \`update /registry/...\``, `controller/update`).
    pub label: String,
    /// The object it acts on: an ambiguous write makes the later steps on it uncomparable.
    pub key: String,
    pub write: bool,
    /// What the outcome says about the state, without revisions; `None`: ambiguous (no answer, a 5xx, a
    /// 429).
    pub semantic: Option<String>,
    /// The outcome as it was, revisions included, for the violation's text.
    pub shown: String,
}

/// What a step's outcome says about the state, without the revisions (which differ between runs).
fn semantic(outcome: &ApiOutcome) -> Option<String> {
    Some(match outcome {
        ApiOutcome::Written { data, .. } => format!("written v={data}"),
        ApiOutcome::Deleted { .. } => "deleted".into(),
        ApiOutcome::Found { data, .. } => format!("found v={data}"),
        ApiOutcome::Listed { items, .. } => format!("listed {:?}", items.keys().collect::<Vec<_>>()),
        ApiOutcome::Refused(r) => format!("refused {r:?}"),
        ApiOutcome::Unavailable(_) | ApiOutcome::Unknown => return None,
    })
}

/// A scripted client's requests as steps, in order.
pub fn steps_of(ops: &[ApiOp]) -> Vec<Step> {
    ops.iter()
        .enumerate()
        .map(|(i, op)| Step {
            label: format!("{} step {i} `{}`", op.client, op.call),
            key: op.call.key().unwrap_or_default().to_string(),
            write: op.call.is_write(),
            semantic: semantic(&op.outcome),
            shown: op.outcome.to_string(),
        })
        .collect()
}

/// Compares the scripted steps of a run with the cache (`cached`) and without (`uncached`), step by step.
pub fn check(cached: &[ApiOp], uncached: &[ApiOp]) -> Vec<ApiViolation> {
    compare_steps(&steps_of(cached), &steps_of(uncached)).0
}

/// [`check`], and how many steps could be compared (neither ambiguous nor after an ambiguous write).
pub fn compare(cached: &[ApiOp], uncached: &[ApiOp]) -> (Vec<ApiViolation>, usize) {
    compare_steps(&steps_of(cached), &steps_of(uncached))
}

/// Compares two runs' sequences of steps; the violations, and how many steps could be compared.
pub fn compare_steps(cached: &[Step], uncached: &[Step]) -> (Vec<ApiViolation>, usize) {
    let mut compared = 0;
    let mut found = Vec::new();
    if cached.len() != uncached.len() {
        found.push(violation(format!(
            "the sequence ran {} steps with the cache and {} without",
            cached.len(),
            uncached.len()
        )));
    }
    let mut tainted = BTreeSet::new();
    for (a, b) in cached.iter().zip(uncached) {
        if a.key != b.key || a.write != b.write {
            found.push(violation(format!("{} acts on {} in one run and on {} in the other", a.label, a.key, b.key)));
            break;
        }
        if tainted.contains(&a.key) {
            continue;
        }
        let (Some(sa), Some(sb)) = (&a.semantic, &b.semantic) else {
            if a.write {
                tainted.insert(a.key.clone());
            }
            continue;
        };
        compared += 1;
        if sa != sb {
            found.push(violation(format!(
                "{}: with the cache {sa} ({}), without it {sb} ({})",
                a.label, a.shown, b.shown
            )));
        }
    }
    (found, compared)
}

fn violation(details: String) -> ApiViolation {
    ApiViolation { guarantee: ApiGuarantee::WriteOutcomesSameWithoutWatchCache, details }
}
