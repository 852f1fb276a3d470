//! Differential end-to-end test with the real etcdctl 3.4.23: every script in `tests/etcdctl/*.txt` runs
//! against a fresh real etcd 3.4.23 and a fresh fake-etcd, and the normalized transcripts (stdout, stderr,
//! exit code of every command) must be equal.
//!
//! Where fake-etcd differs, the script is listed in [`KNOWN_DIFFERENCES`] and fake-etcd's transcript must
//! equal a recorded one instead, while real etcd must still differ from it (so an entry that no longer
//! applies is noticed). Two kinds, never silent:
//! - an etcd 3.4.23 bug whose fix fake-etcd implements: the expected fixed transcript is
//!   `tests/etcdctl/<script>.fixed`;
//! - a fake-etcd limitation: its current, wrong output is pinned in `tests/etcdctl/<script>.limitation`,
//!   with what is wrong said here, so that a fix shows up as a failing test to update.
//!
//! A script that differs is run once more on fresh servers, and passes if both sides then agree; the first
//! difference is printed either way.
//!
//! `ETCDCTL_CASE=<substring>` runs only the scripts whose name contains it. `KUBESIM_UNDER_TEST=etcd` puts
//! real etcd on both sides, which checks the harness and its normalizer. `KUBESIM_SHOW_TRANSCRIPTS=1` prints
//! both sides' normalized transcripts of every script (the starting point of a `.fixed` or `.limitation` file).
#![cfg(not(madsim))]

#[path = "support/compat/mod.rs"]
mod compat;
mod support;

use std::path::{Path, PathBuf};

use compat::script::{self, Script};
use kubesim_testsupport::line_diff;
use support::Peer;

/// A script where fake-etcd's transcript deliberately or knowingly differs from real etcd 3.4.23's.
struct KnownDifference {
    script: &'static str,
    kind: Kind,
    what: &'static str,
}

enum Kind {
    /// fake-etcd implements the fix of this etcd bug; the transcript is in `<script>.fixed`.
    FixedEtcdBug { issue: &'static str },
    /// fake-etcd cannot do this yet; its current transcript is pinned in `<script>.limitation`. No script
    /// needs it today (the last one, `endpoint_url`, was fixed); it stays for the next limitation found.
    #[allow(dead_code)]
    FakeEtcdLimitation { why: &'static str },
}

impl KnownDifference {
    fn expected_path(&self, dir: &Path) -> PathBuf {
        let ext = match self.kind {
            Kind::FixedEtcdBug { .. } => "fixed",
            Kind::FakeEtcdLimitation { .. } => "limitation",
        };
        dir.join(format!("{}.{ext}", self.script))
    }

    fn describe(&self) -> String {
        match self.kind {
            Kind::FixedEtcdBug { issue } => format!("the fixed behaviour of {issue} ({})", self.what),
            Kind::FakeEtcdLimitation { why } => format!("the known limitation \"{}\" ({why})", self.what),
        }
    }
}

const KNOWN_DIFFERENCES: &[KnownDifference] = &[KnownDifference {
    script: "watch_from_compact_rev_delete",
    kind: Kind::FixedEtcdBug { issue: "etcd-io/etcd#19179 (also #18089), fixed in 3.4.36" },
    what: "a watch from the compaction revision misses the DELETE event at that revision",
}];

#[test]
fn etcdctl_transcripts_match_real_etcd() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/etcdctl");
    let filter = std::env::var("ETCDCTL_CASE").unwrap_or_default();
    let scripts: Vec<Script> = script_paths(&dir).iter().map(|p| script::load(p)).collect();
    for known in KNOWN_DIFFERENCES {
        assert!(scripts.iter().any(|s| s.name == known.script), "listed script {} does not exist", known.script);
        let path = known.expected_path(&dir);
        assert!(path.is_file(), "listed script {} has no {}", known.script, path.display());
    }
    let under_test = Peer::under_test();
    let mut failures = Vec::new();
    let (mut equal, mut known, mut rerun) = (0, 0, 0);
    for script in scripts.iter().filter(|s| s.name.contains(&filter)) {
        let mut outcome = compare(script, &under_test, &dir);
        if let Outcome::Different(first) = &outcome {
            // Both sides are real processes on a loaded machine; a script that differed once is run again on
            // fresh servers, and passes only if both sides then agree. The first difference is still printed:
            // a difference that comes and goes is a finding too (CI's log keeps it).
            let again = compare(script, &under_test, &dir);
            if matches!(again, Outcome::Equal | Outcome::Known) {
                eprintln!(
                    "etcdctl script {}: differed once, equal when run again; the first run:\n{first}",
                    script.name
                );
                rerun += 1;
            }
            outcome = again;
        }
        eprintln!("etcdctl script {}: {}", script.name, outcome.word());
        match outcome {
            Outcome::Equal => equal += 1,
            Outcome::Known => known += 1,
            Outcome::Different(e) => failures.push(format!("== {} ({})\n{e}", script.name, script.title)),
        }
    }
    eprintln!(
        "etcdctl scripts: {equal} equal ({rerun} of them on a second run), {known} known differences (listed by name), {} failed",
        failures.len()
    );
    assert!(equal + known + failures.len() > 0, "no script matched ETCDCTL_CASE={filter:?}");
    assert!(failures.is_empty(), "{} etcdctl script(s) differ:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// How one script's transcripts compare.
enum Outcome {
    Equal,
    /// Different as [`KNOWN_DIFFERENCES`] says, and as its pinned transcript shows.
    Known,
    /// Different otherwise, or the harness failed: what to print.
    Different(String),
}

impl Outcome {
    fn word(&self) -> &'static str {
        match self {
            Outcome::Equal | Outcome::Known => "ok",
            Outcome::Different(_) => "DIFFERENT",
        }
    }
}

/// Runs `script` on fresh servers of real etcd and of `under_test`, side by side, and compares the transcripts.
fn compare(script: &Script, under_test: &Peer, dir: &Path) -> Outcome {
    let (real, other) = std::thread::scope(|scope| {
        let real = scope.spawn(|| compat::transcript(script, &Peer::RealEtcd));
        let other = scope.spawn(|| compat::transcript(script, under_test));
        (real.join().map_err(panic_text), other.join().map_err(panic_text))
    });
    let (real, other) = match (real, other) {
        (Ok(real), Ok(other)) => (real, other),
        (real, other) => {
            let errors = [real.err(), other.err()].into_iter().flatten().collect::<Vec<_>>().join("\n");
            return Outcome::Different(format!("harness failure\n{errors}"));
        }
    };
    if std::env::var_os("KUBESIM_SHOW_TRANSCRIPTS").is_some() {
        eprintln!("== {} on etcd:\n{real}", script.name);
        eprintln!("== {} on {}:\n{other}", script.name, under_test.label());
    }
    let listed = KNOWN_DIFFERENCES.iter().find(|k| k.script == script.name);
    match listed {
        Some(listed) if *under_test != Peer::RealEtcd => {
            let expected = std::fs::read_to_string(listed.expected_path(dir)).expect("checked above");
            if other != expected {
                Outcome::Different(format!(
                    "{} does not show {}; - expected, + {}:\n{}",
                    under_test.label(),
                    listed.describe(),
                    under_test.label(),
                    line_diff(&expected, &other)
                ))
            } else if real == other {
                Outcome::Different(format!(
                    "real etcd and {} now agree on {}: remove the entry",
                    under_test.label(),
                    listed.describe()
                ))
            } else {
                Outcome::Known
            }
        }
        _ if real == other => Outcome::Equal,
        _ => Outcome::Different(format!("- etcd, + {}:\n{}", under_test.label(), line_diff(&real, &other))),
    }
}

/// The scripts, in name order.
fn script_paths(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    paths
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload.downcast::<&str>().map(|s| s.to_string()).unwrap_or_else(|_| "panic".into()),
    }
}
