//! A scenario's watch steps: opening a watch beside the client (its stream recorded in the history until
//! the run closes it), and sending progress and cancel requests on an open watch's stream.

use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use tokio::sync::{mpsc, oneshot};

use super::board::OpenWatch;
use super::ctx::{not_run, Ctx, Finished};
use super::wait::poll;
use super::Observed;
use crate::client::watch::{record_watch, WatchControl, WatchSpec};
use crate::client::RecordingClient;
use crate::scenario::plan::{Op, StepPlan};
use crate::scenario::request;

/// Runs a watch, watch-progress or watch-cancel step.
pub(super) async fn watch_step(ctx: &Ctx, client: &RecordingClient, step: &StepPlan) -> Finished {
    match &step.op {
        Op::Watch(w) => match request::watch(w, &*ctx.board) {
            Ok(create) => open_watch(ctx, client, step, w.open_for_ms, create).await,
            Err(e) => not_run(client, step, e),
        },
        Op::WatchProgress { watch } => {
            let req = pb::watch_request::RequestUnion::ProgressRequest(pb::WatchProgressRequest {});
            send_on_watch(ctx, client, watch, req, "progress request")
        }
        Op::WatchCancel { watch } => {
            let server_id = {
                let id = ctx.board.lock().watches.get(watch).map(|w| w.id);
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
                None => not_run(client, step, format!("watch {watch} was never created")),
            }
        }
        _ => unreachable!("run_step sends only watch steps here"),
    }
}

fn send_on_watch(
    ctx: &Ctx,
    client: &RecordingClient,
    watch: &str,
    req: pb::watch_request::RequestUnion,
    what: &str,
) -> Finished {
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
) -> Finished {
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
        token: client.token().map(String::from),
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
