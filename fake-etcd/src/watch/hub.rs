//! `WatchHub`: streams, watchers, and the responses they are owed.

use etcd_proto::etcdserverpb::{WatchRequest, WatchResponse};
use etcd_proto::mvccpb::Event;

use crate::mvcc::MvccStore;

/// Identifies one gRPC Watch stream within a member.
pub type StreamId = u64;

#[derive(Clone, Copy, Debug)]
pub struct HubConfig {
    /// Responses of fragmenting watchers are split above this many encoded bytes (`--max-request-bytes`).
    pub max_request_bytes: usize,
    /// At most this many revisions per catch-up response (etcd's `watchBatchMaxRevs`).
    pub batch_max_revs: usize,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig { max_request_bytes: etcd_proto::DEFAULT_MAX_REQUEST_BYTES, batch_max_revs: 1000 }
    }
}

#[derive(Debug, Default)]
pub struct WatchHub {}

impl WatchHub {
    pub fn new(config: HubConfig) -> WatchHub {
        let _ = config;
        todo!()
    }

    pub fn open_stream(&mut self) -> StreamId {
        todo!()
    }

    /// Drops the stream and all its watchers.
    pub fn close_stream(&mut self, stream: StreamId) {
        let _ = stream;
        todo!()
    }

    /// One request received on `stream` (create, cancel or progress); returns what to send on it, in order.
    pub fn handle(&mut self, stream: StreamId, req: WatchRequest, store: &MvccStore) -> Vec<WatchResponse> {
        let _ = (stream, req, store);
        todo!()
    }

    /// A write committed `events` (all at one revision, in sub-revision order); returns the responses owed to
    /// synced watchers, grouped per stream in watcher-id order, streams ascending.
    pub fn notify(&mut self, events: &[Event], store: &MvccStore) -> Vec<(StreamId, WatchResponse)> {
        let _ = (events, store);
        todo!()
    }

    /// The stream's outbound buffer is full: its watchers stop receiving live events and fall behind.
    pub fn stall(&mut self, stream: StreamId) {
        let _ = stream;
        todo!()
    }

    /// Catches up unsynced watchers of streams that are not stalled (and answers progress requests that were
    /// waiting for them). `unstall` lifts the stall on that stream first.
    pub fn sync(&mut self, unstall: Option<StreamId>, store: &MvccStore) -> Vec<(StreamId, WatchResponse)> {
        let _ = (unstall, store);
        todo!()
    }

    /// The periodic progress tick (`--experimental-watch-progress-notify-interval`).
    pub fn progress_tick(&mut self, store: &MvccStore) -> Vec<(StreamId, WatchResponse)> {
        let _ = store;
        todo!()
    }

    /// How many watchers are registered, over all streams.
    pub fn watcher_count(&self) -> usize {
        todo!()
    }
}
