//! "A watch from resourceVersion N delivers every change after N (in order, exactly once) or fails with 410
//! Expired": each watch's events must be, one for one, the etcd-side changes under its prefix after N, from
//! the first on, with no gap, repeat or reordering; a watch may end early (410, a relist closing it, the
//! client stopping), but never skip. ADDED and MODIFIED must match whether the key existed before.

use std::collections::BTreeSet;

use super::{ApiGuarantee, ApiViolation};
use crate::history::apiserver::{ApiHistory, ChangeKind, WatchedKind};

pub fn check(history: &ApiHistory) -> Vec<ApiViolation> {
    // Whether each change created its key (ADDED) or changed an existing one (MODIFIED).
    let mut live = BTreeSet::new();
    let kinds: Vec<WatchedKind> = history
        .changes
        .iter()
        .map(|c| match c.kind {
            ChangeKind::Delete => {
                live.remove(c.key.as_str());
                WatchedKind::Deleted
            }
            ChangeKind::Put if live.insert(c.key.as_str()) => WatchedKind::Added,
            ChangeKind::Put => WatchedKind::Modified,
        })
        .collect();
    let mut found = Vec::new();
    for (i, w) in history.watches.iter().enumerate() {
        let expected: Vec<(usize, &crate::history::apiserver::Change)> = history
            .changes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.rev > w.from && c.key.starts_with(&w.prefix))
            .collect();
        for (n, event) in w.events.iter().enumerate() {
            if event.rv > history.changes_through {
                // Past the record (a harness whose record fell behind): nothing to compare with.
                break;
            }
            let problem = match expected.get(n) {
                None => Some(format!(
                    "delivered {:?} {} rv={}, a change etcd never recorded (its record is complete through rv={})",
                    event.kind, event.key, event.rv, history.changes_through
                )),
                Some((j, c)) if c.rev != event.rv || c.key != event.key || kinds[*j] != event.kind => Some(format!(
                    "event {n} is {:?} {} rv={}, but the next change after rv={} is {:?} {} rv={}",
                    event.kind, event.key, event.rv, w.from, kinds[*j], c.key, c.rev
                )),
                Some(_) => None,
            };
            if let Some(problem) = problem {
                found.push(ApiViolation {
                    guarantee: ApiGuarantee::WatchFromResourceVersion,
                    details: format!("watch {i} by {} on {} from rv={}: {problem}", w.client, w.prefix, w.from),
                });
                break;
            }
        }
    }
    found
}
