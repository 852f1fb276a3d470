//! `kubesim sweep FILE|DIR... [--seeds A..B] [--jobs J] [--shard i/n] [--json PATH]`: many seeds of many
//! scenarios, one process per seed (`kubesim run FILE --seed N --json`), J at a time, with a progress bar;
//! then the table per scenario and every failing seed with its replay command (see `sweep_summary`).
//! `kubesim sweep --merge A.json B.json...` merges shards' summaries into one and prints it. `--html DIR`
//! then writes a report per failing seed and an index page (`sweep_html`).
//!
//! Exit codes: 0 every seed passed, 1 some seed failed (a crashed process counts as a failure), 2 a
//! scenario is invalid (reported before anything runs) or a summary cannot be read or written.
//!
//! One process per seed is the determinism rule: static state survives between runs in one process. This
//! parent process reads the wall clock, but only to measure seeds per second; it never runs a simulation.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sim::scenario::{self, Scenario};

use crate::child::{self, Finished};
use crate::scenario_cmd::Summary;
use crate::sweep_summary::{ScenarioSeeds, SeedResult, ShardRun, SweepSummary};

#[derive(clap::Args)]
pub struct SweepArgs {
    /// Scenario files and directories (every `*.toml` under them); with --merge, summary files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Seeds A..B (inclusive) for every scenario, or one seed N (default: each scenario's `1..=seeds`).
    #[arg(long, value_parser = parse_seeds)]
    pub seeds: Option<RangeInclusive<u64>>,
    /// Seeds run at once (default: the available cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Run only shard i of n (1-based): each scenario's seeds are dealt round-robin to the n shards.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Write the summary, which `--merge` reads, to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Merge the summaries named by PATHS instead of running anything; exit 1 if any seed failed.
    #[arg(long, conflicts_with_all = ["seeds", "jobs", "shard"])]
    pub merge: bool,
    /// Write an HTML report of every failing seed, and an index page, into this directory.
    #[arg(long, value_name = "DIR", conflicts_with = "merge")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub switches: crate::scenario_cmd::BugFlags,
}

/// Shard `index` of `count`, 1-based.
#[derive(Clone, Copy, Debug)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// The seeds of `all` that are this shard's: every count-th, from the index-th on.
    fn deal(self, all: RangeInclusive<u64>) -> Vec<u64> {
        all.enumerate().filter(|(k, _)| *k as u64 % self.count == self.index - 1).map(|(_, s)| s).collect()
    }
}

fn parse_seeds(s: &str) -> Result<RangeInclusive<u64>, String> {
    let num = |p: &str| p.trim().parse::<u64>().map_err(|e| format!("bad seed {p:?}: {e}"));
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.strip_prefix('=').unwrap_or(b))?),
        None => (num(s)?, num(s)?),
    };
    if a > b {
        return Err(format!("the seed range {s} is empty; expected A..B with A <= B"));
    }
    Ok(a..=b)
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let bad = || format!("expected i/n with 1 <= i <= n, got {s:?}");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (index, count) = (i.trim().parse::<u64>().map_err(|_| bad())?, n.trim().parse::<u64>().map_err(|_| bad())?);
    if index == 0 || index > count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

pub fn run(args: &SweepArgs) -> ExitCode {
    if args.merge {
        return merge(args);
    }
    let files = match scenario_files(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("kubesim: {e}");
            return ExitCode::from(2);
        }
    };
    // Every scenario is validated before any seed runs, and every invalid one is reported.
    let mut scenarios = Vec::new();
    let mut invalid = 0;
    for file in &files {
        match scenario::load(file).map_err(|e| format!("invalid scenario: {e}")).and_then(|mut s| {
            args.switches.apply(&mut s)?;
            Ok(s)
        }) {
            Ok(s) => scenarios.push((file.clone(), s)),
            Err(e) => {
                eprintln!("kubesim: {e}");
                invalid += 1;
            }
        }
    }
    if invalid > 0 {
        return ExitCode::from(2);
    }
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    let jobs = args.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
    let queue: VecDeque<(usize, u64)> = scenarios
        .iter()
        .enumerate()
        .flat_map(|(i, (_, s))| {
            shard.deal(args.seeds.clone().unwrap_or_else(|| s.default_seeds())).into_iter().map(move |seed| (i, seed))
        })
        .collect();

    let started = Instant::now();
    let flags = args.switches.args();
    let results = run_all(&scenarios, queue, jobs, &flags);
    let summary = SweepSummary {
        shards: vec![ShardRun {
            shard: format!("{}/{}", shard.index, shard.count),
            jobs,
            wall_s: started.elapsed().as_secs_f64(),
        }],
        scenarios: scenarios
            .iter()
            .zip(results)
            .map(|((file, s), seeds)| ScenarioSeeds {
                scenario: s.name.clone(),
                file: file.display().to_string(),
                flags: flags.clone(),
                seeds,
            })
            .collect(),
    };
    if let Some(dir) = &args.html {
        if !crate::sweep_html::write(&summary, dir, jobs) {
            return ExitCode::from(2);
        }
    }
    finish(&summary, args.json.as_deref())
}

/// The scenario files named by `paths`: files as given, directories searched for `*.toml`.
fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = scenario::files_under(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            if found.is_empty() {
                return Err(format!("{} holds no *.toml scenario", p.display()));
            }
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    Ok(files)
}

/// A seed's process, running.
struct InFlight {
    scenario: usize,
    seed: u64,
    started: Instant,
    child: child::Running,
}

/// Runs every (scenario, seed) of `queue`, `jobs` processes at a time; the results per scenario, by seed.
pub fn run_all(
    scenarios: &[(PathBuf, Scenario)],
    mut queue: VecDeque<(usize, u64)>,
    jobs: usize,
    flags: &[String],
) -> Vec<Vec<SeedResult>> {
    let bar = progress_bar(queue.len() as u64);
    let mut results: Vec<Vec<SeedResult>> = vec![Vec::new(); scenarios.len()];
    let mut running: Vec<InFlight> = Vec::new();
    let mut n_failed = 0;
    while !queue.is_empty() || !running.is_empty() {
        while running.len() < jobs {
            let Some((i, seed)) = queue.pop_front() else { break };
            let args: [OsString; 5] = [
                "run".into(),
                scenarios[i].0.clone().into(),
                "--seed".into(),
                seed.to_string().into(),
                "--json".into(),
            ];
            let started = Instant::now();
            match child::spawn(args.into_iter().chain(flags.iter().map(OsString::from))) {
                Ok(child) => running.push(InFlight { scenario: i, seed, started, child }),
                Err(e) => results[i].push(crashed(seed, format!("could not start: {e}"), 0)),
            }
        }
        let mut progressed = false;
        let mut k = 0;
        while k < running.len() {
            let done = match running[k].child.try_finish() {
                Ok(Some(f)) => Some(Ok(f)),
                Ok(None) => None,
                Err(e) => Some(Err(e)),
            };
            let Some(done) = done else {
                k += 1;
                continue;
            };
            let flight = running.swap_remove(k);
            let wall_ms = flight.started.elapsed().as_millis() as u64;
            let result = match done {
                Ok(f) => seed_result(flight.seed, &f, wall_ms),
                Err(e) => crashed(flight.seed, format!("lost track of the process: {e}"), wall_ms),
            };
            if !result.passed {
                n_failed += 1;
                let name = &scenarios[flight.scenario].1.name;
                let first = result.failures.first().and_then(|f| f.lines().next()).unwrap_or("");
                // On a terminal, a failure shows as it happens; in a log, the table at the end lists it.
                if !bar.is_hidden() {
                    bar.suspend(|| eprintln!("FAIL {name} seed {}: {first}", result.seed));
                }
                bar.set_message(format!("{n_failed} failed"));
            }
            results[flight.scenario].push(result);
            bar.inc(1);
            progressed = true;
        }
        if !progressed {
            // The parent has nothing to do until a child exits; std offers no wait-for-any-child.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    bar.finish_and_clear();
    for r in &mut results {
        r.sort_by_key(|s| s.seed);
    }
    results
}

fn progress_bar(len: u64) -> ProgressBar {
    use std::io::IsTerminal;
    let target =
        if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    let style = ProgressStyle::with_template("{elapsed_precise} [{wide_bar}] {pos}/{len} seeds, {msg}, eta {eta}")
        .expect("a valid template");
    bar.set_style(style.progress_chars("=> "));
    bar.set_message("0 failed");
    bar
}

/// A seed's result from its process: the JSON line of `kubesim run --json` when the process exited 0 or
/// 1; anything else (a signal, a panic's 101, no summary) is a crash, reported with its stderr's tail.
fn seed_result(seed: u64, f: &Finished, wall_ms: u64) -> SeedResult {
    let summary = f.stdout.lines().last().and_then(|l| serde_json::from_str::<Summary>(l).ok());
    match (f.code(), summary) {
        (Some(code @ (0 | 1)), Some(s)) => SeedResult {
            seed,
            passed: s.passed && code == 0,
            trace_hash: Some(s.trace_hash),
            failures: s.failures,
            wall_ms,
        },
        (_, _) => {
            let tail = f.stderr_tail(8);
            let tail = if tail.is_empty() { "(nothing on stderr)".to_string() } else { tail };
            crashed(seed, format!("the process crashed ({}):\n{tail}", f.ending()), wall_ms)
        }
    }
}

fn crashed(seed: u64, why: String, wall_ms: u64) -> SeedResult {
    SeedResult { seed, passed: false, trace_hash: None, failures: vec![why], wall_ms }
}

fn merge(args: &SweepArgs) -> ExitCode {
    let mut parts = Vec::new();
    for p in &args.paths {
        let parsed = std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<SweepSummary>(&text).map_err(|e| e.to_string()));
        match parsed {
            Ok(s) => parts.push(s),
            Err(e) => {
                eprintln!("kubesim: cannot read the sweep summary {}: {e}", p.display());
                return ExitCode::from(2);
            }
        }
    }
    let (summary, warnings) = SweepSummary::merge(parts);
    for w in warnings {
        eprintln!("kubesim: warning: {w}");
    }
    finish(&summary, args.json.as_deref())
}

/// Writes the summary if asked, prints the table, and gives the exit code.
fn finish(summary: &SweepSummary, json: Option<&Path>) -> ExitCode {
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(summary).expect("a summary serializes") + "\n";
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("kubesim: cannot write the sweep summary to {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    print!("{}", summary.render());
    if summary.n_failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
