//! Bookmarkable: a progress notification at revision P promises that the watch has delivered everything up
//! to P. So every later event has a revision above P, P is never below an event already delivered, and
//! progress never goes back (etcd #15220 broke the first: progress sent before pending events).

use super::watches;
use crate::checker::{Culprit, Guarantee, Verdict, Violation};
use crate::describe;
use crate::history::{History, Revision};

pub fn check(history: &History) -> Verdict {
    for (watch, record) in watches(history) {
        let fail = |details: String, culprits: Vec<Culprit>| {
            let details = format!("{} {details}", describe::watch(watch, record));
            Verdict::Fail(Violation::new(Guarantee::Bookmarkable, details, culprits))
        };
        let mut bookmark: Option<(Revision, Culprit)> = None;
        let mut last_event: Option<(Revision, Culprit)> = None;
        for (response, received) in record.responses.iter().enumerate() {
            let r = &received.response;
            let here = Culprit::Response { watch, response };
            if r.is_progress_notify() {
                let p = r.header_revision;
                if let Some((b, at)) = bookmark.filter(|(b, _)| p < *b) {
                    return fail(format!("reported progress at revision {p} after progress at {b}"), vec![at, here]);
                }
                if let Some((e, at)) = last_event.filter(|(e, _)| p < *e) {
                    return fail(
                        format!("reported progress at revision {p} after delivering an event at revision {e}"),
                        vec![at, here],
                    );
                }
                bookmark = Some((p, here));
                continue;
            }
            for (event, e) in r.events.iter().enumerate() {
                let at = Culprit::Event { watch, response, event };
                if let Some((b, bookmark_at)) = bookmark.filter(|(b, _)| e.revision() <= *b) {
                    return fail(
                        format!("delivered {} after a progress notification at revision {b}", describe::event(e)),
                        vec![bookmark_at, at],
                    );
                }
                last_event = Some((e.revision(), at));
            }
        }
    }
    Verdict::Pass
}
