//! Writes a [`Report`] in the Chrome trace-event JSON format (the "JSON Object Format" with a
//! `traceEvents` array), which Perfetto and `chrome://tracing` open as it is: one process for the run,
//! one thread track per node and client (named by `thread_name` metadata, ordered by
//! `thread_sort_index`; an informer's lane is a track too), requests as complete events (`X`) with the
//! trace line and the detail in `args` (etcd's, the Kubernetes clients' and controllers' attempts alike),
//! markers and watch events as thread-scoped instant events (`i`, categorised by kind: `watch-event`,
//! `kube-watch-event`, `informer-list`, ...), fault spans and watch lives as complete events on a second
//! track per node (`etcd-2 faults`), and violations as global instant events.
//!
//! Complete events on one track must nest, so events that overlap without nesting (a request that
//! outlives the next one's start, rare) move to an extra track of the same lane (`c3 #2`).

use serde_json::{json, Value};

use super::html::{details, marker_kind, outcome_name, span_kind, tick_name};
use super::model::Report;

/// Microseconds with nanosecond precision, the format's time unit.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Tracks of one lane family: each track's end time, for packing intervals without partial overlaps.
struct Packer {
    tracks: Vec<Vec<(u64, u64)>>,
}

impl Packer {
    /// The first track where `[start, end]` either nests inside or follows what is there; intervals
    /// must come sorted by start, longest first at equal starts.
    fn place(&mut self, start: u64, end: u64) -> usize {
        for (k, stack) in self.tracks.iter_mut().enumerate() {
            while stack.last().is_some_and(|&(_, e)| e <= start) {
                stack.pop();
            }
            if stack.last().is_none_or(|&(_, e)| end <= e) {
                stack.push((start, end));
                return k;
            }
        }
        self.tracks.push(vec![(start, end)]);
        self.tracks.len() - 1
    }
}

/// The trace-event JSON of `r`.
pub fn trace_events(r: &Report) -> Value {
    const PID: u64 = 1;
    let mut events: Vec<Value> = Vec::new();
    // Thread ids: lane i's k-th request track is 1000 * i + k + 1; its k-th fault track 1000 * i + 500 + k.
    let mut named: Vec<(u64, String, u64)> = Vec::new();
    let line = |l: Option<usize>| l.and_then(|i| r.trace.get(i)).cloned().unwrap_or_default();

    // The page's budget for request details holds here too.
    let mut detail = details(r);
    let mut bars: Vec<usize> = (0..r.bars.len()).collect();
    bars.sort_by_key(|&b| (r.bars[b].lane, r.bars[b].start, u64::MAX - r.bars[b].end));
    let mut packers: Vec<Packer> = r.lanes.iter().map(|_| Packer { tracks: Vec::new() }).collect();
    for b in bars {
        let bar = &r.bars[b];
        let k = packers[bar.lane].place(bar.start, bar.end) as u64;
        let tid = 1000 * bar.lane as u64 + k + 1;
        events.push(json!({
            "name": bar.label.split(" -> ").next().unwrap_or(&bar.label), "cat": "request", "ph": "X",
            "ts": us(bar.start), "dur": us(bar.end - bar.start), "pid": PID, "tid": tid,
            "args": { "outcome": outcome_name(bar.outcome), "trace": line(bar.line), "detail": detail[b].take() },
        }));
    }
    for (lane, p) in packers.iter().enumerate() {
        for k in 0..p.tracks.len().max(1) {
            let name = if k == 0 { r.lanes[lane].name.clone() } else { format!("{} #{}", r.lanes[lane].name, k + 1) };
            named.push((1000 * lane as u64 + k as u64 + 1, name, 10 * lane as u64 + k as u64));
        }
    }
    let mut spans: Vec<usize> = (0..r.spans.len()).collect();
    spans.sort_by_key(|&s| (r.spans[s].lane, r.spans[s].start, u64::MAX - r.spans[s].end));
    let mut packers: Vec<Packer> = r.lanes.iter().map(|_| Packer { tracks: Vec::new() }).collect();
    for s in spans {
        let span = &r.spans[s];
        let k = packers[span.lane].place(span.start, span.end) as u64;
        let tid = 1000 * span.lane as u64 + 500 + k;
        events.push(json!({
            "name": span.label, "cat": span_kind(span.kind), "ph": "X", "ts": us(span.start),
            "dur": us(span.end - span.start), "pid": PID, "tid": tid, "args": { "trace": line(span.line) },
        }));
    }
    for (lane, p) in packers.iter().enumerate() {
        for k in 0..p.tracks.len() {
            let name = format!(
                "{} {}",
                r.lanes[lane].name,
                if k == 0 { "faults".into() } else { format!("faults #{}", k + 1) }
            );
            named.push((1000 * lane as u64 + 500 + k as u64, name, 10 * lane as u64 + 5 + k as u64));
        }
    }
    for m in &r.markers {
        events.push(json!({
            "name": m.label, "cat": marker_kind(m.kind), "ph": "i", "s": "t", "ts": us(m.at), "pid": PID,
            "tid": 1000 * m.lane as u64 + 1, "args": { "trace": line(m.line) },
        }));
    }
    for t in &r.ticks {
        events.push(json!({
            "name": t.label, "cat": tick_name(t.kind), "ph": "i", "s": "t", "ts": us(t.at), "pid": PID,
            "tid": 1000 * t.lane as u64 + 1, "args": { "watch": t.watch, "revision": t.revision, "trace": line(t.line) },
        }));
    }
    for v in &r.violations {
        let at = v.at.map_or(r.end, |(_, at)| at);
        events.push(json!({
            "name": format!("{}: {}", v.kind, v.title), "cat": "violation", "ph": "i", "s": "g", "ts": us(at),
            "pid": PID, "tid": 1, "args": { "detail": v.detail, "expected": v.expected },
        }));
    }
    let mut meta = vec![json!({
        "name": "process_name", "ph": "M", "pid": PID, "tid": 0,
        "args": { "name": format!("kubesim {} seed {}", r.title, r.seed) },
    })];
    for (tid, name, order) in named {
        meta.push(json!({ "name": "thread_name", "ph": "M", "pid": PID, "tid": tid, "args": { "name": name } }));
        meta.push(
            json!({ "name": "thread_sort_index", "ph": "M", "pid": PID, "tid": tid, "args": { "sort_index": order } }),
        );
    }
    meta.extend(events);
    json!({
        "traceEvents": meta,
        "displayTimeUnit": "ms",
        "otherData": { "scenario": r.title, "seed": r.seed, "verdict": r.verdict, "source": r.source },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_intervals_that_do_not_nest_go_to_another_track() {
        let mut p = Packer { tracks: Vec::new() };
        assert_eq!(p.place(0, 10), 0);
        assert_eq!(p.place(2, 5), 0, "nested");
        assert_eq!(p.place(8, 12), 1, "overlaps the first without nesting");
        assert_eq!(p.place(10, 11), 0, "after the first ended");
        assert_eq!(p.place(13, 20), 0);
    }
}
