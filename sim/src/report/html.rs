//! Writes a [`Report`] as one self-contained HTML page: the summary (verdict, violations with links,
//! checks) as escaped HTML, the timeline's data as JSON inside the page, and the hand-written CSS and
//! JavaScript (`page.css`, `page.js`) inline, so that the file opens from `file://` with no network.
//!
//! Every name and line from the run (scenario, nodes, keys, values) is untrusted text: in HTML it goes
//! through [`escape`], and inside the JSON `<`, `>` and `&` are written as `\u` escapes, so no run can
//! close the data's `<script>` element or inject markup. The page's script sets text with
//! `textContent` only, never `innerHTML`.

use serde_json::{json, Value};

use super::model::{LaneKind, MarkerKind, Outcome, Pointer, Report, SpanKind, TickKind};

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// `s` with the five characters HTML gives meaning escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that is safe inside a `<script>` element: `<`, `>` and `&` escaped (still valid JSON).
pub fn script_json(v: &Value) -> String {
    let text = v.to_string();
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Microseconds, the page's time unit (the trace's precision is a millisecond).
fn us(ns: u64) -> u64 {
    ns / 1000
}

/// A trace line index as JSON (`null` for none).
fn line(l: Option<usize>) -> Value {
    l.map_or(Value::Null, Value::from)
}

/// The timeline's data, column by column: the page holds up to hundreds of thousands of items, and
/// arrays of numbers parse and index faster than one object per item. An item whose label is its trace
/// line carries no label of its own.
pub fn data(r: &Report) -> Value {
    let label = |text: &str, l: Option<usize>| -> Value {
        match l.and_then(|i| r.trace.get(i)) {
            Some(t) if t.split_once(' ').is_some_and(|(_, rest)| rest == text) => Value::Null,
            _ => Value::from(text),
        }
    };
    let lanes: Vec<Value> = r.lanes.iter().map(|l| json!([l.name, lane_kind(l.kind)])).collect();
    let spans = json!({
        "lane": r.spans.iter().map(|s| s.lane).collect::<Vec<_>>(),
        "kind": r.spans.iter().map(|s| span_kind(s.kind)).collect::<Vec<_>>(),
        "start": r.spans.iter().map(|s| us(s.start)).collect::<Vec<_>>(),
        "end": r.spans.iter().map(|s| us(s.end)).collect::<Vec<_>>(),
        "label": r.spans.iter().map(|s| Value::from(s.label.as_str())).collect::<Vec<_>>(),
        "line": r.spans.iter().map(|s| line(s.line)).collect::<Vec<_>>(),
    });
    let markers = json!({
        "lane": r.markers.iter().map(|m| m.lane).collect::<Vec<_>>(),
        "kind": r.markers.iter().map(|m| marker_kind(m.kind)).collect::<Vec<_>>(),
        "at": r.markers.iter().map(|m| us(m.at)).collect::<Vec<_>>(),
        "label": r.markers.iter().map(|m| Value::from(m.label.as_str())).collect::<Vec<_>>(),
        "line": r.markers.iter().map(|m| line(m.line)).collect::<Vec<_>>(),
    });
    let bars = json!({
        "lane": r.bars.iter().map(|b| b.lane).collect::<Vec<_>>(),
        "start": r.bars.iter().map(|b| us(b.start)).collect::<Vec<_>>(),
        "end": r.bars.iter().map(|b| us(b.end)).collect::<Vec<_>>(),
        "outcome": r.bars.iter().map(|b| outcome(b.outcome)).collect::<Vec<_>>(),
        "label": r.bars.iter().map(|b| label(&b.label, b.line)).collect::<Vec<_>>(),
        "line": r.bars.iter().map(|b| line(b.line)).collect::<Vec<_>>(),
        "detail": details(r),
    });
    let ticks = json!({
        "lane": r.ticks.iter().map(|t| t.lane).collect::<Vec<_>>(),
        "at": r.ticks.iter().map(|t| us(t.at)).collect::<Vec<_>>(),
        "kind": r.ticks.iter().map(|t| tick_kind(t.kind)).collect::<Vec<_>>(),
        "watch": r.ticks.iter().map(|t| t.watch).collect::<Vec<_>>(),
        "rev": r.ticks.iter().map(|t| t.revision).collect::<Vec<_>>(),
        "label": r.ticks.iter().map(|t| label(&t.label, t.line)).collect::<Vec<_>>(),
        "line": r.ticks.iter().map(|t| line(t.line)).collect::<Vec<_>>(),
    });
    let violations: Vec<Value> = r
        .violations
        .iter()
        .map(|v| {
            let pointers: Vec<Value> = v
                .pointers
                .iter()
                .map(|(p, role)| match p {
                    Pointer::Bar(i) => json!(["bar", i, role]),
                    Pointer::Tick(i) => json!(["tick", i, role]),
                    Pointer::Marker(i) => json!(["marker", i, role]),
                })
                .collect();
            json!({
                "kind": v.kind, "title": v.title, "detail": v.detail, "expected": v.expected,
                "pointers": pointers, "lane": v.at.map(|a| a.0), "at": v.at.map(|a| us(a.1)),
            })
        })
        .collect();
    json!({
        "title": r.title, "seed": r.seed, "end": us(r.end), "lanes": lanes, "spans": spans, "markers": markers,
        "bars": bars, "ticks": ticks, "violations": violations, "trace": r.trace,
    })
}

/// Request details at most this large in total go into a page; past it, only the evidence of violations
/// keeps its detail (the trace line still says what was asked and answered). Keeps a 100,000-request
/// page near 50 MB instead of 100.
const DETAIL_BUDGET: usize = 24 << 20;

/// Each bar's detail, or `null` once the budget is spent (a violation's evidence always has one).
pub fn details(r: &Report) -> Vec<Value> {
    let evidence: std::collections::BTreeSet<usize> = r
        .violations
        .iter()
        .flat_map(|v| &v.pointers)
        .filter_map(|(p, _)| match p {
            Pointer::Bar(b) => Some(*b),
            _ => None,
        })
        .collect();
    let mut spent = 0;
    r.bars
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let size = b.detail.to_string().len();
            if spent + size <= DETAIL_BUDGET || evidence.contains(&i) {
                spent += size;
                b.detail.clone()
            } else {
                Value::Null
            }
        })
        .collect()
}

fn lane_kind(k: LaneKind) -> &'static str {
    match k {
        LaneKind::Cluster => "cluster",
        LaneKind::Member => "member",
        LaneKind::Server => "server",
        LaneKind::Client => "client",
        LaneKind::Informer => "informer",
    }
}

pub fn span_kind(k: SpanKind) -> &'static str {
    match k {
        SpanKind::Partition => "partition",
        SpanKind::Clog => "clog",
        SpanKind::Network => "network",
        SpanKind::Down => "down",
        SpanKind::Paused => "paused",
        SpanKind::Failpoint => "failpoint",
        SpanKind::Watch => "watch",
    }
}

pub fn marker_kind(k: MarkerKind) -> &'static str {
    match k {
        MarkerKind::Leader => "leader",
        MarkerKind::SteppedDown => "stepped-down",
        MarkerKind::Compaction => "compaction",
        MarkerKind::SnapshotInstall => "snapshot",
        MarkerKind::FailpointHit => "failpoint",
        MarkerKind::Fault => "fault",
        MarkerKind::Panic => "panic",
        MarkerKind::Lease => "lease",
        MarkerKind::Note => "note",
        MarkerKind::Violation => "violation",
        MarkerKind::Tombstone => "tombstone",
        MarkerKind::Expired => "expired",
        MarkerKind::InformerRestart => "informer-restart",
        MarkerKind::StoreMatches => "store-matches",
        MarkerKind::StoreDiffers => "store-differs",
    }
}

/// 0 ok, 1 error, 2 unknown, 3 not sent: the page's colour index.
fn outcome(o: Outcome) -> u8 {
    match o {
        Outcome::Ok => 0,
        Outcome::Error => 1,
        Outcome::Unknown => 2,
        Outcome::NotSent => 3,
    }
}

pub fn outcome_name(o: Outcome) -> &'static str {
    ["ok", "error", "unknown", "not-sent"][outcome(o) as usize]
}

/// The page's tick kinds: 0 to 3 an etcd watch's (event, created, progress, canceled), 4 and 5 a
/// Kubernetes watch's event and ERROR, 6 and 7 an informer's first list and relists, 8 its events.
fn tick_kind(k: TickKind) -> u8 {
    match k {
        TickKind::Event => 0,
        TickKind::Created => 1,
        TickKind::Progress => 2,
        TickKind::Canceled => 3,
        TickKind::KubeEvent => 4,
        TickKind::KubeError => 5,
        TickKind::InformerList => 6,
        TickKind::InformerRelist => 7,
        TickKind::InformerEvent => 8,
    }
}

/// A tick kind's name, as Perfetto's categories show it.
pub fn tick_name(k: TickKind) -> &'static str {
    match k {
        TickKind::Event => "watch-event",
        TickKind::Created => "watch-created",
        TickKind::Progress => "watch-progress",
        TickKind::Canceled => "watch-canceled",
        TickKind::KubeEvent => "kube-watch-event",
        TickKind::KubeError => "kube-watch-error",
        TickKind::InformerList => "informer-list",
        TickKind::InformerRelist => "informer-relist",
        TickKind::InformerEvent => "informer-event",
    }
}

/// The whole page.
pub fn page(r: &Report) -> String {
    let mut summary = String::new();
    let verdict_class = if r.aborted.is_some() || !r.passed { "fail" } else { "pass" };
    summary.push_str(&format!(
        "<h1>{} <span class=\"seed\">seed {}</span></h1>\n<p class=\"verdict {verdict_class}\" id=\"verdict\">{}</p>\n\
         <p class=\"source\">{}</p>\n",
        escape(&r.title),
        r.seed,
        escape(&r.verdict),
        escape(&r.source)
    ));
    let counts = r.counts();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut shown = vec![
        plural(counts.requests, "request", "requests"),
        plural(counts.watch_events, "watch event", "watch events"),
    ];
    if counts.informers > 0 {
        shown.push(plural(counts.informers, "informer", "informers"));
    }
    summary.push_str(&format!(
        "<p class=\"counts\" id=\"counts\" data-requests=\"{}\" data-watch-events=\"{}\" data-informers=\"{}\">{}</p>\n",
        counts.requests,
        counts.watch_events,
        counts.informers,
        escape(&shown.join(", "))
    ));
    if let Some(m) = &r.aborted {
        summary.push_str(&format!(
            "<pre class=\"panic\" id=\"panic\">The run panicked; the timeline shows what happened up to it.\n{}</pre>\n",
            escape(m)
        ));
    }
    if r.violations.is_empty() {
        summary.push_str("<p id=\"no-violations\">No violations.</p>\n");
    } else {
        summary.push_str("<ol id=\"violations\">\n");
        for (i, v) in r.violations.iter().enumerate() {
            let class = if v.expected { "violation expected" } else { "violation" };
            let note = if v.expected { " <span class=\"note\">(required by the scenario)</span>" } else { "" };
            summary.push_str(&format!(
                "<li class=\"{class}\" data-violation=\"{i}\"><a href=\"#v{i}\">{}</a>{note}</li>\n",
                escape(&format!("{}: {}", v.kind, v.title))
            ));
        }
        summary.push_str("</ol>\n");
    }
    summary.push_str("<details id=\"checks\"><summary>Checks</summary><table>\n");
    for c in &r.checks {
        summary.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            if c.ok { "ok" } else { "bad" },
            escape(&c.guarantee),
            escape(&c.requirement),
            escape(&c.verdict)
        ));
    }
    summary.push_str("</table></details>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width\">\n<title>kubesim: {} seed {}</title>\n\
         <style>\n{CSS}</style>\n</head>\n<body>\n<header id=\"summary\">\n{summary}</header>\n\
         <div id=\"toolbar\"><button id=\"fit\">Fit</button><button id=\"zoom-in\">+</button>\
         <button id=\"zoom-out\">&minus;</button><span id=\"legend\"></span>\
         <span class=\"help\">Wheel zooms, drag pans, click shows the trace line.</span></div>\n\
         <div id=\"timeline\"><div id=\"labels\"></div><canvas id=\"canvas\"></canvas></div>\n\
         <div id=\"tip\" hidden></div>\n\
         <section id=\"detail\"><h2 id=\"detail-title\">Details</h2><pre id=\"detail-text\">Click a request bar, \
         a watch tick, a marker or a violation.</pre><h3>Trace around it</h3><pre id=\"trace-near\"></pre></section>\n\
         <script type=\"application/json\" id=\"report-data\">{}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n",
        escape(&r.title),
        r.seed,
        script_json(&data(r))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Lane, Marker};

    #[test]
    fn html_special_characters_are_escaped_in_the_page_and_in_its_data() {
        let name = "<script>alert('x')</script>&\"";
        let r = Report {
            title: name.into(),
            source: name.into(),
            verdict: "pass".into(),
            lanes: vec![Lane { name: name.into(), kind: LaneKind::Client }],
            markers: vec![Marker {
                lane: 0,
                kind: MarkerKind::Note,
                at: 0,
                label: format!("</script>{name}"),
                line: None,
            }],
            trace: vec![format!("t=0.000s {name} </script><b>")],
            ..Report::default()
        };
        let page = page(&r);
        // The page's own two scripts, and no other.
        assert_eq!(page.matches("<script").count(), 2, "{page}");
        assert_eq!(page.matches("</script>").count(), 2);
        assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"));
        let start = page.find("id=\"report-data\">").unwrap() + "id=\"report-data\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let parsed: Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(parsed["lanes"][0][0], name);
        assert_eq!(parsed["trace"][0], format!("t=0.000s {name} </script><b>"));
    }
}
