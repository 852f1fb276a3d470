//! The recording client: etcd-proto's generated KV and Watch clients, wrapped so that every request is
//! stamped into the [`History`] at invocation and return, and written to the trace as one line.
//!
//! A request that gets no answer within the client's timeout ends as `Outcome::Unknown`: under madsim an
//! established stream stalls on a partition instead of breaking, and a paused or killed member never
//! answers, so the timeout is what turns "no answer" into the ambiguous outcome the checkers expect. A
//! request that could not even connect ends as `Outcome::NotSent`: it certainly did nothing.

pub mod watch;

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::lease_client::LeaseClient;
use tonic::transport::{Channel, Endpoint};

use crate::describe;
use crate::history::{Bytes, ClientId, ErrorStatus, History, Outcome, Request, Response};
use crate::trace::Trace;

/// The history all clients of a run record into.
#[derive(Clone, Default)]
pub struct SharedHistory(Arc<Mutex<History>>);

impl SharedHistory {
    pub fn lock(&self) -> MutexGuard<'_, History> {
        self.0.lock().expect("history lock poisoned")
    }

    /// Takes the history out, leaving an empty one: the end of a run needs it once, and a copy of
    /// thousands of watch events would cost more than the recording did.
    pub fn take(&self) -> History {
        std::mem::take(&mut *self.lock())
    }
}

/// One simulated client: sequential KV requests against one endpoint.
pub struct RecordingClient {
    pub id: ClientId,
    name: String,
    kv: KvClient<Channel>,
    lease: LeaseClient<Channel>,
    endpoint: String,
    history: SharedHistory,
    trace: Trace,
    timeout: Duration,
    /// The simple token of the user the client logged in as (an `auth` login step); every request carries
    /// it in the `token` metadata, as clientv3 does after `Authenticate`.
    token: Option<String>,
}

impl RecordingClient {
    pub fn new(id: ClientId, endpoint: &str, history: SharedHistory, trace: Trace, timeout: Duration) -> Self {
        RecordingClient {
            id,
            name: id.to_string(),
            kv: KvClient::new(channel(endpoint)),
            lease: LeaseClient::new(channel(endpoint)),
            endpoint: endpoint.to_string(),
            history,
            trace,
            timeout,
            token: None,
        }
    }

    /// The token the client's requests carry, if it logged in.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Logs the client in with `token` (`Some`) or out (`None`).
    pub fn set_token(&mut self, token: Option<String>) {
        self.token = token;
    }

    /// `message` as a request carrying the client's token, if it has one.
    pub fn authorized<T>(&self, message: T) -> tonic::Request<T> {
        with_token(self.token.as_deref(), message)
    }

    /// Names the client in the trace (default `c<id>`): a scenario's clients go by their own names.
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    pub fn name(&self) -> &str {
        &self.name
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
        let req = self.authorized(req);
        self.call(request, |mut kv| async move { kv.range(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn put(&mut self, req: pb::PutRequest) -> Outcome {
        let request = Request::Put((&req).into());
        let req = self.authorized(req);
        self.call(request, |mut kv| async move { kv.put(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn delete_range(&mut self, req: pb::DeleteRangeRequest) -> Outcome {
        let request = Request::DeleteRange((&req).into());
        let req = self.authorized(req);
        self.call(request, |mut kv| async move { kv.delete_range(req).await.map(|r| Response::from(r.get_ref())) })
            .await
    }

    pub async fn txn(&mut self, req: pb::TxnRequest) -> Outcome {
        let request = Request::Txn((&req).into());
        let req = self.authorized(req);
        self.call(request, |mut kv| async move { kv.txn(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn compact(&mut self, req: pb::CompactionRequest) -> Outcome {
        let request = Request::Compact((&req).into());
        let req = self.authorized(req);
        self.call(request, |mut kv| async move { kv.compact(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn lease_grant(&mut self, req: pb::LeaseGrantRequest) -> Outcome {
        let request = Request::LeaseGrant((&req).into());
        let req = self.authorized(req);
        let mut lease = self.lease.clone();
        self.call(request, |_| async move { lease.lease_grant(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    pub async fn lease_revoke(&mut self, req: pb::LeaseRevokeRequest) -> Outcome {
        let request = Request::LeaseRevoke((&req).into());
        let req = self.authorized(req);
        let mut lease = self.lease.clone();
        self.call(request, |_| async move { lease.lease_revoke(req).await.map(|r| Response::from(r.get_ref())) }).await
    }

    /// One keep-alive round trip on a fresh stream. Traced, not filed in the history: a renewal changes no
    /// state a read can see, only when the lease expires, and an expiry is recorded where it happens.
    /// Returns the TTL the member granted, 0 for a lease it does not know, `None` without an answer.
    pub async fn lease_keep_alive(&mut self, id: i64) -> Option<i64> {
        let mut lease = self.lease.clone();
        let token = self.token.clone();
        let once = async move {
            let req = pb::LeaseKeepAliveRequest { id };
            let mut stream =
                lease.lease_keep_alive(with_token(token.as_deref(), futures::stream::iter([req]))).await?.into_inner();
            stream.message().await
        };
        let ttl = match tokio::time::timeout(self.timeout, once).await {
            Ok(Ok(Some(resp))) => Some(resp.ttl),
            _ => None,
        };
        let id = crate::history::LeaseId(id);
        let asked = describe::FromFn(|f: &mut std::fmt::Formatter<'_>| describe::write_lease_keep_alive(f, &id));
        match ttl {
            Some(ttl) => self.trace.event(&self.name, format_args!("{asked} -> ok ttl={ttl}")),
            None => self.trace.event(&self.name, format_args!("{asked} -> no answer")),
        }
        ttl
    }

    /// Asks how long a lease has left, and with `keys` which keys it holds. Traced, not filed in the history,
    /// like a keep-alive. Returns the remaining TTL (-1 for a lease the member does not know, as etcd
    /// answers) with the keys in key order (empty unless asked for), or what went wrong.
    pub async fn lease_time_to_live(&mut self, id: i64, keys: bool) -> Result<(i64, Vec<Bytes>), String> {
        let mut lease = self.lease.clone();
        let req = pb::LeaseTimeToLiveRequest { id, keys };
        let answer = match tokio::time::timeout(self.timeout, lease.lease_time_to_live(self.authorized(req))).await {
            Ok(Ok(resp)) => {
                let resp = resp.into_inner();
                // etcd lists a lease's keys from a map, in no set order; sorted, they compare across members.
                let mut keys: Vec<Bytes> = resp.keys.into_iter().map(Bytes).collect();
                keys.sort_unstable();
                Ok((resp.ttl, keys))
            }
            Ok(Err(status)) => Err(format!("err {:?} {:?}", status.code(), status.message())),
            Err(_) => Err(format!("no answer within {}ms", self.timeout.as_millis())),
        };
        let id = crate::history::LeaseId(id);
        let asked =
            describe::FromFn(|f: &mut std::fmt::Formatter<'_>| describe::write_lease_time_to_live(f, &id, keys));
        match &answer {
            Ok((ttl, _)) => self.trace.event(&self.name, format_args!("{asked} -> ok ttl={ttl}")),
            Err(e) => self.trace.event(&self.name, format_args!("{asked} -> {e}")),
        }
        answer
    }

    /// Lists the leases the member knows (`LeaseLeases`), sorted by id. Traced, not filed in the history:
    /// it changes nothing.
    pub async fn lease_leases(&mut self) -> Result<Vec<i64>, String> {
        let mut lease = self.lease.clone();
        let answer =
            match tokio::time::timeout(self.timeout, lease.lease_leases(self.authorized(pb::LeaseLeasesRequest {})))
                .await
            {
                Ok(Ok(resp)) => {
                    let mut ids: Vec<i64> = resp.into_inner().leases.iter().map(|l| l.id).collect();
                    ids.sort_unstable();
                    Ok(ids)
                }
                Ok(Err(status)) => Err(format!("err {:?} {:?}", status.code(), status.message())),
                Err(_) => Err(format!("no answer within {}ms", self.timeout.as_millis())),
            };
        let asked = describe::LEASE_LEASES;
        match &answer {
            Ok(ids) => self.trace.event(&self.name, format_args!("{asked} -> ok {} leases", ids.len())),
            Err(e) => self.trace.event(&self.name, format_args!("{asked} -> {e}")),
        }
        answer
    }

    /// Records the invocation, sends, waits at most the timeout, records and traces the outcome.
    async fn call<F, Fut>(&mut self, request: Request, send: F) -> Outcome
    where
        F: FnOnce(KvClient<Channel>) -> Fut,
        Fut: Future<Output = Result<Response, tonic::Status>>,
    {
        let line = describe::request(&request).to_string();
        let op = self.history.lock().invoke(self.id, request, Trace::now());
        let outcome = match tokio::time::timeout(self.timeout, send(self.kv.clone())).await {
            Ok(Ok(response)) => Outcome::Ok(response),
            Ok(Err(status)) if never_sent(&status) => Outcome::NotSent { reason: status.message().to_string() },
            Ok(Err(status)) => Outcome::Err(ErrorStatus::from(&status)),
            Err(_) => Outcome::Unknown { reason: format!("no answer within {}ms", self.timeout.as_millis()) },
        };
        self.history.lock().complete(op, Trace::now(), outcome.clone());
        self.trace.event(&self.name, format_args!("{line} -> {}", describe::outcome(&outcome)));
        outcome
    }
}

/// Whether the status says the request never left the client. madsim-tonic connects per request, and a
/// connection it cannot make (the member is down, or the link is clogged) fails before anything is sent,
/// as `Unavailable` "transport error"; a connection lost after sending is "connection reset", which stays
/// ambiguous. Telling the checker so spares it from trying where a request that never arrived might have
/// taken effect.
fn never_sent(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unavailable && status.message() == "transport error"
}

/// `message` as a request with `token` in its `token` metadata, where etcd's servers look for it.
pub fn with_token<T>(token: Option<&str>, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(token) = token {
        let value = token.parse().expect("simple tokens are printable ASCII");
        request.metadata_mut().insert("token", value);
    }
    request
}

/// A channel that connects per request, as madsim-tonic does anyway: a member that was down is reachable
/// again as soon as it is back, with no reconnect logic in the client.
pub fn channel(endpoint: &str) -> Channel {
    Endpoint::from_shared(endpoint.to_string()).expect("the harness builds valid endpoint URLs").connect_lazy()
}
