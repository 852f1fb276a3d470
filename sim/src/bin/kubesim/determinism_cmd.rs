//! `kubesim check-determinism FILE --seed N`: the cross-process determinism guard for one seed. It runs the
//! seed twice, each in its own process (`kubesim run FILE --seed N --trace PATH`), and compares the trace
//! hashes: `deterministic: <hash>` and exit 0, or the first line where the two traces differ and exit 1.
//! Exit 2 if the scenario is invalid.
//!
//! Separate processes matter: a run repeated in one process shares its static state, which is exactly the
//! kind of hidden input this check exists to catch.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::child::{self, Finished};
use crate::scenario_cmd;

#[derive(clap::Args)]
pub struct CheckDeterminism {
    /// The scenario file.
    pub file: PathBuf,
    /// The seed to run twice (default: the scenario's canonical seed).
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub switches: scenario_cmd::BugFlags,
}

pub fn run(args: &CheckDeterminism) -> ExitCode {
    let mut scenario = match scenario_cmd::load(&args.file) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Err(e) = args.switches.apply(&mut scenario) {
        eprintln!("kubesim: {e}");
        return ExitCode::from(2);
    }
    let flags = args.switches.args();
    let seed = args.seed.unwrap_or(scenario.canonical_seed);
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("kubesim: cannot make a temporary directory: {e}");
            return ExitCode::from(2);
        }
    };
    let traces = [dir.path().join("first.trace"), dir.path().join("second.trace")];
    // Both processes run at once: they share nothing, and it halves the wait.
    let spawned: Result<Vec<child::Running>, _> = traces
        .iter()
        .map(|t| {
            child::spawn(
                [
                    "run".as_ref(),
                    args.file.as_os_str(),
                    "--seed".as_ref(),
                    seed.to_string().as_ref(),
                    "--quiet".as_ref(),
                    "--trace".as_ref(),
                    t.as_os_str(),
                ]
                .into_iter()
                .map(std::ffi::OsStr::to_os_string)
                .chain(flags.iter().map(std::ffi::OsString::from)),
            )
        })
        .collect();
    let finished: Result<Vec<Finished>, _> = spawned.and_then(|s| s.into_iter().map(child::Running::finish).collect());
    let finished = match finished {
        Ok(f) => f,
        Err(e) => {
            eprintln!("kubesim: cannot run kubesim: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut hashes = Vec::new();
    for (i, f) in finished.iter().enumerate() {
        // A run that fails its expectations (exit 1) still has a trace to compare; anything else does not.
        let hash = f.stdout.lines().rev().find_map(|l| l.strip_prefix("trace-hash ")).map(str::to_string);
        match (f.code(), hash) {
            (Some(0 | 1), Some(h)) => hashes.push(h),
            _ => {
                eprintln!("kubesim: run {} of seed {seed} went wrong ({}):\n{}", i + 1, f.ending(), f.stderr_tail(8));
                return ExitCode::FAILURE;
            }
        }
    }
    if hashes[0] == hashes[1] {
        println!("deterministic: {}", hashes[0]);
        return ExitCode::SUCCESS;
    }
    println!(
        "NOT deterministic: seed {seed} of {} gave trace hashes {} and {}",
        args.file.display(),
        hashes[0],
        hashes[1]
    );
    match first_difference(&traces[0], &traces[1]) {
        Ok(Some((line, a, b))) => {
            println!("first difference at line {line}:");
            println!("  first run:  {}", a.as_deref().unwrap_or("(the trace ended)"));
            println!("  second run: {}", b.as_deref().unwrap_or("(the trace ended)"));
        }
        Ok(None) => println!("the trace files are identical; the hashes differ anyway"),
        Err(e) => eprintln!("kubesim: cannot read the traces: {e}"),
    }
    ExitCode::FAILURE
}

/// The first line (1-based) where the two files differ, with each file's line there (`None` past its end).
fn first_difference(a: &Path, b: &Path) -> std::io::Result<Option<(usize, Option<String>, Option<String>)>> {
    let (a, b) = (std::fs::read_to_string(a)?, std::fs::read_to_string(b)?);
    let (mut la, mut lb) = (a.lines(), b.lines());
    for n in 1.. {
        match (la.next(), lb.next()) {
            (None, None) => return Ok(None),
            (x, y) if x != y => return Ok(Some((n, x.map(str::to_string), y.map(str::to_string)))),
            _ => {}
        }
    }
    unreachable!("the loop returns once both traces end")
}
