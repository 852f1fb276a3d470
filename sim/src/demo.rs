//! The first simulation: one fake-etcd member and one client on madsim's simulated network. The client opens
//! a watch, writes three keys, reads them back, collects the watch events and grants a lease; the transcript is
//! what it saw, one line per observation. `kubesim demo` prints it and the smoke test pins it.
//!
//! It proves the member serves its gRPC API (unary and streaming) over the simulated network exactly as over
//! TCP in the real build, and that a seed replays to the same transcript.

use std::future::pending;
use std::net::SocketAddr;
use std::time::Duration;

use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::lease_client::LeaseClient;
use etcd_proto::etcdserverpb::watch_client::WatchClient;
use etcd_proto::etcdserverpb::{
    watch_request, LeaseGrantRequest, PutRequest, RangeRequest, WatchCreateRequest, WatchRequest,
};
use fake_etcd::service::{serve, Member, MemberConfig};
use madsim::runtime::{Handle, Runtime};

const MEMBER_ADDR: &str = "10.0.0.1:2379";

/// Runs the scenario under `seed` and returns what the client saw, one line per observation.
pub fn transcript(seed: u64) -> Vec<String> {
    let rt = Runtime::with_seed_and_config(seed, madsim::Config::default());
    rt.block_on(async {
        let handle = Handle::current();
        handle
            .create_node()
            .name("etcd-1")
            .ip("10.0.0.1".parse().unwrap())
            .init(|| async {
                let config = MemberConfig::single(
                    "etcd-1",
                    vec!["http://10.0.0.1:2380".into()],
                    vec![format!("http://{MEMBER_ADDR}")],
                    "etcd-cluster",
                );
                let start_ms = madsim::time::Instant::now().elapsed().as_millis() as u64;
                let member = Member::new(config, start_ms).expect("a fresh member opens");
                let addr: SocketAddr = MEMBER_ADDR.parse().unwrap();
                serve(member, addr, pending()).await.unwrap();
            })
            .build();
        let client = handle.create_node().name("client-1").ip("10.0.0.101".parse().unwrap()).build();
        client
            .spawn(async {
                // Give the member a moment to bind.
                madsim::time::sleep(Duration::from_millis(100)).await;
                let endpoint = format!("http://{MEMBER_ADDR}");
                let mut kv = KvClient::connect(endpoint.clone()).await.unwrap();
                let mut watch = WatchClient::connect(endpoint.clone()).await.unwrap();
                let mut lease = LeaseClient::connect(endpoint).await.unwrap();
                let mut seen = Vec::new();

                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                tx.send(WatchRequest {
                    request_union: Some(watch_request::RequestUnion::CreateRequest(WatchCreateRequest {
                        key: b"a".to_vec(),
                        range_end: b"b".to_vec(),
                        ..Default::default()
                    })),
                })
                .unwrap();
                let outbound = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
                let mut events = watch.watch(outbound).await.unwrap().into_inner();
                let created = events.message().await.unwrap().unwrap();
                seen.push(format!(
                    "watch created={} id={} rev={}",
                    created.created,
                    created.watch_id,
                    created.header.unwrap().revision
                ));

                for (k, v) in [("a1", "x"), ("a2", "y"), ("a1", "z")] {
                    let r = kv
                        .put(PutRequest { key: k.into(), value: v.into(), prev_kv: true, ..Default::default() })
                        .await
                        .unwrap()
                        .into_inner();
                    let prev = r.prev_kv.map(|p| String::from_utf8(p.value).unwrap());
                    seen.push(format!("put {k}={v} rev={} prev={prev:?}", r.header.unwrap().revision));
                }
                let r = kv
                    .range(RangeRequest { key: b"a".to_vec(), range_end: b"b".to_vec(), ..Default::default() })
                    .await
                    .unwrap()
                    .into_inner();
                seen.push(format!("range count={} rev={}", r.count, r.header.unwrap().revision));
                for _ in 0..3 {
                    let w = events.message().await.unwrap().unwrap();
                    for e in w.events {
                        let kv = e.kv.unwrap();
                        seen.push(format!(
                            "event {} rev={} version={}",
                            String::from_utf8(kv.key).unwrap(),
                            kv.mod_revision,
                            kv.version
                        ));
                    }
                }
                let g = lease.lease_grant(LeaseGrantRequest { ttl: 5, id: 0 }).await.unwrap().into_inner();
                seen.push(format!("lease ttl={} id_nonzero={}", g.ttl, g.id != 0));
                drop(tx);
                seen
            })
            .await
            .unwrap()
    })
}
