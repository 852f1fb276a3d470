//! The `kubesim` command line. Built under `--cfg madsim` (use `cargo kubesim ...` from the repository root,
//! which sets the flags and the target dir).

#[cfg(madsim)]
mod cli {
    use clap::{Parser, Subcommand};

    #[derive(Parser)]
    #[command(name = "kubesim", version, about = "Deterministic simulation testbed for the Kubernetes storage stack")]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// One fake-etcd member and one client on the simulated network; prints what the client saw.
        Demo {
            /// The simulation seed: the same seed always gives the same transcript.
            #[arg(long, default_value_t = 1)]
            seed: u64,
        },
    }

    pub fn main() {
        match Cli::parse().command {
            Command::Demo { seed } => {
                println!("seed={seed}");
                for line in sim::demo::transcript(seed) {
                    println!("{line}");
                }
            }
        }
    }
}

#[cfg(madsim)]
fn main() {
    cli::main()
}

#[cfg(not(madsim))]
fn main() {
    eprintln!("kubesim runs under the simulation build: use `cargo kubesim ...` from the repository root");
    std::process::exit(2);
}
