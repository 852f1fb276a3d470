//! The `kubesim` command line. Built under `--cfg madsim` (use `cargo kubesim ...` from the repository root,
//! which sets the flags and the target dir).
//!
//! - `kubesim demo`: one member, one client, the transcript;
//! - `kubesim run --seed N`: one run with the traffic generator and the nemesis: trace, verdicts, trace hash;
//! - `kubesim bench`: seeds per second and simulated seconds per wall second for the standard run, with
//!   the checkers' share of the time reported separately. This is the one place that reads the wall clock,
//!   to measure; it never feeds a simulation.

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
        /// One fake-etcd member and one client on the simulated network; prints what the client saw.
        Demo {
            #[arg(long, default_value_t = 1)]
            seed: u64,
        },
        /// One run: the trace (unless --quiet), the checkers' verdicts and the trace hash.
        Run {
            #[command(flatten)]
            args: RunArgs,
            /// Print only the trace hash.
            #[arg(long)]
            hash_only: bool,
            /// Print verdicts and hash, not the trace.
            #[arg(long)]
            quiet: bool,
        },
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
            Command::Demo { seed } => {
                println!("seed={seed}");
                for line in sim::demo::transcript(seed) {
                    println!("{line}");
                }
                ExitCode::SUCCESS
            }
            Command::Run { args, hash_only, quiet } => {
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
                    eprintln!("kubesim: a checker failed; replay with `cargo kubesim run --seed {}`", args.seed);
                    ExitCode::FAILURE
                }
            }
            Command::Bench { args, seeds } => bench(&args, seeds),
        }
    }

    fn bench(args: &RunArgs, seeds: u64) -> ExitCode {
        let (mut sim_wall, mut check_wall, mut sim_time) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        let mut failed = Vec::new();
        for seed in args.seed..args.seed + seeds {
            let t0 = Instant::now();
            let run = match simulate(&args.config(seed)) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("kubesim: {e}");
                    return ExitCode::from(2);
                }
            };
            let t1 = Instant::now();
            let report = check(&run.history);
            let t2 = Instant::now();
            sim_wall += t1 - t0;
            check_wall += t2 - t1;
            sim_time += run.sim_time;
            if !report.all_pass() {
                failed.push(seed);
            }
        }
        let total = sim_wall + check_wall;
        println!(
            "runs            {seeds} (members={} clients={} ops={} nemesis={})",
            args.members, args.clients, args.ops, !args.no_nemesis
        );
        println!("seeds/s         {:.1}", seeds as f64 / total.as_secs_f64());
        println!("sim-s/wall-s    {:.1}", sim_time.as_secs_f64() / total.as_secs_f64());
        println!(
            "simulate        {:.3}s ({:.0}%)",
            sim_wall.as_secs_f64(),
            100.0 * sim_wall.as_secs_f64() / total.as_secs_f64()
        );
        println!(
            "check           {:.3}s ({:.0}%)",
            check_wall.as_secs_f64(),
            100.0 * check_wall.as_secs_f64() / total.as_secs_f64()
        );
        println!("sim time/run    {:.2}s", sim_time.as_secs_f64() / seeds as f64);
        if failed.is_empty() {
            ExitCode::SUCCESS
        } else {
            println!("failed seeds    {failed:?}");
            ExitCode::FAILURE
        }
    }
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
