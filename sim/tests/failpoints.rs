//! Failpoints in real simulated runs: an injected bug makes the checker for the broken guarantee fire
//! (the end-to-end negative test), and the harmless actions keep every guarantee.
#![cfg(madsim)]

use std::time::Duration;

use fake_etcd::failpoint::Action;
use sim::checker::Guarantee;
use sim::fault::{Fault, ScheduledFault};
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
    // Skip the first responses (the created ones and the first of each informer's stream), then lose a few
    // that carry events mid-stream.
    c.failpoints = vec![failpoint("etcd-1", "before-watch-response-send", Action::Drop, 20, Some(3))];
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

#[test]
fn an_error_on_a_watch_response_ends_the_stream_and_the_informer_resumes() {
    let mut c = quiet(1);
    // Skip the first responses, then fail three responses (each ends its stream).
    c.failpoints = vec![failpoint("etcd-1", "before-watch-response-send", Action::Error, 12, Some(3))];
    let report = run(&c).unwrap();
    let trace = &report.run.trace;
    let fired = trace.iter().filter(|l| l.contains("failpoint before-watch-response-send error")).count();
    assert_eq!(fired, 3, "{trace:#?}");
    // The stream ends with the injected status, as the client sees it (unless the client had just closed it).
    let failed: Vec<usize> = (0..trace.len()).filter(|&i| trace[i].contains(" failed Unavailable")).collect();
    assert!(!failed.is_empty() && failed.len() <= fired, "{trace:#?}");
    // An informer (c1..c3) whose stream failed watches again, from after the last revision it saw.
    let informer_failures: Vec<usize> = failed
        .iter()
        .copied()
        .filter(|&i| ["c1", "c2", "c3"].iter().any(|c| trace[i].contains(&format!(" {c} "))))
        .collect();
    assert!(!informer_failures.is_empty(), "this seed must fail an informer's stream: {failed:?}");
    for i in informer_failures {
        let client = trace[i].split_whitespace().nth(1).unwrap();
        assert!(
            trace[i..].iter().any(|l| l.contains(&format!(" {client} watch#")) && l.contains(" open ")),
            "{client} must open a new watch after its stream failed at {}",
            trace[i]
        );
    }
    // A stream that fails is allowed; what the watches delivered must still keep every guarantee.
    assert!(report.passed(), "{:?}", report.verdict_lines());
}

#[test]
fn a_held_write_ack_times_out_the_client_and_goes_through_on_release() {
    let mut c = quiet(6);
    c.failpoints = vec![failpoint("etcd-1", "before-write-ack", Action::Hold, 25, Some(1))];
    c.faults = vec![ScheduledFault {
        at_ms: 2500,
        fault: Fault::Release { node: "etcd-1".into(), point: "before-write-ack".into() },
    }];
    let report = run(&c).unwrap();
    let trace = &report.run.trace;
    let held = trace.iter().position(|l| l.contains("failpoint before-write-ack hold")).expect("the hold fired");
    let released = trace.iter().position(|l| l.contains("fault release etcd-1 before-write-ack")).unwrap();
    assert!(held < released);
    // The held client got no answer within its timeout: an unknown outcome, between hold and release.
    let client = trace[held + 1..released]
        .iter()
        .find(|l| l.contains("unknown (no answer within"))
        .expect("the held request must time out before the release");
    assert!(client.contains("txn") || client.contains("compact"), "{client}");
    // The write was applied before the hold, so it took effect: the checker must explain it as such.
    assert!(report.passed(), "{:?}", report.verdict_lines());
}
