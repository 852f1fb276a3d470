//! Runs a [`Scenario`] for one seed on a fresh madsim runtime: builds the cluster, arms failpoints,
//! starts every scripted client (its steps in order, each after its `after` steps and `at_ms`), the
//! workloads, the scheduled faults and the nemesis; when the clients are done (or the time limit hits) it
//! settles, closes the watches and hands back what happened. Judging is [`super::judge`]'s job.
//!
//! - [`phases`]: the steps of a run, in order ([`drive`] takes them one after the other);
//! - [`api_workload`]: the `apiserver` workloads' clients, their history, and the etcd-side record of the
//!   registry prefix that the apiserver checks compare it with;
//! - [`script`]: one scripted client, step by step, each step run by its kind (`crate::scenario::steps`)
//!   with the run's shared context (`steps::ctx`) and board (`steps::board`);
//! - [`gc_deletes`]: after the run settles, the garbage collector's deletes and their owners as of each
//!   delete's revision;
//! - [`access`]: before the clients start, the RBAC bootstrap policy awaited and the admission webhooks'
//!   configurations created; after, what each webhook saw.

pub mod access;
pub mod api_workload;
pub mod gc_deletes;
pub(crate) mod lifecycle;
pub mod namespaces;
mod phases;
pub mod pods_settled;
pub mod registry;
mod script;
pub mod writes_kept;

pub use crate::scenario::steps::observed::{AuthOutcome, KubeEvent, KubeResult, Observed};

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use madsim::runtime::Runtime;

use super::plan::Scenario;
use super::steps::board::Board;
use super::steps::ctx::Ctx;
use super::steps::{informer, observed};
use crate::client::SharedHistory;
use crate::cluster::Seeds;
use crate::fault::{Injector, ScheduledFault};
use crate::history::apiserver::ApiHistory;
use crate::history::{History, WatchId};
use crate::trace::Trace;
use phases::Records;

/// What one run of a scenario produced, before judging.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    pub seed: u64,
    pub trace: Vec<String>,
    pub history: History,
    /// Per scripted client, in file order: what each step did, as far as the run got.
    pub clients: Vec<ClientRecord>,
    /// Each watch step's watch in the history.
    pub watches: BTreeMap<String, WatchId>,
    /// The response revision of each named step that got one (`rev_of`).
    pub revisions: BTreeMap<String, i64>,
    /// The lease each named `lease_grant` step got.
    pub leases: BTreeMap<String, i64>,
    /// Every fault applied, scheduled or drawn by the nemesis.
    pub applied_faults: Vec<ScheduledFault>,
    /// The clients were still going when the scenario's time limit ran out.
    pub timed_out: bool,
    /// Member panics, each recovered by a restart: bugs, whatever else the run saw.
    pub panics: Vec<String>,
    pub sim_time: Duration,
    /// The apiserver workloads' requests and watches with the etcd-side record of the registry prefix
    /// (`None`: the scenario has no apiserver workload).
    pub api_history: Option<ApiHistory>,
    /// The same seed with every apiserver's watch cache off, when the scenario checks
    /// `WriteOutcomesSameWithoutWatchCache`.
    pub without_watch_cache: Option<Box<ScenarioRun>>,
    /// The scripted clients' acknowledged writes as etcd holds them, when the scenario checks
    /// `AcknowledgedWritesKept`.
    pub writes_kept: Option<Vec<writes_kept::KeptWrite>>,
    /// What each admission webhook saw, in file order.
    pub webhooks: Vec<access::WebhookLog>,
    /// The controller managers' leadership and writes (`None`: the cluster has none).
    pub controllers: Option<Vec<crate::history::controllers::ManagerEvent>>,
    /// The garbage collector's deletes and their owners at each delete's revision (`None`: the cluster has
    /// no controller managers).
    pub gc_deletes: Option<crate::checker::garbage_collector::GcDeletes>,
    /// The namespaces being deleted once the faults stopped, watched until gone (`None`: no controller
    /// managers).
    pub namespaces: Option<crate::checker::namespace::NamespaceWatch>,
    /// The workloads' pods against their specs once settled (`None`: no controller managers).
    pub pods_settled: Option<pods_settled::PodsSettled>,
}

impl ScenarioRun {
    /// A stable hash of the trace (FNV-1a over its lines), 16 hex digits.
    pub fn trace_hash(&self) -> String {
        format!("{:016x}", crate::cluster::seeds::fnv1a(self.trace.join("\n").as_bytes()))
    }
}

#[derive(Clone, Debug)]
pub struct ClientRecord {
    pub name: String,
    /// The member an etcd client talks to; a Kubernetes client's apiservers and routing.
    pub member: String,
    pub steps: Vec<StepRecord>,
}

#[derive(Clone, Debug)]
pub struct StepRecord {
    pub label: String,
    /// The request as the trace shows it (`put /a=1`).
    pub request: String,
    pub observed: Observed,
}

/// Runs `scenario` with `seed`; when it checks `WriteOutcomesSameWithoutWatchCache`, runs the seed again
/// with every apiserver's watch cache off, on a runtime of its own, as the run's twin.
pub fn run(scenario: &Scenario, seed: u64) -> ScenarioRun {
    let mut first = run_once(scenario, seed);
    if scenario.cache_parity.is_some() {
        first.without_watch_cache = Some(Box::new(run_once(&scenario.without_watch_cache(), seed)));
    }
    first
}

/// One run of `scenario` with `seed` on a fresh madsim runtime.
fn run_once(scenario: &Scenario, seed: u64) -> ScenarioRun {
    let mut runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
    // The scenario's own limit ends the clients; this one is the backstop if teardown itself hangs.
    runtime.set_time_limit(Duration::from_secs(scenario.time_limit_s + 3600));
    let scenario = scenario.clone();
    runtime.block_on(async move { drive(&scenario, seed).await })
}

/// One run, phase by phase (see [`phases`]).
async fn drive(scenario: &Scenario, seed: u64) -> ScenarioRun {
    let seeds = Seeds::new(seed);
    let (trace, history) = (Trace::new(), SharedHistory::default());
    let cluster = phases::start_cluster(scenario, seed, seeds, &trace, &history).await;
    let ctx = Arc::new(Ctx {
        board: Arc::new(Board::new()),
        history: history.clone(),
        trace: trace.clone(),
        endpoints: cluster.endpoints(),
        request_timeout: Duration::from_millis(scenario.request_timeout_ms),
        watch_tasks: Arc::default(),
        kube_watches: Mutex::default(),
        informers: Mutex::default(),
        informer_bugs: scenario.cluster.bugs.informer.clone(),
        seeds,
    });
    let records: Records = Arc::new(Mutex::new(scenario.clients.iter().map(|_| Vec::new()).collect()));
    let mut clients = phases::start_scripts(scenario, &cluster, &ctx, &records, seeds);
    let api = api_workload::ApiWorkloads::start(scenario, &cluster, &trace, ctx.request_timeout);
    clients.extend(phases::start_workloads(scenario, &cluster, &ctx, seeds, api.as_ref()));
    let faults = Injector::new(cluster.clone());
    let scheduled = phases::schedule_faults(scenario, &cluster, &faults, &ctx.board, seeds);
    let stop = Arc::new(AtomicBool::new(false));
    let nemesis = phases::start_nemesis(scenario, &cluster, &faults, seeds, &stop, api.as_ref(), &ctx.board);

    let timed_out = phases::wait_for_clients(scenario, &mut clients, &trace).await;
    phases::stop_faults(scenario, &faults, &stop, nemesis, &scheduled).await;
    madsim::time::sleep(Duration::from_millis(scenario.settle_ms)).await;
    let informers = informer::close(&ctx, &cluster).await;
    let writes_kept = match scenario.writes_kept {
        Some(_) => {
            let done = records.lock().expect("records lock").clone();
            Some(writes_kept::read(scenario, &done, &cluster, ctx.request_timeout).await)
        }
        None => None,
    };
    let namespaces = match cluster.controller_managers.is_empty() {
        true => None,
        false => Some(namespaces::watch(&cluster, ctx.request_timeout).await),
    };
    let pods_settled = match cluster.controller_managers.is_empty() {
        true => None,
        false => Some(pods_settled::watch(&cluster, ctx.request_timeout).await),
    };
    let gc_deletes = match cluster.controller_managers.is_empty() {
        true => None,
        false => Some(gc_deletes::read(&cluster, ctx.request_timeout).await),
    };
    let watches = phases::close_watches(&ctx).await;
    let kube_events = phases::close_kube_watches(&ctx).await;
    let api_history = match api {
        Some(api) => Some(api.finish(&cluster, &trace).await),
        None => None,
    };
    lifecycle::finish(&cluster, &trace).await;
    let webhook_logs = access::logs(&cluster);
    let controllers = (!cluster.controller_managers.is_empty())
        .then(|| cluster.manager_log.lock().expect("the manager log is never poisoned").clone());

    let clients = client_records(scenario, &records, &kube_events, &informers);
    let state = std::mem::take(&mut *ctx.board.lock());
    ScenarioRun {
        seed,
        trace: trace.take(),
        history: history.take(),
        clients,
        watches,
        revisions: state.revisions,
        leases: state.leases,
        applied_faults: faults.applied(),
        timed_out,
        panics: cluster.panics(),
        sim_time: madsim::time::TimeHandle::current().elapsed(),
        api_history,
        without_watch_cache: None,
        writes_kept,
        webhooks: webhook_logs,
        controllers,
        gc_deletes,
        namespaces,
        pods_settled,
    }
}

/// What each scripted client's steps did, each step the run never reached marked so, each `kube` watch
/// with the events it collected.
fn client_records(
    scenario: &Scenario,
    records: &Records,
    kube_events: &BTreeMap<String, Vec<observed::KubeEvent>>,
    informers: &BTreeMap<String, observed::InformerLog>,
) -> Vec<ClientRecord> {
    let records = std::mem::take(&mut *records.lock().expect("records lock"));
    scenario
        .clients
        .iter()
        .zip(records)
        .map(|(script, mut steps)| {
            for step in &mut steps {
                if let (Observed::Kube(result), Some(events)) = (&mut step.observed, kube_events.get(&step.label)) {
                    result.events = events.clone();
                }
                if let (Observed::Kube(result), Some(log)) = (&mut step.observed, informers.get(&step.label)) {
                    result.informer = Some(log.clone());
                }
            }
            for step in script.steps.iter().skip(steps.len()) {
                let reason = "the run ended before this step (time limit)".to_string();
                steps.push(StepRecord {
                    label: step.label.clone(),
                    request: step.text(),
                    observed: Observed::NotRun(reason),
                });
            }
            // A Kubernetes client's apiservers, and the user it runs as when it has one.
            let member = match (&script.kube, &script.user) {
                (Some(target), Some(user)) => format!("{target} as {user}"),
                (Some(target), None) => target.to_string(),
                (None, _) => script.member.clone(),
            };
            ClientRecord { name: script.name.clone(), member, steps }
        })
        .collect()
}
