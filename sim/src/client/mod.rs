//! The recording client: etcd-proto's generated KV and Watch clients, wrapped so that every request is
//! stamped into the [`History`] at invocation and return, and written to the trace as one line.
//!
//! A request that gets no answer within the client's timeout ends as `Outcome::Unknown`: under madsim an
//! established stream stalls on a partition instead of breaking, and a paused or killed member never
//! answers, so the timeout is what turns "no answer" into the ambiguous outcome the checkers expect.

mod describe;
pub mod watch;

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use tonic::transport::{Channel, Endpoint};

use crate::history::{ClientId, ErrorStatus, History, Outcome, Request, Response};
use crate::trace::Trace;

pub use describe::{describe_outcome, describe_request};

/// The history all clients of a run record into.
#[derive(Clone, Default)]
pub struct SharedHistory(Arc<Mutex<History>>);

impl SharedHistory {
    pub fn lock(&self) -> MutexGuard<'_, History> {
        self.0.lock().expect("history lock poisoned")
    }

    pub fn snapshot(&self) -> History {
        self.lock().clone()
    }
}

/// One simulated client: sequential KV requests against one endpoint.
pub struct RecordingClient {
    pub id: ClientId,
    name: String,
    kv: KvClient<Channel>,
    endpoint: String,
    history: SharedHistory,
    trace: Trace,
    timeout: Duration,
}

impl RecordingClient {
    pub fn new(id: ClientId, endpoint: &str, history: SharedHistory, trace: Trace, timeout: Duration) -> Self {
        RecordingClient {
            id,
            name: id.to_string(),
            kv: KvClient::new(channel(endpoint)),
            endpoint: endpoint.to_string(),
            history,
            trace,
            timeout,
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn history(&self) -> &SharedHistory {
        &self.history
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub async fn range(&mut self, req: pb::RangeRequest) -> Outcome {
        let request = Request::Range((&req).into());
        self.call(request, |mut kv| async move { kv.range(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn put(&mut self, req: pb::PutRequest) -> Outcome {
        let request = Request::Put((&req).into());
        self.call(request, |mut kv| async move { kv.put(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn delete_range(&mut self, req: pb::DeleteRangeRequest) -> Outcome {
        let request = Request::DeleteRange((&req).into());
        self.call(request, |mut kv| async move { kv.delete_range(req).await.map(|r| Response::from(r.get_ref())) })
            .await
    }

    pub async fn txn(&mut self, req: pb::TxnRequest) -> Outcome {
        let request = Request::Txn((&req).into());
        self.call(request, |mut kv| async move { kv.txn(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn compact(&mut self, req: pb::CompactionRequest) -> Outcome {
        let request = Request::Compact((&req).into());
        self.call(request, |mut kv| async move { kv.compact(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    /// Records the invocation, sends, waits at most the timeout, records and traces the outcome.
    async fn call<F, Fut>(&mut self, request: Request, send: F) -> Outcome
    where
        F: FnOnce(KvClient<Channel>) -> Fut,
        Fut: Future<Output = Result<Response, tonic::Status>>,
    {
        let line = describe_request(&request);
        let op = self.history.lock().invoke(self.id, request, Trace::now());
        let outcome = match tokio::time::timeout(self.timeout, send(self.kv.clone())).await {
            Ok(Ok(response)) => Outcome::Ok(response),
            Ok(Err(status)) => Outcome::Err(ErrorStatus::from(&status)),
            Err(_) => Outcome::Unknown { reason: format!("no answer within {}ms", self.timeout.as_millis()) },
        };
        self.history.lock().complete(op, Trace::now(), outcome.clone());
        self.trace.event(&self.name, format!("{line} -> {}", describe_outcome(&outcome)));
        outcome
    }
}

/// A channel that connects per request, as madsim-tonic does anyway: a member that was down is reachable
/// again as soon as it is back, with no reconnect logic in the client.
pub(crate) fn channel(endpoint: &str) -> Channel {
    Endpoint::from_shared(endpoint.to_string()).expect("the harness builds valid endpoint URLs").connect_lazy()
}
