//! The run reports in a real browser: Debian's `chromium`, headless (installed by `scripts/test-all.sh`
//! when missing), opens reports written by `kubesim run --html` and by the library, and each page must
//! render with nothing on the console (chromium's `--enable-logging=stderr` prints every console message
//! and uncaught error as a `CONSOLE` line), with its lanes and violation markers in the DOM
//! (`--dump-dom`). The regression's report is also saved as a screenshot, a 100,000-operation history's
//! time to first paint is measured (the page writes it into `data-first-paint-ms`), and the Perfetto
//! JSON is parsed in the browser by a small viewer-free page that counts its tracks and events.
//! `sweep --html` is checked for its index and its failing seeds' reports. An apiserver scenario's report
//! must show its Kubernetes requests, watch events and informer lanes, and the informer zoo entry's
//! (its bug on) must locate its time travel.
//!
//! `KUBESIM_UPDATE_SCREENSHOT=1` also copies the regression's screenshot to `docs/report.png`, the one the
//! README shows.
#![cfg(madsim)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sim::checker::{Culprit, Guarantee, Verdict, Violation};
use sim::history::{self as h, ClientId, History, Nanos, OpId, Revision};
use sim::report::{self, CheckInput, RunData};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kubesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubesim")).current_dir(repo()).args(args).output().expect("run kubesim")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Debian's chromium, or a failure that says how to get it.
fn chromium() -> &'static str {
    let ok = Command::new("chromium").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "the browser tests need Debian's chromium: `apt-get install chromium` (scripts/test-all.sh does it)");
    "chromium"
}

/// Chromium's headless flags, with a fresh profile under `dir`.
fn headless(dir: &Path, name: &str) -> Vec<String> {
    let profile = dir.join(format!("profile-{name}"));
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1400,800",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect()
}

/// The DOM after the page loaded, and every console message and uncaught error it logged.
fn open(page: &Path, fragment: &str, dir: &Path) -> (String, Vec<String>) {
    let url = format!("file://{}{fragment}", page.canonicalize().unwrap().display());
    let name = page.file_stem().unwrap().to_string_lossy().into_owned();
    let out = Command::new(chromium())
        .args(headless(dir, &name))
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom", &url])
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed on {url}: {}", text(&out.stderr));
    let console = text(&out.stderr).lines().filter(|l| l.contains(":CONSOLE")).map(str::to_string).collect();
    (text(&out.stdout), console)
}

/// The value of `data-<name>` on the page's body.
fn body_attr(dom: &str, name: &str) -> Option<String> {
    let body = &dom[dom.find("<body")?..];
    let body = &body[..body.find('>')?];
    let key = format!("data-{name}=\"");
    let start = body.find(&key)? + key.len();
    Some(body[start..start + body[start..].find('"')?].to_string())
}

/// The checks every page must pass: rendered, no console output, no uncaught error, one label per lane.
fn assert_rendered(dom: &str, console: &[String], lanes: usize) {
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert_eq!(body_attr(dom, "rendered").as_deref(), Some("yes"), "the script did not finish");
    assert_eq!(body_attr(dom, "errors"), None);
    assert_eq!(dom.matches("class=\"lane-label").count(), lanes, "one label per lane");
    assert_eq!(body_attr(dom, "lanes"), Some(lanes.to_string()));
}

#[test]
fn the_regression_report_renders_with_its_violation_and_its_perfetto_trace_parses() {
    let dir = tempfile::tempdir().unwrap();
    let (html, json) = (dir.path().join("dropped.html"), dir.path().join("dropped.json"));
    let file = "scenarios/regressions/dropped-watch-response.toml";
    let out =
        kubesim(&["run", file, "--quiet", "--html", html.to_str().unwrap(), "--perfetto", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Writing a report changes nothing in the run: the same trace hash as a run without one.
    let hash = text(&kubesim(&["run", file, "--hash-only"]).stdout).trim().to_string();
    assert!(text(&out.stdout).contains(&format!("trace-hash {hash}")), "{}", text(&out.stdout));

    // `#v0` selects the first violation, as a click on it in the summary does.
    let (dom, console) = open(&html, "#v0", dir.path());
    assert_rendered(&dom, &console, 4);
    assert!(dom.contains("<li class=\"violation expected current\" data-violation=\"0\">"), "selected: {dom}");
    assert!(body_attr(&dom, "drawn-violation-markers").unwrap().parse::<u32>().unwrap() >= 1);
    let detail = dom[dom.find("id=\"detail-text\"").unwrap()..].replace("&gt;", ">").replace("&lt;", "<");
    assert!(detail.contains("t=0.063s writer put /registry/pods/default/a=2 -> ok rev=3"), "the evidence's trace line");
    assert!(detail.contains("put /registry/pods/default/a rev=3 belonged before this response of watch#0"));

    // The screenshot, kept as the README's when asked.
    let shots = repo().join("target/report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("dropped-watch-response.png");
    let url = format!("file://{}#v0", html.display());
    let out = Command::new(chromium())
        .args(headless(dir.path(), "shot"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&png).expect("the screenshot is written");
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000, "{} bytes", bytes.len());
    if std::env::var_os("KUBESIM_UPDATE_SCREENSHOT").is_some() {
        std::fs::copy(&png, repo().join("docs/report.png")).unwrap();
    }

    // The trace-event JSON, parsed by the browser with no viewer: tracks and events counted there and here.
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let tracks = events.iter().filter(|e| e["name"] == "thread_name").count();
    let counted = events.iter().filter(|e| e["ph"] != "M").count();
    let page = dir.path().join("perfetto-check.html");
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><body><script type=\"application/json\" id=\"t\">{}</script><script>\n\
             const t = JSON.parse(document.getElementById('t').textContent);\n\
             const ev = t.traceEvents;\n\
             document.body.dataset.tracks = ev.filter(e => e.ph === 'M' && e.name === 'thread_name').length;\n\
             document.body.dataset.events = ev.filter(e => e.ph !== 'M').length;\n\
             document.body.dataset.lanes = 0;\n\
             document.body.dataset.rendered = 'yes';\n</script></body></html>",
            report::html::script_json(&trace)
        ),
    )
    .unwrap();
    let (dom, console) = open(&page, "", dir.path());
    assert_rendered(&dom, &console, 0);
    assert_eq!(body_attr(&dom, "tracks"), Some(tracks.to_string()));
    assert_eq!(body_attr(&dom, "events"), Some(counted.to_string()));
    assert!(tracks >= 4, "a track per node and client");
}

/// What the page's `#counts` line says: requests, watch events, informers.
fn counts(dom: &str) -> (usize, usize, usize) {
    let at = dom.find("id=\"counts\"").expect("the counts line");
    let attr = |name: &str| -> usize {
        let key = format!("data-{name}=\"");
        let start = at + dom[at..].find(&key).unwrap() + key.len();
        dom[start..start + dom[start..].find('"').unwrap()].parse().unwrap()
    };
    (attr("requests"), attr("watch-events"), attr("informers"))
}

/// An apiserver scenario's report shows what its Kubernetes clients did: the writer's requests, the
/// informers' lanes with their lists and events. The informer zoo entry, its bug on, fails, and its
/// report locates the time travel: `#v0` selects the violation, drawn as a marker, with the relist from
/// the lagging apiserver as its evidence.
#[test]
fn an_apiserver_report_shows_its_kubernetes_clients_and_locates_an_informers_violation() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("informers.html");
    let out = kubesim(&["run", "scenarios/informers-follow-writes.toml", "--quiet", "--html", html.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (dom, console) = open(&html, "", dir.path());
    assert_rendered(&dom, &console, 10);
    assert_eq!(dom.matches("class=\"lane-label informer\"").count(), 2);
    assert_eq!(body_attr(&dom, "informers").as_deref(), Some("2"));
    // Five requests of the writer; two informers, each told of the five changes after its first list.
    assert_eq!(body_attr(&dom, "bars").as_deref(), Some("5"));
    assert_eq!(body_attr(&dom, "drawn-bars").as_deref(), Some("5"));
    let (requests, events, informers) = counts(&dom);
    let kube_ticks: usize = body_attr(&dom, "kube-ticks").unwrap().parse().unwrap();
    assert!(events >= 10 && informers == 2, "{:?}", counts(&dom));
    assert_eq!(kube_ticks, events + (requests - 5), "every event and list is a tick");
    let message = format!("{requests} requests, {events} watch events, 2 informers");
    assert!(dom.contains(&message), "the summary line");
    assert!(
        text(&out.stderr).contains(&format!("{requests} requests, {events} watch events")),
        "{}",
        text(&out.stderr)
    );

    let (html, json) = (dir.path().join("zoo.html"), dir.path().join("zoo.json"));
    let file = "scenarios/zoo/informer-relist-from-lagging-apiserver.toml";
    let (h, j) = (html.to_str().unwrap(), json.to_str().unwrap());
    let out = kubesim(&["run", file, "--zoo", "--quiet", "--html", h, "--perfetto", j]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (dom, console) = open(&html, "#v0", dir.path());
    assert_rendered(&dom, &console, 10);
    assert!(dom.contains("<li class=\"violation current\" data-violation=\"0\">"), "selected: {dom}");
    assert!(dom.contains("InformerNeverTravelsBackInTime: controller/inf-2, broken"));
    assert!(body_attr(&dom, "drawn-violation-markers").unwrap().parse::<u32>().unwrap() >= 1);
    let detail = dom[dom.find("id=\"detail-title\"").unwrap()..].replace("&gt;", ">").replace("&lt;", "<");
    assert!(detail.contains("InformerNeverTravelsBackInTime: tick on inf-2"), "the evidence's lane: {detail}");
    assert!(detail.contains("went back in time: list rv=0 from apiserver-2: 1 items at rv=6"));
    assert!(detail.contains("inf-2 list rv=0 from apiserver-2: 1 items at rv=6\n"), "its trace line");
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["cat"] == "informer-relist" && e["name"].as_str().unwrap().contains("inf-2")));
    assert!(events.iter().any(|e| e["name"] == "thread_name" && e["args"]["name"] == "inf-2"));
    assert!(events.iter().any(|e| e["cat"] == "violation"));
}

/// A history of 100,000 operations (8 clients, sequential puts, a watch seeing every one) with a
/// violation on the last: the page must stay usable, so its first paint is measured and bounded.
#[test]
fn a_100000_operation_history_paints_within_seconds() {
    const OPS: u64 = 100_000;
    let mut history = History::new();
    let mut trace = vec!["t=0.000s sim start".to_string(), "t=0.000s etcd-1 leader term=2".to_string()];
    let watch = history.open_watch(ClientId(1), h::WatchCreate::default(), Nanos(0));
    for i in 0..OPS {
        let (client, t) = (ClientId(1 + (i % 8) as u32), 1_000_000 + i * 100_000);
        let op = history.invoke(client, h::Request::Put(h::PutRequest::new(format!("/k/{}", i % 1000), "v")), Nanos(t));
        let response = h::Response {
            header_revision: Revision(i as i64 + 2),
            body: h::ResponseBody::Put(h::PutResult::default()),
        };
        history.complete(op, Nanos(t + 700_000), h::Outcome::Ok(response));
        trace.push(format!("{} c{} put /k/{}=v -> ok rev={}", Nanos(t + 700_000), client.0, i % 1000, i + 2));
        let kv = h::KeyValue {
            key: format!("/k/{}", i % 1000).into(),
            mod_revision: Revision(i as i64 + 2),
            ..Default::default()
        };
        let event = h::Event { kind: h::EventKind::Put, kv, prev_kv: None };
        let r = h::WatchResponse { header_revision: Revision(i as i64 + 2), events: vec![event], ..Default::default() };
        history.watch_response(watch, Nanos(t + 800_000), r);
    }
    let broken = Verdict::Fail(Violation {
        guarantee: Guarantee::Linearizable,
        details: "none of the ops that could come next fits: [op#99999 c8: saw nothing]".into(),
        culprits: vec![Culprit::Op(OpId(OPS as usize - 1))],
    });
    let data = RunData {
        title: "a hundred thousand puts",
        source: "sim/tests/report_browser.rs",
        seed: 1,
        trace: &trace,
        history: Some(&history),
        kube: report::KubeData::default(),
        members: vec!["etcd-1".into()],
        clients: (1..=8).map(|c| format!("c{c}")).collect(),
        checks: vec![CheckInput { guarantee: "Linearizable".into(), must_hold: Some(true), verdict: &broken }],
        findings: Vec::new(),
        panics: Vec::new(),
        panic_messages: Vec::new(),
        aborted: None,
        timed_out: false,
        passed: false,
    };
    let r = report::build(&data);
    assert_eq!((r.bars.len(), r.ticks.len()), (OPS as usize, OPS as usize));
    assert!(r.bars.iter().all(|b| b.line.is_some()), "every put matched to its trace line");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("big.html");
    let html = report::html::page(&r);
    std::fs::write(&page, &html).unwrap();
    let (dom, console) = open(&page, "", dir.path());
    assert_rendered(&dom, &console, 10);
    assert_eq!(body_attr(&dom, "bars"), Some(OPS.to_string()));
    let paint: f64 = body_attr(&dom, "first-paint-ms").expect("painted").parse().unwrap();
    println!("100,000 operations: page {} bytes, first paint {paint:.0} ms after navigation", html.len());
    assert!(paint < 15_000.0, "first paint took {paint} ms");
}

/// The bad inputs: nothing recorded, a run stopped by a panic, and names that are markup.
#[test]
fn bad_inputs_render_without_errors_and_markup_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    let bare = |trace: &[String], clients: Vec<String>, aborted: Option<&str>| {
        let data = RunData {
            title: "<b>bare</b>",
            source: "\"><script>alert(1)</script>",
            seed: 1,
            trace,
            history: None,
            kube: report::KubeData::default(),
            members: vec!["etcd-1".into()],
            clients,
            checks: Vec::new(),
            findings: Vec::new(),
            panics: Vec::new(),
            panic_messages: Vec::new(),
            aborted: aborted.map(str::to_string),
            timed_out: false,
            passed: aborted.is_none(),
        };
        report::html::page(&report::build(&data))
    };
    let evil = "<img/src=x/onerror=alert(1)>".to_string();
    let trace: Vec<String> = [
        format!("t=0.010s {evil} put </script><img/src=x>=1 -> ok rev=2"),
        "t=0.020s fault partition [etcd-1] | [c1]".into(),
    ]
    .to_vec();
    let pages = [
        ("empty", bare(&[], vec!["c1".into()], None), 3),
        ("panicked", bare(&trace, vec![evil.clone()], Some("index out of bounds: the len is 0")), 3),
    ];
    for (name, html, lanes) in pages {
        let path = dir.path().join(format!("{name}.html"));
        std::fs::write(&path, html).unwrap();
        let (dom, console) = open(&path, "", dir.path());
        assert_rendered(&dom, &console, lanes);
        assert!(!dom.contains("<img") && !dom.contains("<b>bare"), "markup from the run became markup: {dom}");
        if name == "panicked" {
            assert!(dom.contains("index out of bounds: the len is 0"));
            assert!(dom.contains("&lt;img/src=x/onerror=alert(1)&gt;"), "the lane's name, as text");
        }
    }
}

#[test]
fn sweep_writes_a_report_per_failing_seed_and_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("reports");
    let file = "sim/tests/data/injected-watch-drop.toml";
    let out = kubesim(&["sweep", file, "--seeds", "1..2", "--jobs", "2", "--html", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let index = std::fs::read_to_string(out_dir.join("index.html")).expect("the index is written");
    for seed in [1, 2] {
        let name = format!("injected-watch-drop-seed-{seed}.html");
        assert!(index.contains(&format!("<a href=\"{name}\">")), "{index}");
        let page = std::fs::read_to_string(out_dir.join(&name)).expect("the seed's report is written");
        assert!(page.contains("class=\"verdict fail\""));
    }
    assert!(index.contains("2 seeds, 0 passed, 2 failed"), "{index}");
}

/// A member that panics midway (the skip-sync bug: members that never sync lose their log when killed,
/// and raft panics on a commit index past it): the report shows the panic, with the message the CLI
/// caught while the run went on, and renders.
#[test]
fn a_member_panic_shows_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skip-sync.toml");
    std::fs::write(
        &file,
        "# Members that never sync, killed and restarted.\n[cluster]\nmembers = 3\nbugs = [\"skip-sync\"]\n\
         [[workload]]\nname = \"k8s\"\nkind = \"kubernetes\"\nclients = 4\nops = 300\n[nemesis]\npatterns = [\"kill\"]\n",
    )
    .unwrap();
    let html = dir.path().join("skip-sync.html");
    let out = kubesim(&["run", file.to_str().unwrap(), "--seed", "1", "--quiet", "--html", html.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("panicked and was restarted</a>") || page.contains("panicked and was not yet restarted</a>"),
        "the violation in the summary"
    );
    // The message itself (raft's `to_commit N is out of range` on this seed), as a marker's label.
    assert!(page.contains("\"panic: "), "the panic's message, caught by the CLI");
    let (dom, console) = open(&html, "#v0", dir.path());
    // The cluster, 3 members, 4 clients, and a lane for what members did on their own (a lease expired on
    // this seed) when the history has any.
    let own = usize::from(page.contains("[\"members\",\"client\"]"));
    assert_rendered(&dom, &console, 1 + 3 + 4 + own);
    assert!(body_attr(&dom, "drawn-violation-markers").unwrap().parse::<u32>().unwrap() >= 1);
}
