//! etcd's request bars and watch ticks (the Kubernetes clients' are [`super::kube`]'s). From the history
//! when the run handed one back: each op is a bar from its invocation to its return, each watch response a
//! tick (one per event), and each is matched to the trace line that the client wrote for it, so that a
//! click shows that line. Matching is by client, time and order: a client writes one line per request at
//! the instant the request returns, and one line per watch response part, in order. A run that stopped
//! before handing its history back has only its trace, so then every request line is a bar of no length at
//! its return, and every watch event line a tick.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::input::RunData;
use super::model::{Bar, Outcome, Report, Span, SpanKind, Tick, TickKind};
use super::trace_line::{self, Kind, Line};
use crate::describe;
use crate::history::{self as h, History};

/// The trace lines that bars, ticks and watch spans took; the rest become markers.
#[derive(Default)]
pub struct Matched {
    pub lines: BTreeSet<usize>,
}

/// Which watch line a tick takes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum WatchLine {
    Created,
    Canceled,
    Progress,
    Event,
    /// Open, closed, ended, failed: the span's ends.
    Life,
}

fn watch_line(what: &str) -> WatchLine {
    match what.split(' ').next().unwrap_or("") {
        "created" => WatchLine::Created,
        "canceled" => WatchLine::Canceled,
        "progress" => WatchLine::Progress,
        "event" => WatchLine::Event,
        _ => WatchLine::Life,
    }
}

/// Millisecond floor, the trace's precision.
fn ms(ns: u64) -> u64 {
    ns / 1_000_000 * 1_000_000
}

/// Bars and ticks from the history, each with its trace line where one matches.
pub fn from_history(
    data: &RunData<'_>,
    history: &History,
    lines: &[(usize, Line<'_>)],
    lane_of: &dyn Fn(&str) -> usize,
    end: u64,
    report: &mut Report,
) -> Matched {
    let mut matched = Matched::default();
    // Each lane's request lines, and each watch's lines by what they say, in trace order.
    let mut requests: BTreeMap<usize, VecDeque<(usize, u64)>> = BTreeMap::new();
    let mut watch_lines: BTreeMap<(usize, WatchLine), VecDeque<(usize, u64, &str)>> = BTreeMap::new();
    // The members' `lease-revoked ID rev=N` lines, for the revokes of expired leases filed as client 0's.
    let mut revoked: BTreeMap<&str, VecDeque<usize>> = BTreeMap::new();
    for (i, l) in lines {
        match trace_line::classify(l) {
            Kind::Lease if l.text.starts_with("lease-revoked ") => {
                let id = l.text.split(' ').nth(1).unwrap_or("");
                revoked.entry(id).or_default().push_back(*i);
            }
            Kind::Request { .. } => requests.entry(lane_of(l.node)).or_default().push_back((*i, l.at)),
            Kind::Watch { watch, what } => {
                watch_lines.entry((watch, watch_line(what))).or_default().push_back((*i, l.at, what))
            }
            _ => {}
        }
    }
    let names: Vec<String> = (0..=data.clients.len() as u32).map(|c| data.client_name(c)).collect();
    let name = |c: h::ClientId| names.get(c.0 as usize).cloned().unwrap_or_else(|| data.client_name(c.0));

    // Ops in the order they returned, so that each lane's lines are consumed in order.
    let mut order: Vec<usize> = (0..history.ops.len()).collect();
    order.sort_by_key(|&i| history.ops[i].returned.as_ref().map_or(u64::MAX, |r| r.at.seq));
    let mut bars: Vec<Option<Bar>> = vec![None; history.ops.len()];
    for i in order {
        let op = &history.ops[i];
        let lane = lane_of(&name(op.client));
        let line = op.returned.as_ref().and_then(|r| {
            if let (0, h::Request::LeaseRevoke(revoke)) = (op.client.0, &op.request) {
                return revoked.get_mut(revoke.id.to_string().as_str())?.pop_front();
            }
            let queue = requests.get_mut(&lane)?;
            // Lines before this return belong to nothing in the history (they stay markers).
            while queue.front().is_some_and(|(_, at)| *at < ms(r.at.time.0)) {
                queue.pop_front();
            }
            queue.front().filter(|(_, at)| *at == ms(r.at.time.0))?;
            queue.pop_front().map(|(i, _)| i)
        });
        if let Some(l) = line {
            matched.lines.insert(l);
        }
        let label = match (line, &op.request) {
            (_, h::Request::LeaseRevoke(r)) if op.client.0 == 0 => {
                let how = line
                    .map_or("no answer".to_string(), |l| data.trace[l].split_once(' ').map_or("", |x| x.1).to_string());
                format!("{} lease {} expired: {how}", name(op.client), r.id)
            }
            (Some(l), _) => data.trace[l].split_once(' ').map_or("", |(_, rest)| rest).to_string(),
            (None, _) => format!("{} {}", name(op.client), describe::request(&op.request)),
        };
        let mut detail = serde_json::json!({ "op": i, "request": &op.request, "outcome": op.outcome() });
        prune(&mut detail);
        bars[i] = Some(Bar {
            lane,
            start: op.invoked.time.0,
            end: op.returned.as_ref().map_or(end, |r| r.at.time.0),
            outcome: outcome(op.returned.as_ref().map(|r| &r.outcome)),
            label,
            detail,
            line,
            op: Some(i),
        });
    }
    report.bars = bars.into_iter().flatten().collect();

    for (w, record) in history.watches.iter().enumerate() {
        let who = name(record.client);
        let lane = lane_of(&who);
        let mut take = |kind: WatchLine| -> Option<usize> {
            let (i, _, _) = watch_lines.get_mut(&(w, kind))?.pop_front()?;
            matched.lines.insert(i);
            Some(i)
        };
        for (ri, r) in record.responses.iter().enumerate() {
            let resp = &r.response;
            let at = r.at.time.0;
            let mut tick = |kind: TickKind, revision: i64, label: String, line: Option<usize>, event: Option<usize>| {
                report.ticks.push(Tick { lane, at, kind, watch: w, revision, label, line, response: ri, event });
            };
            let rev = resp.header_revision.0;
            if resp.created {
                let label = format!("{who} watch#{w} created rev={rev}");
                tick(TickKind::Created, rev, label, take(WatchLine::Created), None);
            }
            if resp.canceled {
                let label = format!("{who} watch#{w} {}", describe::cancel(resp));
                tick(TickKind::Canceled, rev, label, take(WatchLine::Canceled), None);
            }
            if !resp.created && !resp.canceled && resp.events.is_empty() {
                let label = format!("{who} watch#{w} progress rev={rev}");
                tick(TickKind::Progress, rev, label, take(WatchLine::Progress), None);
            }
            for (ei, e) in resp.events.iter().enumerate() {
                let label = format!("{who} watch#{w} event {}", describe::event(e));
                tick(TickKind::Event, e.revision().0, label, take(WatchLine::Event), Some(ei));
            }
        }
        // The watch's life: from its open line to the line that says how it ended.
        let life: Vec<(usize, u64, &str)> =
            watch_lines.remove(&(w, WatchLine::Life)).map(Vec::from).unwrap_or_default();
        for (i, _, _) in &life {
            matched.lines.insert(*i);
        }
        let open_line = life.iter().find(|(_, _, what)| what.starts_with("open")).map(|(i, _, _)| *i);
        let stop = life.iter().rev().find(|(_, _, what)| !what.starts_with("open")).map(|(_, at, _)| *at);
        let last = record.responses.last().map_or(record.opened.time.0, |r| r.at.time.0);
        let label = match open_line {
            Some(i) => data.trace[i].split_once(' ').map_or("", |(_, rest)| rest).to_string(),
            None => format!("watch#{w}"),
        };
        let span_end = stop.unwrap_or(end).max(last);
        report.spans.push(Span {
            lane,
            kind: SpanKind::Watch,
            start: record.opened.time.0,
            end: span_end,
            label,
            line: open_line,
        });
    }
    matched
}

/// Bars and ticks from the trace alone: a request line is a bar of no length at its return, a watch
/// event line a tick.
pub fn from_trace(lines: &[(usize, Line<'_>)], lane_of: &dyn Fn(&str) -> usize, report: &mut Report) -> Matched {
    let mut matched = Matched::default();
    for (i, l) in lines {
        let lane = lane_of(l.node);
        match trace_line::classify(l) {
            Kind::Request { outcome, .. } => {
                let outcome = match outcome.split(' ').next().unwrap_or("") {
                    "ok" => Outcome::Ok,
                    "err" => Outcome::Error,
                    "not" => Outcome::NotSent,
                    _ => Outcome::Unknown,
                };
                let label = format!("{} {}", l.node, l.text);
                let detail = serde_json::Value::from("(no history: the run stopped before handing it back)");
                report.bars.push(Bar {
                    lane,
                    start: l.at,
                    end: l.at,
                    outcome,
                    label,
                    detail,
                    line: Some(*i),
                    op: None,
                });
                matched.lines.insert(*i);
            }
            Kind::Watch { watch, what } if what.starts_with("event") => {
                let revision = what.rsplit_once("rev=").and_then(|(_, r)| r.parse().ok()).unwrap_or(0);
                let label = format!("{} {}", l.node, l.text);
                report.ticks.push(Tick {
                    lane,
                    at: l.at,
                    kind: TickKind::Event,
                    watch,
                    revision,
                    label,
                    line: Some(*i),
                    response: 0,
                    event: None,
                });
                matched.lines.insert(*i);
            }
            _ => {}
        }
    }
    matched
}

/// Removes what is at its default (null, false, 0, "", [], {}) from a JSON value, recursively.
pub fn prune(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for x in map.values_mut() {
                prune(x);
            }
            map.retain(|_, x| match x {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
            });
        }
        Value::Array(items) => items.iter_mut().for_each(prune),
        _ => {}
    }
}

/// The bar colour of an outcome: availability errors and missing answers leave the outcome unknown, as
/// the linearizability checker reads them.
fn outcome(o: Option<&h::Outcome>) -> Outcome {
    match o {
        Some(h::Outcome::Ok(_)) => Outcome::Ok,
        Some(h::Outcome::Err(e)) if matches!(e.code, h::GrpcCode::Unavailable | h::GrpcCode::DeadlineExceeded) => {
            Outcome::Unknown
        }
        Some(h::Outcome::Err(_)) => Outcome::Error,
        Some(h::Outcome::NotSent { .. }) => Outcome::NotSent,
        Some(h::Outcome::Unknown { .. }) | None => Outcome::Unknown,
    }
}
