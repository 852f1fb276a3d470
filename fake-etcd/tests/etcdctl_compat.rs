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
//! `ETCDCTL_CASE=<substring>` runs only the scripts whose name contains it. `KUBESIM_UNDER_TEST=etcd` puts
//! real etcd on both sides, which checks the harness and its normalizer. `KUBESIM_SHOW_TRANSCRIPTS=1` prints
//! both sides' normalized transcripts of every script (the starting point of a `.fixed` or `.limitation` file).
#![cfg(not(madsim))]

#[path = "support/compat/mod.rs"]
mod compat;
mod support;

use std::path::{Path, PathBuf};

use compat::diff::line_diff;
use compat::script::{self, Script};
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
    let (mut equal, mut known) = (0, 0);
    for script in scripts.iter().filter(|s| s.name.contains(&filter)) {
        let (real, other) = std::thread::scope(|scope| {
            let real = scope.spawn(|| compat::transcript(script, &Peer::RealEtcd));
            let other = scope.spawn(|| compat::transcript(script, &under_test));
            (real.join().map_err(panic_text), other.join().map_err(panic_text))
        });
        let (real, other) = match (real, other) {
            (Ok(real), Ok(other)) => (real, other),
            (real, other) => {
                let errors = [real.err(), other.err()].into_iter().flatten().collect::<Vec<_>>().join("\n");
                failures.push(format!("== {} ({}): harness failure\n{errors}", script.name, script.title));
                continue;
            }
        };
        if std::env::var_os("KUBESIM_SHOW_TRANSCRIPTS").is_some() {
            eprintln!("== {} on etcd:\n{real}", script.name);
            eprintln!("== {} on {}:\n{other}", script.name, under_test.label());
        }
        let listed = KNOWN_DIFFERENCES.iter().find(|k| k.script == script.name);
        let verdict = match listed {
            Some(listed) if under_test != Peer::RealEtcd => {
                let expected = std::fs::read_to_string(listed.expected_path(&dir)).expect("checked above");
                if other != expected {
                    Err(format!(
                        "{} does not show {}; - expected, + {}:\n{}",
                        under_test.label(),
                        listed.describe(),
                        under_test.label(),
                        line_diff(&expected, &other)
                    ))
                } else if real == other {
                    Err(format!(
                        "real etcd and {} now agree on {}: remove the entry",
                        under_test.label(),
                        listed.describe()
                    ))
                } else {
                    known += 1;
                    Ok(())
                }
            }
            _ if real == other => {
                equal += 1;
                Ok(())
            }
            _ => Err(format!("- etcd, + {}:\n{}", under_test.label(), line_diff(&real, &other))),
        };
        eprintln!("etcdctl script {}: {}", script.name, if verdict.is_ok() { "ok" } else { "DIFFERENT" });
        if let Err(e) = verdict {
            failures.push(format!("== {} ({})\n{e}", script.name, script.title));
        }
    }
    eprintln!("etcdctl scripts: {equal} equal, {known} known differences (listed by name), {} failed", failures.len());
    assert!(equal + known + failures.len() > 0, "no script matched ETCDCTL_CASE={filter:?}");
    assert!(failures.is_empty(), "{} etcdctl script(s) differ:\n\n{}", failures.len(), failures.join("\n\n"));
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
