//! kubectl 1.32 end to end against the `kubesim-apiserver` binary, as transcripts: every script in
//! `tests/kubectl/*.txt` holds kubectl commands with the output a real kube-apiserver 1.32 makes kubectl
//! print; each script runs against a fresh binary with the machine's `/usr/bin/kubectl`, and the
//! normalized transcript of the run must equal the script. The format and what is normalized are in
//! `tests/kubectl/README.md`.
//!
//! `KUBECTL_CASE=<substring>` runs only the scripts whose name contains it; `KUBESIM_SHOW_TRANSCRIPTS=1`
//! prints every run's transcript (a new script's expected output, once checked against what real
//! kube-apiserver does). All scripts run, several at a time, and the failure lists every script that
//! differs with a diff. Where kubesim knowingly differs, [`KNOWN_DIFFERENCES`] says why and kubesim's
//! transcript is pinned beside the script (`.limitation` until an issue fixes it, `.choice` where kubesim
//! chooses to differ).
#![cfg(not(madsim))]

#[path = "kubectl/normalize.rs"]
mod normalize;
#[path = "kubectl/run.rs"]
mod run;
#[path = "kubectl/script.rs"]
mod script;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use kubesim_testsupport::line_diff;
use script::Script;

/// A script where kubesim's transcript knowingly differs from kube-apiserver 1.32's. The script keeps the
/// real transcript; kubesim's current one is pinned in `tests/kubectl/<script>.<kind>`, and the test checks
/// both that kubesim prints exactly that and that it still differs from the real one, so that a fix shows
/// up as a failure that asks for the entry to go.
struct KnownDifference {
    script: &'static str,
    kind: Kind,
    what: &'static str,
}

// No script differs today (issue 26 closed the last limitation, discovery; the ServiceAccount admission
// plugin the last choice, pods); the variants stay for the next one.
#[allow(dead_code)]
enum Kind {
    /// kubesim cannot do this yet; pinned in `<script>.limitation`, with the issue that will fix it.
    Limitation { issue: &'static str },
    /// kubesim chooses to differ; pinned in `<script>.choice`.
    Choice,
}

impl KnownDifference {
    /// Why kubesim differs: the issue that will close a limitation, or that it is a choice.
    fn reason(&self) -> String {
        match self.kind {
            Kind::Limitation { issue } => format!("until issue {issue}"),
            Kind::Choice => "by choice".into(),
        }
    }

    fn pinned_path(&self, dir: &Path) -> PathBuf {
        let ext = match self.kind {
            Kind::Limitation { .. } => "limitation",
            Kind::Choice => "choice",
        };
        dir.join(format!("{}.{ext}", self.script))
    }
}

const KNOWN_DIFFERENCES: &[KnownDifference] = &[];

/// Scripts running at once. Each is mostly waiting on kubectl processes and its own small server, so a
/// few overlap well even on two cores.
const JOBS: usize = 3;

#[test]
fn kubectl_transcripts_match_kube_apiserver() {
    assert!(
        Path::new(run::KUBECTL).is_file(),
        "{} is missing: these tests need Google's kubectl dispatcher (Debian package kubectl, google-cloud-cli repo)",
        run::KUBECTL
    );
    let dir = script_dir();
    let filter = std::env::var("KUBECTL_CASE").unwrap_or_default();
    let show = std::env::var_os("KUBESIM_SHOW_TRANSCRIPTS").is_some();
    let scripts: Vec<Script> =
        script_paths(&dir).iter().map(|p| script::load(p)).filter(|s| s.name.contains(&filter)).collect();
    assert!(!scripts.is_empty(), "no script matched KUBECTL_CASE={filter:?}");

    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<(), String>>>> = Mutex::new(vec![None; scripts.len()]);
    std::thread::scope(|scope| {
        for _ in 0..JOBS.min(scripts.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(script) = scripts.get(i) else { break };
                let verdict = check(script, show);
                eprintln!("kubectl script {}: {}", script.name, if verdict.is_ok() { "ok" } else { "DIFFERENT" });
                results.lock().unwrap()[i] = Some(verdict);
            });
        }
    });

    let results = results.into_inner().unwrap();
    let mut failures = Vec::new();
    let mut failed = Vec::new();
    for (script, verdict) in scripts.iter().zip(results) {
        if let Err(e) = verdict.expect("every script ran") {
            failures.push(format!("== {} ({})\n{e}", script.name, script.title));
            failed.push(script.name.as_str());
        }
    }
    eprintln!("kubectl scripts: {} passed, {} failed {:?}", scripts.len() - failures.len(), failures.len(), failed);
    assert!(
        failures.is_empty(),
        "{} of {} kubectl script(s) differ from kube-apiserver 1.32's transcripts (- expected, + kubesim):\n\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n\n")
    );
}

/// Runs one script on a fresh server; the diff from the expected transcript if they differ.
fn check(script: &Script, show: bool) -> Result<(), String> {
    let dir = tempfile::Builder::new().prefix("kubectl-").tempdir().map_err(|e| e.to_string())?;
    let mut run = run::Run::start(dir.path()).map_err(|e| format!("harness failure: {e}"))?;
    let actual = run.transcript(script);
    if show {
        eprintln!("== {} transcript:\n{actual}== end of {}", script.name, script.name);
    }
    let known = KNOWN_DIFFERENCES.iter().find(|k| k.script == script.name);
    let expected = match known {
        None => script.text.clone(),
        Some(known) => {
            if actual == script.text {
                return Err(format!(
                    "kubesim now prints kube-apiserver's transcript: remove the known difference ({}) and {}",
                    known.what,
                    known.pinned_path(&script_dir()).display()
                ));
            }
            let path = known.pinned_path(&script_dir());
            std::fs::read_to_string(&path)
                .map_err(|e| format!("{}: {e} (KUBESIM_SHOW_TRANSCRIPTS=1 prints it)", path.display()))?
        }
    };
    if actual == expected {
        return Ok(());
    }
    let mut report = match known {
        Some(k) => format!(
            "(a known difference, {}: the expected side is {})\n",
            k.reason(),
            k.pinned_path(&script_dir()).display()
        ),
        None => String::new(),
    };
    report.push_str(&line_diff(&expected, &actual));
    let server = run.server.stderr_tail();
    if !server.is_empty() {
        report.push_str(&format!("server stderr (last lines):\n{server}\n"));
    }
    Err(report)
}

/// Where the scripts are.
fn script_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kubectl")
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

#[test]
fn every_known_difference_names_a_script_and_its_pinned_transcript() {
    let dir = script_dir();
    for known in KNOWN_DIFFERENCES {
        assert!(dir.join(format!("{}.txt", known.script)).is_file(), "no script {}", known.script);
        assert!(known.pinned_path(&dir).is_file(), "{} is missing", known.pinned_path(&dir).display());
    }
}
