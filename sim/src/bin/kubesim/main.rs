//! The `kubesim` command line. Built under `--cfg madsim` (use `cargo kubesim ...` from the repository root,
//! which sets the flags and the target dir).
//!
//! - `kubesim run FILE [--seed N] [--html PATH] [--perfetto PATH]`: one run of a scenario (`scenario_cmd`),
//!   with its timeline report and Chrome trace-event JSON if asked (`report_out`);
//! - `kubesim sweep FILE|DIR [--seeds A..B] [--jobs J] [--shard i/n] [--html DIR]`: many seeds, one
//!   process each (`sweep_cmd`, `sweep_summary`, `child`; reports of failing seeds: `sweep_html`);
//! - `kubesim check-determinism FILE --seed N`: one seed in two processes, traces compared (`determinism_cmd`);
//! - `kubesim shrink FILE --seed N`: a failing run reduced to a smaller scenario that fails the same way
//!   (`shrink_cmd`);
//! - `kubesim demo`: one member, one client (`scenarios/first-steps.toml`), run as `run` runs a file;
//! - `kubesim traffic --seed N`: one run of generated traffic, set by flags, with the nemesis: trace,
//!   verdicts, trace hash (and `--html`, `--perfetto` as for `run`);
//! - `kubesim bench`: seeds per second and simulated seconds per wall second for the standard run, with
//!   the checkers' share of the time reported separately. This file is the one place that reads the wall
//!   clock (here, and in `wall_time` for how long writing a report took), to measure; it never feeds a
//!   simulation.

/// A simulated run allocates and frees in small pieces all the time (futures, messages, JSON values);
/// mimalloc does that for a fraction of glibc's cost, and no allocation decision reaches the simulation.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(madsim)]
mod child;
#[cfg(madsim)]
mod determinism_cmd;
#[cfg(madsim)]
mod report_out;
#[cfg(madsim)]
mod scenario_cmd;
#[cfg(madsim)]
mod shrink_cmd;
#[cfg(madsim)]
mod sweep_cmd;
#[cfg(madsim)]
mod sweep_html;
#[cfg(madsim)]
mod sweep_summary;
#[cfg(madsim)]
mod zoo_cmd;

#[cfg(madsim)]
mod cli {
    use std::process::ExitCode;
    use std::time::{Duration, Instant};

    use clap::{Parser, Subcommand};
    use fake_etcd::failpoint::{Action, Arm};
    use sim::run::{check, run, simulate, FailpointSpec, RunConfig};
    use sim::workload::Workload;

    #[derive(Parser)]
    #[command(name = "kubesim", version, about = "Deterministic simulation testbed for the Kubernetes storage stack")]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(clap::Args)]
    struct RunArgs {
        /// The root seed: the same seed and binary always give the same trace.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 1)]
        members: usize,
        #[arg(long, default_value_t = 8)]
        clients: usize,
        /// Requests over all clients.
        #[arg(long, default_value_t = 1000)]
        ops: usize,
        /// `kubernetes` or `key-value`.
        #[arg(long, default_value = "kubernetes")]
        workload: Workload,
        /// Run without the random nemesis.
        #[arg(long)]
        no_nemesis: bool,
        /// Arm a failpoint: `NODE:POINT:ACTION[:SKIP[:TIMES]]`, ACTION one of delay-<ms>, drop, error, crash, hold.
        #[arg(long = "failpoint", value_parser = parse_failpoint)]
        failpoints: Vec<FailpointSpec>,
    }

    impl RunArgs {
        fn config(&self, seed: u64) -> RunConfig {
            let mut c = RunConfig::standard(seed);
            c.cluster.members = self.members;
            c.cluster.clients = self.clients;
            c.ops = self.ops;
            c.workload = self.workload;
            c.nemesis = !self.no_nemesis;
            c.failpoints = self.failpoints.clone();
            c
        }
    }

    #[derive(Subcommand)]
    enum Command {
        /// One fake-etcd member and one client on the simulated network (scenarios/first-steps.toml): the
        /// trace, what the client saw, the findings.
        Demo {
            #[arg(long)]
            seed: Option<u64>,
        },
        /// One run of a scenario file: the trace, what the clients saw, the findings, the trace hash.
        /// Exit code 0 pass, 1 fail, 2 invalid scenario.
        Run(crate::scenario_cmd::RunScenario),
        /// Many seeds of scenario files, one process per seed, J at a time: a summary table, every failing
        /// seed with its replay command, and (--json) a summary that shards merge with --merge.
        /// Exit code 0 all pass, 1 some failed, 2 invalid scenario.
        Sweep(crate::sweep_cmd::SweepArgs),
        /// The bug zoo's catch rates: each zoo scenario over seeds 1..=N with its switch on, as the
        /// README's Markdown table. Exit code 0 every entry caught on some seed, 1 one never caught.
        Zoo(crate::zoo_cmd::ZooArgs),
        /// Runs one seed twice in separate processes and compares the trace hashes; on a difference, shows
        /// the first differing trace line. Exit code 0 deterministic, 1 not.
        CheckDeterminism(crate::determinism_cmd::CheckDeterminism),
        /// Reduces a failing seed's scenario (nemesis made explicit, faults, failpoints, workload sizes,
        /// unreferenced steps) while it still fails the same way, and writes the result as a new file.
        Shrink(crate::shrink_cmd::ShrinkArgs),
        /// One run of generated traffic set by flags: the trace (unless --quiet), the checkers' verdicts and
        /// the trace hash.
        Traffic {
            #[command(flatten)]
            args: RunArgs,
            /// Print only the trace hash.
            #[arg(long)]
            hash_only: bool,
            /// Print verdicts and hash, not the trace.
            #[arg(long)]
            quiet: bool,
            #[command(flatten)]
            report: crate::report_out::ReportArgs,
        },
        /// Every bug switch of every component (the name a scenario's `[cluster] bugs` takes, where it
        /// lives, the upstream issue it reproduces, what goes wrong), as a Markdown table.
        Bugs,
        /// Seeds per second for a run (by default the standard one: 1 member, 8 clients, 1,000 requests,
        /// random nemesis), simulated seconds per wall second, and the checkers' share of the time.
        Bench {
            #[command(flatten)]
            args: RunArgs,
            /// How many seeds, from --seed on.
            #[arg(long, default_value_t = 20)]
            seeds: u64,
        },
    }

    fn parse_failpoint(s: &str) -> Result<FailpointSpec, String> {
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() < 3 || parts.len() > 5 {
            return Err(format!("expected NODE:POINT:ACTION[:SKIP[:TIMES]], got {s:?}"));
        }
        let action = match parts[2] {
            "drop" => Action::Drop,
            "error" => Action::Error,
            "crash" => Action::Crash,
            "hold" => Action::Hold,
            d if d.starts_with("delay-") => {
                let ms = d["delay-".len()..].parse::<u64>().map_err(|e| format!("bad delay in {d:?}: {e}"))?;
                Action::Delay(Duration::from_millis(ms))
            }
            other => return Err(format!("unknown failpoint action {other:?} (delay-<ms>, drop, error, crash, hold)")),
        };
        let num = |i: usize| parts.get(i).map(|p| p.parse::<u32>().map_err(|e| format!("bad number {p:?}: {e}")));
        let skip = num(3).transpose()?.unwrap_or(0);
        let times = num(4).transpose()?;
        Ok(FailpointSpec { node: parts[0].into(), point: parts[1].into(), arm: Arm { action, skip, times } })
    }

    pub fn main() -> ExitCode {
        match Cli::parse().command {
            Command::Demo { seed } => crate::scenario_cmd::demo(seed),
            Command::Bugs => {
                print!("{}", sim::bugs::markdown_table());
                ExitCode::SUCCESS
            }
            Command::Run(args) => crate::scenario_cmd::run(&args),
            Command::Sweep(args) => crate::sweep_cmd::run(&args),
            Command::Zoo(args) => crate::zoo_cmd::run(&args),
            Command::CheckDeterminism(args) => crate::determinism_cmd::run(&args),
            Command::Shrink(args) => crate::shrink_cmd::run(&args),
            Command::Traffic { args, hash_only, quiet, report: outputs } => {
                if std::env::var_os("RUST_LOG").is_some() {
                    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).init();
                }
                let report = match run(&args.config(args.seed)) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("kubesim: {e}");
                        return ExitCode::from(2);
                    }
                };
                if hash_only {
                    println!("{}", report.run.trace_hash());
                    return ExitCode::SUCCESS;
                }
                if outputs.wanted() {
                    let source =
                        format!("{} traffic --seed {} (--ops {})", crate::scenario_cmd::program(), args.seed, args.ops);
                    if !crate::report_out::write(
                        &outputs,
                        &sim::report::scenario::from_traffic(&report, args.members, &source),
                    ) {
                        return ExitCode::from(2);
                    }
                }
                if !quiet {
                    for line in &report.run.trace {
                        println!("{line}");
                    }
                }
                for line in report.verdict_lines() {
                    println!("{line}");
                }
                println!("trace-hash {}", report.run.trace_hash());
                if report.passed() {
                    ExitCode::SUCCESS
                } else {
                    eprintln!(
                        "kubesim: a checker failed; replay with `{} traffic --seed {}`",
                        crate::scenario_cmd::program(),
                        args.seed
                    );
                    ExitCode::FAILURE
                }
            }
            Command::Bench { args, seeds } => bench(&args, seeds),
        }
    }

    /// CPU time this thread has used, from `/proc/thread-self/schedstat` (nanoseconds, Linux). On a machine
    /// shared with other work, wall time measures the neighbours too; CPU time measures the run.
    fn thread_cpu() -> Option<Duration> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        text.split_whitespace().next()?.parse().ok().map(Duration::from_nanos)
    }

    /// Wall and CPU time of one step.
    #[derive(Default, Clone, Copy)]
    struct Spent {
        wall: Duration,
        cpu: Option<Duration>,
    }

    fn timed<T>(total: &mut Spent, f: impl FnOnce() -> T) -> T {
        let (w0, c0) = (Instant::now(), thread_cpu());
        let out = f();
        total.wall += w0.elapsed();
        total.cpu = match (total.cpu.or(Some(Duration::ZERO)), c0, thread_cpu()) {
            (Some(sum), Some(a), Some(b)) => Some(sum + (b - a)),
            _ => None,
        };
        out
    }

    fn bench(args: &RunArgs, seeds: u64) -> ExitCode {
        let (mut sim, mut chk, mut sim_time) = (Spent::default(), Spent::default(), Duration::ZERO);
        let mut failed = Vec::new();
        for seed in args.seed..args.seed + seeds {
            let run = match timed(&mut sim, || simulate(&args.config(seed))) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("kubesim: {e}");
                    return ExitCode::from(2);
                }
            };
            let report = timed(&mut chk, || check(&run.history));
            sim_time += run.sim_time;
            if !report.all_pass() {
                failed.push(seed);
            }
            // Dropping a run's history and trace is part of a run's cost.
            timed(&mut sim, || drop(run));
        }
        let load = std::fs::read_to_string("/proc/loadavg").ok();
        let load = load.as_deref().and_then(|l| l.split_whitespace().next()).unwrap_or("?");
        println!(
            "runs            {seeds} (members={} clients={} ops={} nemesis={}), load average {load}",
            args.members, args.clients, args.ops, !args.no_nemesis
        );
        let report = |label: &str, sim: Duration, chk: Duration| {
            let total = (sim + chk).as_secs_f64();
            println!(
                "{label:<6} seeds/s {:>6.1}   sim-s/s {:>6.1}   simulate {:>6.1} ms/run ({:.0}%)   check {:>5.1} ms/run ({:.0}%)",
                seeds as f64 / total,
                sim_time.as_secs_f64() / total,
                1e3 * sim.as_secs_f64() / seeds as f64,
                100.0 * sim.as_secs_f64() / total,
                1e3 * chk.as_secs_f64() / seeds as f64,
                100.0 * chk.as_secs_f64() / total,
            );
        };
        report("wall", sim.wall, chk.wall);
        if let (Some(s), Some(c)) = (sim.cpu, chk.cpu) {
            report("cpu", s, c);
        }
        println!("sim time/run    {:.2}s", sim_time.as_secs_f64() / seeds as f64);
        if failed.is_empty() {
            ExitCode::SUCCESS
        } else {
            println!("failed seeds    {failed:?}");
            ExitCode::FAILURE
        }
    }
}

/// The wall time `f` takes, for the figures a command prints about its own work (a report's generation
/// time). Only ever called outside a simulation, after it has ended.
#[cfg(madsim)]
pub(crate) fn wall_time<T>(f: impl FnOnce() -> T) -> (T, std::time::Duration) {
    let start = std::time::Instant::now();
    let out = f();
    (out, start.elapsed())
}

#[cfg(madsim)]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(not(madsim))]
fn main() {
    eprintln!("kubesim runs under the simulation build: use `cargo kubesim ...` from the repository root");
    std::process::exit(2);
}
