//! A plain key-value mix over a handful of keys: puts, gets, deletes, value compare-and-swaps, prefix
//! reads, and now and then a watch of the whole prefix from the current revision.

use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use pb::compare::{CompareResult, CompareTarget, TargetUnion};
use pb::request_op::Request as Op;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{spawn_watch, think};
use crate::client::RecordingClient;
use crate::history::{Outcome, ResponseBody};

const PREFIX: &str = "/kv/";
const KEYS: usize = 6;

pub async fn run(
    client: &mut RecordingClient,
    rng: &mut ChaCha8Rng,
    ops: usize,
    watches: &mut Vec<madsim::task::JoinHandle<()>>,
) {
    let prefix_end = fake_etcd::mvcc::prefix_end(PREFIX.as_bytes());
    // The last value this client saw for each key, for compare-and-swap.
    let mut seen: Vec<Option<Vec<u8>>> = vec![None; KEYS];
    for n in 0..ops {
        let i = rng.random_range(0..KEYS);
        let key = format!("{PREFIX}k{i}").into_bytes();
        let value = format!("{}-{n}", client.id).into_bytes();
        let roll = rng.random_range(0..100);
        if roll < 35 {
            client.put(pb::PutRequest { key, value, ..Default::default() }).await;
        } else if roll < 60 {
            if let Outcome::Ok(r) = client.range(pb::RangeRequest { key, ..Default::default() }).await {
                if let ResponseBody::Range(g) = r.body {
                    seen[i] = g.kvs.first().map(|kv| kv.value.0.clone());
                }
            }
        } else if roll < 70 {
            client.delete_range(pb::DeleteRangeRequest { key, prev_kv: true, ..Default::default() }).await;
        } else if roll < 85 {
            let expected = seen[i].clone().unwrap_or_default();
            let compare = pb::Compare {
                result: CompareResult::Equal as i32,
                target: CompareTarget::Value as i32,
                key: key.clone(),
                range_end: vec![],
                target_union: Some(TargetUnion::Value(expected)),
            };
            let put = pb::RequestOp {
                request: Some(Op::RequestPut(pb::PutRequest { key: key.clone(), value, ..Default::default() })),
            };
            let get = pb::RequestOp { request: Some(Op::RequestRange(pb::RangeRequest { key, ..Default::default() })) };
            client.txn(pb::TxnRequest { compare: vec![compare], success: vec![put], failure: vec![get] }).await;
        } else if roll < 95 {
            let req = pb::RangeRequest {
                key: PREFIX.as_bytes().to_vec(),
                range_end: prefix_end.clone(),
                ..Default::default()
            };
            client.range(req).await;
        } else {
            let create = pb::WatchCreateRequest {
                key: PREFIX.as_bytes().to_vec(),
                range_end: prefix_end.clone(),
                prev_kv: true,
                progress_notify: true,
                ..Default::default()
            };
            watches.push(spawn_watch(client, create, Duration::from_millis(rng.random_range(500..3000))));
        }
        think(rng).await;
    }
}
