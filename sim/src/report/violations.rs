//! The report's violations, each pointing at its evidence on the timeline: a checker's culprits (the
//! ops the linearizability search could not place, split into the last ops it placed and those that do
//! not fit, as porcupine shows them; a watch's duplicated or out-of-order events; the response that
//! should have carried a missing event, marked where the event belonged), failing expectations at their
//! step's request or watch (a Kubernetes step's request, watch events or controller attempts; an
//! informer's belief, 410s or store, with a violation marker where the finding points), member panics,
//! the panic that stopped a run, and a run out of time.

use std::collections::BTreeMap;

use super::input::{RunData, Target};
use super::kube::Placed;
use super::model::{CheckLine, Marker, MarkerKind, Pointer, Report, SpanKind, Violation};
use crate::checker::{Culprit, Verdict};

/// Adds the checks' lines, the violations and the verdict to `report`, whose bars, ticks and markers
/// are already built (`placed`: where the Kubernetes clients' items went).
pub fn add(data: &RunData<'_>, placed: &Placed, report: &mut Report) {
    let bar_of: BTreeMap<usize, usize> =
        report.bars.iter().enumerate().filter_map(|(b, bar)| bar.op.map(|op| (op, b))).collect();
    let mut tick_of: BTreeMap<(usize, usize, Option<usize>), usize> = BTreeMap::new();
    for (t, tick) in report.ticks.iter().enumerate().filter(|(_, t)| t.kind.is_etcd()) {
        tick_of.entry((tick.watch, tick.response, tick.event)).or_insert(t);
        tick_of.entry((tick.watch, tick.response, None)).or_insert(t);
    }
    let mut out = Vec::new();
    for c in &data.checks {
        let requirement = match c.must_hold {
            Some(true) => "must hold",
            Some(false) => "must fail",
            None => "not judged",
        };
        let ok = match c.must_hold {
            Some(true) => c.verdict.is_pass() || c.verdict.is_skipped(),
            Some(false) => c.verdict.is_fail(),
            None => true,
        };
        let verdict = c.verdict.to_string();
        report.checks.push(CheckLine {
            guarantee: c.guarantee.clone(),
            requirement: requirement.into(),
            ok,
            verdict: verdict.clone(),
        });
        match c.verdict {
            Verdict::Fail(v) => {
                let blocked = blocked_ops(&v.details);
                let mut pointers = Vec::new();
                for culprit in &v.culprits {
                    match *culprit {
                        Culprit::Op(op) => {
                            let role = if c.guarantee != "Linearizable" {
                                "the write"
                            } else if blocked.contains(&op.0) {
                                "does not fit next"
                            } else {
                                "placed last"
                            };
                            if let Some(&b) = bar_of.get(&op.0) {
                                pointers.push((Pointer::Bar(b), format!("{role}: {op}")));
                            }
                        }
                        Culprit::Event { watch, response, event } => {
                            if let Some(&t) = tick_of.get(&(watch.0, response, Some(event))) {
                                pointers.push((Pointer::Tick(t), format!("{watch} response {response} event {event}")));
                            }
                        }
                        Culprit::Response { watch, response } => {
                            let Some(&t) = tick_of.get(&(watch.0, response, None)) else { continue };
                            let (lane, at) = (report.ticks[t].lane, report.ticks[t].at);
                            let label = match missing_event(&v.details) {
                                Some(missing) => format!("{missing} belonged before this response of {watch}"),
                                None => format!("{watch} response {response}"),
                            };
                            report.markers.push(Marker {
                                lane,
                                kind: MarkerKind::Violation,
                                at,
                                label: label.clone(),
                                line: None,
                            });
                            pointers.push((Pointer::Marker(report.markers.len() - 1), label));
                        }
                    }
                }
                out.push(Violation {
                    kind: c.guarantee.clone(),
                    title: format!("{requirement}, broken: {}", short(&v.details)),
                    detail: v.to_string(),
                    expected: c.must_hold == Some(false),
                    pointers,
                    at: None,
                });
            }
            _ if !ok => out.push(Violation {
                kind: c.guarantee.clone(),
                title: format!("{requirement}, but: {}", short(&verdict)),
                detail: format!("{} {requirement}, and the checker says: {verdict}", c.guarantee),
                expected: false,
                pointers: Vec::new(),
                at: None,
            }),
            _ => {}
        }
    }
    for f in &data.findings {
        let mut pointers = Vec::new();
        for (target, role) in &f.targets {
            match *target {
                Target::Op(op) => {
                    if let Some(&b) = bar_of.get(&op.0) {
                        pointers.push((Pointer::Bar(b), role.clone()));
                    }
                }
                Target::Watch(w) => {
                    if let Some(&t) = tick_of.get(&(w.0, 0, None)) {
                        pointers.push((Pointer::Tick(t), role.clone()));
                    } else if let Some(s) =
                        report.spans.iter().find(|s| s.kind == SpanKind::Watch && s.label.starts_with(&format!("{w} ")))
                    {
                        let (lane, at) = (s.lane, s.start);
                        let line = s.line;
                        report.markers.push(Marker {
                            lane,
                            kind: MarkerKind::Violation,
                            at,
                            label: role.clone(),
                            line,
                        });
                        pointers.push((Pointer::Marker(report.markers.len() - 1), role.clone()));
                    }
                }
                kube => {
                    for p in kube_pointers(placed, kube) {
                        pointers.push((p, role.clone()));
                    }
                }
            }
        }
        // A Kubernetes finding's evidence gets a violation marker where it points first: a tick or a bar
        // alone is easy to miss on a busy lane.
        let kube = f.targets.iter().any(|(t, _)| !matches!(t, Target::Op(_) | Target::Watch(_)));
        if let (true, Some((first, _))) = (kube, pointers.first()) {
            let (lane, at) = place(report, first);
            let label = format!("{}: {}", f.who, f.what);
            report.markers.push(Marker { lane, kind: MarkerKind::Violation, at, label: label.clone(), line: None });
            pointers.push((Pointer::Marker(report.markers.len() - 1), label));
        }
        // A guarantee a step is judged by on its own (an informer's) is the kind; its detail says how.
        let title = match f.kind.as_str() {
            "expectation" => format!("{}: {}", f.who, f.what),
            _ => format!("{}, broken: {}", f.who, short(&f.detail)),
        };
        out.push(Violation {
            kind: f.kind.clone(),
            title,
            detail: format!("{} ({})\n{}", f.who, f.at, f.detail),
            expected: false,
            pointers,
            at: None,
        });
    }
    let messages: Vec<&str> = data.panic_messages.iter().map(|(_, m)| m.as_str()).collect();
    for p in &data.panics {
        let node = p.split(' ').next().unwrap_or("");
        let pointers = marker_pointers(report, MarkerKind::Panic, |lane| lane == node);
        let detail = if messages.is_empty() { p.clone() } else { format!("{p}\n\n{}", messages.join("\n\n")) };
        out.push(Violation { kind: "panic".into(), title: p.clone(), detail, expected: false, pointers, at: None });
    }
    if let Some(message) = &data.aborted {
        let pointers = marker_pointers(report, MarkerKind::Panic, |lane| lane == "cluster");
        out.push(Violation {
            kind: "panic".into(),
            title: format!("the run panicked: {}", message.lines().next().unwrap_or("")),
            detail: format!("The run stopped here; the timeline shows what happened up to the panic.\n\n{message}"),
            expected: false,
            pointers,
            at: None,
        });
    }
    if data.timed_out {
        let idx: Vec<usize> = (0..report.markers.len())
            .filter(|&m| {
                report.trace.get(report.markers[m].line.unwrap_or(usize::MAX)).is_some_and(|l| l.contains("time limit"))
            })
            .collect();
        out.push(Violation {
            kind: "time limit".into(),
            title: "the clients were still going when the time limit ran out".into(),
            detail: "The scenario's time_limit_s ran out before every client finished.".into(),
            expected: false,
            pointers: idx.into_iter().map(|m| (Pointer::Marker(m), "the time limit".to_string())).collect(),
            at: None,
        });
    }
    for v in &mut out {
        v.at = v.pointers.iter().map(|(p, _)| place(report, p)).min_by_key(|(_, at)| *at);
    }
    let problems = out.iter().filter(|v| !v.expected).count();
    report.verdict = match (&data.aborted, problems) {
        (Some(m), _) => format!("PANICKED: {}", m.lines().next().unwrap_or("")),
        (None, 0) if report.passed => {
            let expected = out.len();
            if expected == 0 {
                "pass".into()
            } else {
                format!("pass ({expected} required failure{} shown)", if expected == 1 { "" } else { "s" })
            }
        }
        (None, 0) => "FAIL".into(),
        (None, n) => format!("FAIL: {n} problem{}", if n == 1 { "" } else { "s" }),
    };
    report.violations = out;
}

/// The first 200 characters of `s`, on one line.
fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    match line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Every marker of `kind` on a lane whose name passes `lane`, as pointers.
fn marker_pointers(report: &Report, kind: MarkerKind, lane: impl Fn(&str) -> bool) -> Vec<(Pointer, String)> {
    (0..report.markers.len())
        .filter(|&m| report.markers[m].kind == kind && lane(&report.lanes[report.markers[m].lane].name))
        .map(|m| (Pointer::Marker(m), report.markers[m].label.clone()))
        .collect()
}

/// What a Kubernetes target is on the timeline.
fn kube_pointers(placed: &Placed, target: Target) -> Vec<Pointer> {
    let one = |p: Option<&Option<Pointer>>| p.cloned().flatten().into_iter().collect();
    match target {
        Target::KubeCall(i) => one(placed.calls.get(i)),
        Target::KubeEvent(i) => one(placed.events.get(i)),
        Target::Belief(i, j) => one(placed.beliefs.get(i).and_then(|b| b.get(j))),
        Target::Store(i) => one(placed.stores.get(i)),
        Target::Expired(i) => placed.expired.get(i).cloned().unwrap_or_default(),
        Target::Op(_) | Target::Watch(_) => Vec::new(),
    }
}

/// The lane and time of what `p` points at.
fn place(report: &Report, p: &Pointer) -> (usize, u64) {
    match *p {
        Pointer::Bar(b) => (report.bars[b].lane, report.bars[b].start),
        Pointer::Tick(t) => (report.ticks[t].lane, report.ticks[t].at),
        Pointer::Marker(m) => (report.markers[m].lane, report.markers[m].at),
    }
}

/// The ops a linearizability verdict says do not fit next (`... fits: [op#4 c2: why; op#7 c1: why]`).
fn blocked_ops(details: &str) -> Vec<usize> {
    let Some((_, rest)) = details.split_once("fits: [") else { return Vec::new() };
    let rest = rest.split_once(']').map_or(rest, |(list, _)| list);
    rest.split("op#").skip(1).filter_map(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()).collect()
}

/// The event a Reliable verdict says is missing (`... but not put /a rev=3, which ...`).
fn missing_event(details: &str) -> Option<&str> {
    let (_, rest) = details.split_once(" but not ")?;
    Some(rest.split_once(", which").map_or(rest, |(e, _)| e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ops_that_do_not_fit_are_read_from_the_verdict() {
        let d = "no order ... last ops placed: [op#1 c1 put]; none of the ops that could come next fits: \
                 [op#4 c2: saw 3; op#12 c1: saw 5]; the ops invoked after op#9 returned";
        assert_eq!(blocked_ops(d), vec![4, 12]);
        assert_eq!(blocked_ops("no list"), Vec::<usize>::new());
    }

    #[test]
    fn the_missing_event_is_read_from_a_reliable_verdict() {
        let d = "watch#0 (c1, /a) delivered revisions 2 to 4 but not put /a rev=3, which op#1 shows was committed";
        assert_eq!(missing_event(d), Some("put /a rev=3"));
    }
}
