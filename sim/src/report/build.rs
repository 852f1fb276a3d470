//! Builds a [`Report`] from a run's recorded data: lanes from the members, the clients (each followed by
//! its informers' lanes) and every other node the trace names; fault spans and markers from the trace's
//! own lines; request bars and watch ticks from the history (or, for a run that stopped before handing its
//! history back, from the trace alone), and from what the Kubernetes clients recorded ([`kube`]); then the
//! violations, which point into all of these. Pure: the same run always gives the same report.

use std::collections::BTreeMap;

use super::history::{self, Matched};
use super::input::RunData;
use super::kube;
use super::model::{Lane, LaneKind, Marker, MarkerKind, Report, Span, SpanKind};
use super::trace_line::{self, Fault, Kind, Line};
use super::violations;

/// Nodes whose lines belong to the cluster as a whole rather than to a lane of their own.
const CLUSTER_NODES: [&str; 4] = ["sim", "fault", "nemesis", "control"];

/// Builds the report of one run.
pub fn build(data: &RunData<'_>) -> Report {
    let lines: Vec<(usize, Line<'_>)> =
        data.trace.iter().enumerate().filter_map(|(i, l)| trace_line::parse(l).map(|p| (i, p))).collect();
    let aliases = kube::aliases(&data.kube);
    let lanes = lanes(data, &lines, &aliases);
    let index: BTreeMap<&str, usize> = lanes.iter().enumerate().map(|(i, l)| (l.name.as_str(), i)).collect();
    let lane_of = |node: &str| {
        let node = aliases.get(node).map_or(node, String::as_str);
        index.get(node).copied().unwrap_or(0)
    };
    let end = end_time(data, &lines);

    let mut report = Report {
        title: data.title.to_string(),
        source: data.source.to_string(),
        seed: data.seed,
        end,
        trace: data.trace.to_vec(),
        aborted: data.aborted.clone(),
        passed: data.passed && data.aborted.is_none(),
        ..Report::default()
    };
    // Requests and watches first, so that the lines they claim are not also drawn as notes.
    let mut matched: Matched = match data.history {
        Some(h) => history::from_history(data, h, &lines, &lane_of, end, &mut report),
        None => history::from_trace(&lines, &lane_of, &mut report),
    };
    let placed = kube::add(&data.kube, &lines, &lane_of, end, &mut matched.lines, &mut report);
    faults_and_markers(&lines, &lane_of, end, &matched, &mut report);
    for (count, message) in &data.panic_messages {
        let at = count.checked_sub(1).and_then(|i| lines.iter().rev().find(|(j, _)| *j <= i)).map_or(0, |(_, l)| l.at);
        let label = format!("panic: {}", message.lines().next().unwrap_or(""));
        report.markers.push(Marker { lane: 0, kind: MarkerKind::Panic, at, label, line: None });
    }
    if let Some(message) = &data.aborted {
        let label = format!("the run panicked: {}", message.lines().next().unwrap_or(""));
        report.markers.push(Marker { lane: 0, kind: MarkerKind::Panic, at: end, label, line: None });
    }
    report.lanes = lanes;
    violations::add(data, &placed, &mut report);
    report
}

/// The cluster lane, the members, the clients each followed by its informers (the members' own lease
/// expiries get a `members` lane when there are any), then every other node the trace names, in order of
/// appearance, but for the nodes that belong on another's lane (`aliases`).
fn lanes(data: &RunData<'_>, lines: &[(usize, Line<'_>)], aliases: &BTreeMap<String, String>) -> Vec<Lane> {
    let mut lanes = vec![Lane { name: "cluster".into(), kind: LaneKind::Cluster }];
    let add = |lanes: &mut Vec<Lane>, name: &str, kind: LaneKind| {
        if !lanes.iter().any(|l| l.name == name) && !CLUSTER_NODES.contains(&name) {
            lanes.push(Lane { name: name.to_string(), kind });
        }
    };
    for m in &data.members {
        add(&mut lanes, m, LaneKind::Member);
    }
    for c in &data.clients {
        add(&mut lanes, c, LaneKind::Client);
        for informer in kube::informer_lanes(&data.kube, c) {
            add(&mut lanes, informer, LaneKind::Informer);
        }
    }
    if data.history.is_some_and(|h| h.ops.iter().any(|o| o.client.0 == 0)) {
        add(&mut lanes, &data.client_name(0), LaneKind::Client);
    }
    for (_, l) in lines.iter().filter(|(_, l)| !aliases.contains_key(l.node)) {
        let kind = if l.node.starts_with("etcd-") { LaneKind::Member } else { LaneKind::Server };
        add(&mut lanes, l.node, kind);
    }
    lanes
}

/// The last time anything happened: the last trace line or history stamp.
fn end_time(data: &RunData<'_>, lines: &[(usize, Line<'_>)]) -> u64 {
    let mut end = lines.iter().map(|(_, l)| l.at).max().unwrap_or(0).max(kube::end_time(&data.kube));
    if let Some(h) = data.history {
        for op in &h.ops {
            end = end.max(op.invoked.time.0).max(op.returned.as_ref().map_or(0, |r| r.at.time.0));
        }
        for w in &h.watches {
            end = end.max(w.responses.last().map_or(w.opened.time.0, |r| r.at.time.0));
        }
    }
    end
}

/// A span that has begun and not yet ended.
struct Open {
    start: u64,
    label: String,
    line: usize,
}

/// Fault spans (partitions and clogs until healed, kills and crashes until restarted, pauses until
/// resumed, failpoints from arming to the end) and markers for everything else a node did on its own.
fn faults_and_markers(
    lines: &[(usize, Line<'_>)],
    lane_of: &dyn Fn(&str) -> usize,
    end: u64,
    matched: &Matched,
    report: &mut Report,
) {
    // Open network spans by lane and kind (healed together), and node-state spans by lane.
    let mut network: BTreeMap<(usize, SpanKind, String), Open> = BTreeMap::new();
    let mut state: BTreeMap<(usize, SpanKind), Open> = BTreeMap::new();
    let close = |spans: &mut Vec<Span>, (lane, kind): (usize, SpanKind), open: Open, at: u64| {
        spans.push(Span { lane, kind, start: open.start, end: at, label: open.label, line: Some(open.line) });
    };
    for (i, l) in lines {
        let (i, at) = (*i, l.at);
        if matched.lines.contains(&i) {
            continue;
        }
        let text = format!("{} {}", l.node, l.text);
        let lane = lane_of(l.node);
        let marker = |report: &mut Report, lane: usize, kind: MarkerKind| {
            report.markers.push(Marker { lane, kind, at, label: text.clone(), line: Some(i) });
        };
        let open = || Open { start: at, label: text.clone(), line: i };
        match trace_line::classify(l) {
            Kind::Fault(f) => match f {
                Fault::Partition { nodes, .. } => {
                    for lane in std::iter::once(0).chain(nodes.iter().map(|n| lane_of(n))) {
                        network.entry((lane, SpanKind::Partition, text.clone())).or_insert_with(open);
                    }
                }
                Fault::Clog(n) => {
                    network.entry((lane_of(n), SpanKind::Clog, String::new())).or_insert_with(open);
                }
                Fault::ClogLink(a, b) => {
                    for n in [a, b] {
                        network.entry((lane_of(n), SpanKind::Clog, format!("{a}->{b}"))).or_insert_with(open);
                    }
                }
                Fault::Network => {
                    network.insert((0, SpanKind::Network, text.clone()), open());
                }
                Fault::Heal | Fault::Unclog(_) | Fault::UnclogLink(..) => {
                    let keys: Vec<_> = network
                        .keys()
                        .filter(|(lane, kind, what)| match f {
                            Fault::Heal => true,
                            Fault::Unclog(n) => *lane == lane_of(n) && *kind == SpanKind::Clog && what.is_empty(),
                            Fault::UnclogLink(a, b) => *what == format!("{a}->{b}"),
                            _ => false,
                        })
                        .cloned()
                        .collect();
                    for k in keys {
                        let o = network.remove(&k).expect("listed just above");
                        close(&mut report.spans, (k.0, k.1), o, at);
                    }
                    let lane = match f {
                        Fault::Unclog(n) => lane_of(n),
                        _ => 0,
                    };
                    marker(report, lane, MarkerKind::Fault);
                }
                Fault::Kill(n) => {
                    state.entry((lane_of(n), SpanKind::Down)).or_insert_with(open);
                }
                Fault::Pause(n) => {
                    state.entry((lane_of(n), SpanKind::Paused)).or_insert_with(open);
                }
                Fault::Restart(n) | Fault::Resume(n) => {
                    let kind = if matches!(f, Fault::Restart(_)) { SpanKind::Down } else { SpanKind::Paused };
                    if let Some(o) = state.remove(&(lane_of(n), kind)) {
                        close(&mut report.spans, (lane_of(n), kind), o, at);
                    }
                    marker(report, lane_of(n), MarkerKind::Fault);
                }
                Fault::Release(n) => marker(report, lane_of(n), MarkerKind::Fault),
                Fault::Unknown => marker(report, 0, MarkerKind::Fault),
            },
            Kind::Crash => {
                state.entry((lane, SpanKind::Down)).or_insert_with(open);
                marker(report, lane, MarkerKind::Fault);
            }
            Kind::Restart => {
                if let Some(o) = state.remove(&(lane, SpanKind::Down)) {
                    close(&mut report.spans, (lane, SpanKind::Down), o, at);
                }
                marker(report, lane, MarkerKind::Fault);
            }
            Kind::Armed { .. } => {
                report.spans.push(Span {
                    lane,
                    kind: SpanKind::Failpoint,
                    start: at,
                    end,
                    label: text.clone(),
                    line: Some(i),
                });
            }
            Kind::Leader => marker(report, lane, MarkerKind::Leader),
            Kind::SteppedDown => marker(report, lane, MarkerKind::SteppedDown),
            Kind::Compacted => marker(report, lane, MarkerKind::Compaction),
            Kind::SnapshotRestored => marker(report, lane, MarkerKind::SnapshotInstall),
            Kind::FailpointHit => marker(report, lane, MarkerKind::FailpointHit),
            Kind::Panic => marker(report, lane, MarkerKind::Panic),
            Kind::Lease => marker(report, lane, MarkerKind::Lease),
            Kind::Request { .. } | Kind::Watch { .. } | Kind::Other => {
                let kind = if l.node == "nemesis" && l.text.starts_with("compact") {
                    MarkerKind::Compaction
                } else {
                    MarkerKind::Note
                };
                marker(report, lane, kind);
            }
        }
    }
    // What was never healed, restarted or resumed lasts to the end of the run.
    for ((lane, kind, _), o) in network {
        close(&mut report.spans, (lane, kind), o, end);
    }
    for (key, o) in state {
        close(&mut report.spans, key, o, end);
    }
    report.spans.sort_by_key(|s| (s.start, s.lane));
}
