//! A recorded watch: one gRPC watch stream with one watcher, opened with a create request, read for a
//! given span of simulated time, every response filed in the history in arrival order and traced. It
//! tells its caller how it ended and the newest revision it vouched for, so that an informer can resume
//! from there.
//!
//! One deadline timer serves the whole watch: a timeout per message would leave one timer per event in
//! madsim's timer heap until it expires, which was a tenth of a run's cost.

use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::watch_client::WatchClient;
use tokio::sync::mpsc;

use super::{channel, SharedHistory};
use crate::describe::{self, WatchTarget};
use crate::history::{ClientId, WatchCreate, WatchId, WatchResponse};
use crate::trace::Trace;

/// What a recorded watch needs to know.
pub struct WatchSpec {
    pub client: ClientId,
    /// The client's name in the trace.
    pub name: String,
    pub endpoint: String,
    pub create: pb::WatchCreateRequest,
    /// How long the client keeps the stream open before it closes it.
    pub open_for: Duration,
    /// A scenario's handle on the stream; `None` for generated traffic.
    pub control: Option<WatchControl>,
    /// The token of the user the client logged in as, sent with the stream.
    pub token: Option<String>,
}

/// What a scenario needs beyond a plain watch: to learn its history id, to send more requests on its
/// stream (progress requests, cancels), and to close it when the run ends.
pub struct WatchControl {
    pub opened: tokio::sync::oneshot::Sender<WatchId>,
    pub requests: mpsc::UnboundedReceiver<pb::WatchRequest>,
    pub close: tokio::sync::oneshot::Receiver<()>,
}

/// How a recorded watch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEnd {
    /// `open_for` ran out and the client closed the stream.
    Closed,
    /// The server canceled the watch because its start revision was compacted.
    Compacted,
    /// No stream, an error status, or a stream the server ended: the client may retry.
    Failed,
}

/// What a recorded watch saw: how it ended and the newest revision it vouched for (its last event's, or a
/// progress notification's), 0 if none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchOutcome {
    pub end: WatchEnd,
    pub last_revision: i64,
}

/// Runs the watch to its end (the client closed it, the server ended it, or `open_for` ran out).
pub async fn record_watch(spec: WatchSpec, history: SharedHistory, trace: Trace) -> WatchOutcome {
    let name = spec.name.clone();
    let create: WatchCreate = (&spec.create).into();
    let target = WatchTarget::of(&create).to_string();
    let id = history.lock().open_watch(spec.client, create, Trace::now());
    trace.event(&name, format_args!("{id} open {target}"));
    let (extra, close) = match spec.control {
        Some(c) => {
            // The scenario may have stopped waiting for the id; the watch runs all the same.
            let _ = c.opened.send(id);
            (Some(c.requests), Some(c.close))
        }
        None => (None, None),
    };
    // The watch ends when its time is up or, for a scenario's watch, when the scenario closes it (or drops
    // the closer, which it does only at the end of the run).
    let open_for = spec.open_for;
    let deadline = async move {
        match close {
            None => madsim::time::sleep(open_for).await,
            Some(close) => {
                tokio::select! {
                    biased;
                    _ = close => {}
                    () = madsim::time::sleep(open_for) => {}
                }
            }
        }
    };
    tokio::pin!(deadline);
    let mut last_revision = 0;
    let failed = WatchOutcome { end: WatchEnd::Failed, last_revision };

    let (tx, rx) = mpsc::unbounded_channel();
    let create = pb::WatchRequest { request_union: Some(pb::watch_request::RequestUnion::CreateRequest(spec.create)) };
    // The receiver lives in the outbound stream; it is still there, since nothing has been polled yet.
    let _ = tx.send(create);
    // A scenario's further requests follow the create on the same stream. The sender `tx` stays alive to
    // the end, so the stream never ends on the client's side before the watch is closed.
    let rx = match extra {
        None => rx,
        Some(mut extra) => {
            let forward = tx.clone();
            madsim::task::spawn(async move {
                while let Some(m) = extra.recv().await {
                    if forward.send(m).is_err() {
                        break;
                    }
                }
            });
            rx
        }
    };
    let outbound = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
    let mut client = WatchClient::new(channel(&spec.endpoint));
    let opened = tokio::select! {
        biased;
        r = client.watch(super::with_token(spec.token.as_deref(), outbound)) => r,
        () = &mut deadline => {
            trace.event(&name, format_args!("{id} closed (no stream within its time)"));
            return failed;
        }
    };
    let mut stream = match opened {
        Ok(r) => r.into_inner(),
        Err(status) => {
            trace.event(&name, format_args!("{id} failed {:?} {:?}", status.code(), status.message()));
            return failed;
        }
    };
    let end = loop {
        let message = tokio::select! {
            biased;
            m = stream.message() => m,
            () = &mut deadline => {
                trace.event(&name, format_args!("{id} closed by client"));
                break WatchEnd::Closed;
            }
        };
        match message {
            Ok(Some(resp)) => {
                if resp.canceled && resp.compact_revision > 0 {
                    record(&history, &trace, &name, id, resp);
                    break WatchEnd::Compacted;
                }
                last_revision = last_revision.max(vouched(&resp));
                record(&history, &trace, &name, id, resp);
            }
            Ok(None) => {
                trace.event(&name, format_args!("{id} ended by server"));
                break WatchEnd::Failed;
            }
            Err(status) => {
                trace.event(&name, format_args!("{id} failed {:?} {:?}", status.code(), status.message()));
                break WatchEnd::Failed;
            }
        }
    };
    drop(tx);
    WatchOutcome { end, last_revision }
}

/// The newest revision a response promises the watch has delivered everything up to: its last event's,
/// or a progress notification's header revision.
fn vouched(resp: &pb::WatchResponse) -> i64 {
    match resp.events.last() {
        Some(e) => e.kv.as_ref().map_or(0, |kv| kv.mod_revision),
        None if !resp.created && !resp.canceled && resp.compact_revision == 0 => {
            resp.header.as_ref().map_or(0, |h| h.revision)
        }
        None => 0,
    }
}

/// Traces the response and files it in the history (moving it, no copy).
fn record(history: &SharedHistory, trace: &Trace, name: &str, id: WatchId, resp: pb::WatchResponse) {
    let resp = WatchResponse::from(resp);
    let rev = resp.header_revision;
    if resp.created {
        trace.event(name, format_args!("{id} created rev={rev}"));
    }
    if resp.canceled {
        trace.event(name, format_args!("{id} {}", describe::cancel(&resp)));
    }
    if !resp.created && !resp.canceled && resp.events.is_empty() {
        trace.event(name, format_args!("{id} progress rev={rev}"));
    }
    for e in &resp.events {
        trace.event(name, format_args!("{id} event {}", describe::event(e)));
    }
    history.lock().watch_response(id, Trace::now(), resp);
}
