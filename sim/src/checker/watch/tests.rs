//! Each watch checker on a hand-built stream that keeps its guarantee and on one with the bug it exists
//! to catch.

use super::*;
use crate::checker::{check_all, linearizable, Violation};
use crate::history::*;

#[derive(Default)]
struct Script {
    h: History,
    now: u64,
}

impl Script {
    fn tick(&mut self) -> Nanos {
        self.now += 1_000_000;
        Nanos(self.now)
    }

    fn watch(&mut self, span: KeySpan, start: i64) -> WatchId {
        self.watch_with(WatchCreate { span, start_revision: Revision(start), ..WatchCreate::default() })
    }

    fn watch_with(&mut self, request: WatchCreate) -> WatchId {
        let t = self.tick();
        self.h.open_watch(ClientId(9), request, t)
    }

    fn respond(&mut self, w: WatchId, response: WatchResponse) {
        let t = self.tick();
        self.h.watch_response(w, t, response);
    }

    fn created(&mut self, w: WatchId, header: i64) {
        self.respond(w, WatchResponse { header_revision: Revision(header), created: true, ..WatchResponse::default() });
    }

    fn events(&mut self, w: WatchId, events: Vec<Event>) {
        let header = events.last().map_or(Revision::ZERO, Event::revision);
        self.respond(w, WatchResponse { header_revision: header, events, ..WatchResponse::default() });
    }

    fn fragment(&mut self, w: WatchId, events: Vec<Event>) {
        let header = events.last().map_or(Revision::ZERO, Event::revision);
        self.respond(w, WatchResponse { header_revision: header, events, fragment: true, ..WatchResponse::default() });
    }

    fn progress(&mut self, w: WatchId, rev: i64) {
        self.respond(w, WatchResponse { header_revision: Revision(rev), watch_id: -1, ..WatchResponse::default() });
    }

    fn canceled_for_compaction(&mut self, w: WatchId, compact: i64) {
        self.respond(
            w,
            WatchResponse {
                canceled: true,
                compact_revision: Revision(compact),
                cancel_reason: "etcdserver: mvcc: required revision has been compacted".to_string(),
                ..WatchResponse::default()
            },
        );
    }

    /// An acknowledged put, the evidence Reliable and Resumable hold watches to.
    fn put(&mut self, key: &str, rev: i64) -> OpId {
        let t = self.tick();
        let op = self.h.invoke(ClientId(1), Request::Put(PutRequest::new(key, format!("v{rev}").as_str())), t);
        let t = self.tick();
        let response = Response { header_revision: Revision(rev), body: ResponseBody::Put(PutResult::default()) };
        self.h.complete(op, t, Outcome::Ok(response));
        op
    }
}

fn put(key: &str, rev: i64) -> Event {
    Event {
        kind: EventKind::Put,
        kv: KeyValue {
            key: Bytes::from(key),
            create_revision: Revision(rev),
            mod_revision: Revision(rev),
            version: 1,
            value: Bytes::from(format!("v{rev}").as_str()),
            lease: LeaseId::NONE,
        },
        prev_kv: None,
    }
}

fn delete(key: &str, rev: i64) -> Event {
    Event {
        kind: EventKind::Delete,
        kv: KeyValue { key: Bytes::from(key), mod_revision: Revision(rev), ..KeyValue::default() },
        prev_kv: None,
    }
}

fn all() -> KeySpan {
    KeySpan::prefix("/")
}

fn violation(verdict: Verdict, guarantee: Guarantee) -> Violation {
    match verdict {
        Verdict::Fail(v) => {
            assert_eq!(v.guarantee, guarantee);
            let text = v.to_string();
            assert!(text.starts_with(&format!("broke {guarantee} (\"{}\")", guarantee.statement())), "{text}");
            v
        }
        other => panic!("expected {guarantee} to fail, got {other}"),
    }
}

fn reference(s: &Script) -> Reference {
    Reference::from_history(&s.h)
}

#[test]
fn ordered_passes_revision_order_and_fails_time_travel() {
    let mut s = Script::default();
    let w = s.watch(all(), 2);
    s.events(w, vec![put("/a", 2), put("/b", 3), put("/c", 3)]);
    s.events(w, vec![put("/a", 4)]);
    assert_eq!(ordered::check(&s.h), Verdict::Pass);
    // etcd #15271's shape: after a snapshot restore the watch goes back in time.
    s.events(w, vec![put("/b", 3)]);
    let v = violation(ordered::check(&s.h), Guarantee::Ordered);
    assert!(v.details.contains("put /b rev=3 after put /a rev=4"), "{v}");
    assert_eq!(v.culprits[1], Culprit::Event { watch: w, response: 2, event: 0 });
}

#[test]
fn unique_passes_distinct_events_and_fails_a_duplicate() {
    let mut s = Script::default();
    let w = s.watch(all(), 2);
    s.events(w, vec![put("/a", 2), put("/b", 2)]);
    s.events(w, vec![put("/a", 3)]);
    assert_eq!(unique::check(&s.h), Verdict::Pass);
    // etcd #17247's shape: a txn's event delivered again.
    s.events(w, vec![put("/a", 3), put("/c", 4)]);
    let v = violation(unique::check(&s.h), Guarantee::Unique);
    assert!(v.details.contains("put /a rev=3 twice"), "{v}");
}

#[test]
fn atomic_passes_whole_and_fragmented_revisions_and_fails_a_split() {
    let mut whole = Script::default();
    let w = whole.watch(all(), 2);
    whole.events(w, vec![put("/a", 2), put("/b", 3), delete("/c", 3)]);
    whole.fragment(w, vec![put("/a", 4)]);
    whole.events(w, vec![put("/b", 4)]);
    assert_eq!(atomic::check(&whole.h), Verdict::Pass);

    let mut split = Script::default();
    let w = split.watch(all(), 2);
    split.events(w, vec![put("/a", 2), put("/b", 3)]);
    split.events(w, vec![delete("/c", 3), put("/d", 4)]);
    let v = violation(atomic::check(&split.h), Guarantee::Atomic);
    assert!(v.details.contains("revision 3 in two responses"), "{v}");
}

#[test]
fn atomic_leaves_duplicates_to_unique() {
    let mut s = Script::default();
    let w = s.watch(all(), 2);
    s.events(w, vec![put("/a", 2)]);
    s.events(w, vec![put("/a", 2)]);
    assert_eq!(atomic::check(&s.h), Verdict::Pass);
    assert!(unique::check(&s.h).is_fail());
}

#[test]
fn reliable_passes_a_complete_stream_and_fails_a_lost_event() {
    let mut s = Script::default();
    let w = s.watch(all(), 2);
    s.put("/a", 2);
    s.put("/b", 3);
    s.put("/a", 4);
    s.events(w, vec![put("/a", 2)]);
    s.events(w, vec![put("/b", 3)]);
    s.events(w, vec![put("/a", 4)]);
    assert_eq!(reliable::check(&s.h, &reference(&s)), Verdict::Pass);

    let mut gap = Script::default();
    let w = gap.watch(all(), 2);
    gap.put("/a", 2);
    let lost = gap.put("/b", 3);
    gap.put("/a", 4);
    gap.events(w, vec![put("/a", 2)]);
    // etcd #17529's shape: an event dropped under stream starvation.
    gap.events(w, vec![put("/a", 4)]);
    let v = violation(reliable::check(&gap.h, &reference(&gap)), Guarantee::Reliable);
    assert!(v.details.contains("not put /b rev=3"), "{v}");
    assert_eq!(v.culprits, vec![Culprit::Op(lost), Culprit::Response { watch: w, response: 1 }]);
}

#[test]
fn reliable_counts_progress_and_other_watches_as_evidence() {
    let mut s = Script::default();
    let w = s.watch(all(), 2);
    let other = s.watch(KeySpan::single("/b"), 2);
    s.events(other, vec![put("/b", 3)]);
    s.events(w, vec![put("/a", 2)]);
    // The progress notification vouches for revision 3, which the other watch saw change /b.
    s.progress(w, 3);
    let v = violation(reliable::check(&s.h, &reference(&s)), Guarantee::Reliable);
    assert!(v.details.contains("vouched up to 3"), "{v}");
    assert_eq!(v.culprits[0], Culprit::Event { watch: other, response: 0, event: 0 });
}

#[test]
fn reliable_respects_filters_and_ranges() {
    let mut s = Script::default();
    let request = WatchCreate {
        span: KeySpan::prefix("/a"),
        start_revision: Revision(2),
        filters: vec![WatchFilter::NoDelete],
        ..WatchCreate::default()
    };
    let w = s.watch_with(request);
    let other = s.watch(all(), 2);
    s.events(other, vec![put("/a1", 2), delete("/a1", 3), put("/b", 4), put("/a2", 5)]);
    s.events(w, vec![put("/a1", 2), put("/a2", 5)]);
    assert_eq!(reliable::check(&s.h, &reference(&s)), Verdict::Pass);
}

#[test]
fn resumable_passes_an_exact_start_and_fails_a_late_one() {
    let mut s = Script::default();
    s.put("/a", 2);
    let missed = s.put("/a", 3);
    s.put("/a", 4);
    let exact = s.watch(all(), 3);
    s.events(exact, vec![put("/a", 3), put("/a", 4)]);
    assert_eq!(resumable::check(&s.h, &reference(&s)), Verdict::Pass);

    let late = s.watch(all(), 3);
    s.events(late, vec![put("/a", 4)]);
    let v = violation(resumable::check(&s.h, &reference(&s)), Guarantee::Resumable);
    assert!(v.details.contains("put /a rev=3"), "{v}");
    assert!(v.culprits.contains(&Culprit::Op(missed)), "{v}");
}

#[test]
fn resumable_fails_an_event_before_the_start() {
    let mut s = Script::default();
    let w = s.watch(all(), 5);
    s.events(w, vec![put("/a", 4)]);
    let v = violation(resumable::check(&s.h, &reference(&s)), Guarantee::Resumable);
    assert!(v.details.contains("starts at revision 5 but delivered put /a rev=4"), "{v}");
}

#[test]
fn resumable_start_zero_begins_after_the_created_revision() {
    let mut s = Script::default();
    s.put("/a", 2);
    s.put("/a", 3);
    let w = s.watch(all(), 0);
    s.created(w, 2);
    s.events(w, vec![put("/a", 3)]);
    assert_eq!(resumable::check(&s.h, &reference(&s)), Verdict::Pass);
    let skipped = s.watch(all(), 0);
    s.created(skipped, 1);
    s.events(skipped, vec![put("/a", 3)]);
    violation(resumable::check(&s.h, &reference(&s)), Guarantee::Resumable);
}

#[test]
fn resumable_accepts_a_deserved_compaction_cancel_and_fails_an_undeserved_one() {
    let mut s = Script::default();
    let compacted = s.watch(all(), 2);
    s.canceled_for_compaction(compacted, 5);
    assert_eq!(resumable::check(&s.h, &reference(&s)), Verdict::Pass);
    // etcd #19179's shape: a watch from exactly the compaction revision is legal.
    let at_compaction = s.watch(all(), 5);
    s.canceled_for_compaction(at_compaction, 5);
    let v = violation(resumable::check(&s.h, &reference(&s)), Guarantee::Resumable);
    assert_eq!(v.culprits, vec![Culprit::Response { watch: at_compaction, response: 0 }]);
}

#[test]
fn bookmarkable_passes_honest_progress_and_fails_progress_ahead_of_an_event() {
    let mut s = Script::default();
    let w = s.watch(all(), 2);
    s.events(w, vec![put("/a", 2)]);
    s.progress(w, 3);
    s.events(w, vec![put("/a", 4)]);
    s.progress(w, 4);
    assert_eq!(bookmarkable::check(&s.h), Verdict::Pass);

    // etcd #15220's shape: progress reported before a pending event was sent.
    let mut early = Script::default();
    let w = early.watch(all(), 2);
    early.progress(w, 5);
    early.events(w, vec![put("/a", 4)]);
    let v = violation(bookmarkable::check(&early.h), Guarantee::Bookmarkable);
    assert!(v.details.contains("put /a rev=4 after a progress notification at revision 5"), "{v}");
}

#[test]
fn bookmarkable_fails_progress_going_back() {
    let mut s = Script::default();
    let w = s.watch(all(), 2);
    s.progress(w, 5);
    s.progress(w, 4);
    violation(bookmarkable::check(&s.h), Guarantee::Bookmarkable);
    let mut behind = Script::default();
    let w = behind.watch(all(), 2);
    behind.events(w, vec![put("/a", 6)]);
    behind.progress(w, 5);
    violation(bookmarkable::check(&behind.h), Guarantee::Bookmarkable);
}

#[test]
fn check_all_reports_every_guarantee() {
    let mut s = Script::default();
    s.put("/a", 2);
    let w = s.watch(all(), 2);
    s.events(w, vec![put("/a", 2)]);
    s.progress(w, 2);
    let report = check_all(&s.h, &linearizable::Options::default());
    assert_eq!(report.verdicts.len(), Guarantee::ALL.len());
    assert!(report.all_pass(), "{report:?}");
}
