//! `cargo test` for a folder of scenario files, the project's own or a user's: one test per (scenario file,
//! seed), each run twice with the two traces compared byte for byte, and the canonical seed's outcome held
//! to an insta snapshot. A user's whole test file is
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     sim::testing::Suite::new(env!("CARGO_MANIFEST_DIR")).main()
//! }
//! ```
//!
//! with `harness = false` for that test in Cargo.toml. Tests are named `<path under the scenarios
//! folder, without .toml>::seed-<n>` (`zoo/watch-list-initial-events-end::seed-3`), so libtest's name
//! filter picks a scenario, a folder or one seed; `KUBESIM_SEED=N` runs only seed N of every scenario.
//! Two more tests keep the snapshot folder honest: no snapshot without its scenario, and (under `CI`) no
//! pending `.snap.new` files.
//!
//! The harness is libtest-mimic's, so each test reports on its own with the usual filters and summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed, Trial};

use crate::scenario::{self, judge, report, Scenario};

/// A folder of scenarios and the folder of their snapshots, under a project root.
#[derive(Clone, Debug)]
pub struct Suite {
    root: PathBuf,
    scenarios: PathBuf,
    snapshots: PathBuf,
}

impl Suite {
    /// Scenarios in `ROOT/scenarios`, snapshots in `ROOT/snapshots`; paths in errors, replay commands and
    /// snapshots are shown relative to `root`, as users type them.
    pub fn new(root: impl Into<PathBuf>) -> Suite {
        let root = root.into();
        Suite { scenarios: root.join("scenarios"), snapshots: root.join("snapshots"), root }
    }

    /// Another scenarios folder (relative to the root, or absolute).
    pub fn scenarios(mut self, dir: impl AsRef<Path>) -> Suite {
        self.scenarios = self.root.join(dir);
        self
    }

    /// Another snapshots folder (relative to the root, or absolute).
    pub fn snapshots(mut self, dir: impl AsRef<Path>) -> Suite {
        self.snapshots = self.root.join(dir);
        self
    }

    /// Runs the tests libtest's arguments select; the process's exit code.
    pub fn main(self) -> ExitCode {
        let args = Arguments::from_args();
        std::env::set_current_dir(&self.root).expect("the project root exists");
        match self.trials() {
            Ok(trials) => libtest_mimic::run(&args, trials).exit_code(),
            Err(e) => {
                eprintln!("kubesim: {e}");
                ExitCode::from(2)
            }
        }
    }

    /// One trial per (scenario, seed), then the snapshot folder's two.
    pub fn trials(&self) -> Result<Vec<Trial>, String> {
        let files = scenario::files_under(&self.scenarios)
            .map_err(|e| format!("cannot read {}: {e}", self.scenarios.display()))?;
        let pinned = match std::env::var("KUBESIM_SEED") {
            Ok(v) => Some(v.parse::<u64>().map_err(|_| format!("KUBESIM_SEED={v:?} is not a seed"))?),
            Err(_) => None,
        };
        let mut trials = Vec::new();
        let mut names = Vec::new();
        for path in files {
            let shown = path.strip_prefix(&self.root).unwrap_or(&path).to_path_buf();
            let id = path.strip_prefix(&self.scenarios).unwrap_or(&path).with_extension("");
            let id = id.to_string_lossy().replace('\\', "/");
            names.push(path.file_stem().expect("a file").to_string_lossy().into_owned());
            match scenario::load(&shown) {
                Err(e) => {
                    let e = e.to_string();
                    trials.push(Trial::test(format!("{id}::load"), move || Err(e.into())));
                }
                Ok(s) => {
                    let seeds: Vec<u64> = match pinned {
                        Some(seed) => vec![seed],
                        None => s.default_seeds().collect(),
                    };
                    for seed in seeds {
                        let (s, shown, snapshots) = (s.clone(), shown.clone(), self.snapshots.clone());
                        trials.push(Trial::test(format!("{id}::seed-{seed}"), move || {
                            run_seed(&s, seed, &shown, &snapshots)
                        }));
                    }
                }
            }
        }
        let (snapshots, pending) = (self.snapshots.clone(), self.snapshots.clone());
        trials
            .push(Trial::test("snapshots::every_snapshot_has_its_scenario", move || unreferenced(&snapshots, &names)));
        trials.push(Trial::test("snapshots::no_pending_snapshots", move || no_pending(&pending)));
        Ok(trials)
    }
}

/// One seed, twice: the traces must match; the canonical seed's outcome must match its snapshot; the run
/// must pass.
fn run_seed(scenario: &Scenario, seed: u64, shown: &Path, snapshots: &Path) -> Result<(), Failed> {
    let first = scenario::run(scenario, seed);
    let second = scenario::run(scenario, seed);
    if let Some(diff) = first_difference(&first.trace, &second.trace) {
        return Err(format!("seed {seed} is not deterministic: {diff}").into());
    }
    let judgement = judge::judge(scenario, &first);
    let outcome = report::outcome(scenario, &first, &judgement);
    if seed == scenario.canonical_seed {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(snapshots);
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_input_file(shown);
        settings.bind(|| insta::assert_snapshot!(scenario.name.clone(), outcome.clone()));
    }
    if judgement.passed() {
        Ok(())
    } else {
        Err(format!("seed {seed} failed; replay with `cargo kubesim run {} --seed {seed}`\n{outcome}", shown.display())
            .into())
    }
}

fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    if a == b {
        return None;
    }
    let i = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let line = |t: &[String]| t.get(i).cloned().unwrap_or_else(|| "(end of trace)".into());
    Some(format!("trace line {}: first run {:?}, second run {:?}", i + 1, line(a), line(b)))
}

fn snapshot_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    out.sort();
    out
}

fn unreferenced(dir: &Path, names: &[String]) -> Result<(), Failed> {
    let orphans: Vec<String> = snapshot_files(dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .filter(|p| !names.iter().any(|n| p.file_stem().is_some_and(|s| s.to_string_lossy() == *n)))
        .map(|p| p.display().to_string())
        .collect();
    if orphans.is_empty() {
        Ok(())
    } else {
        Err(format!("snapshots without a scenario (delete them, or restore the scenario): {orphans:?}").into())
    }
}

/// Under CI a pending snapshot is a failure: it means an outcome changed and nobody reviewed it.
fn no_pending(dir: &Path) -> Result<(), Failed> {
    if std::env::var_os("CI").is_none() {
        return Ok(());
    }
    let pending: Vec<String> = snapshot_files(dir)
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".snap.new") || p.to_string_lossy().ends_with(".pending-snap"))
        .map(|p| p.display().to_string())
        .collect();
    if pending.is_empty() {
        Ok(())
    } else {
        Err(format!("pending snapshots (review with `cargo insta review`): {pending:?}").into())
    }
}
