//! What the controllers' end-to-end tests share: a real apiserver in this process (`server::build` over an
//! embedded fake-etcd member, reached through `ApiServer::handle`), a client of it, a controller's
//! `Context` on the manager's shared informers, and the clock the controllers stamp with.
#![cfg(not(madsim))]

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::apis::Catalog;
use apiserver::endpoints::ApiServer;
use apiserver::registry::{FixedClock, SystemFields};
use apiserver::server::{self, ServerOptions};
use controllers::client::{Client, Transport};
use controllers::kcm::Context;
use controllers::runtime::events::Recorder;
use controllers::runtime::informer::Informers;
use fake_etcd::service::{serve_listener, Member, MemberConfig};
use rand::SeedableRng;

/// The instant the apiserver's clock shows, and the controllers' starts from: 2023-11-14T22:13:20Z.
pub const NOW_UNIX_S: i64 = 1_700_000_000;

/// An apiserver over a fresh fake-etcd member named `name`, ready (system namespaces created).
pub async fn start_apiserver(name: &str) -> Arc<ApiServer> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let endpoint = format!("http://{}", listener.local_addr().expect("a bound address"));
    let config = MemberConfig::single(name, vec!["http://127.0.0.1:2380".into()], vec![endpoint.clone()], name);
    let member = Member::new(config, 0).expect("a fresh member opens");
    tokio::spawn(serve_listener(member, listener, std::future::pending()));
    let etcd = apiserver::storage::etcd3::EtcdClient::new(&[endpoint], 7).expect("a valid endpoint");
    let system =
        SystemFields::new(Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(7)), Arc::new(FixedClock(NOW_UNIX_S)));
    let server =
        server::build(Catalog::builtin(), etcd, ServerOptions::default(), system, Arc::new(FixedClock(NOW_UNIX_S)));
    server::bootstrap(server.clone()).await;
    assert!(server::wait_until_ready(&server, Duration::from_secs(30)).await, "the apiserver never got ready");
    server
}

/// A client of a fresh apiserver, and a controller's context over it: its shared informers, its event
/// recorder as `component`, and a clock that advances a millisecond per reading from [`NOW_UNIX_S`], so
/// that events (named after their instant) never collide.
pub async fn context(name: &str, component: &str) -> (Arc<Client>, Context) {
    let server = start_apiserver(name).await;
    let client = Arc::new(Client::new(Transport::InProcess(server), None, "kube-controller-manager"));
    let tick = Arc::new(AtomicI64::new(0));
    let now_unix_us: Arc<dyn Fn() -> i64 + Send + Sync> =
        Arc::new(move || NOW_UNIX_S * 1_000_000 + tick.fetch_add(1_000, Ordering::SeqCst));
    let ctx = Context {
        client: client.clone(),
        informers: Arc::new(Informers::new(client.clone(), 1)),
        events: Recorder::new(client.clone(), component, now_unix_us.clone()),
        seed: 1,
        root_ca: String::new(),
        now_unix_us,
        bugs: Default::default(),
    };
    (client, ctx)
}

/// How long an end-to-end wait lasts before the test fails, long enough for a loaded CI machine.
pub const WITHIN: Duration = Duration::from_secs(60);

/// Polls every 50 ms until `check` returns a value, or panics after [`WITHIN`] with the last state.
pub async fn eventually<T, F, Fut>(what: &str, check: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + WITHIN;
    loop {
        match check().await {
            Ok(value) => return value,
            Err(state) => {
                assert!(tokio::time::Instant::now() < deadline, "{what} did not happen within {WITHIN:?}: {state}")
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The items of the list at `path`.
pub async fn items(client: &Client, path: &str) -> Vec<serde_json::Value> {
    client.get(path).await.expect("the list is served")["items"].as_array().cloned().unwrap_or_default()
}

/// An object's `metadata.name`.
pub fn name(obj: &serde_json::Value) -> String {
    obj["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

/// The condition of type `kind` in an object's `status.conditions`.
pub fn condition<'a>(obj: &'a serde_json::Value, kind: &str) -> Option<&'a serde_json::Value> {
    obj.pointer("/status/conditions")?.as_array()?.iter().find(|c| c["type"] == kind)
}
