//! `kubesim run FILE`: one run of a scenario. Prints the trace (or writes it to `--trace PATH`), then the
//! client-visible outcome with every expectation's and check's finding, then the trace hash; on failure,
//! the exact command that replays it. Exit codes: 0 pass, 1 fail, 2 invalid scenario.
//!
//! `--json` prints one line instead, the machine-readable summary that `kubesim sweep` collects from each
//! seed's process. `--html PATH` and `--perfetto PATH` also write the run's timeline report and its
//! trace-event JSON (`report_out`); with either, a run that panics still gets its report, up to the panic.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use sim::scenario::{self, judge, report, Scenario};

#[derive(clap::Args)]
pub struct RunScenario {
    /// The scenario file (see scenarios/README.md).
    pub file: PathBuf,
    /// The seed (default: the scenario's canonical seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the trace to this file instead of printing it.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Print the outcome and verdicts, not the trace.
    #[arg(long)]
    pub quiet: bool,
    /// Print only the trace hash.
    #[arg(long)]
    pub hash_only: bool,
    /// Print a one-line JSON summary (what `kubesim sweep` reads).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub report: crate::report_out::ReportArgs,
    #[command(flatten)]
    pub switches: BugFlags,
}

/// Bug switches turned on from the command line, over what the file says.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct BugFlags {
    /// Turn on this bug switch (`kubesim bugs` lists them); repeatable.
    #[arg(long = "bug", value_name = "SWITCH")]
    pub bugs: Vec<String>,
    /// Turn on the switch of the bug zoo entry the scenario is (its `[scenario] bug`).
    #[arg(long)]
    pub zoo: bool,
}

impl BugFlags {
    /// Turns the switches on in `scenario`; the error says which name is wrong or which file is no zoo entry.
    pub fn apply(&self, scenario: &mut Scenario) -> Result<(), String> {
        for bug in &self.bugs {
            scenario.turn_on(bug).map_err(|e| e.to_string())?;
        }
        if self.zoo && !scenario.turn_on_zoo_bug() {
            return Err(format!("--zoo: {} is no bug zoo entry (it has no `[scenario] bug`)", scenario.path));
        }
        Ok(())
    }

    /// The flags as arguments again, for a child process or a replay command.
    pub fn args(&self) -> Vec<String> {
        let mut out: Vec<String> = self.bugs.iter().flat_map(|b| ["--bug".to_string(), b.clone()]).collect();
        if self.zoo {
            out.push("--zoo".into());
        }
        out
    }
}

/// The one-line summary of a run.
#[derive(Serialize, Deserialize)]
pub struct Summary {
    pub scenario: String,
    pub file: String,
    pub seed: u64,
    pub passed: bool,
    pub trace_hash: String,
    /// One line per failed expectation or check.
    pub failures: Vec<String>,
    pub sim_time_ms: u64,
}

/// How kubesim was started, for the commands it tells its user to run: `cargo kubesim` when cargo ran it
/// (the alias of `.cargo/config.toml`; cargo sets `CARGO_PKG_NAME` for the process it runs), else the
/// program as it was typed (`kubesim`, `target/sim/sim/kubesim`).
pub fn program() -> String {
    if std::env::var("CARGO_PKG_NAME").is_ok_and(|p| p == env!("CARGO_PKG_NAME")) {
        return "cargo kubesim".into();
    }
    std::env::args().next().unwrap_or_else(|| "kubesim".into())
}

/// The command that replays `seed` of the scenario at `file`, with the bug switch flags `flags` it ran with,
/// through the front door the user took ([`program`]).
pub fn replay_command(file: &Path, seed: u64, flags: &[String]) -> String {
    let mut cmd = format!("{} run {} --seed {seed}", program(), file.display());
    for f in flags {
        cmd.push(' ');
        cmd.push_str(f);
    }
    cmd
}

/// Loads a scenario, printing the error and giving exit code 2 if it is invalid.
pub fn load(file: &Path) -> Result<Scenario, ExitCode> {
    scenario::load(file).map_err(|e| {
        eprintln!("kubesim: invalid scenario: {e}");
        ExitCode::from(2)
    })
}

/// One entry per failed expectation or check, whole: a sequence's diff keeps every line, so that a sweep's
/// summary shows what differed without a rerun.
pub fn failures(j: &judge::Judgement, scenario: &Scenario) -> Vec<String> {
    let mut out: Vec<String> = j.failures().map(|f| format!("{}: {}: {}", f.who, f.what, f.detail)).collect();
    for c in j.checks.iter().filter(|c| !c.pass()) {
        let want = if c.must_hold { "must hold" } else { "must fail" };
        out.push(format!("{} {want}: {}", c.guarantee, first_line(&c.verdict.to_string())));
    }
    out.extend(j.panics.iter().cloned());
    if j.timed_out {
        out.push(format!("the time limit of {}s ran out", scenario.time_limit_s));
    }
    out
}

/// The run panicked: its report from the trace lines and panic messages seen up to the panic.
fn aborted(
    args: &RunScenario,
    scenario: &Scenario,
    seed: u64,
    source: &str,
    payload: &(dyn std::any::Any + Send),
) -> ExitCode {
    let message = crate::report_out::panic_text(payload);
    let captured = crate::report_out::take_captured();
    let mut clients: Vec<String> = scenario.clients.iter().map(|c| c.name.clone()).collect();
    clients.extend(scenario.workloads.iter().flat_map(|w| w.clients.iter().cloned()));
    let data = sim::report::RunData {
        title: &scenario.name,
        source,
        seed,
        trace: &captured.lines,
        history: None,
        kube: sim::report::KubeData::default(),
        members: scenario.cluster.member_names(),
        clients,
        checks: Vec::new(),
        findings: Vec::new(),
        panics: Vec::new(),
        panic_messages: captured.panics,
        aborted: Some(message.clone()),
        timed_out: false,
        passed: false,
    };
    crate::report_out::write(&args.report, &data);
    eprintln!("kubesim: the run panicked: {message}; replay with `{source}`");
    ExitCode::from(101)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

pub fn run(args: &RunScenario) -> ExitCode {
    match load(&args.file) {
        Ok(s) => run_loaded(args, s),
        Err(code) => code,
    }
}

/// The scenario `cargo kubesim demo` runs: one member, one client (`scenarios/first-steps.toml`).
pub const DEMO: &str = include_str!("../../../../scenarios/first-steps.toml");

/// `kubesim demo`: the first-steps scenario, run as `kubesim run` runs a file.
pub fn demo(seed: Option<u64>) -> ExitCode {
    let file = PathBuf::from("scenarios/first-steps.toml");
    let scenario = match scenario::parse(&file.display().to_string(), DEMO) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kubesim: invalid scenario: {e}");
            return ExitCode::from(2);
        }
    };
    let args = RunScenario {
        file,
        seed,
        trace: None,
        quiet: false,
        hash_only: false,
        json: false,
        report: crate::report_out::ReportArgs::default(),
        switches: BugFlags::default(),
    };
    run_loaded(&args, scenario)
}

/// One run of an already loaded scenario, as `run` describes.
pub fn run_loaded(args: &RunScenario, mut scenario: Scenario) -> ExitCode {
    if let Err(e) = args.switches.apply(&mut scenario) {
        eprintln!("kubesim: {e}");
        return ExitCode::from(2);
    }
    let seed = args.seed.unwrap_or(scenario.canonical_seed);
    let flags = args.switches.args();
    let source = replay_command(&args.file, seed, &flags);
    let run = if args.report.wanted() {
        crate::report_out::start_capture();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scenario::run(&scenario, seed))) {
            Ok(run) => run,
            Err(payload) => return aborted(args, &scenario, seed, &source, &*payload),
        }
    } else {
        scenario::run(&scenario, seed)
    };
    let judgement = judge::judge(&scenario, &run);
    let passed = judgement.passed();
    if args.report.wanted() {
        let mut data = sim::report::scenario::from_scenario(&scenario, &run, &judgement, &source);
        data.panic_messages = crate::report_out::take_captured().panics;
        if !crate::report_out::write(&args.report, &data) {
            return ExitCode::from(2);
        }
    }
    if args.json {
        let summary = Summary {
            scenario: scenario.name.clone(),
            file: args.file.display().to_string(),
            seed,
            passed,
            trace_hash: run.trace_hash(),
            failures: failures(&judgement, &scenario),
            sim_time_ms: run.sim_time.as_millis() as u64,
        };
        println!("{}", serde_json::to_string(&summary).expect("a summary serializes"));
        return if passed { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }
    if args.hash_only {
        println!("{}", run.trace_hash());
        return ExitCode::SUCCESS;
    }
    match &args.trace {
        Some(path) => {
            if let Err(e) = std::fs::write(path, run.trace.join("\n") + "\n") {
                eprintln!("kubesim: cannot write the trace to {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
        None if !args.quiet => {
            for line in &run.trace {
                println!("{line}");
            }
            println!();
        }
        None => {}
    }
    print!("{}", report::outcome(&scenario, &run, &judgement));
    println!("trace-hash {}", run.trace_hash());
    if passed {
        ExitCode::SUCCESS
    } else {
        eprintln!("kubesim: the scenario failed; replay with `{source}`");
        ExitCode::FAILURE
    }
}
