//! `WatchHub`: streams, watchers, and the responses they are owed.

use std::collections::BTreeMap;

use etcd_proto::etcdserverpb::watch_request::RequestUnion;
use etcd_proto::etcdserverpb::{WatchCreateRequest, WatchRequest, WatchResponse};
use etcd_proto::mvccpb::Event;

use super::catch_up::{catch_up, Behind};
use super::config::HubConfig;
use super::respond::{canceled, create_failed, created, deliver, event_rev, progress, NO_WATCH_ID};
use super::stream::Stream;
use super::watcher::{WatchSpec, Watcher};
use crate::mvcc::MvccStore;
use crate::types::Revision;

/// Identifies one gRPC Watch stream within a member.
pub type StreamId = u64;

/// Every call that takes the store expects it to be the one the hub has been notified of: the shell calls
/// [`WatchHub::notify`] after each commit that changed something, before any other call.
#[derive(Debug, Default)]
pub(crate) struct WatchHub {
    config: HubConfig,
    /// Ordered, so that responses for several streams go out in stream order.
    streams: BTreeMap<StreamId, Stream>,
    next_stream: StreamId,
}

impl WatchHub {
    pub(crate) fn new(config: HubConfig) -> WatchHub {
        assert!(config.batch_max_revs > 0, "a catch-up batch must hold at least one revision");
        WatchHub { config, streams: BTreeMap::new(), next_stream: 0 }
    }

    pub(crate) fn open_stream(&mut self) -> StreamId {
        let id = self.next_stream;
        self.next_stream += 1;
        self.streams.insert(id, Stream::default());
        id
    }

    /// Drops the stream and all its watchers.
    pub(crate) fn close_stream(&mut self, stream: StreamId) {
        self.streams.remove(&stream);
    }

    /// One request received on `stream` (create, cancel or progress); returns what to send on it, in order.
    ///
    /// - create: the created response (or a failed create: `created` and `canceled`, watch id -1, etcd's
    ///   reason), then, on a stream that is not stalled, the catch-up from its start revision or a
    ///   compaction cancel, as far as `room` lets it (see [`WatchHub::sync`]);
    /// - cancel: `canceled` for that id; nothing for an id the stream does not know, as etcd;
    /// - progress: `{watch_id: -1, header.revision: current}` once every watcher on the stream is synced
    ///   (possibly from a later `notify` or `sync`); nothing on a stream without watchers, as etcd. With
    ///   [`HubConfig::progress_ignores_unsynced`], etcd 3.4.23's answer instead: at once, whatever the
    ///   watchers owe (its `recvLoop` wrote the response straight to the stream's control channel).
    pub(crate) fn handle(
        &mut self,
        stream: StreamId,
        req: WatchRequest,
        store: &MvccStore,
        room: usize,
    ) -> Vec<WatchResponse> {
        let current = store.current_revision();
        self.check(current);
        let config = self.config;
        let Some(s) = self.streams.get_mut(&stream) else {
            debug_assert!(false, "request on unknown stream {stream}");
            return Vec::new();
        };
        let mut out = match req.request_union {
            Some(RequestUnion::CreateRequest(create)) => create_watcher(s, &create, store, &config, room),
            Some(RequestUnion::CancelRequest(cancel)) => {
                if s.cancel(cancel.watch_id) {
                    vec![canceled(cancel.watch_id, current)]
                } else {
                    Vec::new()
                }
            }
            Some(RequestUnion::ProgressRequest(_)) if config.progress_ignores_unsynced => {
                vec![progress(NO_WATCH_ID, current)]
            }
            Some(RequestUnion::ProgressRequest(_)) => {
                s.request_progress();
                Vec::new()
            }
            // etcd ignores a request it does not understand rather than failing the stream.
            None => Vec::new(),
        };
        out.extend(s.answer_progress(current));
        self.check(current);
        out
    }

    /// A write committed `events` (all at one revision, in sub-revision order); returns the responses owed to
    /// synced watchers, grouped per stream in watcher-id order, streams ascending.
    pub(crate) fn notify(&mut self, events: &[Event], store: &MvccStore) -> Vec<(StreamId, WatchResponse)> {
        let Some(first) = events.first() else {
            return Vec::new();
        };
        let rev = event_rev(first);
        debug_assert!(events.iter().all(|ev| event_rev(ev) == rev), "one commit, one revision");
        debug_assert_eq!(rev, store.current_revision(), "notify right after the commit");
        self.check(rev.prev());
        let max_request_bytes = self.config.max_request_bytes;
        let mut out = Vec::new();
        for (&sid, s) in &mut self.streams {
            for (&id, w) in &mut s.watchers {
                if !w.synced {
                    continue;
                }
                let owed: Vec<&Event> = events.iter().filter(|ev| w.is_owed(ev)).collect();
                // Live responses carry the revision of their events.
                out.extend(deliver(w, id, owed, rev, store, max_request_bytes).into_iter().map(|r| (sid, r)));
                // A watcher waiting for a future start revision keeps waiting.
                w.next = w.next.max(rev.next());
            }
            out.extend(s.answer_progress(rev).map(|r| (sid, r)));
        }
        self.check(rev);
        out
    }

    /// The stream's outbound buffer is full: its watchers stop receiving live events and fall behind.
    pub(crate) fn stall(&mut self, stream: StreamId) {
        if let Some(s) = self.streams.get_mut(&stream) {
            s.stall();
        }
    }

    /// Catches up the unsynced watchers of streams that are not stalled (and answers progress requests that
    /// were waiting for them). `unstall` lifts the stall on that stream first. A watcher that compaction
    /// overtook while it was behind gets a compaction cancel instead of its events.
    ///
    /// `room(stream)` is how many more responses the stream's outbox takes before it is full. Watchers catch
    /// up a batch each per round, in watch-id order, while there is room; a stream that runs out of room with
    /// watchers still behind stalls again ([`WatchHub::is_stalled`]), to go on when its client has read. So a
    /// stream's backlog is sent as its client reads it, as etcd's `syncWatchers` sends unsynced watchers one
    /// batch each per round and only while the stream's channel has room.
    pub(crate) fn sync(
        &mut self,
        unstall: Option<StreamId>,
        store: &MvccStore,
        room: impl Fn(StreamId) -> usize,
    ) -> Vec<(StreamId, WatchResponse)> {
        let current = store.current_revision();
        self.check(current);
        if let Some(s) = unstall.and_then(|sid| self.streams.get_mut(&sid)) {
            s.stalled = false;
        }
        let config = self.config;
        let mut out = Vec::new();
        for (&sid, s) in &mut self.streams {
            if s.stalled {
                continue;
            }
            let sent = catch_up_stream(s, store, &config, Behind::Slow, room(sid));
            out.extend(sent.into_iter().map(|r| (sid, r)));
            out.extend(s.answer_progress(current).map(|r| (sid, r)));
        }
        self.check(current);
        out
    }

    /// Whether `stream` is stalled: its outbox filled, or a catch-up ran out of room. Its watchers are all
    /// behind until a [`WatchHub::sync`] that unstalls it.
    pub(crate) fn is_stalled(&self, stream: StreamId) -> bool {
        self.streams.get(&stream).is_some_and(|s| s.stalled)
    }

    /// The member replaced its store with a leader's Raft snapshot (`store` is the restored one); returns what
    /// the watchers are owed now. Raft installs only a snapshot ahead of what the member applied, so the
    /// restored revision is never below the one the hub last saw.
    ///
    /// As etcd does since its fixes of #15271 and #20221 (`watchableStore.Restore` moves every synced watcher
    /// to the unsynced group, and the next sync brings it up to date), every watcher keeps its position:
    /// - one whose next revision is at or below the restored revision catches up from the restored store's
    ///   history, or is canceled with `compact_revision` if the snapshot's compaction removed part of what it
    ///   is owed; it never gets an event at or below a revision it already delivered;
    /// - one waiting for a future start revision keeps waiting for exactly that revision;
    /// - on a stalled stream, watchers are unsynced already and catch up at the next `sync`, as before.
    ///
    /// With [`HubConfig::restore_lowers_watchers`] the old behaviour instead: every watcher on a stream that
    /// is not stalled (etcd's synced group) restarts from the revision it was created at, and a future one is
    /// lowered to just after the restored revision.
    ///
    /// The catch-up goes as far as `room` lets it, as in [`WatchHub::sync`].
    pub(crate) fn restore(
        &mut self,
        store: &MvccStore,
        room: impl Fn(StreamId) -> usize,
    ) -> Vec<(StreamId, WatchResponse)> {
        let current = store.current_revision();
        let config = self.config;
        let mut out = Vec::new();
        for (&sid, s) in &mut self.streams {
            if s.stalled {
                continue;
            }
            for w in s.watchers.values_mut() {
                w.synced = false;
                if config.restore_lowers_watchers {
                    lower_on_restore(w, current);
                }
            }
            let sent = catch_up_stream(s, store, &config, Behind::Restored, room(sid));
            out.extend(sent.into_iter().map(|r| (sid, r)));
            out.extend(s.answer_progress(current).map(|r| (sid, r)));
        }
        self.check(current);
        out
    }

    /// The periodic progress tick (`--experimental-watch-progress-notify-interval`): each watcher created with
    /// `progress_notify` that is synced and got no events since the previous tick gets an empty response at
    /// the current revision.
    pub(crate) fn progress_tick(&mut self, store: &MvccStore) -> Vec<(StreamId, WatchResponse)> {
        let current = store.current_revision();
        self.check(current);
        let mut out = Vec::new();
        for (&sid, s) in &mut self.streams {
            for (&id, w) in &mut s.watchers {
                if !w.spec.progress_notify {
                    continue;
                }
                if w.quiet && w.progress_ready(current) {
                    out.push((sid, progress(id, current)));
                }
                w.quiet = true;
            }
        }
        self.check(current);
        out
    }

    /// How many watchers are registered, over all streams.
    #[cfg(test)]
    pub(crate) fn watcher_count(&self) -> usize {
        self.streams.values().map(|s| s.watchers.len()).sum()
    }

    fn check(&self, current: Revision) {
        if cfg!(debug_assertions) {
            for s in self.streams.values() {
                s.check(current);
            }
        }
    }
}

/// The restore bug (see [`HubConfig::restore_lowers_watchers`]): the watcher forgets how far it got.
///
/// Before etcd #15271 was fixed, live delivery never advanced a synced watcher's `minRev`, so a restore that
/// moved it to the unsynced group resent everything from its creation on. Before #20221 was fixed, the
/// resync then set every watcher's `minRev` to the restored revision + 1, lowering the ones that waited for
/// a future revision. What it delivered is forgotten too, because etcd never tracked it.
fn lower_on_restore(w: &mut Watcher, current: Revision) {
    w.next = w.first.min(current.next());
    w.last_delivered = Revision::ZERO;
}

/// Validates and registers a watcher; returns the created response and whatever it is owed right away.
fn create_watcher(
    s: &mut Stream,
    req: &WatchCreateRequest,
    store: &MvccStore,
    config: &HubConfig,
    room: usize,
) -> Vec<WatchResponse> {
    let current = store.current_revision();
    let registered = WatchSpec::parse(req).and_then(|spec| Ok((s.allocate_id(req.watch_id)?, spec)));
    let (id, spec) = match registered {
        Ok(registered) => registered,
        Err(err) => return vec![create_failed(err.reason(), current)],
    };
    // Behind until caught up, or for as long as its stream is stalled.
    s.watchers.insert(id, Watcher::new(spec, current));
    let mut out = vec![created(id, current)];
    if !s.stalled {
        out.extend(catch_up_stream(s, store, config, Behind::New, room.saturating_sub(1)));
    }
    out
}

/// Catches up the unsynced watchers of `s` (not stalled), one batch each per round in watch-id order, while
/// the responses fit `room`; stalls `s` if it runs out of room with watchers still behind.
fn catch_up_stream(
    s: &mut Stream,
    store: &MvccStore,
    config: &HubConfig,
    behind: Behind,
    mut room: usize,
) -> Vec<WatchResponse> {
    debug_assert!(!s.stalled, "catching up a stalled stream");
    let mut out = Vec::new();
    loop {
        let ids: Vec<i64> = s.watchers.iter().filter(|(_, w)| !w.synced).map(|(&id, _)| id).collect();
        if ids.is_empty() {
            return out;
        }
        for id in ids {
            if room == 0 {
                s.stall();
                return out;
            }
            let sent = catch_up(s, id, store, config, behind);
            room = room.saturating_sub(sent.len());
            out.extend(sent);
        }
    }
}
