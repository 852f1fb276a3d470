//! The data the run reports are built from (`sim::report`), checked on real runs of library scenarios
//! and of the regressions: lanes for every member and client, fault spans where the trace has faults,
//! leader, compaction and snapshot markers, one bar per history op matched to its trace line, watch
//! ticks with their revisions, and violations pointing at their evidence. For apiserver scenarios: the
//! Kubernetes clients' requests, controller attempts and watch events on their lanes, a lane per
//! informer with its lists, events and store, the `apiserver` workloads' history, the counts, and failing
//! Kubernetes steps and informer guarantees located. Also the bad inputs: a run with no events, a run
//! that stopped at a panic, and names that are HTML. The same reports are opened in a real browser by
//! `report_browser.rs`.
#![cfg(madsim)]

use std::path::Path;

use sim::report::model::{LaneKind, Marker, MarkerKind, Outcome, Pointer, Report, SpanKind, TickKind};
use sim::report::{self, RunData};
use sim::scenario::{self, judge};

/// The report of `seed` of the scenario file `path` (relative to the repository).
fn report_of(path: &str, seed: u64) -> (Report, sim::scenario::ScenarioRun) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    let s = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let run = scenario::run(&s, seed);
    let j = judge::judge(&s, &run);
    let r = report::build(&report::scenario::from_scenario(&s, &run, &j, path));
    (r, run)
}

fn report_of_text(name: &str, text: &str, seed: u64) -> Report {
    let s = scenario::parse(name, text).unwrap_or_else(|e| panic!("{e}"));
    let run = scenario::run(&s, seed);
    let j = judge::judge(&s, &run);
    report::build(&report::scenario::from_scenario(&s, &run, &j, name))
}

fn lane(r: &Report, name: &str) -> usize {
    r.lane(name).unwrap_or_else(|| panic!("no lane {name}: {:?}", r.lanes))
}

#[test]
fn a_dropped_watch_response_shows_as_the_missing_event_where_it_belonged() {
    let (r, run) = report_of("scenarios/regressions/dropped-watch-response.toml", 1);
    let names: Vec<&str> = r.lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["cluster", "etcd-1", "informer", "writer"]);
    assert_eq!(r.lanes[1].kind, LaneKind::Member);
    let (writer, informer, member) = (lane(&r, "writer"), lane(&r, "informer"), lane(&r, "etcd-1"));
    // Three puts, each a bar from invocation to response, with its trace line.
    let bars: Vec<_> = r.bars.iter().filter(|b| b.lane == writer).collect();
    assert_eq!(bars.len(), 3);
    for (b, v) in bars.iter().zip(1..) {
        assert_eq!(b.outcome, Outcome::Ok);
        assert!(b.start < b.end, "{b:?}");
        assert!(b.label.starts_with(&format!("writer put /registry/pods/default/a={v} -> ok rev={}", v + 1)), "{b:?}");
        let line = &r.trace[b.line.expect("matched to its trace line")];
        assert!(line.ends_with(&b.label), "{line} / {}", b.label);
    }
    assert_eq!(r.bars.len(), run.history.ops.len());
    // The watch: created, then the events at 2 and 4 (3 was dropped).
    let ticks: Vec<(TickKind, i64)> =
        r.ticks.iter().filter(|t| t.lane == informer).map(|t| (t.kind, t.revision)).collect();
    assert_eq!(ticks, [(TickKind::Created, 1), (TickKind::Event, 2), (TickKind::Event, 4)]);
    assert!(r.spans.iter().any(|s| s.lane == informer && s.kind == SpanKind::Watch));
    // The failpoint: armed from the start, hit once; the member's leader marker.
    assert!(r
        .spans
        .iter()
        .any(|s| s.lane == member && s.kind == SpanKind::Failpoint && s.start == 0 && s.end == r.end));
    let kinds: Vec<MarkerKind> = r.markers.iter().filter(|m| m.lane == member).map(|m| m.kind).collect();
    assert!(kinds.contains(&MarkerKind::Leader) && kinds.contains(&MarkerKind::FailpointHit), "{kinds:?}");
    // Reliable's violation, required by the scenario: the write of revision 3, and a marker where its
    // event belonged, at the response that came after the gap.
    assert_eq!(r.violations.len(), 1, "{:#?}", r.violations);
    let v = &r.violations[0];
    assert_eq!((v.kind.as_str(), v.expected), ("Reliable", true));
    let Pointer::Bar(b) = v.pointers[0].0 else { panic!("{:?}", v.pointers) };
    assert!(r.bars[b].label.starts_with("writer put /registry/pods/default/a=2 -> ok rev=3"), "{:?}", r.bars[b]);
    let Pointer::Marker(m) = v.pointers[1].0 else { panic!("{:?}", v.pointers) };
    let missing = &r.markers[m];
    assert_eq!((missing.kind, missing.lane), (MarkerKind::Violation, informer));
    assert!(missing.label.contains("put /registry/pods/default/a rev=3"), "{}", missing.label);
    let rev4 = r.ticks.iter().find(|t| t.revision == 4).unwrap();
    assert_eq!(missing.at, rev4.at);
    assert_eq!(v.at, Some((writer, r.bars[b].start)));
    assert_eq!(r.verdict, "pass (1 required failure shown)");
    assert!(r.passed);
}

#[test]
fn a_failing_seed_is_a_problem_and_the_page_says_so() {
    let (r, _) = report_of("sim/tests/data/injected-watch-drop.toml", 1);
    // The dropped watch response breaks Reliable, and (when another watch resumed inside the gap) Resumable.
    let problems: Vec<_> = r.problems().collect();
    assert!(!problems.is_empty() && problems.len() <= 2, "{:#?}", r.violations);
    assert_eq!(problems[0].kind, "Reliable");
    assert!(problems.iter().all(|p| ["Reliable", "Resumable"].contains(&p.kind.as_str())), "{:#?}", r.violations);
    assert!(problems.iter().all(|p| p.at.is_some() && !p.pointers.is_empty()));
    let plural = if problems.len() == 1 { "" } else { "s" };
    assert_eq!(r.verdict, format!("FAIL: {} problem{plural}", problems.len()));
    // Four workload clients, the nemesis's faults as spans, and a bar for every request.
    for c in ["k8s-1", "k8s-2", "k8s-3", "k8s-4"] {
        assert_eq!(r.lanes[lane(&r, c)].kind, LaneKind::Client);
    }
    assert!(r
        .spans
        .iter()
        .any(|s| matches!(s.kind, SpanKind::Partition | SpanKind::Clog | SpanKind::Down | SpanKind::Paused)));
    let page = report::html::page(&r);
    assert!(page.contains("class=\"verdict fail\""), "the summary shows the failure");
    assert!(page.contains("data-violation=\"0\""));
}

#[test]
fn faults_leaders_snapshots_and_crashes_become_spans_and_markers() {
    let (r, _) = report_of("scenarios/leader-partition-during-writes.toml", 1);
    let partitioned: Vec<&str> =
        r.spans.iter().filter(|s| s.kind == SpanKind::Partition).map(|s| r.lanes[s.lane].name.as_str()).collect();
    for node in ["cluster", "etcd-1", "etcd-2", "etcd-3", "w1", "reader"] {
        assert!(partitioned.contains(&node), "{node} not shaded: {partitioned:?}");
    }
    let heal = r.markers.iter().find(|m| m.kind == MarkerKind::Fault && m.label.contains("heal")).expect("heal");
    assert!(r.spans.iter().filter(|s| s.kind == SpanKind::Partition).all(|s| s.end == heal.at));
    assert!(r.markers.iter().filter(|m| m.kind == MarkerKind::Leader).count() >= 2);

    let (r, _) = report_of("scenarios/watch-after-snapshot-restore.toml", 1);
    let snap = r.markers.iter().find(|m| m.kind == MarkerKind::SnapshotInstall).expect("a snapshot install marker");
    assert_eq!(r.lanes[snap.lane].name, "etcd-1");

    let (r, _) = report_of("scenarios/crash-restart-member-mid-write.toml", 1);
    let down = r.spans.iter().find(|s| s.kind == SpanKind::Down).expect("the crash is a down span");
    assert_eq!(r.lanes[down.lane].name, "etcd-1");
    assert!(down.end > down.start && down.end < r.end, "{down:?}");

    let (r, _) = report_of("scenarios/watch-across-compaction.toml", 1);
    assert!(r.markers.iter().any(|m| m.kind == MarkerKind::Compaction));
    assert!(r.ticks.iter().any(|t| t.kind == TickKind::Canceled), "the old watch is canceled by compaction");
    assert!(r.violations.is_empty() && r.verdict == "pass");
}

/// On the largest library scenario every op is a bar and every request line is claimed by one.
#[test]
fn every_request_of_a_nemesis_run_is_a_bar_with_its_trace_line() {
    let (r, run) = report_of("scenarios/kubernetes-traffic-nemesis-five-members.toml", 1);
    assert_eq!(r.bars.len(), run.history.ops.len());
    let events: usize = run.history.watches.iter().flat_map(|w| &w.responses).map(|x| x.response.events.len()).sum();
    assert_eq!(r.ticks.iter().filter(|t| t.kind == TickKind::Event).count(), events);
    let unmatched: Vec<_> = r
        .bars
        .iter()
        .filter(|b| b.line.is_none() && b.op.is_some_and(|op| run.history.ops[op].returned.is_some()))
        .collect();
    assert!(unmatched.is_empty(), "{unmatched:#?}");
    let stray: Vec<&String> = r
        .markers
        .iter()
        .filter(|m| m.kind == MarkerKind::Note)
        .filter_map(|m| m.line.map(|l| &r.trace[l]))
        .filter(|l| l.contains(" -> ") && !l.contains("lease-keepalive") && !l.contains("lease-ttl"))
        .collect();
    assert!(stray.is_empty(), "request lines left as notes: {stray:#?}");
    assert!(r.spans.iter().any(|s| s.kind == SpanKind::Clog));
    assert!(r.spans.iter().any(|s| s.kind == SpanKind::Paused));
}

/// A failing expectation points at its step's request.
#[test]
fn a_failing_expectation_points_at_its_request() {
    let r = report_of_text(
        "wrong.toml",
        "# A get that expects what was never written.\n[[client]]\nname = \"c\"\n\
         [[client.step]]\nput = { key = \"/a\", value = \"1\" }\n\
         [[client.step]]\nname = \"read\"\nget = { key = \"/a\" }\nexpect = { kvs = [{ key = \"/a\", value = \"2\" }] }\n",
        1,
    );
    let v = r.problems().next().expect("the expectation fails");
    assert_eq!(v.kind, "expectation");
    assert!(v.title.starts_with("c/read: kvs"), "{}", v.title);
    let Pointer::Bar(b) = v.pointers[0].0 else { panic!() };
    assert!(r.bars[b].label.starts_with("c get /a -> ok"), "{:?}", r.bars[b]);
}

/// Keys and values are the run's text: they reach the page only escaped, and the page's data parses.
#[test]
fn html_in_keys_and_values_never_becomes_markup() {
    let r = report_of_text(
        "html.toml",
        "# Markup in a key.\n[[client]]\nname = \"c\"\n\
         [[client.step]]\nput = { key = \"</script><img/src=x/onerror=alert(1)>\", value = \"<b>&amp;\" }\n",
        1,
    );
    assert!(r.bars[0].label.contains("</script><img"));
    let page = report::html::page(&r);
    assert_eq!(page.matches("<script").count(), 2);
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(!page.contains("<img"));
}

/// A Kubernetes trace line left as a note: a request, attempt, watch event or belief that no bar or tick
/// claimed.
fn stray_kube_notes(r: &Report) -> Vec<&String> {
    // An informer's refused or unanswered lists and watches are notes on its lane by design; its beliefs
    // (`from apiserver-`) are not.
    let stray = |m: &Marker, l: &str| match r.lanes[m.lane].kind {
        LaneKind::Client => l.contains(" -> apiserver-") || l.contains(" attempt ") || l.contains(" from apiserver-"),
        LaneKind::Informer => l.contains(" from apiserver-"),
        _ => false,
    };
    r.markers
        .iter()
        .filter(|m| m.kind == MarkerKind::Note)
        .filter_map(|m| m.line.map(|l| (m, &r.trace[l])))
        .filter(|(m, l)| stray(m, l))
        .map(|(_, l)| l)
        .collect()
}

/// Requests (refused ones red), a watch's events on its client's lane (the step's own trace node is no
/// lane), controller attempts with what they read, and a lane per informer after its client's.
#[test]
fn kubernetes_requests_attempts_watch_events_and_informers_are_drawn() {
    let (r, run) = report_of("scenarios/apiserver-ha-update-conflict.toml", 1);
    assert!(r.lane("w").is_none(), "the watch step's node is not a lane: {:?}", r.lanes);
    let steps: usize = run.clients.iter().map(|c| c.steps.len()).sum();
    assert_eq!(r.bars.len(), steps, "a bar per kube step");
    for b in &r.bars {
        let line = &r.trace[b.line.expect("each request has its trace line")];
        assert!(line.contains(" -> apiserver-"), "{line}");
        assert!(b.start <= b.end && b.end <= r.end, "{b:?}");
        let refused = line.ends_with("409 Conflict");
        assert_eq!(b.outcome, if refused { Outcome::Error } else { Outcome::Ok }, "{line}");
    }
    assert_eq!(r.bars.iter().filter(|b| b.outcome == Outcome::Error).count(), 2);
    let watcher = lane(&r, "informer");
    let events: Vec<_> = r.ticks.iter().filter(|t| t.kind == TickKind::KubeEvent).collect();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].lane, events[0].revision), (watcher, 7));
    assert!(r.trace[events[0].line.unwrap()].ends_with("w event MODIFIED settings rv=7"));
    assert!(r.spans.iter().any(|s| s.lane == watcher && s.kind == SpanKind::Watch));
    let counts = r.counts();
    assert_eq!((counts.requests, counts.watch_events, counts.informers), (steps, 1, 0));
    assert!(stray_kube_notes(&r).is_empty(), "{:#?}", stray_kube_notes(&r));

    let (r, _) = report_of("scenarios/controllers-retry-on-conflict.toml", 1);
    let names: Vec<&str> = r.lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names[4..9], ["setup", "scaler", "scaler-informer", "labeler", "labeler-informer"]);
    // One controller loses the race (which one, the seed decides): its first attempt gets 409, its second
    // succeeds; the other's one attempt succeeds.
    let attempts_on = |l: usize| r.bars.iter().filter(move |b| b.lane == l && b.label.contains(" attempt "));
    let retried = ["scaler", "labeler"]
        .into_iter()
        .map(|n| lane(&r, n))
        .find(|&l| attempts_on(l).count() == 2)
        .expect("one controller retried");
    let attempts: Vec<_> = attempts_on(retried).collect();
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert_eq!((attempts[0].outcome, attempts[1].outcome), (Outcome::Error, Outcome::Ok));
    assert!(attempts[0].label.contains("attempt 1: update default/settings read at rv=6"), "{}", attempts[0].label);
    assert!(attempts[1].label.contains("read at rv=7") && attempts[1].label.ends_with("200 rv=8"));
    assert_eq!(attempts[1].detail["read_rv"], 7);
    for informer in ["scaler-informer", "labeler-informer"] {
        let l = lane(&r, informer);
        assert_eq!(r.lanes[l].kind, LaneKind::Informer);
        let ticks: Vec<(TickKind, i64)> =
            r.ticks.iter().filter(|t| t.lane == l).map(|t| (t.kind, t.revision)).collect();
        assert_eq!(ticks, [(TickKind::InformerList, 6), (TickKind::InformerEvent, 7), (TickKind::InformerEvent, 8)]);
        let list = r.ticks.iter().find(|t| t.lane == l).unwrap();
        assert!(list.label.contains("first list: list rv=\"\" from apiserver-"), "{}", list.label);
        assert!(list.line.is_some() && r.ticks.iter().filter(|t| t.lane == l).all(|t| t.line.is_some()));
        let store = r.markers.iter().find(|m| m.lane == l && m.kind == MarkerKind::StoreMatches).expect("store mark");
        assert_eq!(store.at, r.end);
        assert!(store.label.ends_with("1 objects [settings@8], as etcd"), "{}", store.label);
    }
    let counts = r.counts();
    assert_eq!((counts.requests, counts.watch_events, counts.informers), (5 + 2, 4, 2));
    assert!(stray_kube_notes(&r).is_empty(), "{:#?}", stray_kube_notes(&r));
}

/// The `apiserver` workloads' requests and watch events, from their history, with their trace lines.
#[test]
fn the_apiserver_workloads_history_is_drawn_on_their_lanes() {
    let (r, run) = report_of("scenarios/control-plane-nemesis.toml", 1);
    let h = run.api_history.as_ref().expect("the scenario has apiserver workloads");
    let on_workloads = |l: usize| r.lanes[l].name.starts_with("api-");
    let bars: Vec<_> = r.bars.iter().filter(|b| on_workloads(b.lane)).collect();
    assert_eq!(bars.len(), h.ops.len());
    assert!(bars.iter().all(|b| b.line.is_some()), "every request with its trace line");
    assert!(bars.iter().any(|b| b.outcome == Outcome::Unknown), "the nemesis leaves some unanswered");
    let events: usize = h.watches.iter().map(|w| w.events.len()).sum();
    let ticks = r.ticks.iter().filter(|t| on_workloads(t.lane) && t.kind == TickKind::KubeEvent).count();
    assert_eq!(ticks, events);
    let watches = r.spans.iter().filter(|s| on_workloads(s.lane) && s.kind == SpanKind::Watch).count();
    assert_eq!(watches, h.watches.len());
    assert!(r.markers.iter().filter(|m| on_workloads(m.lane)).all(|m| m.kind != MarkerKind::Note));
    assert_eq!(r.counts().informers, 4);
    assert!(stray_kube_notes(&r).is_empty(), "{:#?}", stray_kube_notes(&r));
}

/// The informer zoo entry with its bug on: time travel, marked at the relist that went back, beside the
/// event it went below.
#[test]
fn an_informer_that_travels_back_in_time_is_marked_at_the_belief() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/zoo/informer-relist-from-lagging-apiserver.toml");
    let mut s = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    assert!(s.turn_on_zoo_bug());
    let run = scenario::run(&s, 1);
    let j = judge::judge(&s, &run);
    let r = report::build(&report::scenario::from_scenario(&s, &run, &j, "zoo"));
    let v = r.problems().next().expect("the informer travels back in time");
    assert_eq!(v.kind, "InformerNeverTravelsBackInTime");
    assert!(v.title.starts_with("controller/inf-2, broken: "), "{}", v.title);
    let inf = lane(&r, "inf-2");
    let Pointer::Tick(back) = v.pointers[0].0 else { panic!("{:?}", v.pointers) };
    let Pointer::Tick(newer) = v.pointers[1].0 else { panic!("{:?}", v.pointers) };
    let (back, newer) = (&r.ticks[back], &r.ticks[newer]);
    assert_eq!((back.lane, back.kind, back.revision), (inf, TickKind::InformerRelist, 6));
    assert!(back.label.contains("from apiserver-2"), "the lagging apiserver: {}", back.label);
    assert_eq!((newer.lane, newer.revision), (inf, 9));
    assert!(newer.at < back.at);
    let Pointer::Marker(m) = v.pointers[2].0 else { panic!("{:?}", v.pointers) };
    assert_eq!((r.markers[m].kind, r.markers[m].lane, r.markers[m].at), (MarkerKind::Violation, inf, back.at));
    assert_eq!(v.at, Some((inf, newer.at)), "the link jumps to the earliest evidence");
    assert!(r.markers.iter().any(|m| m.kind == MarkerKind::InformerRestart && m.lane == inf));
}

/// Wrong expectations of a kube request, a watch and a controller each point at what they judged.
#[test]
fn failing_kubernetes_steps_point_at_their_requests_events_and_attempts() {
    let r = report_of_text(
        "wrong-kube.toml",
        "# Kubernetes steps that expect what did not happen.\n[cluster]\napiservers = 1\n\
         [[client]]\nname = \"c\"\n\
         [[client.step]]\nname = \"inf\"\ninformer = { resource = \"configmaps\" }\n\
         [[client.step]]\nname = \"watch\"\nkube = { verb = \"watch\", resource = \"configmaps\" }\n\
         expect = { watch_events = [{ type = \"DELETED\", name = \"a\" }] }\n\
         [[client.step]]\nname = \"create\"\n\
         kube = { verb = \"create\", resource = \"configmaps\", object = { metadata = { name = \"a\" } } }\n\
         expect = { code = 200 }\n\
         [[client.step]]\nname = \"set\"\nafter = [\"create\"]\nat_ms = 1500\n\
         controller = { informer = \"inf\", name = \"a\", set = { data = { v = \"1\" } } }\nexpect = { code = 409 }\n",
        1,
    );
    let c = lane(&r, "c");
    let by_title =
        |t: &str| r.problems().find(|v| v.title.starts_with(t)).unwrap_or_else(|| panic!("{t}: {:#?}", r.violations));
    let bar = |v: &sim::report::model::Violation, k: usize| match v.pointers[k].0 {
        Pointer::Bar(b) => &r.bars[b],
        ref p => panic!("{p:?}"),
    };
    let create = by_title("c/create: code 200");
    assert!(bar(create, 0).label.starts_with("c create -> apiserver-1 create configmaps default/a -> 201"));
    assert_eq!(bar(create, 0).lane, c);
    let set = by_title("c/set: code 409");
    assert!(bar(set, 0).label.contains("set attempt 1: update default/a read at rv="), "{}", bar(set, 0).label);
    let watch = by_title("c/watch: watch_events");
    assert!(bar(watch, 0).label.starts_with("c watch -> apiserver-1 watch configmaps default"));
    let Pointer::Tick(t) = watch.pointers[1].0 else { panic!("{:?}", watch.pointers) };
    assert_eq!((r.ticks[t].kind, r.ticks[t].lane), (TickKind::KubeEvent, c));
    assert!(r.ticks[t].label.contains("ADDED a rv="), "{}", r.ticks[t].label);
    for v in [create, set, watch] {
        let Some((Pointer::Marker(m), _)) = v.pointers.last() else { panic!("{:?}", v.pointers) };
        assert_eq!((r.markers[*m].kind, r.markers[*m].lane), (MarkerKind::Violation, c));
    }
}

fn bare<'a>(trace: &'a [String], aborted: Option<&str>) -> RunData<'a> {
    RunData {
        title: "bare",
        source: "test",
        seed: 1,
        trace,
        history: None,
        kube: report::KubeData::default(),
        members: vec!["etcd-1".into()],
        clients: vec!["c1".into()],
        checks: Vec::new(),
        findings: Vec::new(),
        panics: Vec::new(),
        panic_messages: Vec::new(),
        aborted: aborted.map(str::to_string),
        timed_out: false,
        passed: aborted.is_none(),
    }
}

#[test]
fn a_run_with_no_events_has_its_lanes_and_nothing_on_them() {
    let r = report::build(&bare(&[], None));
    assert_eq!(r.lanes.len(), 3);
    assert!(r.bars.is_empty() && r.ticks.is_empty() && r.spans.is_empty() && r.markers.is_empty());
    assert_eq!((r.end, r.verdict.as_str()), (0, "pass"));
    assert!(report::html::page(&r).contains("No violations."));
    assert!(report::perfetto::trace_events(&r)["traceEvents"].as_array().unwrap().len() >= 3);
}

/// A run that panicked handed back no history: the trace up to the panic is drawn from its lines, and
/// the panic is the violation.
#[test]
fn a_run_that_panicked_shows_what_happened_up_to_the_panic() {
    let trace: Vec<String> = [
        "t=0.000s etcd-1 leader term=2",
        "t=0.050s c1 watch#0 open /a from rev=0",
        "t=0.060s c1 put /a=1 -> ok rev=2",
        "t=0.061s c1 watch#0 event put /a rev=2",
        "t=0.080s fault partition [etcd-1] | [c1]",
    ]
    .map(String::from)
    .to_vec();
    let r = report::build(&bare(&trace, Some("index out of bounds\nbacktrace")));
    assert_eq!(r.verdict, "PANICKED: index out of bounds");
    assert!(!r.passed);
    assert_eq!(r.bars.len(), 1);
    assert_eq!((r.bars[0].start, r.bars[0].outcome), (60_000_000, Outcome::Ok));
    assert_eq!(r.ticks.len(), 1);
    assert_eq!(r.ticks[0].revision, 2);
    let partition = r.spans.iter().find(|s| s.kind == SpanKind::Partition).unwrap();
    assert_eq!((partition.start, partition.end), (80_000_000, 80_000_000), "it lasts to where the run stopped");
    let v = &r.violations[0];
    assert_eq!(v.kind, "panic");
    let Pointer::Marker(m) = v.pointers[0].0 else { panic!() };
    assert_eq!((r.markers[m].kind, r.markers[m].at), (MarkerKind::Panic, r.end));
    let page = report::html::page(&r);
    assert!(page.contains("id=\"panic\"") && page.contains("index out of bounds\nbacktrace"));
}

/// The trace-event format's rules (the "JSON Object Format" of Chrome's trace-event documentation, as
/// Perfetto imports it), for the phases the writer uses: every event has a name, a phase, a pid and a
/// tid; complete events (`X`) a timestamp and a duration, and on one thread they nest; instant events
/// (`i`) a timestamp and a scope of `g`, `p` or `t`; metadata events (`M`) are `process_name`,
/// `thread_name` (with `args.name`) or `*_sort_index` (with `args.sort_index`); every thread an event is
/// on is named.
fn check_trace_event_format(trace: &serde_json::Value) -> Result<(usize, usize), String> {
    use std::collections::{BTreeMap, BTreeSet};
    let top = trace.as_object().ok_or("the top level is not an object")?;
    let events = top.get("traceEvents").and_then(|e| e.as_array()).ok_or("no traceEvents array")?;
    if let Some(unit) = top.get("displayTimeUnit") {
        if unit != "ms" && unit != "ns" {
            return Err(format!("displayTimeUnit {unit}"));
        }
    }
    let mut named = BTreeSet::new();
    let mut used = BTreeSet::new();
    let mut complete: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for (k, e) in events.iter().enumerate() {
        let bad = |why: &str| format!("event {k} {why}: {e}");
        let e = e.as_object().ok_or_else(|| bad("is not an object"))?;
        e.get("name").and_then(|n| n.as_str()).ok_or_else(|| bad("has no name"))?;
        let ph = e.get("ph").and_then(|p| p.as_str()).ok_or_else(|| bad("has no phase"))?;
        let pid = e.get("pid").and_then(|p| p.as_u64()).ok_or_else(|| bad("has no integer pid"))?;
        let tid = e.get("tid").and_then(|p| p.as_u64()).ok_or_else(|| bad("has no integer tid"))?;
        if e.get("cat").is_some_and(|c| !c.is_string()) || e.get("args").is_some_and(|a| !a.is_object()) {
            return Err(bad("has a cat that is not a string or args that are not an object"));
        }
        let ts = || e.get("ts").and_then(|t| t.as_f64()).filter(|t| *t >= 0.0).ok_or_else(|| bad("has no timestamp"));
        match ph {
            "X" => {
                let dur =
                    e.get("dur").and_then(|d| d.as_f64()).filter(|d| *d >= 0.0).ok_or_else(|| bad("has no dur"))?;
                complete.entry((pid, tid)).or_default().push((ts()?, dur));
                used.insert((pid, tid));
            }
            "i" | "I" => {
                ts()?;
                if !matches!(e.get("s").and_then(|s| s.as_str()).unwrap_or("t"), "g" | "p" | "t") {
                    return Err(bad("has a scope other than g, p or t"));
                }
                used.insert((pid, tid));
            }
            "M" => {
                let args = e.get("args").ok_or_else(|| bad("has no args"))?;
                match e["name"].as_str().unwrap() {
                    "process_name" | "thread_name" => {
                        args.get("name").and_then(|n| n.as_str()).ok_or_else(|| bad("names nothing"))?;
                        if e["name"] == "thread_name" {
                            named.insert((pid, tid));
                        }
                    }
                    "process_sort_index" | "thread_sort_index" => {
                        args.get("sort_index").and_then(|n| n.as_i64()).ok_or_else(|| bad("has no sort_index"))?;
                    }
                    other => return Err(bad(&format!("is metadata {other}"))),
                }
            }
            other => return Err(bad(&format!("has phase {other}, which the writer does not use"))),
        }
    }
    for ((pid, tid), mut list) in complete {
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut open: Vec<f64> = Vec::new();
        for (ts, dur) in list {
            while open.last().is_some_and(|end| *end <= ts + 1e-6) {
                open.pop();
            }
            if open.last().is_some_and(|end| ts + dur > *end + 1e-6) {
                return Err(format!("complete events on {pid}/{tid} overlap without nesting at {ts}"));
            }
            open.push(ts + dur);
        }
    }
    if let Some(t) = used.difference(&named).next() {
        return Err(format!("thread {t:?} has events but no thread_name"));
    }
    Ok((named.len(), events.iter().filter(|e| e["ph"] != "M").count()))
}

#[test]
fn the_perfetto_trace_keeps_the_trace_event_format() {
    for (path, seed) in [
        ("scenarios/regressions/dropped-watch-response.toml", 1),
        ("scenarios/kubernetes-traffic-nemesis-five-members.toml", 1),
        ("scenarios/crash-restart-member-mid-write.toml", 1),
        ("scenarios/control-plane-nemesis.toml", 1),
        ("scenarios/controllers-retry-on-conflict.toml", 1),
    ] {
        let (r, _) = report_of(path, seed);
        let trace = report::perfetto::trace_events(&r);
        let (tracks, events) = check_trace_event_format(&trace).unwrap_or_else(|e| panic!("{path}: {e}"));
        let names: Vec<&str> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        for lane in &r.lanes {
            assert!(names.contains(&lane.name.as_str()), "{path}: no track for {}: {names:?}", lane.name);
        }
        assert!(tracks >= r.lanes.len());
        assert_eq!(events, r.bars.len() + r.spans.len() + r.markers.len() + r.ticks.len() + r.violations.len());
    }
    // The checker itself fails on what breaks the format.
    let bad = serde_json::json!({ "traceEvents": [
        { "name": "a", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1 },
        { "name": "b", "ph": "X", "ts": 5, "dur": 10, "pid": 1, "tid": 1 },
        { "name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": { "name": "t" } },
    ]});
    assert!(check_trace_event_format(&bad).unwrap_err().contains("overlap"));
    let unnamed =
        serde_json::json!({ "traceEvents": [{ "name": "a", "ph": "i", "s": "t", "ts": 0, "pid": 1, "tid": 2 }] });
    assert!(check_trace_event_format(&unnamed).unwrap_err().contains("no thread_name"));
}
