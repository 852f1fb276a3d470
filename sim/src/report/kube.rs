//! What the Kubernetes clients did, on the timeline ([`KubeData`]): each `kube` step's request as a bar on
//! its client's lane from its first request to its answer (coloured as client-go reads the answer: 2xx
//! ok, a 4xx refusal an error, a 429, a 5xx or no answer unknown), each controller attempt as a bar, each
//! event of a `kube` watch as a tick on its client's lane; one lane per informer with every list (the
//! first, and each relist) and every event it believed as ticks, its restarts, 410s and tombstones as
//! markers, and its store at the end against etcd's; and the `apiserver` workloads' requests and watch
//! events from their history.
//!
//! Each item is matched to the trace line its client wrote for it (by node, simulated millisecond and
//! text), so that a click shows the line and the line is not drawn again as a note. The steps' own nodes
//! (a watch step's and an informer's trace lines name the step) are not lanes of their own: a watch
//! step's lines belong on its client's lane ([`aliases`]), an informer's on its lane, where the lines no
//! belief claimed (tombstones, 410s, failed requests) become its markers.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::history::prune;
use super::kube_input::{BeliefKind, InformerData, KubeCall, KubeData};
use super::model::{Bar, Marker, MarkerKind, Outcome, Pointer, Report, Span, SpanKind, Tick, TickKind};
use super::trace_line::Line;
use crate::history::apiserver::{ApiOutcome, WatchEnd, WatchedKind};

/// Nanoseconds in a millisecond, the steps' precision.
const MS: u64 = 1_000_000;

/// At most this many names of an informer's store are listed in its end-of-run marker.
const STORE_SHOWN: usize = 20;

/// Where each Kubernetes item went on the timeline, by its index in [`KubeData`]: what findings point at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    pub calls: Vec<Option<Pointer>>,
    pub events: Vec<Option<Pointer>>,
    /// Per informer, each belief's tick (a list or event) or marker (a restart).
    pub beliefs: Vec<Vec<Option<Pointer>>>,
    /// Per informer, its end-of-run store marker.
    pub stores: Vec<Option<Pointer>>,
    /// Per informer, the markers of the 410s it got.
    pub expired: Vec<Vec<Pointer>>,
}

/// The trace nodes that are not lanes of their own, with the lane they belong on: a `kube` watch step's
/// label (its events are traced under it) goes on its client's lane.
pub fn aliases(kube: &KubeData<'_>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let streams = kube.calls.iter().filter(|c| c.watch).map(|c| (&c.step, &c.client));
    for (step, client) in streams.chain(kube.events.iter().map(|e| (&e.step, &e.client))) {
        out.entry(step.clone()).or_insert_with(|| client.clone());
    }
    out
}

/// The informers whose lanes follow client `client`'s lane, in the run's order.
pub fn informer_lanes<'k>(kube: &'k KubeData<'_>, client: &str) -> Vec<&'k str> {
    kube.informers.iter().filter(|i| i.client == client).map(|i| i.step.as_str()).collect()
}

/// The last time any Kubernetes item was recorded at.
pub fn end_time(kube: &KubeData<'_>) -> u64 {
    let calls = kube.calls.iter().map(|c| c.end_ms.max(c.start_ms));
    let events = kube.events.iter().map(|e| e.at_ms);
    let beliefs = kube.informers.iter().flat_map(|i| &i.beliefs).map(|b| b.at_ms);
    let mut end = calls.chain(events).chain(beliefs).max().unwrap_or(0) * MS;
    if let Some(h) = kube.api_history {
        end = end.max(h.ops.iter().map(|o| o.returned_at.0).max().unwrap_or(0));
        end = end.max(h.watches.iter().map(|w| w.ended_at.0).max().unwrap_or(0));
    }
    end
}

/// The trace lines not yet claimed, by node and time, for matching items to.
struct Lines<'a> {
    by_node: BTreeMap<&'a str, Vec<(usize, u64, &'a str)>>,
    claimed: &'a mut BTreeSet<usize>,
}

impl<'a> Lines<'a> {
    fn new(lines: &'a [(usize, Line<'a>)], claimed: &'a mut BTreeSet<usize>) -> Lines<'a> {
        let mut by_node: BTreeMap<&str, Vec<(usize, u64, &str)>> = BTreeMap::new();
        for (i, l) in lines.iter().filter(|(i, _)| !claimed.contains(i)) {
            by_node.entry(l.node).or_default().push((*i, l.at, l.text));
        }
        Lines { by_node, claimed }
    }

    /// The first unclaimed line of `node` at `at` (the trace's millisecond) whose text passes `fits`,
    /// claimed.
    fn take(&mut self, node: &str, at: u64, fits: impl Fn(&str) -> bool) -> Option<usize> {
        let at = at / MS * MS;
        let list = self.by_node.get(node)?;
        let from = list.partition_point(|(_, t, _)| *t < at);
        let found = list[from..]
            .iter()
            .take_while(|(_, t, _)| *t == at)
            .find(|(i, _, text)| !self.claimed.contains(i) && fits(text))
            .map(|(i, _, _)| *i)?;
        self.claimed.insert(found);
        Some(found)
    }

    /// Every unclaimed line of `node` from `start` to `end` whose text passes `fits`, claimed.
    fn take_all(&mut self, node: &str, start: u64, end: u64, fits: impl Fn(&str) -> bool) -> Vec<usize> {
        let (start, end) = (start / MS * MS, end / MS * MS);
        let Some(list) = self.by_node.get(node) else { return Vec::new() };
        let found: Vec<usize> = list
            .iter()
            .filter(|(i, t, text)| *t >= start && *t <= end && !self.claimed.contains(i) && fits(text))
            .map(|(i, _, _)| *i)
            .collect();
        self.claimed.extend(&found);
        found
    }

    /// Every unclaimed line of `node`, claimed: its time and text.
    fn take_rest(&mut self, node: &str) -> Vec<(usize, u64, &'a str)> {
        let Some(list) = self.by_node.get(node) else { return Vec::new() };
        let rest: Vec<_> = list.iter().filter(|(i, _, _)| !self.claimed.contains(i)).copied().collect();
        self.claimed.extend(rest.iter().map(|(i, _, _)| *i));
        rest
    }
}

/// The text of trace line `i` after its time.
fn text_of(trace: &[String], i: usize) -> String {
    trace[i].split_once(' ').map_or("", |(_, rest)| rest).to_string()
}

/// Adds the Kubernetes clients' bars, ticks, spans and markers to `report` (whose lanes are set), claiming
/// their trace lines in `claimed`; `end` is the run's end, where informers' stores are shown.
pub fn add(
    kube: &KubeData<'_>,
    lines: &[(usize, Line<'_>)],
    lane_of: &dyn Fn(&str) -> usize,
    end: u64,
    claimed: &mut BTreeSet<usize>,
    report: &mut Report,
) -> Placed {
    let mut lines = Lines::new(lines, claimed);
    let mut placed = Placed::default();
    for call in &kube.calls {
        let b = call_bar(call, &mut lines, lane_of, &report.trace);
        report.bars.push(b);
        placed.calls.push(Some(Pointer::Bar(report.bars.len() - 1)));
    }
    // Each watch step's and informer's ticks share a colour: their number among the streams.
    let mut streams: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut nth: BTreeMap<usize, usize> = BTreeMap::new();
    for e in &kube.events {
        let next = streams.len();
        let stream = *streams.entry((&e.client, &e.step)).or_insert(next);
        let index = nth.entry(stream).or_default();
        let at = e.at_ms * MS;
        let line = lines.take(&e.step, at, |t| t.strip_prefix("event ") == Some(e.shown.as_str()));
        let label = line.map_or_else(|| format!("{} event {}", e.step, e.shown), |l| text_of(&report.trace, l));
        let kind = if e.kind == "ERROR" { TickKind::KubeError } else { TickKind::KubeEvent };
        let lane = lane_of(&e.client);
        let tick =
            Tick { lane, at, kind, watch: stream, revision: e.rv, label, line, response: 0, event: Some(*index) };
        *index += 1;
        report.ticks.push(tick);
        placed.events.push(Some(Pointer::Tick(report.ticks.len() - 1)));
    }
    for call in kube.calls.iter().filter(|c| c.watch) {
        let last = kube.events.iter().filter(|e| e.client == call.client && e.step == call.step).map(|e| e.at_ms).max();
        let count = kube.events.iter().filter(|e| e.client == call.client && e.step == call.step).count();
        report.spans.push(Span {
            lane: lane_of(&call.client),
            kind: SpanKind::Watch,
            start: call.start_ms * MS,
            end: last.unwrap_or(call.end_ms).max(call.end_ms) * MS,
            label: format!("{} watch: {} events", call.step, count),
            line: None,
        });
    }
    for inf in &kube.informers {
        let stream = streams.len() + placed.stores.len();
        informer(inf, stream, &mut lines, lane_of, end, report, &mut placed);
    }
    if let Some(h) = kube.api_history {
        workloads(h, streams.len() + kube.informers.len(), &mut lines, lane_of, report);
    }
    placed
}

/// The bar of one request or controller attempt, with its trace line.
fn call_bar(call: &KubeCall, lines: &mut Lines<'_>, lane_of: &dyn Fn(&str) -> usize, trace: &[String]) -> Bar {
    let (start, end) = (call.start_ms * MS, call.end_ms.max(call.start_ms) * MS);
    let prefix = match call.attempt {
        Some((n, _)) => format!("{} attempt {n}: ", call.step),
        None => format!("{} -> ", call.step),
    };
    let line = lines.take(&call.client, end, |t| t.starts_with(&prefix));
    // A step that asked again until its answer came (`until_ms`) traced every try: they are this bar's.
    let tries =
        1 + lines.take_all(&call.client, start, end, |t| call.attempt.is_none() && t.starts_with(&prefix)).len();
    let label = match (line, call.attempt) {
        (Some(l), _) => text_of(trace, l),
        (None, Some((n, rv))) => {
            let read = rv.map_or(String::new(), |rv| format!(" read at rv={rv}"));
            let (who, step) = (&call.client, &call.step);
            format!("{who} {step} attempt {n}: {}{read} -> {}: {}", call.request, call.apiserver, call.shown)
        }
        (None, None) => {
            format!("{} {} -> {} {} -> {}", call.client, call.step, call.apiserver, call.request, call.shown)
        }
    };
    let mut detail = json!({
        "step": call.step, "request": call.request, "apiserver": call.apiserver, "code": call.code,
        "answer": call.shown, "tries": if tries > 1 { tries } else { 0 },
        "attempt": call.attempt.map(|a| a.0), "read_rv": call.attempt.and_then(|a| a.1),
    });
    prune(&mut detail);
    if let Some(body) = &call.body {
        detail["body"] = body.clone();
    }
    Bar { lane: lane_of(&call.client), start, end, outcome: call_outcome(call), label, detail, line, op: None }
}

/// A request's colour as client-go's retry logic reads its answer.
fn call_outcome(call: &KubeCall) -> Outcome {
    match call.code {
        _ if !call.sent => Outcome::NotSent,
        Some(code) if (200..300).contains(&code) => Outcome::Ok,
        Some(code) if code == 429 || code >= 500 => Outcome::Unknown,
        Some(_) => Outcome::Error,
        None => Outcome::Unknown,
    }
}

/// One informer's lane: its beliefs, its own trace lines, its life as a span and its store at the end.
fn informer(
    inf: &InformerData,
    stream: usize,
    lines: &mut Lines<'_>,
    lane_of: &dyn Fn(&str) -> usize,
    end: u64,
    report: &mut Report,
    placed: &mut Placed,
) {
    let lane = lane_of(&inf.step);
    let mut beliefs = Vec::with_capacity(inf.beliefs.len());
    let mut lists = 0;
    for (j, b) in inf.beliefs.iter().enumerate() {
        let at = b.at_ms * MS;
        let pointer = match b.kind {
            BeliefKind::Restarted => {
                let line = lines.take(&inf.step, at, |t| t == "restarted");
                let label = format!("{} restarted: store and resourceVersion forgotten", inf.step);
                report.markers.push(Marker { lane, kind: MarkerKind::InformerRestart, at, label, line });
                Pointer::Marker(report.markers.len() - 1)
            }
            BeliefKind::Listed | BeliefKind::Event { .. } => {
                let line = match b.kind {
                    BeliefKind::Event { bookmark: true } => None,
                    _ => lines.take(&inf.step, at, |t| t == b.shown),
                };
                let (kind, label) = match b.kind {
                    BeliefKind::Listed => {
                        lists += 1;
                        let kind = if lists == 1 { TickKind::InformerList } else { TickKind::InformerRelist };
                        let what = if lists == 1 { "first list" } else { "relist" };
                        (kind, format!("{} {what}: {}", inf.step, b.shown))
                    }
                    _ => (TickKind::InformerEvent, format!("{} {}", inf.step, b.shown)),
                };
                let revision = b.rv as i64;
                let tick = Tick { lane, at, kind, watch: stream, revision, label, line, response: 0, event: Some(j) };
                report.ticks.push(tick);
                Pointer::Tick(report.ticks.len() - 1)
            }
        };
        beliefs.push(Some(pointer));
    }
    // What no belief claimed: tombstones, 410s, failed lists and watches, reopened watches.
    let mut expired = Vec::new();
    for (i, at, text) in lines.take_rest(&inf.step) {
        let kind = if text.starts_with("tombstone ") {
            MarkerKind::Tombstone
        } else if text.contains(": 410") || text.contains("ERROR 410") {
            MarkerKind::Expired
        } else {
            MarkerKind::Note
        };
        report.markers.push(Marker { lane, kind, at, label: format!("{} {text}", inf.step), line: Some(i) });
        if kind == MarkerKind::Expired {
            expired.push(Pointer::Marker(report.markers.len() - 1));
        }
    }
    let start = inf.beliefs.first().map_or(end, |b| b.at_ms * MS);
    let events = inf.beliefs.iter().filter(|b| matches!(b.kind, BeliefKind::Event { .. })).count();
    let label = format!(
        "{} of {}: {} lists ({} relists), {events} events, {} restarts, {} 410s, {} tombstones",
        inf.request,
        inf.client,
        lists,
        inf.relists,
        inf.restarts,
        inf.expired,
        inf.tombstones.len()
    );
    report.spans.push(Span { lane, kind: SpanKind::Watch, start, end, label, line: None });
    let (kind, label) = store_mark(inf);
    report.markers.push(Marker { lane, kind, at: end, label, line: None });
    placed.stores.push(Some(Pointer::Marker(report.markers.len() - 1)));
    placed.beliefs.push(beliefs);
    placed.expired.push(expired);
}

/// The informer's store at the end against etcd's objects, as a marker's kind and text.
fn store_mark(inf: &InformerData) -> (MarkerKind, String) {
    let mut names: Vec<String> = inf.store.iter().take(STORE_SHOWN).map(|(n, rv)| format!("{n}@{rv}")).collect();
    if inf.store.len() > STORE_SHOWN {
        names.push(format!("and {} more", inf.store.len() - STORE_SHOWN));
    }
    let held = format!("{} store at the end: {} objects [{}]", inf.step, inf.store.len(), names.join(", "));
    match &inf.etcd {
        None => (MarkerKind::StoreDiffers, format!("{held}; etcd could not be read")),
        Some(_) if inf.differences.is_empty() => (MarkerKind::StoreMatches, format!("{held}, as etcd")),
        Some(_) => (MarkerKind::StoreDiffers, format!("{held}; differs from etcd: {}", inf.differences.join("; "))),
    }
}

/// The `apiserver` workloads' requests as bars and their watches' events as ticks, each watch a span.
fn workloads(
    h: &crate::history::apiserver::ApiHistory,
    first_stream: usize,
    lines: &mut Lines<'_>,
    lane_of: &dyn Fn(&str) -> usize,
    report: &mut Report,
) {
    for op in &h.ops {
        let shown = format!("{} -> {}", op.call, op.outcome);
        let line = lines.take(&op.client, op.returned_at.0, |t| t == shown);
        let outcome = match op.outcome {
            ApiOutcome::Refused(_) => Outcome::Error,
            ApiOutcome::Unavailable(_) | ApiOutcome::Unknown => Outcome::Unknown,
            _ => Outcome::Ok,
        };
        report.bars.push(Bar {
            lane: lane_of(&op.client),
            start: op.invoked_at.0,
            end: op.returned_at.0.max(op.invoked_at.0),
            outcome,
            label: format!("{} {shown}", op.client),
            detail: json!({ "call": op.call.to_string(), "outcome": op.outcome.to_string() }),
            line,
            op: None,
        });
    }
    for (w, watch) in h.watches.iter().enumerate() {
        let lane = lane_of(&watch.client);
        let stream = first_stream + w;
        for (i, e) in watch.events.iter().enumerate() {
            let kind = match e.kind {
                WatchedKind::Added => "ADDED",
                WatchedKind::Modified => "MODIFIED",
                WatchedKind::Deleted => "DELETED",
            };
            report.ticks.push(Tick {
                lane,
                at: e.at.0,
                kind: TickKind::KubeEvent,
                watch: stream,
                revision: e.rv as i64,
                label: format!("{} watch {} event {kind} {} rv={}", watch.client, watch.prefix, e.key, e.rv),
                line: None,
                response: 0,
                event: Some(i),
            });
        }
        let opening = format!("watch {} from rv={} -> ", watch.prefix, watch.from);
        let line = lines.take(&watch.client, watch.ended_at.0, |t| t.starts_with(&opening));
        let label =
            line.map_or_else(|| format!("{} {opening}{:?}", watch.client, watch.end), |l| text_of(&report.trace, l));
        if matches!(watch.end, WatchEnd::Expired | WatchEnd::Failed(_)) {
            let shown = match &watch.end {
                WatchEnd::Failed(why) => format!("ERROR {why}"),
                _ => "ERROR 410 (Expired)".to_string(),
            };
            report.ticks.push(Tick {
                lane,
                at: watch.ended_at.0,
                kind: TickKind::KubeError,
                watch: stream,
                revision: 0,
                label: format!("{} watch {} {shown}", watch.client, watch.prefix),
                line,
                response: 0,
                event: Some(watch.events.len()),
            });
        }
        let (start, end) = (watch.opened_at.0, watch.ended_at.0.max(watch.opened_at.0));
        report.spans.push(Span { lane, kind: SpanKind::Watch, start, end, label, line });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::input::RunData;
    use crate::report::kube_input::BeliefData;
    use crate::report::model::LaneKind;

    fn call(code: Option<u16>, sent: bool) -> KubeCall {
        KubeCall {
            client: "c".into(),
            step: "s".into(),
            request: "get configmaps default/a".into(),
            apiserver: "apiserver-1".into(),
            start_ms: 0,
            end_ms: 1,
            code,
            sent,
            shown: String::new(),
            body: None,
            watch: false,
            attempt: None,
        }
    }

    #[test]
    fn answers_are_coloured_as_client_go_reads_them() {
        let colour = |code, sent| call_outcome(&call(code, sent));
        assert_eq!(colour(Some(201), true), Outcome::Ok);
        assert_eq!(colour(Some(409), true), Outcome::Error);
        assert_eq!(colour(Some(404), true), Outcome::Error);
        assert_eq!(colour(Some(429), true), Outcome::Unknown);
        assert_eq!(colour(Some(503), true), Outcome::Unknown);
        assert_eq!(colour(None, true), Outcome::Unknown);
        assert_eq!(colour(None, false), Outcome::NotSent);
    }

    /// An informer written by hand: its lists take their trace lines, the 410 and the tombstone its relist
    /// announced become its markers, and its empty store matches etcd's.
    #[test]
    fn an_informers_beliefs_take_their_trace_lines_and_the_rest_become_its_markers() {
        let trace: Vec<String> = [
            "t=1.000s inf list rv=\"\" from apiserver-1: 1 items at rv=5",
            "t=1.000s c inf informer configmaps -> synced rv=5",
            "t=1.100s inf watch from apiserver-2: ERROR 410",
            "t=1.300s inf tombstone default/a@5",
            "t=1.300s inf list rv=\"\" from apiserver-1: 0 items at rv=9",
        ]
        .map(String::from)
        .to_vec();
        let belief = |at_ms, rv, shown: &str| BeliefData {
            at_ms,
            apiserver: "apiserver-1".into(),
            rv,
            kind: BeliefKind::Listed,
            shown: shown.into(),
        };
        let informer = InformerData {
            client: "c".into(),
            step: "inf".into(),
            request: "informer configmaps default".into(),
            beliefs: vec![
                belief(1000, 5, "list rv=\"\" from apiserver-1: 1 items at rv=5"),
                belief(1300, 9, "list rv=\"\" from apiserver-1: 0 items at rv=9"),
            ],
            etcd: Some(BTreeMap::new()),
            relists: 1,
            expired: 1,
            tombstones: vec!["default/a@5".into()],
            ..InformerData::default()
        };
        // An empty etcd history: a run without one is read from its trace alone, where every request line
        // is a bar.
        let history = crate::history::History::new();
        let data = RunData {
            title: "informer",
            source: "test",
            seed: 1,
            trace: &trace,
            history: Some(&history),
            kube: KubeData { informers: vec![informer], ..KubeData::default() },
            members: vec!["etcd-1".into()],
            clients: vec!["c".into()],
            checks: Vec::new(),
            findings: Vec::new(),
            panics: Vec::new(),
            panic_messages: Vec::new(),
            aborted: None,
            timed_out: false,
            passed: true,
        };
        let r = crate::report::build(&data);
        let lanes: Vec<(&str, LaneKind)> = r.lanes.iter().map(|l| (l.name.as_str(), l.kind)).collect();
        assert_eq!(lanes[2..], [("c", LaneKind::Client), ("inf", LaneKind::Informer)]);
        let ticks: Vec<(TickKind, i64, Option<usize>)> = r.ticks.iter().map(|t| (t.kind, t.revision, t.line)).collect();
        assert_eq!(ticks, [(TickKind::InformerList, 5, Some(0)), (TickKind::InformerRelist, 9, Some(4))]);
        let marks: Vec<(MarkerKind, Option<usize>)> =
            r.markers.iter().filter(|m| m.lane == 3).map(|m| (m.kind, m.line)).collect();
        assert_eq!(
            marks,
            [(MarkerKind::Expired, Some(2)), (MarkerKind::Tombstone, Some(3)), (MarkerKind::StoreMatches, None)]
        );
        let counts = r.counts();
        assert_eq!((counts.requests, counts.watch_events, counts.informers), (2, 0, 1));
    }
}
