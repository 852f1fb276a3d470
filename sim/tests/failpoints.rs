//! Failpoints in real simulated runs: an injected bug makes the checker for the broken guarantee fire
//! (the end-to-end negative test), and the harmless actions keep every guarantee.
#![cfg(madsim)]

use std::time::Duration;

use fake_etcd::failpoint::Action;
use sim::checker::Guarantee;
use sim::run::{failpoint, run, RunConfig};

fn quiet(seed: u64) -> RunConfig {
    let mut c = RunConfig::standard(seed);
    c.ops = 300;
    c.nemesis = false;
    c
}

#[test]
fn dropping_a_watch_response_breaks_reliable_delivery() {
    let seed = 4;
    let clean = run(&quiet(seed)).unwrap();
    assert!(clean.passed(), "without the failpoint the run must pass: {:?}", clean.verdict_lines());

    let mut c = quiet(seed);
    // Skip the first responses (the created ones), then lose a few that carry events.
    c.failpoints = vec![failpoint("etcd-1", "before-watch-response-send", Action::Drop, 8, Some(3))];
    let report = run(&c).unwrap();
    assert!(report.run.trace.iter().any(|l| l.contains("failpoint before-watch-response-send drop")));
    let reliable = &report.checks.verdicts[&Guarantee::Reliable];
    assert!(reliable.is_fail(), "Reliable must fail when watch responses are lost: {:?}", report.verdict_lines());
    assert!(report.checks.verdicts[&Guarantee::Linearizable].is_pass(), "{:?}", report.verdict_lines());
}

#[test]
fn an_error_after_apply_is_an_ambiguous_outcome_and_stays_linearizable() {
    let mut c = quiet(9);
    c.failpoints = vec![failpoint("etcd-1", "before-write-ack", Action::Error, 20, Some(10))];
    let report = run(&c).unwrap();
    assert!(report.run.trace.iter().filter(|l| l.contains("failpoint before-write-ack error")).count() == 10);
    assert!(report.passed(), "{:?}", report.verdict_lines());
}

#[test]
fn crash_kills_the_member_and_it_comes_back() {
    let mut c = quiet(11);
    c.failpoints = vec![failpoint("etcd-1", "before-write-ack", Action::Crash, 30, Some(1))];
    let report = run(&c).unwrap();
    let trace = report.run.trace.join("\n");
    assert!(trace.contains("etcd-1 crash") && trace.contains("etcd-1 restart"), "{trace}");
    assert_eq!(trace.matches("etcd-1 leader").count(), 2, "the member must start twice");
    assert!(report.passed(), "{:?}", report.verdict_lines());
}

#[test]
fn delayed_progress_notifications_and_compactions_keep_every_guarantee() {
    let mut c = quiet(13);
    c.failpoints = vec![
        failpoint("etcd-1", "before-progress-notify", Action::Delay(Duration::from_millis(700)), 0, None),
        failpoint("etcd-1", "before-compact", Action::Delay(Duration::from_millis(200)), 0, None),
    ];
    let report = run(&c).unwrap();
    assert!(report.passed(), "{:?}", report.verdict_lines());
}
