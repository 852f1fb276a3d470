//! `kubesim sweep ... --html DIR`: once the sweep is done, replays each failing seed in its own process
//! with `kubesim run FILE --seed N --quiet --html DIR/<scenario>-seed-<N>.html` (a seed replays exactly,
//! so its report is the failing run's; a seed whose process crashed gets the report of the run up to its
//! panic), J at a time, then writes `DIR/index.html` with the table of scenarios and a link per failing
//! seed (`sim::report::index`).

use std::ffi::OsString;
use std::path::Path;

use sim::report::index::{self, FailedSeed, ScenarioRow};

use crate::child;
use crate::scenario_cmd::replay_command;
use crate::sweep_summary::SweepSummary;

/// Writes the failing seeds' reports and the index into `dir`. Returns false (the reason printed) when
/// the directory or the index cannot be written; a seed whose report could not be made is listed
/// without a link.
pub fn write(summary: &SweepSummary, dir: &Path, jobs: usize) -> bool {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("kubesim: cannot create {}: {e}", dir.display());
        return false;
    }
    let mut todo: Vec<(usize, usize, String)> = Vec::new();
    let mut rows: Vec<ScenarioRow> = Vec::new();
    for (si, s) in summary.scenarios.iter().enumerate() {
        let mut failed = Vec::new();
        for r in s.seeds.iter().filter(|r| !r.passed) {
            let name = index::report_file_name(&s.scenario, r.seed);
            todo.push((si, failed.len(), name.clone()));
            failed.push(FailedSeed {
                seed: r.seed,
                report: Some(name),
                first_failure: r.failures.first().and_then(|f| f.lines().next()).unwrap_or("").to_string(),
                replay: replay_command(Path::new(&s.file), r.seed, &s.flags),
            });
        }
        rows.push(ScenarioRow { scenario: s.scenario.clone(), file: s.file.clone(), seeds: s.seeds.len(), failed });
    }
    for batch in todo.chunks(jobs.max(1)) {
        let running: Vec<_> = batch
            .iter()
            .map(|(si, fi, name)| {
                let seed = rows[*si].failed[*fi].seed;
                let args: [OsString; 7] = [
                    "run".into(),
                    summary.scenarios[*si].file.clone().into(),
                    "--seed".into(),
                    seed.to_string().into(),
                    "--quiet".into(),
                    "--html".into(),
                    dir.join(name).into(),
                ];
                let flags = summary.scenarios[*si].flags.iter().map(OsString::from);
                child::spawn(args.into_iter().chain(flags))
            })
            .collect();
        for ((si, fi, name), r) in batch.iter().zip(running) {
            let written = r.and_then(child::Running::finish).is_ok() && dir.join(name).is_file();
            if !written {
                rows[*si].failed[*fi].report = None;
            }
        }
    }
    let path = dir.join("index.html");
    match std::fs::write(&path, index::page(&rows)) {
        Ok(()) => {
            eprintln!("kubesim: {} failing seed report(s) and the index written to {}", todo.len(), path.display());
            true
        }
        Err(e) => {
            eprintln!("kubesim: cannot write {}: {e}", path.display());
            false
        }
    }
}
