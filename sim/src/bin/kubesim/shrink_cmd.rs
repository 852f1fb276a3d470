//! `kubesim shrink FILE --seed N [--out PATH] [--bug SWITCH] [--zoo]`: reduces a failing seed's scenario to a
//! smaller one that still fails the same way, and writes it (default `<stem>.shrunk.toml` beside FILE) with
//! a first-line comment saying what it reproduces and from which seed. The result is the author's file, less
//! what the failure did not need: comments, table style and order are kept. Which reductions, and what "the
//! same way" means, is `sim::scenario::shrink`; this file runs the candidates and writes the result. Bug
//! switches turned on with `--bug` or `--zoo` stay on for every candidate, and the replay command says so.
//!
//! Candidates run in this process, one after another, each on a fresh simulation: a run is tens of
//! milliseconds and a shrink tries hundreds. Because static state could survive between runs in one
//! process (ARCHITECTURE.md, Determinism), the result is then run once more in a fresh process, which must give the same
//! trace hash as it did here.
//!
//! Every reduction is judged by `shrink::SeedSearch`: a candidate that no longer fails on the current seed
//! is tried on the next `--seed-tries` seeds (default 32) before it is rejected, and the seed it failed on
//! is kept; the shrunk file's canonical seed is the last one, which `kubesim run FILE` then replays.
//!
//! Exit codes: 0 written (and confirmed in a fresh process), 1 nothing to shrink (the seed passes) or the
//! result did not replay, 2 invalid scenario or a file that cannot be written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sim::scenario::shrink::{self, Doc, SeedSearch, Signature, Size};
use sim::scenario::{self, judge};

use crate::child;
use crate::scenario_cmd::{self, replay_command, BugFlags, Summary};

#[derive(clap::Args)]
pub struct ShrinkArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// The failing seed (default: the scenario's canonical seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where to write the shrunk scenario (default: `<stem>.shrunk.toml` beside FILE).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Other seeds a reduction is tried on before it is rejected (0: only the current seed).
    #[arg(long, default_value_t = 32)]
    pub seed_tries: u64,
    /// Also write the HTML timeline report of the shrunk run to this file.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub switches: BugFlags,
}

pub fn run(args: &ShrinkArgs) -> ExitCode {
    let mut original = match scenario_cmd::load(&args.file) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Err(e) = args.switches.apply(&mut original) {
        eprintln!("kubesim: {e}");
        return ExitCode::from(2);
    }
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kubesim: cannot read {}: {e}", args.file.display());
            return ExitCode::from(2);
        }
    };
    let doc: Doc = match text.parse() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("kubesim: invalid scenario: {}: {e}", args.file.display());
            return ExitCode::from(2);
        }
    };
    let seed = args.seed.unwrap_or(original.canonical_seed);
    let first = scenario::run(&original, seed);
    let target = Signature::of(&judge::judge(&original, &first));
    if !target.is_failure() {
        eprintln!("kubesim: seed {seed} of {} passes; shrink needs a failing seed", args.file.display());
        return ExitCode::FAILURE;
    }
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.file));
    let shown = out.display().to_string();
    let flags = args.switches.args();
    println!("shrinking seed {seed} of {}, which fails: {target}", args.file.display());

    let mut run_candidate = |candidate: &Doc, seed: u64| {
        // A candidate whose references dangle is invalid here, before any run.
        let Ok(mut s) = scenario::parse(&shown, &candidate.to_string()) else { return false };
        if args.switches.apply(&mut s).is_err() {
            return false;
        }
        let run = scenario::run(&s, seed);
        Signature::of(&judge::judge(&s, &run)) == target
    };
    let mut search = SeedSearch::new(seed, args.seed_tries, &mut run_candidate);
    let mut shrunk = shrink::shrink(&doc, &first.applied_faults, &mut |f| search.fails(f));
    let (found, runs, moves) = (search.seed, search.runs, search.moves);
    shrink::set_canonical_seed(&mut shrunk, found);

    let from = if found == seed { format!("seed {seed}") } else { format!("seed {seed}, now seed {found}") };
    let switches = if flags.is_empty() { String::new() } else { format!(" with {}", flags.join(" ")) };
    let header = vec![format!(
        "Reproduces {target} (shrunk by `kubesim shrink` from {from} of {}{switches}).",
        args.file.display()
    )];
    let text = shrink::render(&shrunk, &header);
    if let Err(e) = std::fs::write(&out, &text) {
        eprintln!("kubesim: cannot write {}: {e}", out.display());
        return ExitCode::from(2);
    }
    println!("before  {}", Size::of_doc(&doc));
    println!("after   {}", Size::of_doc(&shrunk));
    println!(
        "{runs} runs (up to {} seeds per candidate); {moves} reductions moved to another seed; the result fails on \
         seed {found}; wrote {}",
        args.seed_tries + 1,
        out.display()
    );
    match confirm(&shown, &text, &out, found, &args.switches) {
        Ok(hash) => {
            println!(
                "confirmed in a fresh process (trace hash {hash}); replay with `{}`",
                replay_command(&out, found, &flags)
            );
            match &args.html {
                Some(html) => report(&out, found, html, &flags),
                None => ExitCode::SUCCESS,
            }
        }
        Err(why) => {
            eprintln!("kubesim: the shrunk scenario does not replay: {why}");
            ExitCode::FAILURE
        }
    }
}

/// The shrunk run's report, written by `kubesim run` in a fresh process, as for any run.
fn report(out: &Path, seed: u64, html: &Path, flags: &[String]) -> ExitCode {
    let seed = seed.to_string();
    let args =
        ["run".as_ref(), out.as_os_str(), "--seed".as_ref(), seed.as_ref(), "--quiet".as_ref(), "--html".as_ref()];
    let flags = flags.iter().map(|f| f.as_ref());
    let f = child::spawn(args.into_iter().chain([html.as_os_str()]).chain(flags)).and_then(child::Running::finish);
    if f.is_ok() && html.is_file() {
        println!("report of the shrunk run: {}", html.display());
        ExitCode::SUCCESS
    } else {
        eprintln!("kubesim: the report of the shrunk run could not be written to {}", html.display());
        ExitCode::from(2)
    }
}

fn default_out(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    file.with_file_name(format!("{stem}.shrunk.toml"))
}

/// Runs the written file here and in a fresh process (with the same bug switches); both must fail, with the
/// same trace hash.
fn confirm(shown: &str, text: &str, out: &Path, seed: u64, switches: &BugFlags) -> Result<String, String> {
    let mut s = scenario::parse(shown, text).map_err(|e| e.to_string())?;
    switches.apply(&mut s)?;
    let here = scenario::run(&s, seed).trace_hash();
    let seed = seed.to_string();
    let flags = switches.args();
    let f = child::spawn(
        ["run".as_ref(), out.as_os_str(), "--seed".as_ref(), seed.as_ref(), "--json".as_ref()]
            .into_iter()
            .chain(flags.iter().map(|f| f.as_ref())),
    )
    .and_then(child::Running::finish)
    .map_err(|e| format!("cannot run kubesim: {e}"))?;
    let summary = f
        .stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str::<Summary>(l).ok())
        .ok_or_else(|| format!("the run gave no summary ({}): {}", f.ending(), f.stderr_tail(8)))?;
    if summary.passed {
        return Err("it passes in a fresh process".into());
    }
    if summary.trace_hash != here {
        return Err(format!("trace hash {} in a fresh process, {here} in this one", summary.trace_hash));
    }
    Ok(here)
}
