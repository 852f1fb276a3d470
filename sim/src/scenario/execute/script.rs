//! One scripted client: its steps in order, each after its `after` steps and its `at_ms`, each recorded
//! with what its client observed and finished on the [`Board`] (its revision and lease for later steps).

use std::sync::Mutex;
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;

use super::board::Board;
use super::controller::controller_step;
use super::ctx::{not_run, Ctx, Finished};
use super::informer::informer_step;
use super::kube::{kube_step, KubeConn};
use super::{Observed, StepRecord};
use crate::client::RecordingClient;
use crate::history::{self as h, Outcome, ResponseBody};
use crate::scenario::plan::{ClientScript, Op, StepPlan};
use crate::scenario::request::{self, Known};
use crate::scenario::step_text::step_text;

/// Runs the client's steps in order, filing each step's record as it finishes.
pub(super) async fn run_script(
    ctx: &Ctx,
    mut client: RecordingClient,
    mut kube: Option<KubeConn>,
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
        let (observed, revision, lease) = match (&step.op, &mut kube) {
            (Op::Kube(plan), Some(conn)) => kube_step(ctx, conn, &script.name, step, plan).await,
            (Op::Informer(plan), Some(conn)) => informer_step(ctx, conn, &script.name, step, plan).await,
            (Op::Controller(plan), Some(conn)) => controller_step(ctx, conn, &script.name, step, plan).await,
            _ => run_step(ctx, &mut client, step).await,
        };
        let record = StepRecord { label: step.label.clone(), request: step_text(step), observed };
        records.lock().expect("records lock")[index].push(record);
        ctx.board.finish(step.name.as_deref(), revision, lease);
    }
}

/// Runs one step.
async fn run_step(ctx: &Ctx, client: &mut RecordingClient, step: &StepPlan) -> Finished {
    match &step.op {
        Op::Get(_)
        | Op::Put(_)
        | Op::Delete(_)
        | Op::Txn(_)
        | Op::Compact { .. }
        | Op::LeaseGrant { .. }
        | Op::LeaseRevoke { .. } => kv_step(&ctx.board, client, step).await,
        Op::LeaseKeepAlive { .. } | Op::LeaseTimeToLive { .. } | Op::LeaseLeases => lease_step(ctx, client, step).await,
        Op::Watch(_) | Op::WatchProgress { .. } | Op::WatchCancel { .. } => {
            super::watch::watch_step(ctx, client, step).await
        }
        Op::Sleep { ms } => {
            madsim::time::sleep(Duration::from_millis(*ms)).await;
            (Observed::Done, None, None)
        }
        Op::Kube(_) | Op::Informer(_) | Op::Controller(_) => {
            unreachable!("validated: only Kubernetes clients send kube steps")
        }
        Op::Auth(plan) => super::auth::auth_step(client, step, plan).await,
        Op::InformerRestart { informer } => {
            let done = super::informer::restart(ctx, informer);
            let shown = done.as_ref().map_or_else(|e| e.clone(), |()| "done".to_string());
            client.trace().event(client.name(), format_args!("{} {}: {shown}", step.label, step_text(step)));
            match done {
                Ok(()) => (Observed::Done, None, None),
                Err(e) => (Observed::NotRun(e), None, None),
            }
        }
        Op::Wait(plan) => {
            let result = super::wait::wait(ctx, plan).await;
            match &result {
                Ok(()) => {
                    client.trace().event(client.name(), format_args!("{} {}: holds", step.label, step_text(step)))
                }
                Err(e) => client.trace().event(client.name(), format_args!("{} {}: {e}", step.label, step_text(step))),
            }
            (Observed::Waited(result), None, None)
        }
    }
}

/// A request filed in the history: the KV requests, compaction, lease grant and revoke.
async fn kv_step(board: &Board, client: &mut RecordingClient, step: &StepPlan) -> Finished {
    let outcome = match &step.op {
        Op::Get(g) => match request::range(g, board) {
            Ok(r) => client.range(r).await,
            Err(e) => return not_run(client, step, e),
        },
        Op::Put(p) => match request::put(p, board) {
            Ok(r) => client.put(r).await,
            Err(e) => return not_run(client, step, e),
        },
        Op::Delete(d) => client.delete_range(request::delete(d)).await,
        Op::Txn(t) => match request::txn(t, board) {
            Ok(r) => client.txn(r).await,
            Err(e) => return not_run(client, step, e),
        },
        Op::Compact { revision, physical } => match revision.value(&|s| board.revision(s)) {
            Ok(rev) => client.compact(pb::CompactionRequest { revision: rev, physical: *physical }).await,
            Err(e) => return not_run(client, step, e),
        },
        Op::LeaseGrant { ttl_s, id } => client.lease_grant(pb::LeaseGrantRequest { ttl: *ttl_s, id: *id }).await,
        Op::LeaseRevoke { lease } => match board.lease(lease) {
            Some(id) => client.lease_revoke(pb::LeaseRevokeRequest { id }).await,
            None => return not_run(client, step, no_lease(lease)),
        },
        _ => unreachable!("run_step sends only KV requests here"),
    };
    let revision = match &outcome {
        Outcome::Ok(r) => Some(r.header_revision.0),
        _ => None,
    };
    let lease = match &outcome {
        Outcome::Ok(h::Response { body: ResponseBody::LeaseGrant(g), .. }) => Some(g.id.0),
        _ => None,
    };
    (Observed::Kv(outcome), revision, lease)
}

/// A lease request that is traced but not filed in the history: keep-alive, time-to-live, listing.
async fn lease_step(ctx: &Ctx, client: &mut RecordingClient, step: &StepPlan) -> Finished {
    let observed = match &step.op {
        Op::LeaseKeepAlive { lease } => match ctx.board.lease(lease) {
            Some(id) => {
                let ttl = client.lease_keep_alive(id).await;
                let ttl = ttl.ok_or_else(|| format!("no answer within {}ms", ctx.request_timeout.as_millis()));
                Observed::Ttl(ttl.map(|t| (t, Vec::new())))
            }
            None => return not_run(client, step, no_lease(lease)),
        },
        Op::LeaseTimeToLive { lease, keys } => match ctx.board.lease(lease) {
            Some(id) => Observed::Ttl(client.lease_time_to_live(id, *keys).await),
            None => return not_run(client, step, no_lease(lease)),
        },
        Op::LeaseLeases => Observed::Leases(client.lease_leases().await),
        _ => unreachable!("run_step sends only lease reads here"),
    };
    (observed, None, None)
}

fn no_lease(lease: &str) -> String {
    format!("lease step {lease} has no lease (it failed, or has not run yet)")
}
