//! A run: validate the description, build the cluster on a fresh madsim runtime seeded with the root seed,
//! arm the failpoints, start the clients' workloads, the scheduled faults and the nemesis, wait for the
//! clients to finish, heal, and hand back the trace and the history. [`run`] then runs every checker.
//!
//! Simulation and checking are separate steps ([`simulate`], [`check`]) so that a benchmark can time them
//! apart; both are deterministic, and only the trace and the history cross between them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fake_etcd::failpoint::{Action, Arm, Point};
use fake_etcd::service::MemberEvent;
use madsim::runtime::Runtime;

use crate::checker::{self, linearizable};
use crate::client::{RecordingClient, SharedHistory};
use crate::cluster::seeds::fnv1a;
use crate::cluster::{Cluster, ClusterSpec, Seeds};
use crate::error::SimError;
use crate::fault::{nemesis, Injector, ScheduledFault};
use crate::history::{self as h, History};
use crate::trace::Trace;
use crate::workload::{run_client, Workload};

/// A failpoint to arm on one member before the clients start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailpointSpec {
    pub node: String,
    /// The point's name as the node's component spells it (fake-etcd's `before-watch-response-send` on a
    /// member, the apiserver's `before-cacher-dispatch` on an apiserver); checked before the run.
    pub point: String,
    pub arm: Arm,
}

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

/// Runs the simulation described by `config` on a fresh runtime.
pub fn simulate(config: &RunConfig) -> Result<Simulated, SimError> {
    config.validate()?;
    let mut runtime = Runtime::with_seed_and_config(config.seed, madsim::Config::default());
    // A run that does not finish in this much simulated time is stuck, which is a bug.
    runtime.set_time_limit(Duration::from_secs(3600));
    let config = config.clone();
    Ok(runtime.block_on(async move { drive(&config).await }))
}

async fn drive(config: &RunConfig) -> Simulated {
    let seeds = Seeds::new(config.seed);
    let trace = Trace::new();
    let history = SharedHistory::default();
    let cluster = Arc::new(Cluster::build(&config.cluster, &trace, seeds));
    trace.event(
        "sim",
        format!("start seed={} members={} clients={}", config.seed, cluster.members.len(), cluster.clients.len()),
    );
    prepare(&cluster, &config.failpoints, &trace, &history);

    // Give the members a moment to bind before the first request.
    madsim::time::sleep(Duration::from_millis(50)).await;

    let endpoints = cluster.endpoints();
    let timeout = Duration::from_millis(config.request_timeout_ms);
    let mut clients = Vec::new();
    for (i, c) in cluster.clients.iter().enumerate() {
        // Clients spread over the members, as clients pinned to single members do in etcd's tests.
        let endpoint = &endpoints[i % endpoints.len()];
        let client = RecordingClient::new(c.client, endpoint, history.clone(), trace.clone(), timeout);
        let rng = seeds.rng(&format!("workload/{}", c.name));
        let ops = share(config.ops, cluster.clients.len(), i);
        clients.push(c.node.spawn(run_client(config.workload, client, rng, ops)));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let faults = Injector::new(cluster.clone());
    let mut background = Vec::new();
    for f in config.faults.clone() {
        let faults = faults.clone();
        background.push(cluster.control.spawn(async move {
            madsim::time::sleep(Duration::from_millis(f.at_ms)).await;
            faults.apply(&f.fault);
        }));
    }
    let nemesis = config.nemesis.then(|| {
        let rng = seeds.rng("nemesis");
        cluster.control.spawn(nemesis::run(faults.clone(), config.nemesis_config.clone(), rng, stop.clone()))
    });

    for c in clients {
        // A client task ends when its requests are done; a join error means it panicked, which is a bug.
        c.await.expect("client task panicked");
    }
    stop.store(true, Ordering::SeqCst);
    if let Some(n) = nemesis {
        n.await.expect("nemesis task panicked");
    }
    for b in background {
        // Scheduled faults past the end of the workload are not applied.
        b.abort();
    }
    finish(&cluster, &trace).await;
    let sim_time = madsim::time::TimeHandle::current().elapsed();
    let panics = cluster.panics();
    Simulated { seed: config.seed, trace: trace.take(), history: history.take(), sim_time, panics }
}

/// What every run does once its cluster is built: files each member's own events (see [`observe`]) and arms
/// the failpoints, each with a trace line.
pub(crate) fn prepare(cluster: &Cluster, failpoints: &[FailpointSpec], trace: &Trace, history: &SharedHistory) {
    for m in &cluster.members {
        observe(&m.name, &m.events, trace, history);
    }
    for fp in failpoints {
        trace.event(&fp.node, format_args!("arm {} {}{}", fp.point, fp.arm.action, describe_arm(&fp.arm)));
        if let Some(member) = cluster.member(&fp.node) {
            let point: Point = fp.point.parse().expect("validated before the run");
            member.failpoints.arm(point, fp.arm.clone());
        } else {
            let apiserver = cluster.apiserver(&fp.node).expect("validated before the run");
            let point: apiserver::failpoint::Point = fp.point.parse().expect("validated before the run");
            apiserver.failpoints.arm(point, fp.arm.clone());
        }
    }
}

/// What every run does last: lets held failpoints go, so that nothing waits forever past the run, waits for
/// the restarts crash hooks scheduled, and writes `sim end`.
pub(crate) async fn finish(cluster: &Cluster, trace: &Trace) {
    for m in &cluster.members {
        for &p in Point::ALL {
            m.failpoints.disarm(p);
        }
    }
    for a in &cluster.apiservers {
        for &p in apiserver::failpoint::Point::ALL {
            a.failpoints.disarm(p);
        }
    }
    cluster.wait_for_restarts().await;
    trace.event("sim", "end");
}

/// Client `i`'s share of `ops` requests spread evenly over `clients` (the first ones take the remainder).
pub(crate) fn share(ops: usize, clients: usize, i: usize) -> usize {
    ops / clients + usize::from(i < ops % clients)
}

/// Turns what a member does on its own into trace lines (`etcd-1 compacted rev=40`, `etcd-1 lease-expired
/// 6230..`), and files each lease expiry in the history as a `LeaseRevoke` by [`h::ClientId::MEMBERS`],
/// invoked when the member decided on it (before it proposed the revoke) and returned when the revoke was
/// applied, with the revoke's header revision; a revoke that never reports back (a client revoked the lease
/// first, or the member went down) stays an unknown outcome.
///
/// Why not an unknown outcome every time, which is all a black-box client could know: an unknown revoke may
/// go anywhere after its invocation, and with a dozen leases expiring per run the linearizability search
/// tried every subset of them at every dead end and gave up (2,000,000 steps) on one seed in ten. The
/// member's report is as trustworthy as a client's response, and no weaker a check: the model still has to
/// produce the revoke's revision and every read around it.
pub(crate) fn observe(
    name: &str,
    observer: &fake_etcd::service::EventObserver,
    trace: &Trace,
    history: &SharedHistory,
) {
    let (name, trace, history) = (name.to_string(), trace.clone(), history.clone());
    // Expiries invoked and not yet applied, by lease.
    let pending = std::sync::Mutex::new(std::collections::BTreeMap::new());
    observer.set(move |event| match event {
        MemberEvent::Compacted { revision } => {
            trace.event(&name, format_args!("compacted rev={}", h::Revision::from(revision)))
        }
        MemberEvent::LeaseExpired { id } => {
            let id = h::LeaseId::from(id);
            trace.event(&name, format_args!("lease-expired {id}"));
            let revoke = h::Request::LeaseRevoke(h::LeaseRevokeRequest { id });
            let op = history.lock().invoke(h::ClientId::MEMBERS, revoke, Trace::now());
            pending.lock().expect("observer lock poisoned").insert(id, op);
        }
        MemberEvent::LeaseRevoked { id, revision } => {
            let (id, revision) = (h::LeaseId::from(id), h::Revision::from(revision));
            trace.event(&name, format_args!("lease-revoked {id} rev={revision}"));
            if let Some(op) = pending.lock().expect("observer lock poisoned").remove(&id) {
                let response = h::Response { header_revision: revision, body: h::ResponseBody::LeaseRevoke };
                history.lock().complete(op, Trace::now(), h::Outcome::Ok(response));
            }
        }
    });
}

fn describe_arm(arm: &Arm) -> String {
    let mut s = String::new();
    if arm.skip > 0 {
        s.push_str(&format!(" after {} hits", arm.skip));
    }
    if let Some(t) = arm.times {
        s.push_str(&format!(" {t} times"));
    }
    s
}

/// Shorthand for a failpoint spec that fires `times` times after `skip` hits.
pub fn failpoint(node: &str, point: &str, action: Action, skip: u32, times: Option<u32>) -> FailpointSpec {
    FailpointSpec { node: node.into(), point: point.into(), arm: Arm { action, skip, times } }
}
