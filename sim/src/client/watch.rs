//! A recorded watch: one gRPC watch stream with one watcher, opened with a create request, read for a
//! given span of simulated time, every response filed in the history in arrival order and traced.

use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::watch_client::WatchClient;
use etcd_proto::mvccpb::event::EventType;
use tokio::sync::mpsc;

use super::{channel, SharedHistory};
use crate::history::{ClientId, WatchCreate, WatchId, WatchResponse};
use crate::trace::Trace;

/// What a recorded watch needs to know.
pub struct WatchSpec {
    pub client: ClientId,
    pub endpoint: String,
    pub create: pb::WatchCreateRequest,
    /// How long the client keeps the stream open before it closes it.
    pub open_for: Duration,
}

/// Runs the watch to its end (the client closed it, the server ended it, or `open_for` ran out).
pub async fn record_watch(spec: WatchSpec, history: SharedHistory, trace: Trace) {
    let name = spec.client.to_string();
    let create: WatchCreate = (&spec.create).into();
    let id = history.lock().open_watch(spec.client, create, Trace::now());
    let from = spec.create.start_revision;
    trace.event(&name, format!("{id} open {} from rev={from}", String::from_utf8_lossy(&spec.create.key)));
    let deadline = madsim::time::Instant::now() + spec.open_for;
    let remaining = || deadline.saturating_duration_since(madsim::time::Instant::now());

    let (tx, rx) = mpsc::unbounded_channel();
    let create = pb::WatchRequest { request_union: Some(pb::watch_request::RequestUnion::CreateRequest(spec.create)) };
    // The receiver lives in the outbound stream; it is still there, since nothing has been polled yet.
    let _ = tx.send(create);
    let outbound = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
    let mut client = WatchClient::new(channel(&spec.endpoint));
    let mut stream = match tokio::time::timeout(remaining(), client.watch(outbound)).await {
        Ok(Ok(r)) => r.into_inner(),
        Ok(Err(status)) => {
            trace.event(&name, format!("{id} failed {:?} {:?}", status.code(), status.message()));
            return;
        }
        Err(_) => {
            trace.event(&name, format!("{id} closed (no stream within its time)"));
            return;
        }
    };
    loop {
        match tokio::time::timeout(remaining(), stream.message()).await {
            Ok(Ok(Some(resp))) => record(&history, &trace, &name, id, &resp),
            Ok(Ok(None)) => {
                trace.event(&name, format!("{id} ended by server"));
                break;
            }
            Ok(Err(status)) => {
                trace.event(&name, format!("{id} failed {:?} {:?}", status.code(), status.message()));
                break;
            }
            Err(_) => {
                trace.event(&name, format!("{id} closed by client"));
                break;
            }
        }
    }
    drop(tx);
}

fn record(history: &SharedHistory, trace: &Trace, name: &str, id: WatchId, resp: &pb::WatchResponse) {
    history.lock().watch_response(id, Trace::now(), WatchResponse::from(resp));
    let rev = resp.header.as_ref().map_or(0, |h| h.revision);
    if resp.created {
        trace.event(name, format!("{id} created rev={rev}"));
    }
    if resp.canceled {
        trace.event(name, format!("{id} canceled compact={} {:?}", resp.compact_revision, resp.cancel_reason));
    }
    if !resp.created && !resp.canceled && resp.events.is_empty() {
        trace.event(name, format!("{id} progress rev={rev}"));
    }
    for e in &resp.events {
        let kind = if e.r#type() == EventType::Delete { "delete" } else { "put" };
        let (key, mod_rev) = e.kv.as_ref().map_or((Vec::new(), 0), |kv| (kv.key.clone(), kv.mod_revision));
        trace.event(name, format!("{id} event {kind} {} rev={mod_rev}", String::from_utf8_lossy(&key)));
    }
}
