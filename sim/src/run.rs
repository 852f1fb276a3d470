//! The traffic preset: generated etcd traffic (`kubesim traffic`, `kubesim bench`, the property tests) as a
//! [`RunConfig`] of a few knobs (members, clients, workload, requests, nemesis, faults, failpoints) instead
//! of a file. It is a preset, not a runner of its own: [`RunConfig::scenario`] makes the plan a scenario
//! file would validate to, and [`simulate`] runs it through the one front door every run takes
//! (`scenario::execute::run`): the same cluster start, waits, fault schedule, nemesis and teardown.
//!
//! Simulation and checking are separate steps ([`simulate`], [`check`]) so that a benchmark can time them
//! apart; both are deterministic, and only the trace and the history cross between them.

use std::collections::BTreeSet;
use std::time::Duration;

use fake_etcd::failpoint::Point;

use crate::checker::{self, linearizable, Guarantee};
use crate::cluster::seeds::fnv1a;
use crate::cluster::ClusterSpec;
use crate::error::SimError;
pub use crate::fault::{failpoint, FailpointSpec};
use crate::fault::{nemesis, ScheduledFault};
use crate::history::History;
use crate::scenario::plan::{FaultPlan, Scenario, When, WorkloadKind, WorkloadPlan};
use crate::workload::Workload;

/// Everything a run needs; [`RunConfig::standard`] is the benchmark's standard run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub seed: u64,
    pub cluster: ClusterSpec,
    pub workload: Workload,
    /// Requests over all clients, shared out evenly.
    pub ops: usize,
    pub nemesis: bool,
    /// The nemesis's knobs (patterns, quiet time), when it runs.
    pub nemesis_config: nemesis::NemesisConfig,
    pub faults: Vec<ScheduledFault>,
    pub failpoints: Vec<FailpointSpec>,
    /// A request with no answer within this time has an unknown outcome.
    pub request_timeout_ms: u64,
}

impl RunConfig {
    /// 1 member, 8 clients, 1,000 Kubernetes-like requests, the random nemesis.
    pub fn standard(seed: u64) -> RunConfig {
        RunConfig {
            seed,
            cluster: ClusterSpec::new(1, 8),
            workload: Workload::Kubernetes,
            ops: 1000,
            nemesis: true,
            nemesis_config: nemesis::NemesisConfig::default(),
            faults: Vec::new(),
            failpoints: Vec::new(),
            request_timeout_ms: 1000,
        }
    }

    /// The plan a scenario file with this cluster, one workload of `ops` requests over every client (`c1..cK`,
    /// spread over the members), these faults at their times, these failpoints and this nemesis would
    /// validate to; every history guarantee must hold.
    pub fn scenario(&self) -> Scenario {
        let clients = self.cluster.client_names();
        let workload = WorkloadPlan {
            name: "traffic".into(),
            kind: WorkloadKind::Etcd(self.workload),
            clients,
            ops: self.ops,
            script: None,
            at: "the traffic preset".into(),
        };
        Scenario {
            name: "traffic".into(),
            path: "<traffic preset>".into(),
            summary: format!("{} requests of {:?} traffic", self.ops, self.workload),
            file: Default::default(),
            seeds: 1,
            canonical_seed: self.seed,
            // A run that does not finish in this much simulated time is stuck, which is a bug.
            time_limit_s: 3600,
            settle_ms: 0,
            cluster: self.cluster.clone(),
            request_timeout_ms: self.request_timeout_ms,
            clients: Vec::new(),
            workloads: vec![workload],
            faults: self
                .faults
                .iter()
                .map(|f| FaultPlan { when: When::At { ms: f.at_ms }, fault: f.fault.clone(), for_ms: None })
                .collect(),
            failpoints: self.failpoints.clone(),
            nemesis: self.nemesis.then(|| self.nemesis_config.clone()),
            hold: Guarantee::ALL.iter().copied().collect(),
            hold_explicit: false,
            linearizable_skipped: None,
            fail: BTreeSet::new(),
            cache_parity: None,
            writes_kept: None,
            zoo: None,
            notes: Vec::new(),
            relations: Vec::new(),
        }
    }

    /// Rejects a description that cannot work, naming the problem.
    pub fn validate(&self) -> Result<(), SimError> {
        self.cluster.validate()?;
        for f in &self.faults {
            f.fault.validate(&self.cluster)?;
        }
        for fp in &self.failpoints {
            let context = format!("failpoint {}", fp.point);
            self.cluster.check_node(&fp.node, &context)?;
            if !self.cluster.member_names().contains(&fp.node) {
                return Err(SimError::FailpointOnClient { node: fp.node.clone(), failpoint: fp.point.clone() });
            }
            fp.point.parse::<Point>().map_err(|e| SimError::UnknownFailpoint {
                name: e.name,
                known: Point::ALL.iter().map(|p| p.name().to_string()).collect(),
            })?;
        }
        if self.request_timeout_ms == 0 {
            return Err(SimError::OutOfRange {
                what: "request_timeout_ms".into(),
                value: "0".into(),
                allowed: "at least 1".into(),
            });
        }
        Ok(())
    }
}

/// What a simulation produced, before checking.
#[derive(Clone, Debug)]
pub struct Simulated {
    pub seed: u64,
    pub trace: Vec<String>,
    pub history: History,
    /// Simulated time the run took.
    pub sim_time: Duration,
    /// Member panics (each recovered by a restart): bugs, whatever the checkers say.
    pub panics: Vec<String>,
}

impl Simulated {
    /// A stable hash of the trace (FNV-1a over its lines), printed as 16 hex digits.
    pub fn trace_hash(&self) -> String {
        format!("{:016x}", fnv1a(self.trace.join("\n").as_bytes()))
    }
}

/// A checked run.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub run: Simulated,
    pub checks: checker::Report,
}

impl RunReport {
    pub fn passed(&self) -> bool {
        self.checks.all_pass() && self.run.panics.is_empty()
    }

    /// One line per guarantee (`Linearizable pass`), and one per member panic.
    pub fn verdict_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.checks.verdicts.iter().map(|(g, v)| format!("{g} {v}")).collect();
        lines.extend(self.run.panics.iter().map(|p| format!("FAIL {p}")));
        lines
    }
}

/// Simulates and checks.
pub fn run(config: &RunConfig) -> Result<RunReport, SimError> {
    let run = simulate(config)?;
    let checks = check(&run.history);
    Ok(RunReport { run, checks })
}

/// Runs every checker on a history.
pub fn check(history: &History) -> checker::Report {
    checker::check_all(history, &linearizable::Options::default())
}

/// Runs the simulation described by `config` through the scenario runner, on a fresh runtime.
pub fn simulate(config: &RunConfig) -> Result<Simulated, SimError> {
    config.validate()?;
    let run = crate::scenario::execute::run(&config.scenario(), config.seed);
    let mut panics = run.panics;
    if run.timed_out {
        // Generated clients always finish; an hour of simulated time means something is stuck.
        panics.push("the clients did not finish within 3600 simulated seconds".into());
    }
    Ok(Simulated { seed: config.seed, trace: run.trace, history: run.history, sim_time: run.sim_time, panics })
}
