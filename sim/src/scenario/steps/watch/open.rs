//! The async half of a watch step: opening the watch beside the client (its stream recorded in the history
//! until the run closes it) and waiting until the server confirms it; and sending progress and cancel
//! requests on an open watch's stream.

use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use tokio::sync::{mpsc, oneshot};

use crate::client::watch::{record_watch, WatchControl, WatchSpec};
use crate::scenario::steps::board::OpenWatch;
use crate::scenario::steps::ctx::{poll, Finished, RunCx};
use crate::scenario::steps::observed::Observed;

/// Opens a watch beside the client and waits (at most the request timeout) until the server confirms it.
pub(super) async fn open_watch(cx: &mut RunCx<'_>, open_for_ms: Option<u64>, create: pb::WatchCreateRequest) -> Finished {
    let ctx = cx.ctx;
    let (opened_tx, opened_rx) = oneshot::channel();
    let (requests_tx, requests_rx) = mpsc::unbounded_channel();
    let (close_tx, close_rx) = oneshot::channel();
    let spec = WatchSpec {
        client: cx.client.id,
        name: cx.client.name().to_string(),
        endpoint: cx.client.endpoint().to_string(),
        create,
        // Without `open_for_ms` the watch stays open until the run closes it.
        open_for: Duration::from_millis(open_for_ms.unwrap_or(u64::MAX / 4)),
        control: Some(WatchControl { opened: opened_tx, requests: requests_rx, close: close_rx }),
        token: cx.client.token().map(String::from),
    };
    let (history, trace) = (ctx.history.clone(), ctx.trace.clone());
    let task = madsim::task::spawn(async move {
        record_watch(spec, history, trace).await;
    });
    ctx.watch_tasks.lock().expect("watch tasks lock").push(task);
    let id = opened_rx.await.expect("record_watch reports its id before anything else");
    let name = cx.name.expect("validated: watch steps are named").to_string();
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

/// Sends a request on the named watch's stream (a progress request, a cancel).
pub fn send_on_watch(cx: &RunCx<'_>, watch: &str, req: pb::watch_request::RequestUnion, what: &str) -> Finished {
    let sent = match cx.ctx.board.lock().watches.get(watch) {
        Some(w) => w.requests.send(pb::WatchRequest { request_union: Some(req) }).is_ok(),
        None => false,
    };
    if sent {
        cx.ctx.trace.event(cx.client_name, format_args!("{watch} {what} sent"));
        (Observed::Done, None, None)
    } else {
        let reason = format!("watch {watch} is not open");
        cx.ctx.trace.event(cx.client_name, format_args!("{watch} {what} not sent: {reason}"));
        (Observed::NotRun(reason), None, None)
    }
}
