//! Differential end-to-end test with the real etcdctl 3.4.23: every script in `tests/etcdctl/*.txt` runs
//! against a fresh real etcd 3.4.23 and a fresh fake-etcd, and the normalized transcripts (stdout, stderr,
//! exit code of every command) must be equal.
//!
//! Where fake-etcd deliberately differs, because it implements the fix of a bug that etcd 3.4.23 still has,
//! the script is listed in [`KNOWN_3_4_23_BUGS`] with the etcd issue, and fake-etcd's transcript must equal
//! the expected fixed transcript in `tests/etcdctl/<script>.fixed` instead (while real etcd must still show
//! the bug, so an entry that no longer applies is noticed).
//!
//! `ETCDCTL_CASE=<substring>` runs only the scripts whose name contains it. `KUBESIM_UNDER_TEST=etcd` puts
//! real etcd on both sides, which checks the harness and its normalizer. `KUBESIM_SHOW_TRANSCRIPTS=1` prints
//! real etcd's normalized transcript of every script (the starting point of a `.fixed` file).
#![cfg(not(madsim))]

mod support;
#[path = "support/compat/mod.rs"]
mod compat;

use std::path::{Path, PathBuf};

use compat::diff::line_diff;
use compat::script::{self, Script};
use support::Peer;

/// A script whose real etcd 3.4.23 output shows a known etcd bug that fake-etcd implements the fix of.
struct KnownBug {
    script: &'static str,
    issue: &'static str,
    what: &'static str,
}

const KNOWN_3_4_23_BUGS: &[KnownBug] = &[KnownBug {
    script: "watch_from_compact_rev_delete",
    issue: "etcd-io/etcd#19179 (also #18089), fixed in 3.4.36",
    what: "a watch from the compaction revision misses the DELETE event at that revision",
}];

#[test]
fn etcdctl_transcripts_match_real_etcd() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/etcdctl");
    let filter = std::env::var("ETCDCTL_CASE").unwrap_or_default();
    let scripts: Vec<Script> = script_paths(&dir).iter().map(|p| script::load(p)).collect();
    for bug in KNOWN_3_4_23_BUGS {
        assert!(scripts.iter().any(|s| s.name == bug.script), "whitelisted script {} does not exist", bug.script);
        assert!(fixed_path(&dir, bug.script).is_file(), "whitelisted script {} has no .fixed transcript", bug.script);
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
        }
        let bug = KNOWN_3_4_23_BUGS.iter().find(|b| b.script == script.name);
        let verdict = match bug {
            Some(bug) if under_test != Peer::RealEtcd => {
                let fixed = std::fs::read_to_string(fixed_path(&dir, &script.name)).expect("checked above");
                if other != fixed {
                    Err(format!(
                        "{} does not show the fixed behaviour of {} ({}); - expected fixed, + {}:\n{}",
                        under_test.label(),
                        bug.issue,
                        bug.what,
                        under_test.label(),
                        line_diff(&fixed, &other)
                    ))
                } else if real == other {
                    Err(format!("real etcd no longer shows {}: remove the whitelist entry", bug.issue))
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
    eprintln!(
        "etcdctl scripts: {equal} equal, {known} known 3.4.23 bugs with the fixed behaviour, {} failed",
        failures.len()
    );
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

fn fixed_path(dir: &Path, script: &str) -> PathBuf {
    dir.join(format!("{script}.fixed"))
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload.downcast::<&str>().map(|s| s.to_string()).unwrap_or_else(|_| "panic".into()),
    }
}
