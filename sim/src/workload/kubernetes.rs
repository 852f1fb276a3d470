//! Kubernetes-like traffic, in the shapes the apiserver's etcd3 store sends (after etcd's robustness
//! `Kubernetes` traffic profile, facts only):
//! - create: `txn [mod(key)==0] ? put key : -` (the apiserver compares mod_revision, not create_revision);
//! - update (GuaranteedUpdate): `txn [mod(key)==rv] ? put key : get key`, where rv comes from the client's
//!   last read of the object;
//! - delete with a precondition: `txn [mod(key)==rv] ? del key : get key`;
//! - get: a range of one key;
//! - list and watch: a paged range list of the prefix (limit 5, later pages pinned to the first page's
//!   revision, each continuing after the last key), then a watch of the prefix from the list revision + 1
//!   with prev_kv and progress notifications, open for a while beside the client's other requests;
//! - compaction, now and then, a few revisions behind the newest the client has seen.
//!
//! Each client keeps what it last saw of each object (its mod_revision), as an informer's cache would.

use std::collections::BTreeMap;
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use pb::compare::{CompareResult, CompareTarget, TargetUnion};
use pb::request_op::Request as Op;
use rand::seq::IteratorRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{spawn_watch, think};
use crate::client::RecordingClient;
use crate::history::{KeyValue, Outcome, ResponseBody, TxnOpResult};

const PREFIX: &str = "/registry/pods/default/";
const OBJECTS: usize = 12;
const PAGE: i64 = 5;

fn prefix_end() -> Vec<u8> {
    fake_etcd::mvcc::prefix_end(PREFIX.as_bytes())
}

struct Cache {
    /// Key → mod_revision of the object as last seen.
    objects: BTreeMap<Vec<u8>, i64>,
    newest_rev: i64,
    written: u64,
}

impl Cache {
    fn saw(&mut self, kv: &KeyValue) {
        self.objects.insert(kv.key.0.clone(), kv.mod_revision.0);
    }
}

pub async fn run(
    client: &mut RecordingClient,
    rng: &mut ChaCha8Rng,
    ops: usize,
    watches: &mut Vec<madsim::task::JoinHandle<()>>,
) {
    let mut cache = Cache { objects: BTreeMap::new(), newest_rev: 0, written: 0 };
    let mut done = 0;
    while done < ops {
        let roll = rng.random_range(0..100);
        done += if cache.objects.len() < 3 || roll < 10 {
            create(client, rng, &mut cache).await
        } else if roll < 55 {
            update(client, rng, &mut cache).await
        } else if roll < 62 {
            delete(client, rng, &mut cache).await
        } else if roll < 75 {
            get(client, rng, &mut cache).await
        } else if roll < 97 {
            list_and_watch(client, rng, &mut cache, watches).await
        } else {
            compact(client, &mut cache).await
        };
        think(rng).await;
    }
}

fn value(client: &RecordingClient, cache: &mut Cache) -> Vec<u8> {
    cache.written += 1;
    format!("{}-{}", client.id, cache.written).into_bytes()
}

fn mod_equals(key: &[u8], rev: i64) -> pb::Compare {
    pb::Compare {
        result: CompareResult::Equal as i32,
        target: CompareTarget::Mod as i32,
        key: key.to_vec(),
        range_end: vec![],
        target_union: Some(TargetUnion::ModRevision(rev)),
    }
}

fn op(request: Op) -> pb::RequestOp {
    pb::RequestOp { request: Some(request) }
}

fn get_op(key: &[u8]) -> pb::RequestOp {
    op(Op::RequestRange(pb::RangeRequest { key: key.to_vec(), ..Default::default() }))
}

/// Learns from a txn's outcome: the write's revision on success, the object's state from the Else get.
fn learn_txn(cache: &mut Cache, key: &[u8], outcome: &Outcome, deleted_on_success: bool) {
    let Outcome::Ok(resp) = outcome else { return };
    cache.newest_rev = cache.newest_rev.max(resp.header_revision.0);
    let ResponseBody::Txn(t) = &resp.body else { return };
    if t.succeeded {
        if deleted_on_success {
            cache.objects.remove(key);
        } else {
            cache.objects.insert(key.to_vec(), resp.header_revision.0);
        }
        return;
    }
    match t.responses.first() {
        Some(TxnOpResult::Range(r)) => match r.kvs.first() {
            Some(kv) => cache.saw(kv),
            None => {
                cache.objects.remove(key);
            }
        },
        // A failed create has no Else branch: the object exists, at a revision the client does not know. It
        // remembers the key with the response's revision, so that a later update conflicts and re-reads it,
        // as the apiserver's update with a stale resourceVersion does.
        _ => {
            cache.objects.insert(key.to_vec(), resp.header_revision.0);
        }
    }
}

async fn create(client: &mut RecordingClient, rng: &mut ChaCha8Rng, cache: &mut Cache) -> usize {
    let key = format!("{PREFIX}pod-{}", rng.random_range(0..OBJECTS)).into_bytes();
    let put =
        op(Op::RequestPut(pb::PutRequest { key: key.clone(), value: value(client, cache), ..Default::default() }));
    let txn = pb::TxnRequest { compare: vec![mod_equals(&key, 0)], success: vec![put], failure: vec![] };
    let outcome = client.txn(txn).await;
    learn_txn(cache, &key, &outcome, false);
    1
}

fn known_object(rng: &mut ChaCha8Rng, cache: &Cache) -> Option<(Vec<u8>, i64)> {
    cache.objects.iter().choose(rng).map(|(k, r)| (k.clone(), *r))
}

async fn update(client: &mut RecordingClient, rng: &mut ChaCha8Rng, cache: &mut Cache) -> usize {
    let Some((key, rev)) = known_object(rng, cache) else { return 0 };
    let put =
        op(Op::RequestPut(pb::PutRequest { key: key.clone(), value: value(client, cache), ..Default::default() }));
    let txn = pb::TxnRequest { compare: vec![mod_equals(&key, rev)], success: vec![put], failure: vec![get_op(&key)] };
    let outcome = client.txn(txn).await;
    learn_txn(cache, &key, &outcome, false);
    1
}

async fn delete(client: &mut RecordingClient, rng: &mut ChaCha8Rng, cache: &mut Cache) -> usize {
    let Some((key, rev)) = known_object(rng, cache) else { return 0 };
    let del = op(Op::RequestDeleteRange(pb::DeleteRangeRequest { key: key.clone(), ..Default::default() }));
    let txn = pb::TxnRequest { compare: vec![mod_equals(&key, rev)], success: vec![del], failure: vec![get_op(&key)] };
    let outcome = client.txn(txn).await;
    learn_txn(cache, &key, &outcome, true);
    1
}

async fn get(client: &mut RecordingClient, rng: &mut ChaCha8Rng, cache: &mut Cache) -> usize {
    let key = format!("{PREFIX}pod-{}", rng.random_range(0..OBJECTS)).into_bytes();
    let outcome = client.range(pb::RangeRequest { key: key.clone(), ..Default::default() }).await;
    if let Outcome::Ok(resp) = &outcome {
        cache.newest_rev = cache.newest_rev.max(resp.header_revision.0);
        if let ResponseBody::Range(r) = &resp.body {
            match r.kvs.first() {
                Some(kv) => cache.saw(kv),
                None => {
                    cache.objects.remove(&key);
                }
            }
        }
    }
    1
}

/// A paged list, then a watch from the list's revision + 1. Returns the requests it made.
async fn list_and_watch(
    client: &mut RecordingClient,
    rng: &mut ChaCha8Rng,
    cache: &mut Cache,
    watches: &mut Vec<madsim::task::JoinHandle<()>>,
) -> usize {
    let mut key = PREFIX.as_bytes().to_vec();
    let mut list_rev = 0;
    let mut requests = 0;
    let mut listed = BTreeMap::new();
    loop {
        let req = pb::RangeRequest {
            key: key.clone(),
            range_end: prefix_end(),
            limit: PAGE,
            revision: list_rev,
            ..Default::default()
        };
        requests += 1;
        let Outcome::Ok(resp) = client.range(req).await else { return requests };
        let ResponseBody::Range(page) = &resp.body else { return requests };
        if list_rev == 0 {
            list_rev = resp.header_revision.0;
        }
        for kv in &page.kvs {
            listed.insert(kv.key.0.clone(), kv.mod_revision.0);
        }
        match (page.more, page.kvs.last()) {
            (true, Some(last)) => {
                key = last.key.0.clone();
                key.push(0);
            }
            _ => break,
        }
    }
    // The list is the client's new view of the prefix, as an informer's relist replaces its cache.
    cache.objects = listed;
    cache.newest_rev = cache.newest_rev.max(list_rev);
    let create = pb::WatchCreateRequest {
        key: PREFIX.as_bytes().to_vec(),
        range_end: prefix_end(),
        start_revision: list_rev + 1,
        prev_kv: true,
        progress_notify: true,
        ..Default::default()
    };
    watches.push(spawn_watch(client, create, Duration::from_millis(rng.random_range(500..4000))));
    requests
}

async fn compact(client: &mut RecordingClient, cache: &mut Cache) -> usize {
    let revision = cache.newest_rev - 5;
    if revision < 2 {
        return 0;
    }
    client.compact(pb::CompactionRequest { revision, physical: false }).await;
    1
}
