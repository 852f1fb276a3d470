//! The apiserver's etcd client over several endpoints, in the real build: with a dead endpoint listed
//! first (nothing listens on it), every create, consistent list and read of a server succeeds, because a
//! request that could not connect surely never left and goes to the next endpoint, and the dead one is
//! left until its backoff has passed; the readiness check says etcd is fine. With only dead endpoints a
//! request fails with grpc-go's words and kube-apiserver's "please try again", never the transport
//! library's. The multi-process failover (members killed under load, real etcd beside fake-etcd) is in
//! `apiserver/binary/tests/etcd_failover.rs`; the simulated one in the scenarios. (Part of the `http`
//! suite, whose support modules it shares.)

use crate::http_server::{request, Cache, TestServer};

/// An endpoint nothing listens on: a port bound and released.
fn dead_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_endpoint_listed_first_fails_no_request() {
    for cache in [Cache::On, Cache::Off] {
        let server = TestServer::start_beside(cache, Default::default(), &[dead_endpoint()]).await;
        for i in 0..40 {
            let body = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{i}"}}}}"#);
            let created = server.send(request("POST", "/api/v1/namespaces/default/configmaps", &[], body)).await;
            assert_eq!(created.status, 201, "create {i} ({cache:?}): {}", created.text());
            let listed = server.send(request("GET", "/api/v1/namespaces/default/configmaps", &[], "")).await;
            assert_eq!(listed.status, 200, "list {i} ({cache:?}): {}", listed.text());
            let path = format!("/api/v1/namespaces/default/configmaps/c{i}");
            let read = server.send(request("GET", &path, &[], "")).await;
            assert_eq!(read.status, 200, "get {i} ({cache:?}): {}", read.text());
        }
        let ready = server.send(request("GET", "/readyz?verbose", &[], "")).await;
        assert_eq!(ready.status, 200, "{}", ready.text());
        assert!(ready.text().contains("[+]etcd ok"), "{}", ready.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_endpoint_dead_requests_fail_in_kube_apiservers_words() {
    let client = apiserver::storage::etcd3::EtcdClient::new(&[dead_endpoint(), dead_endpoint()], 1).unwrap();
    assert_eq!(client.endpoints().len(), 2);
    let options = apiserver::server::ServerOptions { watch_cache: false, ..Default::default() };
    let system = apiserver::registry::SystemFields::new(
        Box::new(<rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1)),
        std::sync::Arc::new(apiserver::registry::FixedClock(0)),
    );
    let server = apiserver::server::build(
        apiserver::apis::Catalog::builtin(),
        client.clone(),
        options,
        system,
        std::sync::Arc::new(apiserver::registry::FixedClock(0)),
    );
    let answer = server.clone().handle(request("GET", "/api/v1/namespaces/default/configmaps", &[], "")).await;
    let (parts, body) = answer.into_parts();
    let body = http_body_util::BodyExt::collect(body).await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert_eq!(parts.status.as_u16(), 500, "{text}");
    assert!(
        text.contains("The list operation against configmaps could not be completed at this time, please try again."),
        "{text}"
    );
    assert!(client.healthy_endpoints().is_empty(), "both endpoints are being left: {:?}", client.healthy_endpoints());
}
