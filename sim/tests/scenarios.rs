//! `cargo sim-test --test scenarios`: every file under `scenarios/` is one test, named after it. Each runs
//! over its default seeds (`KUBESIM_SEED=N` pins one; a name filter after `--` picks scenarios), every run
//! twice, with the two traces compared byte for byte; the client-visible outcome of the canonical seed is
//! an insta snapshot in `snapshots/<scenario>.snap`. Two more tests keep the snapshot directory honest:
//! no snapshot without its scenario, and (under CI) no pending `.snap.new` files.
//!
//! The harness is libtest-mimic's, so that each scenario is a test of its own with the usual filters and
//! report; in the real build there is nothing to run.

#[cfg(madsim)]
fn main() -> std::process::ExitCode {
    harness::main()
}

#[cfg(not(madsim))]
fn main() {}

#[cfg(madsim)]
mod harness {
    use std::path::{Path, PathBuf};
    use std::process::ExitCode;

    use libtest_mimic::{Arguments, Failed, Trial};
    use sim::scenario::{self, judge, report, Scenario};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("sim/ is in the workspace root").to_path_buf()
    }

    pub fn main() -> ExitCode {
        let args = Arguments::from_args();
        // Scenario paths are shown (in errors, replay commands and snapshots) relative to the repository
        // root, as users type them, so the harness works from there.
        std::env::set_current_dir(root()).expect("the repository root exists");
        let files = scenario::files_under(&root().join("scenarios")).expect("scenarios/ is readable");
        let mut trials: Vec<Trial> = files
            .iter()
            .map(|path| {
                let name = path.file_stem().expect("a file").to_string_lossy().into_owned();
                let path = path.clone();
                Trial::test(name, move || run_scenario(&path))
            })
            .collect();
        let names: Vec<String> =
            files.iter().map(|p| p.file_stem().expect("a file").to_string_lossy().into_owned()).collect();
        trials.push(Trial::test("snapshots::every_snapshot_has_its_scenario", move || unreferenced(&names)));
        trials.push(Trial::test("snapshots::no_pending_snapshots", no_pending));
        libtest_mimic::run(&args, trials).exit_code()
    }

    fn seeds(s: &Scenario) -> Result<Vec<u64>, Failed> {
        match std::env::var("KUBESIM_SEED") {
            Ok(v) => Ok(vec![v.parse().map_err(|_| format!("KUBESIM_SEED={v:?} is not a seed"))?]),
            Err(_) => Ok(s.default_seeds().collect()),
        }
    }

    fn run_scenario(path: &Path) -> Result<(), Failed> {
        let shown = path.strip_prefix(root()).unwrap_or(path).to_path_buf();
        let scenario = scenario::load(&shown_path(path)).map_err(|e| e.to_string())?;
        let mut failures = Vec::new();
        for seed in seeds(&scenario)? {
            let first = scenario::run(&scenario, seed);
            let second = scenario::run(&scenario, seed);
            if let Some(diff) = first_difference(&first.trace, &second.trace) {
                return Err(format!("seed {seed} is not deterministic: {diff}").into());
            }
            let judgement = judge::judge(&scenario, &first);
            if seed == scenario.canonical_seed {
                let outcome = report::outcome(&scenario, &first, &judgement);
                let mut settings = insta::Settings::clone_current();
                settings.set_snapshot_path(root().join("snapshots"));
                settings.set_prepend_module_to_snapshot(false);
                settings.set_omit_expression(true);
                settings.set_input_file(path);
                settings.bind(|| insta::assert_snapshot!(scenario.name.clone(), outcome));
            }
            if !judgement.passed() {
                let report = report::outcome(&scenario, &first, &judgement);
                failures.push(format!(
                    "seed {seed} failed; replay with `cargo kubesim run {} --seed {seed}`\n{report}",
                    shown.display()
                ));
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("\n").into())
        }
    }

    /// Scenario paths are shown relative to the repository root, as users type them.
    fn shown_path(path: &Path) -> PathBuf {
        path.strip_prefix(root()).map(|p| p.to_path_buf()).unwrap_or_else(|_| path.to_path_buf())
    }

    fn first_difference(a: &[String], b: &[String]) -> Option<String> {
        if a == b {
            return None;
        }
        let i = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        let line = |t: &[String]| t.get(i).cloned().unwrap_or_else(|| "(end of trace)".into());
        Some(format!("trace line {}: first run {:?}, second run {:?}", i + 1, line(a), line(b)))
    }

    fn snapshot_files() -> Vec<PathBuf> {
        let dir = root().join("snapshots");
        let mut out: Vec<PathBuf> =
            std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
        out.sort();
        out
    }

    fn unreferenced(names: &[String]) -> Result<(), Failed> {
        let orphans: Vec<String> = snapshot_files()
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
    fn no_pending() -> Result<(), Failed> {
        if std::env::var_os("CI").is_none() {
            return Ok(());
        }
        let pending: Vec<String> = snapshot_files()
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
}
