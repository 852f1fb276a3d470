//! What a sweep found, in the form that outlives it: the JSON summary `kubesim sweep --json PATH` writes,
//! the merge of several shards' summaries into one (`kubesim sweep --merge`), and the table and the list
//! of failing seeds, each with the command that replays it, that both print.
//!
//! A summary keeps every seed's result (not only counts), so that merging shards gives exactly the
//! totals of one unsharded sweep, and so that two sweeps of the same seeds can be compared hash by hash.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::scenario_cmd::replay_command;

/// The whole sweep, or several shards of it merged.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SweepSummary {
    /// One entry per sweep process that contributed; more than one after a merge.
    pub shards: Vec<ShardRun>,
    pub scenarios: Vec<ScenarioSeeds>,
}

/// How one sweep process ran: which shard, how many jobs at once, how long on the wall clock.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardRun {
    /// `i/n`, or `1/1` for an unsharded sweep.
    pub shard: String,
    pub jobs: usize,
    pub wall_s: f64,
}

/// Every seed that ran of one scenario file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScenarioSeeds {
    pub scenario: String,
    pub file: String,
    /// The bug switch flags its seeds ran with (`--bug NAME`, `--zoo`), for the replay commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    pub seeds: Vec<SeedResult>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeedResult {
    pub seed: u64,
    pub passed: bool,
    /// Absent when the seed's process crashed before it could say.
    pub trace_hash: Option<String>,
    /// One line per failed expectation or check; for a crash, how the process ended and its stderr's tail.
    pub failures: Vec<String>,
    /// The seed's process, from spawn to exit.
    pub wall_ms: u64,
}

impl SweepSummary {
    pub fn n_seeds(&self) -> usize {
        self.scenarios.iter().map(|s| s.seeds.len()).sum()
    }

    pub fn n_failed(&self) -> usize {
        self.scenarios.iter().flat_map(|s| &s.seeds).filter(|r| !r.passed).count()
    }

    /// Merges shards' summaries: scenarios by file, in the order first seen, seeds sorted. A seed that
    /// appears twice (overlapping shards) is kept once, and named in the warnings returned.
    pub fn merge(parts: Vec<SweepSummary>) -> (SweepSummary, Vec<String>) {
        let mut out = SweepSummary::default();
        let mut warnings = Vec::new();
        for part in parts {
            out.shards.extend(part.shards);
            for s in part.scenarios {
                match out.scenarios.iter_mut().find(|o| o.file == s.file) {
                    Some(o) => o.seeds.extend(s.seeds),
                    None => out.scenarios.push(s),
                }
            }
        }
        for s in &mut out.scenarios {
            s.seeds.sort_by_key(|r| r.seed);
            let before = s.seeds.len();
            s.seeds.dedup_by_key(|r| r.seed);
            if s.seeds.len() != before {
                warnings.push(format!("{}: {} seeds appear in more than one summary", s.file, before - s.seeds.len()));
            }
        }
        (out, warnings)
    }

    /// The table per scenario, the total, then each failing seed with its failures and replay command.
    pub fn render(&self) -> String {
        let mut t = String::new();
        let width = self.scenarios.iter().map(|s| s.scenario.len()).max().unwrap_or(0).max("scenario".len());
        let _ =
            writeln!(t, "{:<width$}  {:>6}  {:>6}  {:>6}  {:>8}", "scenario", "seeds", "passed", "failed", "seeds/s");
        for s in &self.scenarios {
            let failed = s.seeds.iter().filter(|r| !r.passed).count();
            // Per scenario, the rate of one process at a time: its seeds share the jobs with other files'.
            let busy_s: f64 = s.seeds.iter().map(|r| r.wall_ms as f64 / 1e3).sum();
            let _ = writeln!(
                t,
                "{:<width$}  {:>6}  {:>6}  {:>6}  {:>8}",
                s.scenario,
                s.seeds.len(),
                s.seeds.len() - failed,
                failed,
                rate(s.seeds.len(), busy_s)
            );
        }
        let (n, failed) = (self.n_seeds(), self.n_failed());
        let wall_s: f64 = self.shards.iter().map(|s| s.wall_s).sum();
        let _ = writeln!(t, "{:<width$}  {:>6}  {:>6}  {:>6}  {:>8}", "total", n, n - failed, failed, rate(n, wall_s));
        let jobs: Vec<String> = self.shards.iter().map(|s| format!("shard {} {} jobs", s.shard, s.jobs)).collect();
        let _ = writeln!(
            t,
            "(seeds/s: per scenario, one process at a time; total, over {wall_s:.2}s of wall clock: {})",
            jobs.join(", ")
        );
        if failed > 0 {
            let _ = writeln!(t, "\nfailing seeds:");
            for s in &self.scenarios {
                for r in s.seeds.iter().filter(|r| !r.passed) {
                    let _ = writeln!(t, "  {} seed {}", s.scenario, r.seed);
                    for f in &r.failures {
                        for line in f.lines() {
                            let _ = writeln!(t, "      {}", clip(line, 200));
                        }
                    }
                    let _ = writeln!(t, "    replay: {}", replay_command(Path::new(&s.file), r.seed, &s.flags));
                }
            }
        }
        t
    }
}

fn rate(n: usize, seconds: f64) -> String {
    if seconds > 0.0 {
        format!("{:.1}", n as f64 / seconds)
    } else {
        "-".into()
    }
}

/// The line cut to at most `max` characters, with an ellipsis where it was cut.
fn clip(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}
