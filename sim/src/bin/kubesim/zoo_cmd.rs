//! `kubesim zoo [DIR] [--seeds N]`: the bug zoo's catch rates. Every scenario under DIR (default
//! `scenarios/zoo`) that is a zoo entry (`[scenario] bug` and `race`) runs seeds 1..=N (default 100) with its
//! switch on, one process per seed as `kubesim sweep --zoo` runs them; the Markdown table that comes out says,
//! per race, the upstream issue, the scenario, the switch and how many of the N seeds caught it. The
//! README's copy of the table is held equal to this output by `sim/tests/zoo.rs`.
//!
//! Exit codes: 0 every entry caught on some seed, 1 an entry caught on none (its scenario no longer shows its
//! race), 2 an invalid scenario or a directory without zoo entries.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitCode;

use sim::scenario;

use crate::scenario_cmd::BugFlags;

#[derive(clap::Args)]
pub struct ZooArgs {
    /// The directory of zoo scenarios.
    #[arg(default_value = "scenarios/zoo")]
    pub dir: PathBuf,
    /// Seeds 1..=N per entry.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub seeds: u64,
    /// Seeds run at once (default: the available cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
}

pub fn run(args: &ZooArgs) -> ExitCode {
    let files = match scenario::files_under(&args.dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("kubesim: cannot read {}: {e}", args.dir.display());
            return ExitCode::from(2);
        }
    };
    let zoo = BugFlags { bugs: Vec::new(), zoo: true };
    let mut entries = Vec::new();
    for file in files {
        let mut s = match scenario::load(&file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("kubesim: invalid scenario: {e}");
                return ExitCode::from(2);
            }
        };
        if s.zoo.is_some() {
            zoo.apply(&mut s).expect("a zoo entry's switch was validated with its file");
            entries.push((file, s));
        }
    }
    if entries.is_empty() {
        eprintln!(
            "kubesim: {} holds no bug zoo entry (a scenario with `[scenario] bug` and `race`)",
            args.dir.display()
        );
        return ExitCode::from(2);
    }
    let queue: VecDeque<(usize, u64)> =
        (0..entries.len()).flat_map(|i| (1..=args.seeds).map(move |seed| (i, seed))).collect();
    let jobs = args.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
    let results = crate::sweep_cmd::run_all(&entries, queue, jobs, &zoo.args());
    let caught: Vec<usize> = results.iter().map(|seeds| seeds.iter().filter(|r| !r.passed).count()).collect();
    let rows: Vec<_> = entries
        .iter()
        .zip(&caught)
        .map(|((file, s), n)| (s.zoo.as_ref().expect("only zoo entries").clone(), file.clone(), s.name.clone(), *n))
        .collect();
    print!("{}", table(&rows, args.seeds));
    if caught.contains(&0) {
        for ((entry, file, _, _), n) in rows.iter().zip(&caught) {
            if *n == 0 {
                eprintln!("kubesim: {} never caught `{}` in {} seeds", file.display(), entry.bug, args.seeds);
            }
        }
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The zoo's table: race, upstream issue, scenario, switch, seeds caught of `seeds`.
fn table(rows: &[(scenario::ZooEntry, PathBuf, String, usize)], seeds: u64) -> String {
    let issues: Vec<(&str, &str)> = sim::bugs::all().iter().map(|s| (s.name, s.issue)).collect();
    let mut out =
        format!("| race | upstream issue | scenario | switch | seeds caught of {seeds} |\n|---|---|---|---|---|\n");
    for (entry, file, _, n) in rows {
        let issue = issues.iter().find(|(name, _)| *name == entry.bug).map_or("", |(_, i)| i);
        out.push_str(&format!("| {} | {issue} | `{}` | `{}` | {n} |\n", entry.race, file.display(), entry.bug));
    }
    out
}
