//! [`EtcdClient`]: the apiserver's one etcd client, with kube-apiserver's behaviour over `--etcd-servers`:
//! every endpoint in use, requests spread round robin over the healthy ones (`picker`), an endpoint that
//! fails left until its backoff has passed, reads retried on the next endpoint and writes only when they
//! surely never left (`failure`), and watches opened with etcd's require-leader option, resumed on another
//! endpoint from the next revision when their connection breaks (`watch`).
//!
//! Upstream's numbers: 25 ms between attempts, at most 100 attempts a request (clientv3's
//! `defaultBackoffWaitBetween` and `defaultUnaryMaxRetries`; the 10% jitter left out so that runs replay),
//! dial timeout 20 s, keepalive every 30 s with a 10 s timeout (kube-apiserver's `dialTimeout`,
//! `keepaliveTime`, `keepaliveTimeout`). The real build sets the keepalive on its HTTP/2 connections;
//! simulated connections have none, so an attempt unanswered for the keepalive's 40 s counts as a broken
//! connection in both builds, which is what the keepalive makes of a silent member.
//!
//! The same code runs in both builds: the generated clients are used per endpoint, because the simulated
//! transport only carries them over its own `Channel`.

mod failure;
mod picker;
mod watch;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::lease_client::LeaseClient;
use etcd_proto::etcdserverpb::watch_client::WatchClient;
use etcd_proto::etcdserverpb::{
    LeaseGrantRequest, LeaseGrantResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse,
};
use rand::{Rng, SeedableRng};
use tokio::time::Instant;
use tonic::transport::{Channel, Endpoint};

pub(crate) use failure::{Failure, Policy};
pub(crate) use watch::EtcdWatch;

/// Time between two attempts of one request (clientv3's `defaultBackoffWaitBetween`).
const RETRY_WAIT: Duration = Duration::from_millis(25);
/// Attempts of one request at most (clientv3's `defaultUnaryMaxRetries`).
const MAX_ATTEMPTS: u32 = 100;
/// How long a connection may take to open (kube-apiserver's `dialTimeout`).
const DIAL_TIMEOUT: Duration = Duration::from_secs(20);
/// The keepalive ping interval and its timeout (kube-apiserver's `keepaliveTime`, `keepaliveTimeout`).
const KEEPALIVE_TIME: Duration = Duration::from_secs(30);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest response accepted: clientv3's default receive limit, `math.MaxInt32`. A LIST of many large
/// objects, or a watch response carrying a txn's several large writes, is bigger than gRPC's 4 MiB.
const MAX_RECEIVE_BYTES: usize = i32::MAX as usize;

/// An endpoint list kube-apiserver would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// No endpoint at all.
    #[error("--etcd-servers must be specified")]
    Empty,
    /// An endpoint that is not a URL with a scheme and a host: kube-apiserver's start-up check
    /// (`preflight.EtcdConnection`), with Go's `url.Parse` reason where Go would refuse it too.
    #[error("unable to parse etcd url: parse {url:?}: {reason}")]
    Malformed { url: String, reason: String },
}

/// One endpoint's clients.
struct Conn {
    /// `host:port`, for grpc-go's dial error text.
    address: String,
    url: String,
    kv: KvClient<Channel>,
    watch: WatchClient<Channel>,
    lease: LeaseClient<Channel>,
}

/// The apiserver's etcd client; cheap to clone (clones share the endpoints' connections and health).
#[derive(Clone)]
pub struct EtcdClient {
    inner: Arc<Inner>,
}

struct Inner {
    conns: Vec<Conn>,
    picker: Mutex<picker::Picker>,
    /// The instant the picker's milliseconds count from.
    epoch: Instant,
}

impl EtcdClient {
    /// A client over `urls` (`http://host:port`, as `--etcd-servers` lists them), connecting lazily; the
    /// first endpoint the round robin takes is drawn from `seed`.
    pub fn new(urls: &[String], seed: u64) -> Result<EtcdClient, EndpointError> {
        if urls.is_empty() {
            return Err(EndpointError::Empty);
        }
        let conns = urls.iter().map(|url| conn(url)).collect::<Result<Vec<_>, _>>()?;
        let first = rand_chacha::ChaCha8Rng::seed_from_u64(seed).random_range(0..conns.len());
        let picker = Mutex::new(picker::Picker::new(conns.len(), first));
        Ok(EtcdClient { inner: Arc::new(Inner { conns, picker, epoch: Instant::now() }) })
    }

    /// The endpoints, in the order given.
    pub fn endpoints(&self) -> Vec<String> {
        self.inner.conns.iter().map(|c| c.url.clone()).collect()
    }

    /// The endpoints in use now (not being left after a failure).
    pub fn healthy_endpoints(&self) -> Vec<String> {
        let now = self.now_ms();
        let picker = self.picker();
        let conns = &self.inner.conns;
        (0..conns.len()).filter(|&i| picker.healthy(i, now)).map(|i| conns[i].url.clone()).collect()
    }

    pub(crate) async fn range(&self, request: RangeRequest) -> Result<RangeResponse, tonic::Status> {
        self.unary(Policy::Repeatable, |c| {
            let (mut kv, request) = (c.kv.clone(), request.clone());
            async move { kv.range(request).await.map(tonic::Response::into_inner) }
        })
        .await
    }

    pub(crate) async fn txn(&self, request: TxnRequest) -> Result<TxnResponse, tonic::Status> {
        self.unary(Policy::NonRepeatable, |c| {
            let (mut kv, request) = (c.kv.clone(), request.clone());
            async move { kv.txn(request).await.map(tonic::Response::into_inner) }
        })
        .await
    }

    pub(crate) async fn lease_grant(&self, request: LeaseGrantRequest) -> Result<LeaseGrantResponse, tonic::Status> {
        self.unary(Policy::Repeatable, |c| {
            let mut lease = c.lease.clone();
            async move { lease.lease_grant(request).await.map(tonic::Response::into_inner) }
        })
        .await
    }

    /// Sends a request through `call` on picked endpoints until it is answered, fails for good, or has
    /// had its attempts.
    async fn unary<T, F, Fut>(&self, policy: Policy, call: F) -> Result<T, tonic::Status>
    where
        F: Fn(&Conn) -> Fut,
        Fut: Future<Output = Result<T, tonic::Status>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let i = self.pick();
            let conn = &self.inner.conns[i];
            let status = match tokio::time::timeout(KEEPALIVE_TIME + KEEPALIVE_TIMEOUT, call(conn)).await {
                Ok(Ok(answer)) => {
                    self.succeeded(i);
                    return Ok(answer);
                }
                Ok(Err(status)) => status,
                Err(_) => tonic::Status::unavailable(failure::BROKEN),
            };
            let failure = self.report(i, &status);
            if !failure.retriable(policy) || attempt >= MAX_ATTEMPTS {
                return Err(failure.status(status, &conn.address));
            }
            tracing::debug!(endpoint = %conn.url, attempt, error = %status.message(), "etcd request retried");
            tokio::time::sleep(RETRY_WAIT).await;
        }
    }

    /// Opens a watch with `create` on a picked endpoint, with etcd's require-leader option unless
    /// `require_leader` is off (only the bug switch turns it off; see [`EtcdWatch`]).
    pub(crate) async fn watch(
        &self,
        create: etcd_proto::etcdserverpb::WatchCreateRequest,
        require_leader: bool,
    ) -> Result<EtcdWatch, tonic::Status> {
        EtcdWatch::open(self.clone(), create, require_leader).await
    }

    fn pick(&self) -> usize {
        let now = self.now_ms();
        self.picker().pick(now)
    }

    fn succeeded(&self, i: usize) {
        self.picker().succeeded(i);
    }

    /// Records how endpoint `i` failed; the failure's meaning.
    fn report(&self, i: usize, status: &tonic::Status) -> Failure {
        let failure = Failure::of(status);
        if failure.leaves_endpoint() {
            let now = self.now_ms();
            self.picker().failed(i, now);
            tracing::debug!(endpoint = %self.inner.conns[i].url, ?failure, error = %status.message(), "etcd endpoint left");
        } else {
            self.succeeded(i);
        }
        failure
    }

    fn now_ms(&self) -> u64 {
        self.inner.epoch.elapsed().as_millis() as u64
    }

    fn picker(&self) -> std::sync::MutexGuard<'_, picker::Picker> {
        self.inner.picker.lock().expect("the picker lock is never held across a panic")
    }
}

/// The clients of endpoint `url`, connecting on first use.
fn conn(url: &str) -> Result<Conn, EndpointError> {
    let (uri, address) = parse(url)?;
    let endpoint = Endpoint::from(uri)
        .connect_timeout(DIAL_TIMEOUT)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(KEEPALIVE_TIME)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true);
    let channel = endpoint.connect_lazy();
    Ok(Conn {
        address,
        url: url.to_string(),
        kv: KvClient::new(channel.clone()).max_decoding_message_size(MAX_RECEIVE_BYTES),
        watch: WatchClient::new(channel.clone()).max_decoding_message_size(MAX_RECEIVE_BYTES),
        lease: LeaseClient::new(channel).max_decoding_message_size(MAX_RECEIVE_BYTES),
    })
}

/// Endpoint `url` as a URI and its `host:port`; Go's `url.Parse` reasons for what it refuses.
pub fn parse(url: &str) -> Result<(http::Uri, String), EndpointError> {
    let malformed = |reason: &str| EndpointError::Malformed { url: url.to_string(), reason: reason.to_string() };
    if let Some(c) = url.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(malformed(&format!("invalid character {:?} in host name", c.to_string())));
    }
    let scheme_end = url.find("://");
    let colon_in_first_segment = url.split('/').next().is_some_and(|first| first.contains(':'));
    if scheme_end.is_none() && colon_in_first_segment && url.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(malformed("first path segment in URL cannot contain colon"));
    }
    let uri: http::Uri = url.parse().map_err(|_| malformed("invalid URL escape or character"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(malformed("unsupported protocol scheme: expected http://host:port or https://host:port")),
    }
    let Some(authority) = uri.authority().filter(|a| !a.host().is_empty()) else {
        return Err(malformed("missing host"));
    };
    let port = authority.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
    let address = format!("{}:{port}", authority.host());
    Ok((uri, address))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What tonic answers for a port nobody listens on is told as a request that never left, so a write
    /// may go to the next endpoint; the last failure reads as grpc-go's dial error.
    #[cfg(not(madsim))]
    #[tokio::test]
    async fn a_refused_connection_is_a_request_that_never_left() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let conn = conn(&url).unwrap();
        let status = conn.kv.clone().range(RangeRequest::default()).await.expect_err("nothing listens");
        assert_eq!(Failure::of(&status), Failure::NotSent, "{status:?}");
        let client = EtcdClient::new(std::slice::from_ref(&url), 0).unwrap();
        let status = client.txn(TxnRequest::default()).await.expect_err("nothing listens");
        let address = url.trim_start_matches("http://");
        assert_eq!(
            status.message(),
            format!("connection error: desc = \"transport: Error while dialing: dial tcp {address}: connect: connection refused\"")
        );
        assert!(client.healthy_endpoints().is_empty());
    }

    #[test]
    fn endpoint_lists_kube_apiserver_would_refuse_are_refused() {
        assert_eq!(EtcdClient::new(&[], 0).err(), Some(EndpointError::Empty));
        let bad = |url: &str| EtcdClient::new(&[url.to_string()], 0).err().map(|e| e.to_string());
        let cases = [
            ("127.0.0.1:2379", "parse \"127.0.0.1:2379\": first path segment in URL cannot contain colon"),
            ("http://a b:2379", "parse \"http://a b:2379\": invalid character \" \" in host name"),
            ("ftp://etcd:2379", "parse \"ftp://etcd:2379\": unsupported protocol scheme: expected http://host:port or https://host:port"),
        ];
        for (url, want) in cases {
            assert_eq!(bad(url), Some(format!("unable to parse etcd url: {want}")), "{url}");
        }
        assert!(bad("http://").is_some());
        assert_eq!(parse("http://10.0.1.1:2379").map(|(_, a)| a), Ok("10.0.1.1:2379".to_string()));
        assert_eq!(parse("https://etcd").map(|(_, a)| a), Ok("etcd:443".to_string()));
    }
}
