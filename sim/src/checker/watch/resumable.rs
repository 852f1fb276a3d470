//! Resumable: a watch from revision S picks up exactly at S.
//!
//! - No event below S.
//! - The first event is the first known change (see [`Reference`]) at or after S that the watch wants:
//!   nothing it wants between S and its first event (or, with no event yet, the last revision a progress
//!   notification vouched for) may be missing.
//! - If S has been compacted away, the watch is canceled with `compact_revision` C > S. More generally, a
//!   cancel for compaction at C is deserved only while the watch still had to deliver something below C
//!   (etcd cancels a watcher whose next revision is below C); a watch from exactly C must not be canceled
//!   (etcd #19179's shape).
//!
//! A watch with `start_revision` 0 starts after the revision its created response reports; without a
//! created response its start is unknown and only the other guarantees apply.

use super::{events, watches, Reference};
use crate::checker::{Culprit, Guarantee, Verdict, Violation};
use crate::describe;
use crate::history::{History, Revision, WatchId, WatchRecord};

pub fn check(history: &History, reference: &Reference) -> Verdict {
    for (watch, record) in watches(history) {
        if let Some(violation) = check_watch(watch, record, reference) {
            return Verdict::Fail(violation);
        }
    }
    Verdict::Pass
}

fn check_watch(watch: WatchId, record: &WatchRecord, reference: &Reference) -> Option<Violation> {
    let start = start_revision(record)?;
    let fail = |details: String, culprits: Vec<Culprit>| {
        Some(Violation::new(Guarantee::Resumable, format!("{} {details}", describe::watch(watch, record)), culprits))
    };
    let first = events(watch, record).next();
    if let Some((at, event)) = first.filter(|(_, e)| e.revision() < start) {
        return fail(format!("starts at revision {start} but delivered {}", describe::event(event)), vec![at]);
    }

    // The next revision the watch still owed when each response arrived.
    let mut next = start;
    for (response, received) in record.responses.iter().enumerate() {
        let r = &received.response;
        if r.canceled && r.compact_revision > Revision::ZERO && next >= r.compact_revision {
            return fail(
                format!(
                    "was canceled for compaction at {}, but it had delivered everything below revision {next}, \
                     which compaction at {} does not touch",
                    r.compact_revision, r.compact_revision
                ),
                vec![Culprit::Response { watch, response }],
            );
        }
        if let Some(last) = r.events.last() {
            next = next.max(last.revision().next());
        }
        if r.is_progress_notify() {
            next = next.max(r.header_revision.next());
        }
    }

    let compacted =
        record.responses.iter().any(|r| r.response.canceled && r.response.compact_revision > Revision::ZERO);
    // Everything the watch wanted below this revision should have come first.
    let vouched = match first {
        Some((_, event)) => event.revision().prev(),
        None if compacted => return None,
        None => record
            .responses
            .iter()
            .filter(|r| r.response.is_progress_notify())
            .map(|r| r.response.header_revision)
            .max()?,
    };
    let delivered_first = first.map(|(_, e)| (e.revision(), e.kv.key.clone()));
    let (rev, key, fact) = reference
        .wanted(&record.request, start, vouched)
        .find(|(rev, key, _)| delivered_first.as_ref() != Some(&(*rev, (*key).clone())))?;
    let began = match first {
        Some((_, event)) => format!("its first event is {}", describe::event(event)),
        None => format!("it delivered nothing up to revision {vouched}"),
    };
    let mut culprits = vec![fact.source];
    culprits.extend(first.map(|(at, _)| at));
    let missing = describe::change(fact.kind, key, rev);
    fail(format!("starts at revision {start} but {began}: {missing} ({}) is missing", fact.source), culprits)
}

/// S: the requested start revision, or the one after the revision the created response reports.
fn start_revision(record: &WatchRecord) -> Option<Revision> {
    if record.request.start_revision > Revision::ZERO {
        return Some(record.request.start_revision);
    }
    record.responses.iter().find(|r| r.response.created).map(|r| r.response.header_revision.next())
}
