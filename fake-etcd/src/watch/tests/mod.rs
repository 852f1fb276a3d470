//! Tests of the watch hub against a real `MvccStore`. Each test drives the store and the hub through
//! [`Harness`] and compares what clients would receive, rendered one line per response by [`show`], with
//! the expected lines.

mod catch_up;
mod compaction;
mod create;
mod fragment;
mod live;
mod progress;
mod restore;
mod streams;

use etcd_proto::etcdserverpb::watch_request::RequestUnion;
use etcd_proto::etcdserverpb::{
    WatchCancelRequest, WatchCreateRequest, WatchProgressRequest, WatchRequest, WatchResponse,
};
use etcd_proto::mvccpb::event::EventType;
use etcd_proto::mvccpb::{Event, KeyValue};

use super::{HubConfig, StreamId, WatchHub};
use crate::mvcc::{KeyRange, MvccStore};
use crate::types::{LeaseId, Revision};

/// One change inside a write transaction.
#[derive(Clone, Copy, Debug)]
enum Op<'a> {
    Put(&'a str, &'a str),
    /// Deletes one key.
    Del(&'a str),
    /// Deletes `[start, end)`.
    DelRange(&'a str, &'a str),
}

struct Harness {
    store: MvccStore,
    hub: WatchHub,
    /// How many responses every stream's outbox takes in each call (unlimited unless a test paces).
    room: usize,
}

impl Harness {
    fn new() -> Harness {
        Harness::with_config(HubConfig::default())
    }

    fn with_config(config: HubConfig) -> Harness {
        Harness { store: MvccStore::new(), hub: WatchHub::new(config), room: usize::MAX }
    }

    fn rev(&self) -> i64 {
        self.store.current_revision().0
    }

    /// Commits `ops` as one transaction and returns what the hub sends for it.
    fn txn(&mut self, ops: &[Op<'_>]) -> Vec<String> {
        let events = {
            let mut txn = self.store.write();
            for op in ops {
                match *op {
                    Op::Put(k, v) => {
                        txn.put(k.as_bytes(), v.as_bytes().to_vec(), LeaseId::NONE);
                    }
                    Op::Del(k) => {
                        txn.delete_range(&KeyRange::new(k.as_bytes(), b""));
                    }
                    Op::DelRange(start, end) => {
                        txn.delete_range(&KeyRange::new(start.as_bytes(), end.as_bytes()));
                    }
                }
            }
            txn.end()
        };
        let sent = self.hub.notify(&events, &self.store);
        show_all(&sent)
    }

    fn put(&mut self, key: &str, value: &str) -> Vec<String> {
        self.txn(&[Op::Put(key, value)])
    }

    fn del(&mut self, key: &str) -> Vec<String> {
        self.txn(&[Op::Del(key)])
    }

    /// `n` puts of `key`, each its own revision; returns everything the hub sent for them.
    fn puts(&mut self, key: &str, n: usize) -> Vec<String> {
        (0..n).flat_map(|i| self.put(key, &i.to_string())).collect()
    }

    fn compact(&mut self, rev: i64) {
        self.store.compact(Revision(rev)).expect("compaction in a test is legal");
    }

    fn open(&mut self) -> StreamId {
        self.hub.open_stream()
    }

    fn request(&mut self, stream: StreamId, req: RequestUnion) -> Vec<String> {
        let sent = self.hub.handle(stream, WatchRequest { request_union: Some(req) }, &self.store, self.room);
        sent.iter().map(show).collect()
    }

    fn watch(&mut self, stream: StreamId, create: WatchCreateRequest) -> Vec<String> {
        self.request(stream, RequestUnion::CreateRequest(create))
    }

    fn cancel(&mut self, stream: StreamId, watch_id: i64) -> Vec<String> {
        self.request(stream, RequestUnion::CancelRequest(WatchCancelRequest { watch_id }))
    }

    fn request_progress(&mut self, stream: StreamId) -> Vec<String> {
        self.request(stream, RequestUnion::ProgressRequest(WatchProgressRequest {}))
    }

    fn sync(&mut self, unstall: Option<StreamId>) -> Vec<String> {
        let room = self.room;
        let sent = self.hub.sync(unstall, &self.store, |_| room);
        show_all(&sent)
    }

    fn tick(&mut self) -> Vec<String> {
        let sent = self.hub.progress_tick(&self.store);
        show_all(&sent)
    }
}

/// A create request for one key (`range_end` empty) or a range, from `start` (0: from now).
fn create(key: &str, range_end: &str, start: i64) -> WatchCreateRequest {
    WatchCreateRequest {
        key: key.as_bytes().to_vec(),
        range_end: range_end.as_bytes().to_vec(),
        start_revision: start,
        ..Default::default()
    }
}

fn show_all(sent: &[(StreamId, WatchResponse)]) -> Vec<String> {
    sent.iter().map(|(sid, resp)| format!("s{sid} {}", show(resp))).collect()
}

/// One response on one line, every field that is set:
/// `id=0 rev=5 created canceled compact=3 reason="…" fragment [PUT a=1@5 prev(a=0@4), DEL b@5]`.
fn show(resp: &WatchResponse) -> String {
    let header = resp.header.as_ref().expect("every response has a header");
    assert_eq!((header.cluster_id, header.member_id, header.raft_term), (0, 0, 0), "the shell stamps these");
    let mut line = format!("id={} rev={}", resp.watch_id, header.revision);
    if resp.created {
        line += " created";
    }
    if resp.canceled {
        line += " canceled";
    }
    if resp.compact_revision != 0 {
        line += &format!(" compact={}", resp.compact_revision);
    }
    if !resp.cancel_reason.is_empty() {
        line += &format!(" reason={:?}", resp.cancel_reason);
    }
    if resp.fragment {
        line += " fragment";
    }
    if !resp.events.is_empty() {
        line += &format!(" [{}]", resp.events.iter().map(show_event).collect::<Vec<_>>().join(", "));
    }
    line
}

fn show_event(ev: &Event) -> String {
    let kv = ev.kv.as_ref().expect("events carry a kv");
    let mut s = match EventType::try_from(ev.r#type).expect("known event type") {
        EventType::Put => format!("PUT {}", show_kv(kv)),
        EventType::Delete => format!("DEL {}@{}", String::from_utf8_lossy(&kv.key), kv.mod_revision),
    };
    if let Some(prev) = &ev.prev_kv {
        s += &format!(" prev({})", show_kv(prev));
    }
    s
}

fn show_kv(kv: &KeyValue) -> String {
    format!("{}={}@{}", String::from_utf8_lossy(&kv.key), String::from_utf8_lossy(&kv.value), kv.mod_revision)
}

/// Expected lines, written as string literals.
fn lines(expected: &[&str]) -> Vec<String> {
    expected.iter().map(|s| s.to_string()).collect()
}

const NONE: &[&str] = &[];
