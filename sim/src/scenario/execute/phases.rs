//! The phases of a scenario run, in the order [`super::drive`] takes them: build the cluster; start the
//! scripted clients, the workloads, the scheduled faults and the nemesis; wait for the clients within the
//! time limit; stop the faults; close the watches still open.
//!
//! The order is part of the run's determinism: tasks are spawned, and so scheduled, in this order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use madsim::task::JoinHandle;

use super::api_workload::ApiWorkloads;
use super::lifecycle;
use super::script::run_script;
use super::StepRecord;
use crate::client::{RecordingClient, SharedHistory};
use crate::cluster::{Cluster, Seeds};
use crate::fault::{nemesis, roles, Fault, Injector};
use crate::history::WatchId;
use crate::scenario::plan::{Scenario, When, WorkloadKind};
use crate::scenario::steps::board::Board;
use crate::scenario::steps::ctx::Ctx;
use crate::scenario::steps::kube_conn::KubeConn;
use crate::scenario::steps::observed::KubeEvent;
use crate::trace::Trace;
use crate::workload::run_client;

/// Each scripted client's step records, in file order.
pub(super) type Records = Arc<Mutex<Vec<Vec<StepRecord>>>>;

/// Builds the cluster, traces the start, arms the failpoints, and waits until every member listens (and,
/// with apiservers, until every apiserver is ready and the webhooks are configured) before the first
/// request.
pub(super) async fn start_cluster(
    scenario: &Scenario,
    seed: u64,
    seeds: Seeds,
    trace: &Trace,
    history: &SharedHistory,
) -> Arc<Cluster> {
    let cluster = Arc::new(Cluster::build(&scenario.cluster, trace, seeds));
    trace.event(
        "sim",
        format_args!(
            "start scenario={} seed={seed} members={} clients={}",
            scenario.name,
            cluster.members.len(),
            cluster.clients.len()
        ),
    );
    lifecycle::prepare(&cluster, &scenario.failpoints, trace, history);
    lifecycle::members_listening(&cluster, trace).await;
    if !cluster.apiservers.is_empty() {
        // Kubernetes clients start once every apiserver is ready (caches listed, system namespaces made), as
        // they would behind a load balancer that checks /readyz.
        cluster.wait_for_apiservers().await;
        trace.event("sim", "apiservers ready");
        // The RBAC bootstrap policy and the webhooks' configurations exist before any client sends, as
        // kube-apiserver's readiness waits for the first and an operator installs the second first.
        super::access::wait_for_rbac_policy(&cluster, &scenario.cluster, trace).await;
        super::access::install(&cluster, trace).await;
    }
    cluster
}

/// Starts each scripted client on its node, talking to its member. Scripted clients are the cluster's
/// first clients, in file order.
pub(super) fn start_scripts(
    scenario: &Scenario,
    cluster: &Cluster,
    ctx: &Arc<Ctx>,
    records: &Records,
    seeds: Seeds,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    for (i, script) in scenario.clients.iter().enumerate() {
        let node = &cluster.clients[i];
        debug_assert_eq!(node.name, script.name, "scripted clients come first, in file order");
        // A Kubernetes client has no member; its recording client (for waits and sleeps) names the first.
        let member = scenario.cluster.member_names().iter().position(|m| *m == script.member).unwrap_or(0);
        let token = script.user.as_deref().map(crate::cluster::access::token_of);
        let kube = script.kube.as_ref().map(|t| KubeConn::new(&script.name, t, cluster, seeds, token));
        let client = RecordingClient::new(
            node.client,
            &ctx.endpoints[member],
            ctx.history.clone(),
            ctx.trace.clone(),
            ctx.request_timeout,
        )
        .named(&script.name);
        let (ctx, script, records) = (ctx.clone(), script.clone(), records.clone());
        tasks.push(node.node.spawn(async move { run_script(&ctx, client, kube, &script, i, &records).await }));
    }
    tasks
}

/// Starts every workload's clients, which follow the scripted ones; `api` carries the apiserver workloads'
/// recorder (there is one if the scenario has such a workload).
pub(super) fn start_workloads(
    scenario: &Scenario,
    cluster: &Cluster,
    ctx: &Ctx,
    seeds: Seeds,
    api: Option<&ApiWorkloads>,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    let mut next = scenario.clients.len();
    for w in &scenario.workloads {
        for (j, name) in w.clients.iter().enumerate() {
            let node = &cluster.clients[next];
            next += 1;
            debug_assert_eq!(&node.name, name);
            let ops = lifecycle::share(w.ops, w.clients.len(), j);
            let kind = match w.kind {
                WorkloadKind::Etcd(kind) => kind,
                WorkloadKind::Apiserver => {
                    let api = api.expect("an apiserver workload has its recorder");
                    tasks.push(api.spawn_client(cluster, &node.node, name, j, ops, seeds));
                    continue;
                }
            };
            // Workload clients spread over the members, as clients pinned to single members do in etcd's tests.
            let endpoint = &ctx.endpoints[j % ctx.endpoints.len()];
            let client = RecordingClient::new(
                node.client,
                endpoint,
                ctx.history.clone(),
                ctx.trace.clone(),
                ctx.request_timeout,
            )
            .named(name);
            let rng = seeds.rng(&format!("workload/{name}"));
            tasks.push(node.node.spawn(run_client(kind, client, rng, ops)));
        }
        if let Some((name, steps)) = &w.script {
            let node = &cluster.clients[next];
            next += 1;
            debug_assert_eq!(&node.name, name);
            let api = api.expect("an apiserver workload has its recorder");
            tasks.push(api.spawn_script(cluster, &node.node, name, *steps, seeds));
        }
    }
    tasks
}

/// A scheduled `[[fault]]`'s task, and how far it got: what the end of the run must still undo.
pub(super) struct Scheduled {
    task: JoinHandle<()>,
    /// The fault as applied (its roles named), while its `for_ms` undo is still to come.
    pending_undo: Arc<Mutex<Option<Fault>>>,
    applied: Arc<AtomicBool>,
}

/// Schedules each `[[fault]]` on the control node, at its time or after its step; a fault aimed at a role
/// names its node when it applies, and one with `for_ms` is undone that long after.
pub(super) fn schedule_faults(
    scenario: &Scenario,
    cluster: &Cluster,
    faults: &Injector,
    board: &Arc<Board>,
    seeds: Seeds,
) -> Vec<Scheduled> {
    let mut scheduled = Vec::new();
    for (i, f) in scenario.faults.clone().into_iter().enumerate() {
        let (faults, board) = (faults.clone(), board.clone());
        let pending_undo: Arc<Mutex<Option<Fault>>> = Arc::default();
        let applied = Arc::new(AtomicBool::new(false));
        let (undo_slot, applied_flag) = (pending_undo.clone(), applied.clone());
        let mut rng = seeds.rng(&format!("fault/{i}"));
        let task = cluster.control.spawn(async move {
            match &f.when {
                // Simulated time since the run began, as a step's `at_ms` counts it.
                When::At { ms } => {
                    let (at, now) = (Duration::from_millis(*ms), madsim::time::TimeHandle::current().elapsed());
                    madsim::time::sleep(at.saturating_sub(now)).await;
                }
                When::After { step, delay_ms } => {
                    board.wait_done(std::slice::from_ref(step)).await;
                    madsim::time::sleep(Duration::from_millis(*delay_ms)).await;
                }
            }
            let fault = match roles::resolve(&f.fault, faults.cluster(), &mut rng).await {
                Ok(fault) => fault,
                Err(why) => {
                    faults.cluster().trace.event("sim", format_args!("fault {} not applied: {why}", f.fault));
                    applied_flag.store(true, Ordering::SeqCst);
                    return;
                }
            };
            let undo = f.for_ms.and_then(|_| roles::undo(&fault));
            *undo_slot.lock().expect("undo lock") = undo.clone();
            faults.apply(&fault);
            applied_flag.store(true, Ordering::SeqCst);
            if let (Some(ms), Some(undo)) = (f.for_ms, undo) {
                madsim::time::sleep(Duration::from_millis(ms)).await;
                undo_slot.lock().expect("undo lock").take();
                faults.apply(&undo);
            }
        });
        scheduled.push(Scheduled { task, pending_undo, applied });
    }
    scheduled
}

/// Starts the nemesis on the control node, if the scenario has one; it runs until `stop` is set, and its
/// compactions never pass the apiserver record (`api`), which must not lose a revision.
pub(super) fn start_nemesis(
    scenario: &Scenario,
    cluster: &Cluster,
    faults: &Injector,
    seeds: Seeds,
    stop: &Arc<AtomicBool>,
    api: Option<&ApiWorkloads>,
    board: &Arc<Board>,
) -> Option<JoinHandle<()>> {
    scenario.nemesis.clone().map(|config| {
        let rng = seeds.rng("nemesis");
        let horizon = api.map(ApiWorkloads::horizon);
        let (faults, stop, board) = (faults.clone(), stop.clone(), board.clone());
        cluster.control.spawn(async move {
            if let Some(step) = &config.after {
                board.wait_done(std::slice::from_ref(step)).await;
            }
            nemesis::run(faults, config, rng, stop, horizon).await
        })
    })
}

/// Waits for every client within the scenario's time limit; if it runs out, stops them. Whether it ran
/// out.
pub(super) async fn wait_for_clients(scenario: &Scenario, clients: &mut [JoinHandle<()>], trace: &Trace) -> bool {
    let limit = Duration::from_secs(scenario.time_limit_s);
    let all_clients = async {
        for t in clients.iter_mut() {
            // A join error means a client task panicked, which is a harness bug.
            t.await.expect("client task panicked");
        }
    };
    let timed_out = madsim::time::timeout(limit, all_clients).await.is_err();
    if timed_out {
        trace.event("sim", format_args!("time limit of {}s reached; stopping the clients", scenario.time_limit_s));
        for t in clients.iter() {
            t.abort();
        }
    }
    timed_out
}

/// Stops the nemesis, which heals what it broke, and every scheduled fault: the trace says which were never
/// applied (a fault due after the last client step would otherwise vanish without a word), and a fault
/// whose `for_ms` had not run out is undone now, so that a killed member is back for the end of the run.
pub(super) async fn stop_faults(
    scenario: &Scenario,
    faults: &Injector,
    stop: &AtomicBool,
    nemesis: Option<JoinHandle<()>>,
    scheduled: &[Scheduled],
) {
    stop.store(true, Ordering::SeqCst);
    if let Some(n) = nemesis {
        n.await.expect("nemesis task panicked");
    }
    let trace = &faults.cluster().trace;
    for (s, f) in scheduled.iter().zip(&scenario.faults) {
        s.task.abort();
        if !s.applied.load(Ordering::SeqCst) {
            trace.event("sim", format_args!("fault {} never applied: the clients finished first", f.fault));
        } else if let Some(undo) = s.pending_undo.lock().expect("undo lock").take() {
            trace.event("sim", format_args!("the clients finished before `for_ms` ran out; undoing now"));
            faults.apply(&undo);
        }
    }
}

/// Stops collecting the `kube` watches' events; each watch step's events, by step label.
pub(super) async fn close_kube_watches(ctx: &Ctx) -> BTreeMap<String, Vec<KubeEvent>> {
    let watches = std::mem::take(&mut *ctx.kube_watches.lock().expect("kube watches lock"));
    for task in &watches.tasks {
        task.abort();
    }
    watches.events.into_iter().map(|(label, events)| (label, events.lock().expect("events lock").clone())).collect()
}

/// Closes every watch still open; each ends at once (its closer is gone) and files nothing more. Each
/// watch step's watch in the history, by step name.
pub(super) async fn close_watches(ctx: &Ctx) -> BTreeMap<String, WatchId> {
    let open = std::mem::take(&mut ctx.board.lock().watches);
    let watches: BTreeMap<String, WatchId> = open.iter().map(|(name, w)| (name.clone(), w.id)).collect();
    drop(open);
    let watch_tasks: Vec<_> = std::mem::take(&mut *ctx.watch_tasks.lock().expect("watch tasks lock"));
    for w in watch_tasks {
        // A watch stuck on a held failpoint or a dead member must not hold up the end of the run.
        if madsim::time::timeout(Duration::from_secs(5), w).await.is_err() {
            ctx.trace.event("sim", "a watch did not close within 5s");
        }
    }
    watches
}
