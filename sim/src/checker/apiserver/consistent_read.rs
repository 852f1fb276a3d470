//! "A consistent read (list or get with resourceVersion unset) sees every write acknowledged before it
//! started": a list must be at a revision no older than any write acknowledged before it began under its
//! prefix, and hold exactly etcd's state at that revision; a get must return the key's state at some
//! revision no older than the last write to the key acknowledged before it began.

use super::{state_at, ApiGuarantee, ApiViolation};
use crate::history::apiserver::{ApiCall, ApiHistory, ApiOp, ApiOutcome, ChangeKind, Refusal};

pub fn check(history: &ApiHistory) -> Vec<ApiViolation> {
    let mut found = Vec::new();
    for read in &history.ops {
        let problem = match (&read.call, &read.outcome) {
            (ApiCall::List { prefix }, ApiOutcome::Listed { rv, items }) => {
                let newest = newest_acknowledged(history, read, |k| k.starts_with(prefix.as_str()));
                if *rv < newest {
                    Some(format!("the list is at rv={rv}, older than a write acknowledged at rv={newest}"))
                } else if *rv <= history.changes_through {
                    let state = state_at(&history.changes, *rv);
                    let want: Vec<(&str, u64)> =
                        state.into_iter().filter(|(k, _)| k.starts_with(prefix.as_str())).collect();
                    let got: Vec<(&str, u64)> = items.iter().map(|(k, r)| (k.as_str(), *r)).collect();
                    (got != want).then(|| format!("the list at rv={rv} holds {got:?}, but etcd held {want:?}"))
                } else {
                    None
                }
            }
            (ApiCall::Get { key }, ApiOutcome::Found { rv, .. }) => {
                let newest = newest_acknowledged(history, read, |k| k == key);
                let put = history.changes.iter().any(|c| c.key == *key && c.rev == *rv && c.kind == ChangeKind::Put);
                let superseded = history.changes.iter().find(|c| c.key == *key && c.rev > *rv).map(|c| c.rev);
                if !put && *rv <= history.changes_through {
                    Some(format!("found {key} at rv={rv}, which etcd never wrote"))
                } else if superseded.is_some_and(|next| next <= newest) {
                    Some(format!(
                        "found {key} at rv={rv}, replaced at rv={} before a write acknowledged at rv={newest}",
                        superseded.unwrap_or_default()
                    ))
                } else {
                    None
                }
            }
            (ApiCall::Get { key }, ApiOutcome::Refused(Refusal::NotFound)) => {
                let newest = newest_acknowledged(history, read, |k| k == key);
                let absent_then = !state_at(&history.changes, newest).contains_key(key.as_str());
                let deleted_later =
                    history.changes.iter().any(|c| c.key == *key && c.rev > newest && c.kind == ChangeKind::Delete);
                (!absent_then && !deleted_later)
                    .then(|| format!("{key} not found, but a write acknowledged at rv={newest} left it present"))
            }
            _ => None,
        };
        if let Some(problem) = problem {
            found.push(ApiViolation {
                guarantee: ApiGuarantee::ConsistentReadSeesAcknowledgedWrites,
                details: format!("{} {} (invoked #{}): {problem}", read.client, read.call, read.invoked),
            });
        }
    }
    found
}

/// The revision of the newest write on a key `in_scope` acknowledged before `read` was invoked (0: none).
fn newest_acknowledged(history: &ApiHistory, read: &ApiOp, in_scope: impl Fn(&str) -> bool) -> u64 {
    history
        .ops
        .iter()
        .filter(|w| w.returned < read.invoked && w.call.is_write())
        .filter(|w| w.call.key().is_some_and(&in_scope))
        .filter_map(|w| match w.outcome {
            ApiOutcome::Written { rv, .. } | ApiOutcome::Deleted { rv } => Some(rv),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}
