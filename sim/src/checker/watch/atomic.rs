//! Atomic: the events of one revision come in one response. A response marked `fragment` continues in
//! the next one, so the unit is the "logical response": a run of fragments and the response that ends it.
//!
//! A revision whose events reach the client in two logical responses is split. Seeing the same event again
//! in a later response is a duplicate, not a split; that is Unique's business, so only a later response
//! bringing a *different* key of an already delivered revision counts here. A revision cut short and never
//! completed is a lost event, which Reliable reports.

use std::collections::{BTreeMap, BTreeSet};

use super::watches;
use crate::checker::{Culprit, Guarantee, Verdict, Violation};
use crate::describe;
use crate::history::{Bytes, History, Revision};

pub fn check(history: &History) -> Verdict {
    for (watch, record) in watches(history) {
        // For each revision delivered so far: the logical response it came in, and its keys.
        let mut delivered: BTreeMap<Revision, (usize, Culprit, BTreeSet<&Bytes>)> = BTreeMap::new();
        let mut logical = 0;
        for (response, received) in record.responses.iter().enumerate() {
            for (event, e) in received.response.events.iter().enumerate() {
                let at = Culprit::Event { watch, response, event };
                let (first_logical, first_at, keys) =
                    delivered.entry(e.revision()).or_insert_with(|| (logical, at, BTreeSet::new()));
                let is_new_key = keys.insert(&e.kv.key);
                if *first_logical != logical && is_new_key {
                    let details = format!(
                        "{} delivered revision {} in two responses: {} came after the response that began \
                         the revision had ended",
                        describe::watch(watch, record),
                        e.revision(),
                        describe::event(e)
                    );
                    return Verdict::Fail(Violation::new(Guarantee::Atomic, details, vec![*first_at, at]));
                }
            }
            if !received.response.fragment {
                logical += 1;
            }
        }
    }
    Verdict::Pass
}
