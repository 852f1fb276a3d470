//! Watches and what they deliver, as text: a watch request `watch /a* from rev=5` (the trace's
//! `watch#2 open /a* from rev=5`), a recorded watch `watch#2 (c1, /a* from rev=5)`, an event `put /a rev=3`
//! or `delete /a rev=4`, and in full `put /a=1 rev=3 create=2 ver=2 prev=0` (the value beside the key, as a
//! put request writes it), a cancel `canceled compact_revision=3 reason=""`.

use std::fmt::{self, Display, Formatter};

use super::text::{text, Span};
use crate::history::{Bytes, Event, EventKind, KeySpan, Revision, WatchCreate, WatchId, WatchRecord, WatchResponse};

/// What a watch covers: `/a* from rev=5`; without a start revision (the next one), `/a*`.
pub struct WatchTarget<'a> {
    pub span: &'a KeySpan,
    pub from: Option<&'a dyn Display>,
}

impl<'a> WatchTarget<'a> {
    pub fn of(w: &'a WatchCreate) -> WatchTarget<'a> {
        WatchTarget { span: &w.span, from: (w.start_revision.0 > 0).then_some(&w.start_revision as &dyn Display) }
    }
}

impl Display for WatchTarget<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Span(self.span))?;
        match self.from {
            Some(from) => write!(f, " from rev={from}"),
            None => Ok(()),
        }
    }
}

/// A watch request: `watch /a* from rev=5`.
pub fn watch_request(w: &WatchCreate) -> impl Display + '_ {
    super::FromFn(move |f: &mut Formatter<'_>| write!(f, "watch {}", WatchTarget::of(w)))
}

/// A recorded watch: `watch#2 (c1, /a* from rev=5)`.
pub fn watch(id: WatchId, record: &WatchRecord) -> impl Display + '_ {
    super::FromFn(move |f: &mut Formatter<'_>| {
        write!(f, "{id} ({}, {})", record.client, WatchTarget::of(&record.request))
    })
}

/// An event, short or in full (see the module doc).
pub struct DescribeEvent<'a> {
    event: &'a Event,
    full: bool,
}

/// `put /a rev=3`, `delete /a rev=4`.
pub fn event(e: &Event) -> DescribeEvent<'_> {
    DescribeEvent { event: e, full: false }
}

/// `put /a=1 rev=3 create=2 ver=2`, `delete /a rev=4`, each with ` prev=VALUE` when the event carries the
/// previous key-value.
pub fn event_in_full(e: &Event) -> DescribeEvent<'_> {
    DescribeEvent { event: e, full: true }
}

impl Display for DescribeEvent<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (e, kv) = (self.event, &self.event.kv);
        if !self.full {
            return write!(f, "{}", change(e.kind, &kv.key, kv.mod_revision));
        }
        match e.kind {
            EventKind::Put => write!(
                f,
                "put {}={} rev={} create={} ver={}",
                text(&kv.key),
                text(&kv.value),
                kv.mod_revision,
                kv.create_revision,
                kv.version
            )?,
            EventKind::Delete => write!(f, "delete {} rev={}", text(&kv.key), kv.mod_revision)?,
        }
        match &e.prev_kv {
            Some(p) => write!(f, " prev={}", text(&p.value)),
            None => Ok(()),
        }
    }
}

/// A change to one key as an event shows it, short: `put /a rev=3`, `delete /a rev=4`.
pub fn change(kind: EventKind, key: &Bytes, revision: Revision) -> impl Display + '_ {
    super::FromFn(move |f: &mut Formatter<'_>| {
        let kind = match kind {
            EventKind::Put => "put",
            EventKind::Delete => "delete",
        };
        write!(f, "{kind} {} rev={revision}", text(key))
    })
}

/// A watch canceled by the server: `canceled compact_revision=3 reason="why"`.
pub fn cancel(r: &WatchResponse) -> impl Display + '_ {
    super::FromFn(move |f: &mut Formatter<'_>| {
        write!(f, "canceled compact_revision={} reason={:?}", r.compact_revision, r.cancel_reason)
    })
}
