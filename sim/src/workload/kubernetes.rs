//! Kubernetes-like traffic, in the shapes the apiserver's etcd3 store sends (after etcd's robustness
//! `Kubernetes` traffic profile, facts only):
//! - create: `txn [mod(key)==0] ? put key : -` (the apiserver compares mod_revision, not create_revision);
//! - update (GuaranteedUpdate): `txn [mod(key)==rv] ? put key : get key`, where rv comes from the client's
//!   last read of the object;
//! - delete with a precondition: `txn [mod(key)==rv] ? del key : get key`;
//! - get: a range of one key;
//! - list: a paged range list of the prefix (limit 5, later pages pinned to the first page's revision,
//!   each continuing after the last key);
//! - watch, as the apiserver's watch cache does it: a few clients (the first [`INFORMERS`]) each run one
//!   long-lived informer per resource (pods, events): list, then watch the prefix from the list revision + 1 with prev_kv and
//!   progress notifications; when the watch times out or fails, watch again from the newest revision it
//!   vouched for + 1 (no relist); relist only when the watch is canceled because that revision was
//!   compacted. The other clients' lists are plain LIST requests, now and then followed by a short watch
//!   from the list revision + 1, as `kubectl get --watch` does. (A watch per list, as this workload did
//!   first, is not the apiserver's pattern, and tripled the watch traffic of a run.)
//! - events: a Kubernetes Event is written with a lease (`--event-ttl`), one lease shared by several
//!   events: grant a lease with a short TTL, create events under it, then keep it alive, revoke it, or
//!   (mostly) let it expire, which deletes its events (several keys at one revision, which the events
//!   informers see); a list of the events now and then sees that too;
//! - compaction by one client (the apiserver's compactor), every half second of simulated time, a few
//!   revisions behind the newest it has seen.
//!
//! Each client keeps what it last saw of each object (its mod_revision), as an informer's cache would.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use pb::compare::{CompareResult, CompareTarget, TargetUnion};
use pb::request_op::Request as Op;
use rand::seq::IteratorRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{spawn_watch, think};
use crate::client::watch::{record_watch, WatchEnd, WatchSpec};
use crate::client::RecordingClient;
use crate::history::{KeyValue, Outcome, ResponseBody, TxnOpResult};

const PREFIX: &str = "/registry/pods/default/";
const EVENTS: &str = "/registry/events/default/";
const OBJECTS: usize = 12;
const PAGE: i64 = 5;
/// Clients `c1..=cINFORMERS` run an informer (a watch cache's reflector); the others only list.
pub const INFORMERS: u32 = 3;
/// How often a non-informer client's list is a `kubectl get --watch`, followed by a short watch.
const KUBECTL_WATCH: f64 = 0.15;
/// Events written under one lease before the client takes a new one.
const EVENTS_PER_LEASE: u32 = 3;
/// The compactor's interval (the apiserver's `--etcd-compaction-interval`, 5 minutes, scaled to a run).
const COMPACT_EVERY: Duration = Duration::from_millis(500);

fn prefix_end(prefix: &str) -> Vec<u8> {
    fake_etcd::mvcc::prefix_end(prefix.as_bytes())
}

struct Cache {
    /// Key → mod_revision of the object as last seen.
    objects: BTreeMap<Vec<u8>, i64>,
    newest_rev: i64,
    written: u64,
    /// This client's informers by prefix, each with a flag set when its watch loop has ended (it needs a
    /// relist).
    informers: BTreeMap<&'static str, Arc<AtomicBool>>,
    /// Tells the informer to stop renewing its watch: the client's requests are done.
    stop: Arc<AtomicBool>,
    /// The lease the client writes events under, and how many events it has written under it.
    lease: Option<(i64, u32)>,
    /// The compactor's last compaction: its revision and when it was sent.
    last_compact: Option<(i64, madsim::time::Instant)>,
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
    let mut cache = Cache {
        objects: BTreeMap::new(),
        newest_rev: 0,
        written: 0,
        informers: BTreeMap::new(),
        stop: Arc::new(AtomicBool::new(false)),
        lease: None,
        last_compact: None,
    };
    let mut done = 0;
    while done < ops {
        let roll = rng.random_range(0..100);
        done += if cache.objects.len() < 3 || roll < 10 {
            create(client, rng, &mut cache).await
        } else if roll < 55 {
            update(client, rng, &mut cache).await
        } else if roll < 62 {
            delete(client, rng, &mut cache).await
        } else if roll < 72 {
            get(client, rng, &mut cache).await
        } else if roll < 77 {
            event(client, rng, &mut cache, watches).await
        } else if roll < 97 {
            list_and_watch(client, rng, &mut cache, watches, PREFIX).await
        } else {
            compact(client, &mut cache).await
        };
        think(rng).await;
    }
    cache.stop.store(true, Ordering::SeqCst);
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

/// A paged list of `prefix`; for an informer client whose informer on `prefix` is not running, then an
/// informer from the list's revision + 1. Returns the requests it made.
async fn list_and_watch(
    client: &mut RecordingClient,
    rng: &mut ChaCha8Rng,
    cache: &mut Cache,
    watches: &mut Vec<madsim::task::JoinHandle<()>>,
    prefix: &'static str,
) -> usize {
    let mut key = prefix.as_bytes().to_vec();
    let mut list_rev = 0;
    let mut requests = 0;
    let mut listed = BTreeMap::new();
    loop {
        let req = pb::RangeRequest {
            key: key.clone(),
            range_end: prefix_end(prefix),
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
    // The list is the client's new view of the pods, as an informer's relist replaces its cache.
    if prefix == PREFIX {
        cache.objects = listed;
    }
    cache.newest_rev = cache.newest_rev.max(list_rev);
    let running = cache.informers.get(prefix).is_some_and(|ended| !ended.load(Ordering::SeqCst));
    if client.id.0 <= INFORMERS && !running {
        let ended = Arc::new(AtomicBool::new(false));
        cache.informers.insert(prefix, ended.clone());
        let rng = ChaCha8Rng::seed_from_u64(rng.random());
        let task = informer(client, prefix, list_rev + 1, rng, cache.stop.clone(), ended);
        watches.push(madsim::task::spawn(task));
    } else if client.id.0 > INFORMERS && rng.random_bool(KUBECTL_WATCH) {
        // `kubectl get --watch`: a short watch from the list's revision + 1, by someone looking.
        let create = pb::WatchCreateRequest {
            key: prefix.as_bytes().to_vec(),
            range_end: prefix_end(prefix),
            start_revision: list_rev + 1,
            prev_kv: true,
            ..Default::default()
        };
        watches.push(spawn_watch(client, create, Duration::from_millis(rng.random_range(300..1500))));
    }
    requests
}

/// An informer's watch loop: watch from `from`, and when the watch ends, watch again from the newest
/// revision it vouched for + 1, until the client stops or the revision is compacted (then `ended` tells
/// the client to relist). Each watch stays open for a few seconds (a reflector's watch timeout, scaled to
/// a run); a failed one is retried after a short backoff.
fn informer(
    client: &RecordingClient,
    prefix: &'static str,
    mut from: i64,
    mut rng: ChaCha8Rng,
    stop: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
) -> impl std::future::Future<Output = ()> + 'static {
    let (id, name, endpoint) = (client.id, client.name().to_string(), client.endpoint().to_string());
    let (history, trace) = (client.history().clone(), client.trace().clone());
    async move {
        loop {
            let create = pb::WatchCreateRequest {
                key: prefix.as_bytes().to_vec(),
                range_end: prefix_end(prefix),
                start_revision: from,
                prev_kv: true,
                progress_notify: true,
                ..Default::default()
            };
            let open_for = Duration::from_millis(rng.random_range(1000..3000));
            let spec = WatchSpec {
                token: None,
                client: id,
                name: name.clone(),
                endpoint: endpoint.clone(),
                create,
                open_for,
                control: None,
            };
            let outcome = record_watch(spec, history.clone(), trace.clone()).await;
            from = from.max(outcome.last_revision + 1);
            if outcome.end == WatchEnd::Compacted || stop.load(Ordering::SeqCst) {
                break;
            }
            if outcome.end == WatchEnd::Failed {
                madsim::time::sleep(Duration::from_millis(rng.random_range(100..500))).await;
            }
        }
        ended.store(true, Ordering::SeqCst);
    }
}

/// An Event: written under the client's current lease (granted first if there is none), then the lease is
/// sometimes kept alive or revoked; mostly it is left to expire. Now and then the events are listed.
async fn event(
    client: &mut RecordingClient,
    rng: &mut ChaCha8Rng,
    cache: &mut Cache,
    watches: &mut Vec<madsim::task::JoinHandle<()>>,
) -> usize {
    let mut requests = 0;
    let lease = match cache.lease {
        Some((id, _)) => id,
        None => {
            requests += 1;
            let grant = pb::LeaseGrantRequest { ttl: rng.random_range(2..=4), id: 0 };
            let Outcome::Ok(resp) = client.lease_grant(grant).await else { return requests };
            let ResponseBody::LeaseGrant(g) = &resp.body else { return requests };
            cache.lease = Some((g.id.0, 0));
            g.id.0
        }
    };
    cache.written += 1;
    let key = format!("{EVENTS}{}-{}", client.id, cache.written).into_bytes();
    let value = value(client, cache);
    let put = op(Op::RequestPut(pb::PutRequest { key: key.clone(), value, lease, ..Default::default() }));
    let txn = pb::TxnRequest { compare: vec![mod_equals(&key, 0)], success: vec![put], failure: vec![] };
    requests += 1;
    if let Outcome::Ok(resp) = client.txn(txn).await {
        cache.newest_rev = cache.newest_rev.max(resp.header_revision.0);
    }
    let (id, written) = cache
        .lease
        .as_mut()
        .map(|(id, n)| {
            (*id, {
                *n += 1;
                *n
            })
        })
        .expect("a lease was taken above");
    match rng.random_range(0..10) {
        0..3 => {
            client.lease_keep_alive(id).await;
        }
        3 => {
            requests += 1;
            client.lease_revoke(pb::LeaseRevokeRequest { id }).await;
            cache.lease = None;
        }
        _ => {}
    }
    if written >= EVENTS_PER_LEASE {
        // The apiserver moves on to a fresh lease; the old one expires on its own.
        cache.lease = None;
    }
    if rng.random_bool(0.3) {
        requests += list_and_watch(client, rng, cache, watches, EVENTS).await;
    }
    requests
}

/// The apiserver's compactor: one apiserver (the one holding `compact_rev_key`; here `c1`) compacts, at most
/// once per [`COMPACT_EVERY`], a few revisions behind the newest it has seen, and never the same revision
/// twice. (Every client compacting whenever it liked, as this workload did first, is not what a cluster
/// does, and a member that was down left a dozen compactions with unknown outcomes, whose possible
/// subsets the linearizability search then had to try.)
async fn compact(client: &mut RecordingClient, cache: &mut Cache) -> usize {
    let revision = cache.newest_rev - 5;
    let now = madsim::time::Instant::now();
    let due = cache.last_compact.is_none_or(|(rev, at)| revision > rev && now >= at + COMPACT_EVERY);
    if client.id.0 != 1 || revision < 2 || !due {
        return 0;
    }
    cache.last_compact = Some((revision, now));
    client.compact(pb::CompactionRequest { revision, physical: false }).await;
    1
}
