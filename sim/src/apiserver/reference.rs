//! The etcd-side record of the registry prefix: a watch the harness keeps open on the control node from
//! revision 1, with progress notifications, that files every change under `/registry/` in revision order.
//! The checkers compare what the apiserver's clients saw with it.
//!
//! It must never miss a revision, so: when its stream breaks or goes quiet for longer than the members'
//! progress interval allows (a killed or partitioned member), it resumes from the revision after the last
//! one it is sure of on the next member; and the harness's compactions never pass that revision
//! ([`Reference::through`]), so a resume is never refused as compacted (a compaction by someone else, a
//! scenario's `compact` step, ends the record where it is). fake-etcd's own watch guarantees are checked by
//! the KV simulations; here the watch is trusted.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_proto::etcdserverpb as pb;
use etcd_proto::etcdserverpb::kv_client::KvClient;
use etcd_proto::etcdserverpb::watch_client::WatchClient;
use etcd_proto::mvccpb::event::EventType;
use tokio::sync::mpsc;

use crate::client::channel;
use crate::cluster::Cluster;
use crate::history::apiserver::{Change, ChangeKind};

/// How long the reference watch may go without a response before it moves to another member.
const QUIET_LIMIT: Duration = Duration::from_millis(1500);

/// The record so far; clones share it.
#[derive(Clone, Default)]
pub struct Reference {
    inner: Arc<Mutex<Record>>,
}

#[derive(Default)]
struct Record {
    changes: Vec<Change>,
    /// Every change up to this revision is in `changes`.
    through: u64,
}

impl Reference {
    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.inner.lock().expect("reference lock poisoned")
    }

    /// The revision the record is complete up to.
    pub fn through(&self) -> u64 {
        self.lock().through
    }

    /// The changes and the revision they are complete up to.
    pub fn take(&self) -> (Vec<Change>, u64) {
        let mut record = self.lock();
        (std::mem::take(&mut record.changes), record.through)
    }

    /// Waits (at most 20 simulated seconds) until the record reaches etcd's current revision, and returns
    /// that revision (0 if no member answered). Call it on a node with an address (the control node).
    pub async fn catch_up(&self, cluster: &Cluster) -> u64 {
        let mut current = 0;
        for _ in 0..100 {
            for endpoint in cluster.endpoints() {
                let mut kv = KvClient::new(channel(&endpoint));
                let request = pb::RangeRequest { key: b"/".to_vec(), count_only: true, ..pb::RangeRequest::default() };
                if let Ok(Ok(r)) = tokio::time::timeout(Duration::from_millis(500), kv.range(request)).await {
                    current = r.into_inner().header.map_or(0, |h| h.revision as u64);
                    if self.through() >= current {
                        return current;
                    }
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        current
    }

    /// Watches `prefix` from revision 1 through `endpoints` in turn, forever (the caller aborts it).
    pub async fn run(self, endpoints: Vec<String>, prefix: String) {
        let range_end = fake_etcd::mvcc::prefix_end(prefix.as_bytes());
        for endpoint in endpoints.iter().cycle() {
            let start = self.through() + 1;
            let create = pb::WatchCreateRequest {
                key: prefix.clone().into_bytes(),
                range_end: range_end.clone(),
                start_revision: start as i64,
                progress_notify: true,
                ..pb::WatchCreateRequest::default()
            };
            let (tx, rx) = mpsc::unbounded_channel();
            let _ = tx
                .send(pb::WatchRequest { request_union: Some(pb::watch_request::RequestUnion::CreateRequest(create)) });
            let outbound = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
            let mut client = WatchClient::new(channel(endpoint));
            let Ok(Ok(stream)) = tokio::time::timeout(QUIET_LIMIT, client.watch(outbound)).await else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let mut stream = stream.into_inner();
            while let Ok(Ok(Some(response))) = tokio::time::timeout(QUIET_LIMIT, stream.message()).await {
                if response.compact_revision > 0 {
                    // Someone else compacted past the record (a scenario's `compact` step): it can never be
                    // completed beyond `through`, and the checkers judge nothing past it.
                    return;
                }
                if response.canceled {
                    break;
                }
                self.file(&response);
            }
            drop(tx);
        }
    }

    fn file(&self, response: &pb::WatchResponse) {
        let mut record = self.lock();
        for event in &response.events {
            let Some(kv) = &event.kv else { continue };
            let rev = kv.mod_revision as u64;
            if rev <= record.through {
                // Already filed (a resumed watch never repeats, but a member's catch-up may overlap).
                continue;
            }
            let kind = if event.r#type == EventType::Delete as i32 { ChangeKind::Delete } else { ChangeKind::Put };
            record.changes.push(Change { rev, key: String::from_utf8_lossy(&kv.key).into_owned(), kind });
        }
        // The events of one revision come in one response, so everything up to the last one is complete; a
        // progress notification (no events) vouches for everything up to its header revision. The response
        // that confirms the watch's creation carries no events either, but vouches for nothing: its header is
        // the member's revision, and the catch-up events below it are still to come.
        let vouched = match response.events.last().and_then(|e| e.kv.as_ref()) {
            Some(kv) => kv.mod_revision as u64,
            None if response.created => 0,
            None => response.header.as_ref().map_or(0, |h| h.revision as u64),
        };
        record.through = record.through.max(vouched);
    }
}
