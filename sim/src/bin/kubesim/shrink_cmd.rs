//! `kubesim shrink FILE --seed N [--out PATH]`: reduces a failing seed's scenario to a smaller one that
//! still fails the same way, and writes it (default `<stem>.shrunk.toml` beside FILE) with a first-line
//! comment saying what it reproduces and from which seed. Which reductions, and what "the same way" means,
//! is `sim::scenario::shrink`; this file runs the candidates and writes the result.
//!
//! Candidates run in this process, one after another, each on a fresh simulation: a run is tens of
//! milliseconds and a shrink tries hundreds. Because static state could survive between runs in one
//! process (DESIGN.md §4), the result is then run once more in a fresh process, which must give the same
//! trace hash as it did here.
//!
//! Exit codes: 0 written (and confirmed in a fresh process), 1 nothing to shrink (the seed passes) or the
//! result did not replay, 2 invalid scenario or a file that cannot be written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sim::scenario::shrink::{self, Signature, Size};
use sim::scenario::{self, judge, syntax::File};

use crate::child;
use crate::scenario_cmd::{self, replay_command, Summary};

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
}

pub fn run(args: &ShrinkArgs) -> ExitCode {
    let original = match scenario_cmd::load(&args.file) {
        Ok(s) => s,
        Err(code) => return code,
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
    println!("shrinking seed {seed} of {}, which fails: {target}", args.file.display());

    let mut n_tried = 0;
    let mut fails_the_same_way = |candidate: &File| {
        n_tried += 1;
        let Ok(text) = toml::to_string(candidate) else { return false };
        // A candidate whose references dangle is invalid here, before any run.
        let Ok(s) = scenario::parse(&shown, &text) else { return false };
        let run = scenario::run(&s, seed);
        Signature::of(&judge::judge(&s, &run)) == target
    };
    // The unchanged file, written out and read back, must fail the same way, or no candidate can.
    if !fails_the_same_way(&original.file) {
        eprintln!("kubesim: the scenario, written back as TOML, no longer fails the same way; cannot shrink it");
        return ExitCode::FAILURE;
    }
    let mut shrunk = shrink::shrink(&original.file, &first.applied_faults, &mut fails_the_same_way);
    shrunk.scenario.canonical_seed = seed;

    let mut header =
        vec![format!("Reproduces {target} (shrunk by `kubesim shrink` from seed {seed} of {}).", args.file.display())];
    if !original.summary.is_empty() {
        header.push(format!("The original: {}", original.summary));
    }
    let text = match shrink::render(&shrunk, &header) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kubesim: cannot write the shrunk scenario as TOML: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::write(&out, &text) {
        eprintln!("kubesim: cannot write {}: {e}", out.display());
        return ExitCode::from(2);
    }
    println!("before  {}", Size::of(&original.file));
    println!("after   {}", Size::of(&shrunk));
    println!("{n_tried} candidates run; wrote {}", out.display());
    match confirm(&shown, &text, &out, seed) {
        Ok(hash) => {
            println!("confirmed in a fresh process (trace hash {hash}); replay with `{}`", replay_command(&out, seed));
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("kubesim: the shrunk scenario does not replay: {why}");
            ExitCode::FAILURE
        }
    }
}

fn default_out(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    file.with_file_name(format!("{stem}.shrunk.toml"))
}

/// Runs the written file here and in a fresh process; both must fail, with the same trace hash.
fn confirm(shown: &str, text: &str, out: &Path, seed: u64) -> Result<String, String> {
    let s = scenario::parse(shown, text).map_err(|e| e.to_string())?;
    let here = scenario::run(&s, seed).trace_hash();
    let f = child::spawn([
        "run".as_ref(),
        out.as_os_str(),
        "--seed".as_ref(),
        seed.to_string().as_ref(),
        "--json".as_ref(),
    ])
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
