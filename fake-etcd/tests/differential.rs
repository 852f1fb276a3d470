//! Differential test through the `etcd-client` crate: one seeded random sequence of operations (puts,
//! deletes, ranges with every option, txns with every compare target and result and nested txns,
//! compactions, leases with explicit ids, watches from past revisions) runs against a fresh real etcd 3.4.23
//! and a fresh fake-etcd, one operation at a time, and every answer must be equal field by field (see
//! `support/differential/exec.rs` for what is normalized and why).
//!
//! Differences explained exactly by a known 3.4.23 bug whose fix fake-etcd implements are counted by name
//! and issue, not failed (`support/differential/known_bugs.rs`). The seed is fixed; `KUBESIM_DIFF_SEED` and
//! `KUBESIM_DIFF_OPS` override it and the length for exploration, and `KUBESIM_UNDER_TEST=etcd` runs real
//! etcd on both sides to check the harness.
#![cfg(not(madsim))]

#[path = "support/differential/mod.rs"]
mod differential;
mod support;

use std::collections::BTreeMap;

use differential::exec::{execute, Outcome};
use differential::gen::{Generator, Model, Op};
use differential::known_bugs::{explain, KnownBug};
use etcd_client::Client;
use support::{Disk, Peer, Server};

/// "kubesim" in ASCII, plus a counter for when the mix changes.
const SEED: u64 = 0x6b75_6265_7369_6d01;
const OPS: usize = 2500;
/// Later differences usually follow from the first ones (the stores have diverged), so the run stops here.
const MAX_DIFFERENCES: usize = 20;

#[test]
fn random_operations_get_the_same_answers_as_from_real_etcd() {
    let seed = env_number("KUBESIM_DIFF_SEED").unwrap_or(SEED);
    let ops = env_number("KUBESIM_DIFF_OPS").map_or(OPS, |n| n as usize);
    let under_test = Peer::under_test();
    let real = Server::start(&Peer::RealEtcd, Disk::Temp);
    let other = Server::start(&under_test, Disk::Temp);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let report = runtime.block_on(run(&real, &other, seed, ops));

    println!("differential run: seed {seed:#x}, {} operations, etcd vs {}", report.executed, under_test.label());
    println!("  watches delivered {} events, {} were canceled", report.watch_events, report.watch_canceled);
    for (kind, (ok, errors)) in &report.kinds {
        println!("  {kind:<16} {ok:>5} answered, {errors:>4} errors (as real etcd answered)");
    }
    for (bug, count) in &report.known {
        println!("  known 3.4.23 bug skipped {count} times: {} — {}", bug.issue, bug.name);
    }
    assert!(
        report.differences.is_empty(),
        "{} operation(s) answered differently (seed {seed:#x}; the run stops after {MAX_DIFFERENCES}):\n\n{}\n\n\
         {}'s log:\n{}",
        report.differences.len(),
        report.differences.join("\n\n"),
        under_test.label(),
        log_excerpt(&other.log())
    );
    // The mix must have exercised what it claims to, or a passing run would mean little.
    for kind in ["put", "delete", "range", "txn", "compact", "lease grant", "lease revoke"] {
        let (ok, errors) = report.kinds.get(kind).copied().unwrap_or_default();
        assert!(ok > 0 && errors > 0, "{kind}: {ok} answered and {errors} errors; the mix must reach both");
    }
    for kind in ["lease ttl", "lease list", "watch"] {
        assert!(report.kinds.get(kind).is_some_and(|c| c.0 > 0), "the mix never ran {kind}");
    }
    assert!(report.watch_events > 0, "no watch delivered an event");
    assert!(report.watch_canceled > 0, "no watch started below the compaction revision");
}

/// What a run found.
#[derive(Default)]
struct Report {
    executed: usize,
    /// Per operation kind: answered, errors (real etcd's outcome).
    kinds: BTreeMap<&'static str, (usize, usize)>,
    known: BTreeMap<&'static KnownBug, usize>,
    differences: Vec<String>,
    watch_events: usize,
    /// Watches that real etcd canceled (a start below the compaction revision).
    watch_canceled: usize,
}

async fn run(real: &Server, other: &Server, seed: u64, ops: usize) -> Report {
    let mut real_client = connect(real).await;
    let mut other_client = connect(other).await;
    let mut generator = Generator::new(seed);
    // A fresh store is at revision 1 with nothing compacted.
    let mut model = Model { revision: 1, compacted: 0 };
    let mut report = Report::default();
    for index in 0..ops {
        let op = generator.next(&model);
        let (real_out, other_out) = tokio::join!(
            execute(&mut real_client, &op, model.revision),
            execute(&mut other_client, &op, model.revision)
        );
        report.executed += 1;
        let counts = report.kinds.entry(kind(&op)).or_default();
        if real_out.ok {
            counts.0 += 1
        } else {
            counts.1 += 1
        }
        report.watch_events += real_out.watch.iter().map(|r| r.events.len()).sum::<usize>();
        report.watch_canceled += real_out.watch.iter().filter(|r| r.canceled).count();
        if real_out.text != other_out.text {
            match explain(&op, &model, &real_out, &other_out) {
                Some(bug) => *report.known.entry(bug).or_default() += 1,
                None => {
                    report.differences.push(describe(index, &op, &model, &real_out, &other_out, other.peer.label()))
                }
            }
        }
        if report.differences.len() >= MAX_DIFFERENCES {
            break;
        }
        update(&mut model, &op, &real_out);
    }
    report
}

async fn connect(server: &Server) -> Client {
    Client::connect([server.url()], None)
        .await
        .unwrap_or_else(|e| panic!("connecting to {} at {}: {e}", server.peer.label(), server.url()))
}

/// Follows real etcd: the highest revision it reported, and the compactions it accepted.
fn update(model: &mut Model, op: &Op, real: &Outcome) {
    if let Some(revision) = real.revision {
        model.revision = model.revision.max(revision);
    }
    if let (Op::Compact { revision, .. }, true) = (op, real.ok) {
        model.compacted = *revision;
    }
}

fn kind(op: &Op) -> &'static str {
    match op {
        Op::Put { .. } => "put",
        Op::Get { .. } => "range",
        Op::Delete { .. } => "delete",
        Op::Txn(_) => "txn",
        Op::Compact { .. } => "compact",
        Op::LeaseGrant { .. } => "lease grant",
        Op::LeaseRevoke { .. } => "lease revoke",
        Op::LeaseTimeToLive { .. } => "lease ttl",
        Op::LeaseLeases => "lease list",
        Op::Watch { .. } => "watch",
    }
}

fn describe(index: usize, op: &Op, model: &Model, real: &Outcome, other: &Outcome, label: &str) -> String {
    format!(
        "operation #{index} (store at revision {}, compacted {}): {op:?}\n  etcd:\n    {}\n  {label}:\n    {}",
        model.revision,
        model.compacted,
        real.text.replace('\n', "\n    "),
        other.text.replace('\n', "\n    ")
    )
}

/// The first panic in a server log (the cause; later ones are usually its consequences) and its last lines.
fn log_excerpt(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let first_panic = lines.iter().position(|l| l.contains("panicked at"));
    let mut out = String::new();
    if let Some(at) = first_panic {
        out.push_str("first panic:\n");
        out.push_str(&lines[at..(at + 2).min(lines.len())].join("\n"));
        out.push_str("\nlast lines:\n");
    }
    out.push_str(&lines[lines.len().saturating_sub(20)..].join("\n"));
    out
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={text}: {e}")))
}

/// Requests around the two size limits get the same answer from both: etcd's own `--max-request-bytes`
/// (1.5 MiB, `etcdserver: request is too large`) and gRPC's receive limit above it (2 MiB: the request limit
/// plus 512 KiB, where grpc-go refuses the message before etcd sees it).
#[test]
fn requests_around_the_size_limits_get_the_same_answers_as_from_real_etcd() {
    let real = Server::start(&Peer::RealEtcd, Disk::Temp);
    let other = Server::start(&Peer::under_test(), Disk::Temp);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let answers = |result: Result<(), etcd_client::Error>| match result {
        Ok(()) => "ok".to_string(),
        Err(etcd_client::Error::GRpcStatus(s)) => format!("{:?} {:?}", s.code(), s.message()),
        Err(e) => format!("client error: {e}"),
    };
    runtime.block_on(async {
        let (mut r, mut o) = (connect(&real).await, connect(&other).await);
        let mut differences = Vec::new();
        for size in [1_500_000, 1_700_000, 2_096_000, 2_100_000, 5_000_000] {
            let value = vec![b'x'; size];
            let (a, b) = tokio::join!(r.put("big", value.clone(), None), o.put("big", value.clone(), None));
            let (a, b) = (answers(a.map(drop)), answers(b.map(drop)));
            if a != b {
                differences.push(format!("put of {size} bytes: etcd {a}, {} {b}", other.peer.label()));
            }
            let txn = || etcd_client::Txn::new().and_then([etcd_client::TxnOp::put("big", value.clone(), None)]);
            let (a, b) = tokio::join!(r.txn(txn()), o.txn(txn()));
            let (a, b) = (answers(a.map(drop)), answers(b.map(drop)));
            if a != b {
                differences.push(format!("txn put of {size} bytes: etcd {a}, {} {b}", other.peer.label()));
            }
        }
        assert!(differences.is_empty(), "{}", differences.join("\n"));
    });
}
