//! `watch = { key = "/a", ... }`: opens a watch beside the client's later steps, recorded in the history
//! until the run closes it (or `open_for_ms`). The step completes when the server confirms the watch, so a
//! later step's write is certain to be watched; a watch step must be named (waits, progress and cancel
//! requests, and expectations refer to it). Its expectations are judged at the end of the run, on
//! everything it delivered: the created revision, the exact events, a cancel and its reason, the progress
//! notifications.

mod open;

use std::fmt::{self, Display, Formatter};

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::{shown, StepJudge};
use super::kv::{self, wire_span};
use super::board::{Known, Unresolved};
use super::observed::Observed;
use super::text::Named;
use super::{ClientKind, PlanCx, StepKind};
use crate::describe::{self, WatchTarget};
use crate::history::{self as h, EventKind, KeySpan, WatchRecord};
use crate::key_fields;
use crate::scenario::expr::Expr;
use crate::scenario::lang::expect::{EventType, Expect, ExpectEvent};
use crate::scenario::lang::expectations::{EventExpect, Expectations};
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::value::{is_false, Value};
pub use open::send_on_watch;

/// `watch = { .. }` as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_revision: Option<Spanned<Value>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prev_kv: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub progress_notify: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_put: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_delete: bool,
    /// Let the server split a response of at least `max_request_bytes` (1.5 MiB) into fragments.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fragment: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_for_ms: Option<u64>,
}

key_fields!(Syntax);

/// Names the `watch` step a request on its stream is about (`{ watch = "w" }`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WatchRef {
    pub watch: Spanned<String>,
}

/// A validated watch.
#[derive(Clone, Debug)]
pub struct Watch {
    pub span: KeySpan,
    pub start_revision: Option<Expr>,
    pub prev_kv: bool,
    pub progress_notify: bool,
    pub no_put: bool,
    pub no_delete: bool,
    pub fragment: bool,
    pub open_for_ms: Option<u64>,
}

impl Watch {
    /// The WatchCreateRequest, its start revision resolved.
    pub fn request(&self, known: &dyn Known) -> std::result::Result<pb::WatchCreateRequest, Unresolved> {
        let (key, range_end) = wire_span(&self.span);
        let start_revision = match &self.start_revision {
            Some(e) => e.value(&|s| known.revision(s))?,
            None => 0,
        };
        let mut filters = Vec::new();
        if self.no_put {
            filters.push(pb::watch_create_request::FilterType::Noput as i32);
        }
        if self.no_delete {
            filters.push(pb::watch_create_request::FilterType::Nodelete as i32);
        }
        Ok(pb::WatchCreateRequest {
            key,
            range_end,
            start_revision,
            progress_notify: self.progress_notify,
            filters,
            prev_kv: self.prev_kv,
            fragment: self.fragment,
            ..Default::default()
        })
    }

    /// `expect.events` of a watch: each event must be one the watch can deliver (a key it covers, a kind
    /// its filters let through, a previous value only if it asked for them).
    fn events_expect(
        &self,
        src: &Source,
        names: &crate::scenario::lang::names::Names,
        list: &Spanned<Vec<Spanned<ExpectEvent>>>,
    ) -> Result<Vec<EventExpect>> {
        let expr = |v: &Option<Spanned<Value>>| v.as_ref().map(|v| names.expr(src, v)).transpose();
        let mut out = Vec::new();
        for ev in list.get_ref() {
            let x = ev.get_ref();
            if !self.span.contains(x.key.get_ref().as_bytes()) {
                return Err(src.err(
                    x.key.span(),
                    format!("the watch does not cover key {:?}, so it can never deliver this event", x.key.get_ref()),
                ));
            }
            let filtered = match x.kind {
                EventType::Put => self.no_put,
                EventType::Delete => self.no_delete,
            };
            if filtered {
                return Err(src.err(
                    ev.span(),
                    format!("the watch filters out {:?} events, so it can never deliver this one", x.kind),
                ));
            }
            if x.prev_value.is_some() && !self.prev_kv {
                return Err(src.err(ev.span(), "`prev_value` needs `prev_kv = true` on the watch"));
            }
            out.push(EventExpect {
                kind: x.kind,
                key: x.key.get_ref().clone(),
                value: x.value.clone(),
                mod_revision: expr(&x.mod_revision)?,
                create_revision: expr(&x.create_revision)?,
                version: expr(&x.version)?,
                prev_value: x.prev_value.clone(),
            });
        }
        Ok(out)
    }
}

impl StepKind for Watch {
    const KEY: &'static str = "watch";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Watch;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[(
            "watch",
            &[
                "revision",
                "events",
                "canceled",
                "compact_revision",
                "cancel_reason",
                "progress_count",
                "progress_revision",
            ],
        )]
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Watch> {
        let r = syntax.get_ref();
        if cx.name().is_none() {
            return Err(cx
                .src
                .err(syntax.span(), "a `watch` step needs a `name`, by which waits and expectations refer to it"));
        }
        Ok(Watch {
            span: kv::span_of(cx.src, &r.keys())?,
            start_revision: r.start_revision.as_ref().map(|v| cx.names.given(cx.src, v)).transpose()?,
            prev_kv: r.prev_kv,
            progress_notify: r.progress_notify,
            no_put: r.no_put,
            no_delete: r.no_delete,
            fragment: r.fragment,
            open_for_ms: r.open_for_ms,
        })
    }

    fn check_expect(&self, cx: &PlanCx, written: &Spanned<Expect>, parsed: &mut Expectations) -> Result<()> {
        if let Some(list) = &written.get_ref().events {
            parsed.events = Some(self.events_expect(cx.src, cx.names, list)?);
        }
        Ok(())
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let from = self.start_revision.as_ref().map(Named).filter(|n| !n.is_zero());
        write!(f, "watch {}", WatchTarget { span: &self.span, from: from.as_ref().map(|n| n as &dyn Display) })
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        match self.request(&*cx.ctx.board) {
            Ok(create) => open::open_watch(cx, self.open_for_ms, create).await,
            Err(e) => cx.not_run(e),
        }
    }

    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        match (observed, expect) {
            (Observed::Watch(Err(e)), _) => j.fail("", "watch created", e.clone()),
            (Observed::Watch(Ok(id)), Some(e)) => {
                let record = &j.history.watches[id.0];
                judge_stream(j, record, e);
            }
            _ => {}
        }
    }
}

/// Everything a watch delivered against its expectations.
fn judge_stream(j: &mut StepJudge<'_>, w: &WatchRecord, e: &Expectations) {
    if let Some(r) = &e.revision {
        match w.responses.iter().find(|r| r.response.created) {
            Some(c) => j.number("revision", r, c.response.header_revision.0),
            None => j.fail("revision", &format!("revision {}", shown(r)), "the watch was never created".into()),
        }
    }
    if let Some(want) = &e.events {
        let got: Vec<&h::Event> = w.responses.iter().flat_map(|r| &r.response.events).collect();
        let expected: Vec<String> = want.iter().map(|x| show_event_expect(j, x)).collect();
        let actual: Vec<String> = got.iter().map(|ev| describe::event_in_full(ev).to_string()).collect();
        let matches: Vec<bool> = want.iter().zip(&got).map(|(x, ev)| event_matches(j, x, ev)).collect();
        j.sequence("events", "events", "events", &expected, &actual, &|i| matches.get(i).copied().unwrap_or(false));
    }
    let cancel = w.responses.iter().find(|r| r.response.canceled).map(|r| &r.response);
    if let Some(c) = e.canceled {
        let got = match cancel {
            Some(r) => describe::cancel(r).to_string(),
            None => "not canceled".into(),
        };
        // `compact_revision` implies `canceled = true`; the finding is that key's when only it was written.
        let key = if e.written.contains("canceled") { "canceled" } else { "compact_revision" };
        j.push(key, format!("canceled {c}"), cancel.is_some() == c, format!("got {got}"));
    }
    if let Some(cr) = &e.compact_revision {
        match cancel {
            Some(r) => j.number("compact_revision", cr, r.compact_revision.0),
            None => j.fail("compact_revision", &format!("compact_revision {}", shown(cr)), "got no cancel".into()),
        }
    }
    if let Some(reason) = &e.cancel_reason {
        let actual = cancel.map(|r| r.cancel_reason.clone()).unwrap_or_default();
        j.text("cancel_reason", "cancel_reason", reason, &actual);
    }
    let progress: Vec<i64> =
        w.responses.iter().filter(|r| r.response.is_progress_notify()).map(|r| r.response.header_revision.0).collect();
    if let Some(c) = &e.progress_count {
        j.number("progress_count", c, progress.len() as i64);
    }
    if let Some(p) = &e.progress_revision {
        let bad: Vec<i64> = progress.iter().copied().filter(|r| !j.satisfies(&Some(p.clone()), *r)).collect();
        let what = format!("progress_revision {}", shown(p));
        if bad.is_empty() {
            j.push("progress_revision", what, true, format!("{} progress notifications", progress.len()));
        } else {
            j.push("progress_revision", what, false, format!("progress notifications at {bad:?} do not satisfy it"));
        }
    }
}

fn event_matches(j: &StepJudge<'_>, x: &EventExpect, ev: &h::Event) -> bool {
    let kind = match x.kind {
        EventType::Put => EventKind::Put,
        EventType::Delete => EventKind::Delete,
    };
    let prev = ev.prev_kv.as_ref().map(|kv| kv.value.escaped()).unwrap_or_default();
    kind == ev.kind
        && x.key.as_bytes() == ev.kv.key.as_slice()
        && x.value.as_ref().is_none_or(|v| v.as_bytes() == ev.kv.value.as_slice())
        && j.satisfies(&x.mod_revision, ev.kv.mod_revision.0)
        && j.satisfies(&x.create_revision, ev.kv.create_revision.0)
        && j.satisfies(&x.version, ev.kv.version)
        && x.prev_value.as_ref().is_none_or(|p| *p == prev)
}

fn show_event_expect(j: &StepJudge<'_>, x: &EventExpect) -> String {
    let mut s = match (x.kind, &x.value) {
        (EventType::Put, Some(v)) => format!("put {}={v}", x.key),
        (EventType::Put, None) => format!("put {}=*", x.key),
        (EventType::Delete, _) => format!("delete {}", x.key),
    };
    j.show_num(&mut s, "rev", &x.mod_revision);
    j.show_num(&mut s, "create", &x.create_revision);
    j.show_num(&mut s, "ver", &x.version);
    if let Some(p) = &x.prev_value {
        s.push_str(&format!(" prev={p}"));
    }
    s
}
