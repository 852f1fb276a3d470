//! Ordered: a watch's event revisions never decrease (events of one revision, i.e. one txn, share it).

use super::{events, watches};
use crate::checker::{Culprit, Guarantee, Verdict, Violation};
use crate::describe;
use crate::history::{Event, History};

pub fn check(history: &History) -> Verdict {
    for (watch, record) in watches(history) {
        let mut last: Option<(Culprit, &Event)> = None;
        for (at, event) in events(watch, record) {
            if let Some((prev_at, prev)) = last {
                if event.revision() < prev.revision() {
                    let details = format!(
                        "{} delivered {} after {}",
                        describe::watch(watch, record),
                        describe::event(event),
                        describe::event(prev)
                    );
                    return Verdict::Fail(Violation::new(Guarantee::Ordered, details, vec![prev_at, at]));
                }
            }
            last = Some((at, event));
        }
    }
    Verdict::Pass
}
