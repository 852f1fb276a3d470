//! The HTTP boundary, as data: each case is requests in, status, reason, message and fields out, sent
//! through `ApiServer::handle` (the same handler the socket server calls) of a server assembled over an
//! in-process fake-etcd member, once with the watch cache and once without. Every case gets a namespace
//! of its own (`{ns}` in paths and bodies). The bad-input rows say what kube-apiserver answers for the
//! same request; the socket-level behaviours (slow clients, disconnects, drain) are in
//! `tests/http_socket.rs`.
#![cfg(not(madsim))]
// The shared support modules serve several suites; each uses part of them.
#![allow(dead_code)]

#[path = "support/cases.rs"]
mod cases;
mod etcd_endpoints;
#[path = "support/etcd_server.rs"]
mod etcd_server;
mod http_cases;
#[path = "support/http_server.rs"]
mod http_server;

use http_server::{run_all, Cache};

#[test]
fn http_cases_with_the_watch_cache() {
    run_all(Cache::On);
}

#[test]
fn http_cases_without_the_watch_cache() {
    run_all(Cache::Off);
}

/// Events expire: each is written under an etcd lease of the event TTL (one hour by default, plus the
/// lease manager's reuse window of 5 %, at most a minute), as kube-apiserver's `--event-ttl` does, and
/// other objects are not.
#[test]
fn events_are_written_under_a_lease_of_the_event_ttl() {
    use etcd_proto::etcdserverpb::kv_client::KvClient;
    use etcd_proto::etcdserverpb::lease_client::LeaseClient;
    use etcd_proto::etcdserverpb::{LeaseTimeToLiveRequest, RangeRequest};

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let server = http_server::TestServer::start(Cache::On).await;
        let event = r#"{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"R","type":"Normal"}"#;
        let created = server.send(http_server::request("POST", "/api/v1/namespaces/default/events", &[], event)).await;
        assert_eq!(created.status, 201, "{}", created.text());
        let cm = r#"{"metadata":{"name":"c"}}"#;
        let created = server.send(http_server::request("POST", "/api/v1/namespaces/default/configmaps", &[], cm)).await;
        assert_eq!(created.status, 201, "{}", created.text());

        let mut kv = KvClient::connect(server.etcd.endpoint.clone()).await.unwrap();
        let lease_of = |key: &str| RangeRequest { key: key.as_bytes().to_vec(), ..RangeRequest::default() };
        let event_kv = kv.range(lease_of("/registry/events/default/e")).await.unwrap().into_inner().kvs.remove(0);
        let cm_kv = kv.range(lease_of("/registry/configmaps/default/c")).await.unwrap().into_inner().kvs.remove(0);
        assert_ne!(event_kv.lease, 0, "an event is written under a lease");
        assert_eq!(cm_kv.lease, 0, "a configmap is not");
        let mut leases = LeaseClient::connect(server.etcd.endpoint.clone()).await.unwrap();
        let ttl = leases
            .lease_time_to_live(LeaseTimeToLiveRequest { id: event_kv.lease, keys: false })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(ttl.granted_ttl, 3600 + 60, "the event TTL plus the reuse window");
    });
}

/// A service account token round trip: `serviceaccounts/token` issues it; a `TokenReview` authenticates
/// it as the account (for the server's audience, not another); as a bearer token it makes the request the
/// account's (`SelfSubjectReview`); once the account is deleted, it no longer authenticates (401).
#[test]
fn a_service_account_token_authenticates_until_its_account_is_gone() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let server = http_server::TestServer::start(Cache::On).await;
        let send = |method: &'static str, path: &'static str, headers: Vec<(&'static str, String)>, body: String| {
            let server = &server;
            async move {
                let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
                server.send(http_server::request(method, path, &headers, body)).await
            }
        };
        let created = send("POST", "/api/v1/namespaces/default/serviceaccounts", vec![], r#"{"metadata":{"name":"robot"}}"#.into()).await;
        assert_eq!(created.status, 201, "{}", created.text());
        let uid = created.json()["metadata"]["uid"].as_str().unwrap().to_string();
        let issued = send("POST", "/api/v1/namespaces/default/serviceaccounts/robot/token", vec![], r#"{"spec":{}}"#.into()).await;
        assert_eq!(issued.status, 201, "{}", issued.text());
        let token = issued.json()["status"]["token"].as_str().unwrap().to_string();

        let review = |audiences: &str| format!(r#"{{"spec":{{"token":"{token}","audiences":{audiences}}}}}"#);
        let reviewed = send("POST", "/apis/authentication.k8s.io/v1/tokenreviews", vec![], review("[]")).await;
        let status = reviewed.json()["status"].clone();
        assert_eq!(status["authenticated"], true, "{status}");
        assert_eq!(status["user"]["username"], "system:serviceaccount:default:robot");
        assert_eq!(status["user"]["uid"], uid.as_str());
        assert_eq!(
            status["user"]["groups"],
            serde_json::json!(["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"])
        );
        assert_eq!(status["audiences"], serde_json::json!(["https://kubernetes.default.svc.cluster.local"]));
        let elsewhere = send("POST", "/apis/authentication.k8s.io/v1/tokenreviews", vec![], review(r#"["vault"]"#)).await;
        assert_eq!(
            elsewhere.json()["status"],
            serde_json::json!({"user": {}, "error": "token audiences [\"https://kubernetes.default.svc.cluster.local\"] is invalid for the target audiences [\"vault\"]"})
        );

        let bearer = vec![("Authorization", format!("Bearer {token}"))];
        let whoami = send("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", bearer.clone(), "{}".into()).await;
        assert_eq!(whoami.json()["status"]["userInfo"]["username"], "system:serviceaccount:default:robot");

        let deleted = send("DELETE", "/api/v1/namespaces/default/serviceaccounts/robot", vec![], String::new()).await;
        assert_eq!(deleted.status, 200);
        let reviewed = send("POST", "/apis/authentication.k8s.io/v1/tokenreviews", vec![], review("[]")).await;
        assert_eq!(
            reviewed.json()["status"],
            serde_json::json!({"user": {}, "error": "service account token has been invalidated"})
        );
        // A token that no longer authenticates is a 401, with upstream's bare Status, not the anonymous user.
        let whoami = send("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", bearer, "{}".into()).await;
        assert_eq!(whoami.status, 401);
        assert_eq!(
            whoami.text(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#.to_string() + "\n"
        );
    });
}
