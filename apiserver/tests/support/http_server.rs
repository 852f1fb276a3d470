//! An apiserver for HTTP tests: the server assembled by `apiserver::server::build` over an in-process
//! fake-etcd member, with a seeded generator and a fixed clock, and a client that sends `http::Request`s
//! straight to `ApiServer::handle` and reads the whole answer. Also runs the HTTP case tables.

use std::sync::Arc;
use std::time::Duration;

use apiserver::apis::Catalog;
use apiserver::endpoints::ApiServer;
use apiserver::registry::{FixedClock, SystemFields};
use apiserver::server::{self, ServerOptions};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use rand::SeedableRng;
use serde_json::Value;

use crate::cases::{assert_all_passed, run_case};
use crate::etcd_server::{self, Running, Server};

/// The instant the fixed clock shows: 2023-11-14T22:13:20Z.
pub const NOW_UNIX_S: i64 = 1_700_000_000;

/// Whether the server reads through the watch cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    On,
    Off,
}

/// A running server and the etcd under it.
pub struct TestServer {
    pub server: Arc<ApiServer>,
    pub etcd: Running,
}

impl TestServer {
    /// Starts fake-etcd and an apiserver over it, waits until it is ready (caches listed, system
    /// namespaces created).
    pub async fn start(cache: Cache) -> TestServer {
        TestServer::start_with(cache, apiserver::endpoints::ServerConfig::default()).await
    }

    /// [`TestServer::start`] with the server's settings.
    pub async fn start_with(cache: Cache, config: apiserver::endpoints::ServerConfig) -> TestServer {
        TestServer::start_beside(cache, config, &[]).await
    }

    /// [`TestServer::start_with`], its etcd client given `others` as endpoints before the live one.
    pub async fn start_beside(
        cache: Cache,
        config: apiserver::endpoints::ServerConfig,
        others: &[String],
    ) -> TestServer {
        let etcd = etcd_server::start(Server::FakeEtcd, "http-tests").await;
        let endpoints: Vec<String> = others.iter().cloned().chain([etcd.endpoint.clone()]).collect();
        let client = apiserver::storage::etcd3::EtcdClient::new(&endpoints, 7).unwrap();
        let options = ServerOptions { watch_cache: cache == Cache::On, config, ..ServerOptions::default() };
        let system =
            SystemFields::new(Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(7)), Arc::new(FixedClock(NOW_UNIX_S)));
        let server = server::build(Catalog::builtin(), client, options, system, Arc::new(FixedClock(NOW_UNIX_S)));
        server::bootstrap(server.clone()).await;
        assert!(server::wait_until_ready(&server, Duration::from_secs(10)).await, "the server never became ready");
        TestServer { server, etcd }
    }

    /// Compacts etcd at its current revision (and waits for it: `physical`).
    pub async fn compact(&self) {
        use etcd_proto::etcdserverpb::kv_client::KvClient;
        use etcd_proto::etcdserverpb::{CompactionRequest, RangeRequest};
        let mut kv = KvClient::connect(self.etcd.endpoint.clone()).await.unwrap();
        let revision = kv
            .range(RangeRequest { key: b"/".to_vec(), count_only: true, ..RangeRequest::default() })
            .await
            .unwrap()
            .into_inner()
            .header
            .unwrap()
            .revision;
        kv.compact(CompactionRequest { revision, physical: true }).await.unwrap();
    }

    /// Sends one request and reads the whole answer.
    pub async fn send(&self, req: Request<Full<Bytes>>) -> Answer {
        let response: Response<_> = self.server.clone().handle(req).await;
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
        Answer { status: parts.status.as_u16(), headers: parts.headers, body: bytes }
    }
}

/// A response, read in full.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON (`Value::Null` if it is not JSON); a protobuf document is decoded into the JSON
    /// it carries.
    pub fn json(&self) -> Value {
        if self.is_protobuf() && !self.is_stream() {
            return apiserver::endpoints::protobuf::decode(&self.body, "Object").unwrap_or(Value::Null);
        }
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn is_protobuf(&self) -> bool {
        self.header("content-type").is_some_and(|t| t.starts_with("application/vnd.kubernetes.protobuf"))
    }

    fn is_stream(&self) -> bool {
        self.header("content-type").is_some_and(|t| t.ends_with(";stream=watch"))
    }

    /// The events of a watch answer as `{"type":...,"object":...}` values, whatever its format.
    pub fn events(&self) -> Vec<Value> {
        if !self.is_protobuf() {
            return self
                .body
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .filter_map(|l| serde_json::from_slice(l).ok())
                .collect();
        }
        let mut events = Vec::new();
        let mut rest = &self.body[..];
        while rest.len() >= 4 {
            let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            let frame = &rest[4..4 + len];
            let (kind, object) = apiserver::endpoints::protobuf::read_watch_frame(frame).expect("frames decode");
            events.push(serde_json::json!({"type": kind, "object": object}));
            rest = &rest[4 + len..];
        }
        events
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as text; a protobuf answer as the JSON it carries (a watch as one event per line).
    pub fn text(&self) -> String {
        if self.is_protobuf() {
            if self.is_stream() {
                return self.events().iter().map(|e| format!("{e}\n")).collect();
            }
            return self.json().to_string();
        }
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Builds a request.
pub fn request(method: &str, path: &str, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Request<Full<Bytes>> {
    let mut builder = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Full::new(body.into())).unwrap()
}

/// Runs every case table against one server.
pub fn run_all(cache: Cache) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let server = TestServer::start(cache).await;
        let mut failures = Vec::new();
        let mut total = 0;
        for (i, case) in crate::http_cases::all().into_iter().enumerate() {
            if case.only.is_some_and(|only| only != cache) {
                continue;
            }
            total += 1;
            let ns = format!("t{i}");
            let name = format!("{} ({cache:?})", case.name);
            if let Some(failure) = run_case(&name, case.run(&server, &ns)).await {
                failures.push(failure);
            }
        }
        assert_all_passed(&format!("http cases, cache {cache:?}"), total, &failures);
    });
}
