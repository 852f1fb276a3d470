//! Reliable: no gaps. Between the first revision a watch delivered and the last revision it vouches for,
//! every known change (see [`Reference`]) to a key it watches, of a kind its filters let through, must
//! be delivered.
//!
//! The last revision a watch vouches for is the highest of its last event's and its progress
//! notifications' (a progress notification at P says everything up to P was delivered). What comes before
//! the first event is Resumable's concern.

use std::collections::BTreeSet;

use super::{events, watches, Reference};
use crate::checker::{Culprit, Guarantee, Verdict, Violation};
use crate::describe;
use crate::history::{History, Revision};

pub fn check(history: &History, reference: &Reference) -> Verdict {
    for (watch, record) in watches(history) {
        let delivered: BTreeSet<_> =
            events(watch, record).map(|(_, e)| (e.revision(), e.kv.key.clone(), e.kind)).collect();
        let Some(first) = delivered.first().map(|(rev, _, _)| *rev) else { continue };
        let last_event = delivered.last().map_or(first, |(rev, _, _)| *rev);
        let last_progress = record
            .responses
            .iter()
            .filter(|r| r.response.is_progress_notify())
            .map(|r| r.response.header_revision)
            .max()
            .unwrap_or(Revision::ZERO);
        let last = last_event.max(last_progress);
        for (rev, key, fact) in reference.wanted(&record.request, first, last) {
            if delivered.contains(&(rev, key.clone(), fact.kind)) {
                continue;
            }
            let details = format!(
                "{} delivered revisions {first} to {last_event}{} but not {}, which {} shows was committed",
                describe::watch(watch, record),
                if last_progress > last_event { format!(" and vouched up to {last_progress}") } else { String::new() },
                describe::change(fact.kind, key, rev),
                fact.source
            );
            let mut culprits = vec![fact.source];
            // Point at the response that should have carried it: the first one after the gap.
            let after = events(watch, record).find(|(_, e)| e.revision() > rev).map(|(at, _)| at);
            if let Some(Culprit::Event { watch, response, .. }) = after {
                culprits.push(Culprit::Response { watch, response });
            }
            return Verdict::Fail(Violation::new(Guarantee::Reliable, details, culprits));
        }
    }
    Verdict::Pass
}
