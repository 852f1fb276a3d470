//! Runs a [`Scenario`] for one seed on a fresh madsim runtime: builds the cluster, arms failpoints,
//! starts every scripted client (its steps in order, each after its `after` steps and `at_ms`), the
//! workloads, the scheduled faults and the nemesis; when the clients are done (or the time limit hits) it
//! settles, closes the watches and hands back what happened. Judging is [`super::judge`]'s job.
//!
//! The shared state the clients coordinate through is the [`Board`]: which steps are done, the revision
//! each returned, the lease each granted, the watches that are open. Waiting on it is change-driven
//! (a `Notify`), so a waiting client costs nothing until something finishes. Conditions on a
//! watch's stream or on the cluster's leader are polled on the simulated clock, which is deterministic.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::maintenance_client::MaintenanceClient;
use madsim::runtime::Runtime;
use tokio::sync::{mpsc, oneshot};

use super::plan::{
    ClientScript, CompareValue, GetPlan, Op, Scenario, StepPlan, TxnOpPlan, TxnPlan, WaitPlan, WatchCondition, When,
};
use super::request::{self, Known};
use super::syntax::{CompareOp, CompareTarget};
use crate::client::watch::{record_watch, WatchControl, WatchSpec};
use crate::client::{channel, describe_request, RecordingClient, SharedHistory};
use crate::cluster::{Cluster, Seeds};
use crate::fault::{nemesis, Injector, ScheduledFault};
use crate::history::{self as h, History, KeySpan, Outcome, ResponseBody, WatchId};
use crate::trace::Trace;
use crate::workload::run_client;

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

/// What a step's client observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// A KV or lease request's outcome, as filed in the history.
    Kv(Outcome),
    /// A keep-alive's or time-to-live's answer: the TTL and (a time-to-live asked with `keys`) the lease's
    /// keys in key order, or what went wrong.
    Ttl(Result<(i64, Vec<h::Bytes>), String>),
    /// A lease listing: the ids, sorted.
    Leases(Result<Vec<i64>, String>),
    /// A watch was created (its stream is judged at the end), or was not within the request timeout.
    Watch(Result<WatchId, String>),
    /// A wait's condition held, or the wait timed out.
    Waited(Result<(), String>),
    /// A sleep, progress request or cancel: nothing comes back.
    Done,
    /// The step could not be sent (an unresolved reference), or the run ended before it.
    NotRun(String),
}

#[derive(Default)]
struct BoardState {
    done: BTreeSet<String>,
    revisions: BTreeMap<String, i64>,
    leases: BTreeMap<String, i64>,
    watches: BTreeMap<String, OpenWatch>,
}

struct OpenWatch {
    id: WatchId,
    requests: mpsc::UnboundedSender<pb::WatchRequest>,
    /// Dropping it closes the watch.
    _close: oneshot::Sender<()>,
}

/// What the clients of a run share.
///
/// Waiters are woken through a `Notify`, not a `tokio::sync::watch` channel: tokio's watch channel spreads
/// its waiters over shards chosen with tokio's thread-local random generator, whose state carries over from
/// one run to the next in the same process, so two runs of one seed woke clients in different orders.
struct Board {
    state: Mutex<BoardState>,
    changed: tokio::sync::Notify,
}

impl Board {
    fn new() -> Board {
        Board { state: Mutex::default(), changed: tokio::sync::Notify::new() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BoardState> {
        self.state.lock().expect("board lock poisoned")
    }

    fn finish(&self, name: Option<&str>, revision: Option<i64>, lease: Option<i64>) {
        if let Some(name) = name {
            let mut s = self.lock();
            s.done.insert(name.to_string());
            if let Some(r) = revision {
                s.revisions.insert(name.to_string(), r);
            }
            if let Some(l) = lease {
                s.leases.insert(name.to_string(), l);
            }
        }
        self.changed.notify_waiters();
    }

    async fn wait_done(&self, steps: &[String]) {
        loop {
            // Registered before the check, so a step that finishes in between still wakes this waiter.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if steps.iter().all(|s| self.lock().done.contains(s)) {
                return;
            }
            notified.await;
        }
    }
}

impl Known for Board {
    fn revision(&self, step: &str) -> Option<i64> {
        self.lock().revisions.get(step).copied()
    }

    fn lease(&self, step: &str) -> Option<i64> {
        self.lock().leases.get(step).copied()
    }
}

/// Everything a client script needs.
struct Ctx {
    board: Arc<Board>,
    history: SharedHistory,
    trace: Trace,
    endpoints: Vec<String>,
    request_timeout: Duration,
    watch_tasks: Arc<Mutex<Vec<madsim::task::JoinHandle<()>>>>,
}

/// Runs `scenario` with `seed`.
pub fn run(scenario: &Scenario, seed: u64) -> ScenarioRun {
    let mut runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
    // The scenario's own limit ends the clients; this one is the backstop if teardown itself hangs.
    runtime.set_time_limit(Duration::from_secs(scenario.time_limit_s + 3600));
    let scenario = scenario.clone();
    runtime.block_on(async move { drive(&scenario, seed).await })
}

async fn drive(scenario: &Scenario, seed: u64) -> ScenarioRun {
    let seeds = Seeds::new(seed);
    let trace = Trace::new();
    let history = SharedHistory::default();
    let cluster = Arc::new(Cluster::build(&scenario.cluster, &trace, seeds));
    trace.event(
        "sim",
        format_args!(
            "start scenario={} seed={seed} members={} clients={}",
            scenario.name,
            cluster.members.len(),
            cluster.clients.len()
        ),
    );
    crate::run::prepare(&cluster, &scenario.failpoints, &trace, &history);
    // Give the members a moment to bind before the first request.
    madsim::time::sleep(Duration::from_millis(50)).await;

    let board = Arc::new(Board::new());
    let timeout = Duration::from_millis(scenario.request_timeout_ms);
    let endpoints = cluster.endpoints();
    let ctx = Arc::new(Ctx {
        board: board.clone(),
        history: history.clone(),
        trace: trace.clone(),
        endpoints: endpoints.clone(),
        request_timeout: timeout,
        watch_tasks: Arc::default(),
    });
    let records: Arc<Mutex<Vec<Vec<StepRecord>>>> =
        Arc::new(Mutex::new(scenario.clients.iter().map(|_| Vec::new()).collect()));

    let mut tasks = Vec::new();
    for (i, script) in scenario.clients.iter().enumerate() {
        let node = &cluster.clients[i];
        debug_assert_eq!(node.name, script.name, "scripted clients come first, in file order");
        let member = scenario.cluster.member_names().iter().position(|m| *m == script.member).expect("validated");
        let client = RecordingClient::new(node.client, &endpoints[member], history.clone(), trace.clone(), timeout)
            .named(&script.name);
        let (ctx, script, records) = (ctx.clone(), script.clone(), records.clone());
        tasks.push(node.node.spawn(async move { run_script(&ctx, client, &script, i, &records).await }));
    }
    let mut next = scenario.clients.len();
    for w in &scenario.workloads {
        for (j, name) in w.clients.iter().enumerate() {
            let node = &cluster.clients[next];
            next += 1;
            debug_assert_eq!(&node.name, name);
            // Workload clients spread over the members, as clients pinned to single members do in etcd's tests.
            let endpoint = &endpoints[j % endpoints.len()];
            let client =
                RecordingClient::new(node.client, endpoint, history.clone(), trace.clone(), timeout).named(name);
            let rng = seeds.rng(&format!("workload/{name}"));
            let ops = crate::run::share(w.ops, w.clients.len(), j);
            tasks.push(node.node.spawn(run_client(w.kind, client, rng, ops)));
        }
    }

    let faults = Injector::new(cluster.clone());
    let mut background = Vec::new();
    for f in scenario.faults.clone() {
        let (faults, board) = (faults.clone(), board.clone());
        background.push(cluster.control.spawn(async move {
            match &f.when {
                When::At { ms } => madsim::time::sleep(Duration::from_millis(*ms)).await,
                When::After { step, delay_ms } => {
                    board.wait_done(std::slice::from_ref(step)).await;
                    madsim::time::sleep(Duration::from_millis(*delay_ms)).await;
                }
            }
            faults.apply(&f.fault);
        }));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let nemesis = scenario.nemesis.clone().map(|config| {
        let rng = seeds.rng("nemesis");
        cluster.control.spawn(nemesis::run(faults.clone(), config, rng, stop.clone()))
    });

    // Everything the clients do, within the scenario's time limit.
    let limit = Duration::from_secs(scenario.time_limit_s);
    let all_clients = async {
        for t in &mut tasks {
            // A join error means a client task panicked, which is a harness bug.
            t.await.expect("client task panicked");
        }
    };
    let timed_out = madsim::time::timeout(limit, all_clients).await.is_err();
    if timed_out {
        trace.event("sim", format_args!("time limit of {}s reached; stopping the clients", scenario.time_limit_s));
        for t in &tasks {
            t.abort();
        }
    }
    stop.store(true, Ordering::SeqCst);
    if let Some(n) = nemesis {
        n.await.expect("nemesis task panicked");
    }
    for b in &background {
        // Faults scheduled past the clients' end are not applied.
        b.abort();
    }
    madsim::time::sleep(Duration::from_millis(scenario.settle_ms)).await;
    // Close every watch still open; each ends at once (its closer is gone) and files nothing more.
    let open = std::mem::take(&mut board.lock().watches);
    let watches: BTreeMap<String, WatchId> = open.iter().map(|(name, w)| (name.clone(), w.id)).collect();
    drop(open);
    let watch_tasks: Vec<_> = std::mem::take(&mut *ctx.watch_tasks.lock().expect("watch tasks lock"));
    for w in watch_tasks {
        // A watch stuck on a held failpoint or a dead member must not hold up the end of the run.
        if madsim::time::timeout(Duration::from_secs(5), w).await.is_err() {
            trace.event("sim", "a watch did not close within 5s");
        }
    }
    crate::run::finish(&cluster, &trace).await;

    let records = std::mem::take(&mut *records.lock().expect("records lock"));
    let clients = scenario
        .clients
        .iter()
        .zip(records)
        .map(|(script, mut steps)| {
            // Steps the run never reached.
            for step in script.steps.iter().skip(steps.len()) {
                let reason = "the run ended before this step (time limit)".to_string();
                steps.push(StepRecord {
                    label: step.label.clone(),
                    request: describe(step),
                    observed: Observed::NotRun(reason),
                });
            }
            ClientRecord { name: script.name.clone(), member: script.member.clone(), steps }
        })
        .collect();
    let state = std::mem::take(&mut *board.lock());
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
    }
}

async fn run_script(
    ctx: &Ctx,
    mut client: RecordingClient,
    script: &ClientScript,
    index: usize,
    records: &Mutex<Vec<Vec<StepRecord>>>,
) {
    for step in &script.steps {
        ctx.board.wait_done(&step.after).await;
        if let Some(at_ms) = step.at_ms {
            let now = madsim::time::TimeHandle::current().elapsed();
            let at = Duration::from_millis(at_ms);
            if at > now {
                madsim::time::sleep(at - now).await;
            }
        }
        let (observed, revision, lease) = run_step(ctx, &mut client, step).await;
        let record = StepRecord { label: step.label.clone(), request: describe(step), observed };
        records.lock().expect("records lock")[index].push(record);
        ctx.board.finish(step.name.as_deref(), revision, lease);
    }
}

/// The step as the report shows it.
fn describe(step: &StepPlan) -> String {
    struct NoneKnown;
    impl Known for NoneKnown {
        fn revision(&self, _: &str) -> Option<i64> {
            None
        }
        fn lease(&self, _: &str) -> Option<i64> {
            None
        }
    }
    // References are shown by name: the report must not depend on values a seed chose.
    let plain = |r: Result<h::Request, String>, fallback: String| match r {
        Ok(req) => describe_request(&req),
        Err(_) => fallback,
    };
    match &step.op {
        Op::Get(g) => match request::range(g, &NoneKnown) {
            Ok(r) => describe_request(&h::Request::Range((&r).into())),
            // Revisions given as `rev_of(step)`: the request without them, then each by name.
            Err(_) => {
                let plain = GetPlan {
                    revision: None,
                    min_mod_revision: None,
                    max_mod_revision: None,
                    min_create_revision: None,
                    max_create_revision: None,
                    ..g.clone()
                };
                let r = request::range(&plain, &NoneKnown).expect("a get without revisions names no step");
                let mut s = describe_request(&h::Request::Range((&r).into()));
                for (name, e) in [
                    ("rev=", &g.revision),
                    ("mod>=", &g.min_mod_revision),
                    ("mod<=", &g.max_mod_revision),
                    ("create>=", &g.min_create_revision),
                    ("create<=", &g.max_create_revision),
                ] {
                    if let Some(e) = e {
                        s.push_str(&format!(" {name}{}", e.to_string().replace(' ', "")));
                    }
                }
                s
            }
        },
        Op::Put(p) => match &p.lease {
            None => plain(request::put(p, &NoneKnown).map(|r| h::Request::Put((&r).into())), String::new()),
            Some(l) => {
                let mut s = format!("put {}={} lease={l}", p.key, p.value);
                for (set, flag) in [(p.ignore_value, " ignore_value"), (p.ignore_lease, " ignore_lease")] {
                    if set {
                        s.push_str(flag);
                    }
                }
                s
            }
        },
        Op::Delete(d) => describe_request(&h::Request::DeleteRange((&request::delete(d)).into())),
        Op::Txn(t) => match request::txn(t, &NoneKnown) {
            Ok(r) => describe_request(&h::Request::Txn((&r).into())),
            Err(_) => describe_txn(t),
        },
        Op::Compact { revision, .. } => format!("compact rev={revision}"),
        Op::LeaseGrant { ttl_s, .. } => format!("lease-grant ttl={ttl_s}s"),
        Op::LeaseRevoke { lease } => format!("lease-revoke {lease}"),
        Op::LeaseKeepAlive { lease } => format!("lease-keepalive {lease}"),
        Op::LeaseTimeToLive { lease, keys: false } => format!("lease-ttl {lease}"),
        Op::LeaseTimeToLive { lease, keys: true } => format!("lease-ttl {lease} keys"),
        Op::LeaseLeases => "lease-leases".to_string(),
        Op::Watch(w) => {
            let span = describe_request(&h::Request::DeleteRange(h::DeleteRangeRequest {
                span: w.span.clone(),
                prev_kv: false,
            }));
            let span = span.trim_start_matches("del ").to_string();
            match &w.start_revision {
                Some(e) => format!("watch {span} from rev={e}"),
                None => format!("watch {span}"),
            }
        }
        Op::WatchProgress { watch } => format!("watch-progress {watch}"),
        Op::WatchCancel { watch } => format!("watch-cancel {watch}"),
        Op::Sleep { ms } => format!("sleep {ms}ms"),
        Op::Wait(WaitPlan::Leader { .. }) => "wait leader".to_string(),
        Op::Wait(WaitPlan::Watch { watch, condition, .. }) => match condition {
            WatchCondition::Events(n) => format!("wait {watch} events>={n}"),
            WatchCondition::Revision(e) => format!("wait {watch} revision {e}"),
            WatchCondition::Canceled => format!("wait {watch} canceled"),
            WatchCondition::Progress => format!("wait {watch} progress"),
        },
    }
}

/// A txn whose compares or operations name other steps (`rev_of(read)`, a lease step), shown with the
/// names, in the trace's txn form: `txn [mod(/a)==rev_of(read)] ? put /a=2 : get /a`. Operations are shown
/// by their keys only, as the trace shows a txn's operations.
fn describe_txn(t: &TxnPlan) -> String {
    let span = |s: &KeySpan| {
        let del = describe_request(&h::Request::DeleteRange(h::DeleteRangeRequest { span: s.clone(), prev_kv: false }));
        del.trim_start_matches("del ").to_string()
    };
    let compares: Vec<String> = t
        .compare
        .iter()
        .map(|c| {
            let target = match c.target {
                CompareTarget::Version => "version",
                CompareTarget::Create => "create",
                CompareTarget::Mod => "mod",
                CompareTarget::Value => "value",
                CompareTarget::Lease => "lease",
            };
            let op = match c.op {
                CompareOp::Equal => "==",
                CompareOp::NotEqual => "!=",
                CompareOp::Greater => ">",
                CompareOp::Less => "<",
            };
            let value = match &c.value {
                CompareValue::Number(e) => e.to_string().replace(' ', ""),
                CompareValue::Text(s) => s.clone(),
                CompareValue::Lease(step) => step.clone(),
            };
            format!("{target}({}){op}{value}", span(&c.span))
        })
        .collect();
    let ops = |list: &[TxnOpPlan]| -> String {
        if list.is_empty() {
            return "-".into();
        }
        let each: Vec<String> = list
            .iter()
            .map(|op| match op {
                TxnOpPlan::Get(g) => match &g.revision {
                    Some(rev) => format!("get {} rev={}", span(&g.span), rev.to_string().replace(' ', "")),
                    None => format!("get {}", span(&g.span)),
                },
                TxnOpPlan::Put(p) => match &p.lease {
                    Some(l) => format!("put {}={} lease={l}", p.key, p.value),
                    None => format!("put {}={}", p.key, p.value),
                },
                TxnOpPlan::Delete(d) => format!("del {}", span(&d.span)),
                TxnOpPlan::Txn(inner) => format!("({})", describe_txn(inner)),
            })
            .collect();
        each.join("; ")
    };
    format!("txn [{}] ? {} : {}", compares.join(" "), ops(&t.success), ops(&t.failure))
}

/// Runs one step: what was observed, the revision `rev_of` gets, the lease a grant got.
async fn run_step(ctx: &Ctx, client: &mut RecordingClient, step: &StepPlan) -> (Observed, Option<i64>, Option<i64>) {
    let board: &Board = &ctx.board;
    let kv = |outcome: Outcome| {
        let revision = match &outcome {
            Outcome::Ok(r) => Some(r.header_revision.0),
            _ => None,
        };
        let lease = match &outcome {
            Outcome::Ok(h::Response { body: ResponseBody::LeaseGrant(g), .. }) => Some(g.id.0),
            _ => None,
        };
        (Observed::Kv(outcome), revision, lease)
    };
    let not_run = |reason: String| {
        client.trace().event(client.name(), format_args!("{} not sent: {reason}", step.label));
        (Observed::NotRun(reason), None, None)
    };
    match &step.op {
        Op::Get(g) => match request::range(g, board) {
            Ok(r) => kv(client.range(r).await),
            Err(e) => not_run(e),
        },
        Op::Put(p) => match request::put(p, board) {
            Ok(r) => kv(client.put(r).await),
            Err(e) => not_run(e),
        },
        Op::Delete(d) => kv(client.delete_range(request::delete(d)).await),
        Op::Txn(t) => match request::txn(t, board) {
            Ok(r) => kv(client.txn(r).await),
            Err(e) => not_run(e),
        },
        Op::Compact { revision, physical } => match revision.value(&|s| board.revision(s)) {
            Ok(rev) => kv(client.compact(pb::CompactionRequest { revision: rev, physical: *physical }).await),
            Err(e) => not_run(e),
        },
        Op::LeaseGrant { ttl_s, id } => kv(client.lease_grant(pb::LeaseGrantRequest { ttl: *ttl_s, id: *id }).await),
        Op::LeaseRevoke { lease } => match board.lease(lease) {
            Some(id) => kv(client.lease_revoke(pb::LeaseRevokeRequest { id }).await),
            None => not_run(format!("lease step {lease} has no lease (it failed, or has not run yet)")),
        },
        Op::LeaseKeepAlive { lease } => match board.lease(lease) {
            Some(id) => {
                let ttl = client.lease_keep_alive(id).await;
                let ttl = ttl.ok_or_else(|| format!("no answer within {}ms", ctx.request_timeout.as_millis()));
                (Observed::Ttl(ttl.map(|t| (t, Vec::new()))), None, None)
            }
            None => not_run(format!("lease step {lease} has no lease (it failed, or has not run yet)")),
        },
        Op::LeaseTimeToLive { lease, keys } => match board.lease(lease) {
            Some(id) => (Observed::Ttl(client.lease_time_to_live(id, *keys).await), None, None),
            None => not_run(format!("lease step {lease} has no lease (it failed, or has not run yet)")),
        },
        Op::LeaseLeases => (Observed::Leases(client.lease_leases().await), None, None),
        Op::Watch(w) => match request::watch(w, board) {
            Ok(create) => open_watch(ctx, client, step, w.open_for_ms, create).await,
            Err(e) => not_run(e),
        },
        Op::WatchProgress { watch } => {
            let req = pb::watch_request::RequestUnion::ProgressRequest(pb::WatchProgressRequest {});
            send_on_watch(ctx, client, watch, req, "progress request")
        }
        Op::WatchCancel { watch } => {
            let server_id = {
                let id = board.lock().watches.get(watch).map(|w| w.id);
                id.and_then(|id| {
                    ctx.history.lock().watches[id.0]
                        .responses
                        .iter()
                        .find(|r| r.response.created)
                        .map(|r| r.response.watch_id)
                })
            };
            match server_id {
                Some(watch_id) => {
                    let req = pb::watch_request::RequestUnion::CancelRequest(pb::WatchCancelRequest { watch_id });
                    send_on_watch(ctx, client, watch, req, "cancel request")
                }
                None => not_run(format!("watch {watch} was never created")),
            }
        }
        Op::Sleep { ms } => {
            madsim::time::sleep(Duration::from_millis(*ms)).await;
            (Observed::Done, None, None)
        }
        Op::Wait(plan) => {
            let result = wait(ctx, plan).await;
            match &result {
                Ok(()) => client.trace().event(client.name(), format_args!("{} {}: holds", step.label, describe(step))),
                Err(e) => client.trace().event(client.name(), format_args!("{} {}: {e}", step.label, describe(step))),
            }
            (Observed::Waited(result), None, None)
        }
    }
}

fn send_on_watch(
    ctx: &Ctx,
    client: &RecordingClient,
    watch: &str,
    req: pb::watch_request::RequestUnion,
    what: &str,
) -> (Observed, Option<i64>, Option<i64>) {
    let sent = match ctx.board.lock().watches.get(watch) {
        Some(w) => w.requests.send(pb::WatchRequest { request_union: Some(req) }).is_ok(),
        None => false,
    };
    if sent {
        client.trace().event(client.name(), format_args!("{watch} {what} sent"));
        (Observed::Done, None, None)
    } else {
        let reason = format!("watch {watch} is not open");
        client.trace().event(client.name(), format_args!("{watch} {what} not sent: {reason}"));
        (Observed::NotRun(reason), None, None)
    }
}

/// Opens a watch beside the client and waits (at most the request timeout) until the server confirms it.
async fn open_watch(
    ctx: &Ctx,
    client: &RecordingClient,
    step: &StepPlan,
    open_for_ms: Option<u64>,
    create: pb::WatchCreateRequest,
) -> (Observed, Option<i64>, Option<i64>) {
    let (opened_tx, opened_rx) = oneshot::channel();
    let (requests_tx, requests_rx) = mpsc::unbounded_channel();
    let (close_tx, close_rx) = oneshot::channel();
    let spec = WatchSpec {
        client: client.id,
        name: client.name().to_string(),
        endpoint: client.endpoint().to_string(),
        create,
        // Without `open_for_ms` the watch stays open until the run closes it.
        open_for: Duration::from_millis(open_for_ms.unwrap_or(u64::MAX / 4)),
        control: Some(WatchControl { opened: opened_tx, requests: requests_rx, close: close_rx }),
    };
    let (history, trace) = (ctx.history.clone(), ctx.trace.clone());
    let task = madsim::task::spawn(async move {
        record_watch(spec, history, trace).await;
    });
    ctx.watch_tasks.lock().expect("watch tasks lock").push(task);
    let id = opened_rx.await.expect("record_watch reports its id before anything else");
    let name = step.name.clone().expect("validated: watch steps are named");
    ctx.board.lock().watches.insert(name, OpenWatch { id, requests: requests_tx, _close: close_tx });
    let created = poll(ctx.request_timeout, || {
        let h = ctx.history.lock();
        h.watches[id.0].responses.iter().find(|r| r.response.created).map(|r| r.response.header_revision.0)
    })
    .await;
    match created {
        Some(rev) => (Observed::Watch(Ok(id)), Some(rev), None),
        None => {
            let reason = format!("not created within {}ms", ctx.request_timeout.as_millis());
            (Observed::Watch(Err(reason)), None, None)
        }
    }
}

/// Checks `condition` every 10ms of simulated time until it gives a value or `timeout` passes.
async fn poll<T>(timeout: Duration, mut condition: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = madsim::time::Instant::now() + timeout;
    loop {
        if let Some(v) = condition() {
            return Some(v);
        }
        if madsim::time::Instant::now() >= deadline {
            return None;
        }
        madsim::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait(ctx: &Ctx, plan: &WaitPlan) -> Result<(), String> {
    match plan {
        WaitPlan::Leader { timeout_ms } => {
            let deadline = madsim::time::Instant::now() + Duration::from_millis(*timeout_ms);
            loop {
                for endpoint in &ctx.endpoints {
                    let mut m = MaintenanceClient::new(channel(endpoint));
                    let status =
                        madsim::time::timeout(Duration::from_millis(100), m.status(pb::StatusRequest {})).await;
                    if let Ok(Ok(s)) = status {
                        if s.get_ref().leader != 0 {
                            return Ok(());
                        }
                    }
                }
                if madsim::time::Instant::now() >= deadline {
                    return Err(format!("timed out after {timeout_ms}ms: no member reported a leader"));
                }
                madsim::time::sleep(Duration::from_millis(50)).await;
            }
        }
        WaitPlan::Watch { watch, condition, timeout_ms } => {
            let id = ctx.board.lock().watches.get(watch).map(|w| w.id);
            let Some(id) = id else {
                return Err(format!("watch {watch} is not open"));
            };
            let board = ctx.board.clone();
            let holds = poll(Duration::from_millis(*timeout_ms), || {
                let h = ctx.history.lock();
                let responses = &h.watches[id.0].responses;
                let ok = match condition {
                    WatchCondition::Events(n) => responses.iter().map(|r| r.response.events.len()).sum::<usize>() >= *n,
                    WatchCondition::Canceled => responses.iter().any(|r| r.response.canceled),
                    WatchCondition::Progress => responses.iter().any(|r| r.response.is_progress_notify()),
                    WatchCondition::Revision(e) => responses.iter().any(|r| {
                        let vouched = match r.response.events.last() {
                            Some(ev) => ev.revision().0,
                            None if r.response.is_progress_notify() => r.response.header_revision.0,
                            None => return false,
                        };
                        e.matches(vouched, &|s| board.revision(s)).unwrap_or(false)
                    }),
                };
                ok.then_some(())
            })
            .await;
            holds.ok_or_else(|| format!("timed out after {timeout_ms}ms"))
        }
    }
}
