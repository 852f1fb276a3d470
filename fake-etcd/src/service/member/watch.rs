//! The member's watch streams: the watch hub, the outbox of every open stream, and the calls the Watch
//! service and the tickers make (open, request, drained, close, progress). Commits and snapshot restores
//! reach the hub from the drive loop (`replica`) through [`Watches::publish`] and [`Watches::restored`].
//! Whatever the hub answers is stamped with this member's header and queued on its stream's outbox.

use std::collections::BTreeMap;
use std::sync::Arc;

use etcd_proto::etcdserverpb::watch_request::RequestUnion;
use etcd_proto::etcdserverpb::{WatchCreateRequest, WatchRequest, WatchResponse};
use etcd_proto::mvccpb::Event;
use tokio::sync::Notify;

use super::outbox::{OutboundStream, Outbox, Queued};
use super::{Member, State};
use crate::auth::perms::Access;
use crate::error::EtcdError;
use crate::mvcc::MvccStore;
use crate::types::Millis;
use crate::watch::{HubConfig, StreamId, WatchHub};

/// The watch hub and the outboxes of the streams it serves.
pub(super) struct Watches {
    hub: WatchHub,
    outboxes: BTreeMap<StreamId, Outbox>,
}

impl Watches {
    pub(super) fn new(config: HubConfig) -> Watches {
        Watches { hub: WatchHub::new(config), outboxes: BTreeMap::new() }
    }

    /// Hands a commit's events to the watch hub and sends what it owes.
    pub(super) fn publish(&mut self, events: &[Event], mvcc: &MvccStore, member: &Member) {
        if events.is_empty() {
            return;
        }
        let responses = self.hub.notify(events, mvcc);
        self.dispatch(responses, member);
    }

    /// The store was just replaced by a Raft snapshot's: tells the watch hub, which re-syncs its watchers
    /// from the restored store, and sends what it owes.
    pub(super) fn restored(&mut self, mvcc: &MvccStore, member: &Member) {
        let outboxes = &self.outboxes;
        let responses = self.hub.restore(mvcc, |sid| room_in(outboxes, sid));
        self.dispatch(responses, member);
        let streams: Vec<StreamId> = self.outboxes.keys().copied().collect();
        for stream in streams {
            self.go_on(stream, mvcc, member);
        }
    }

    /// How many more responses `stream`'s outbox takes before it is full.
    fn room(&self, stream: StreamId) -> usize {
        room_in(&self.outboxes, stream)
    }

    /// After the hub caught `stream` up as far as its outbox had room: if that left the stream stalled, holds
    /// the outbox until the client drains it (then [`Member::watch_drained`] goes on), or, if the client has
    /// already read that far, goes on catching up now, round after round.
    fn go_on(&mut self, stream: StreamId, mvcc: &MvccStore, member: &Member) {
        while self.hub.is_stalled(stream) {
            let Some(outbox) = self.outboxes.get_mut(&stream) else { return };
            if outbox.hold() {
                return;
            }
            let outboxes = &self.outboxes;
            let responses = self.hub.sync(Some(stream), mvcc, |sid| room_in(outboxes, sid));
            self.dispatch(responses, member);
        }
    }

    /// Queues responses on their streams. A stream whose client does not keep up is stalled in the hub, and
    /// its watchers fall behind and catch up from the store later, as etcd's unsynced watchers do.
    fn dispatch(&mut self, responses: Vec<(StreamId, WatchResponse)>, member: &Member) {
        let mut gone = Vec::new();
        for (stream, mut resp) in responses {
            let Some(outbox) = self.outboxes.get_mut(&stream) else { continue };
            member.stamp(&mut resp.header);
            match outbox.push(resp) {
                Queued::Sent => {}
                Queued::SentAndFull => self.hub.stall(stream),
                Queued::Gone => gone.push(stream),
            }
        }
        for stream in gone {
            self.close(stream);
        }
    }

    fn close(&mut self, stream: StreamId) {
        self.outboxes.remove(&stream);
        self.hub.close_stream(stream);
    }
}

/// How many more responses `stream`'s outbox takes before it is full (none for a stream that is gone).
fn room_in(outboxes: &BTreeMap<StreamId, Outbox>, stream: StreamId) -> usize {
    outboxes.get(&stream).map_or(0, Outbox::room)
}

impl State {
    /// Whether the sender of `token` may watch `create`'s keys (etcd's `isWatchPermitted`: an unknown token
    /// is refused; a range ending at "\0" is checked as its first key only, as etcd 3.4 turns that end into
    /// an empty one before the check).
    fn watch_permitted(&mut self, create: &WatchCreateRequest, token: Option<&str>, now: Millis) -> bool {
        let Ok(by) = self.auth_info(token, now) else { return false };
        let range_end: &[u8] = if create.range_end == [0] { &[] } else { &create.range_end };
        self.sm.auth.check(&by, &create.key, range_end, Access::Read).is_ok()
    }
}

impl Member {
    /// Opens a watch stream; returns its id, the response stream to hand to gRPC, and the signal that the
    /// client drained a stalled stream.
    pub fn open_watch_stream(&self) -> (StreamId, OutboundStream, Arc<Notify>) {
        let (outbox, outbound, drained) = Outbox::open();
        let mut st = self.lock();
        let id = st.watches.hub.open_stream();
        st.watches.outboxes.insert(id, outbox);
        (id, outbound, drained)
    }

    /// Handles one request of a stream whose client sent `token` (if any) when it opened the stream.
    pub fn watch_request(&self, stream: StreamId, req: WatchRequest, token: Option<&str>) {
        let mut st = self.lock();
        let st = &mut *st;
        if !st.watches.outboxes.contains_key(&stream) {
            // Its response side is gone (the client stopped reading, or the stream was ended for want of a
            // leader): nothing more is answered on it, and it is closed once its requests end.
            return;
        }
        if let Some(RequestUnion::CreateRequest(create)) = &req.request_union {
            if !st.watch_permitted(create, token, self.now()) {
                // etcd answers a watch on keys the user may not read with a created-and-canceled response
                // carrying the gRPC error's text, and no watcher.
                let refused = WatchResponse {
                    header: Some(self.header(st.sm.mvcc.current_revision().0)),
                    watch_id: -1,
                    created: true,
                    canceled: true,
                    // grpc-go's text of etcd's `ErrGRPCPermissionDenied`.
                    cancel_reason: format!("rpc error: code = PermissionDenied desc = {}", EtcdError::PermissionDenied),
                    ..WatchResponse::default()
                };
                st.watches.dispatch(vec![(stream, refused)], self);
                return;
            }
        }
        let room = st.watches.room(stream);
        let responses = st.watches.hub.handle(stream, req, &st.sm.mvcc, room);
        let addressed: Vec<(StreamId, WatchResponse)> = responses.into_iter().map(|r| (stream, r)).collect();
        st.watches.dispatch(addressed, self);
        st.watches.go_on(stream, &st.sm.mvcc, self);
    }

    /// The client drained a stalled stream below the low-water mark: catch its watchers up.
    pub fn watch_drained(&self, stream: StreamId) {
        let mut st = self.lock();
        let st = &mut *st;
        let Some(outbox) = st.watches.outboxes.get_mut(&stream) else { return };
        if !outbox.resume() {
            return;
        }
        let outboxes = &st.watches.outboxes;
        let responses = st.watches.hub.sync(Some(stream), &st.sm.mvcc, |sid| room_in(outboxes, sid));
        st.watches.dispatch(responses, self);
        st.watches.go_on(stream, &st.sm.mvcc, self);
    }

    pub fn close_watch_stream(&self, stream: StreamId) {
        self.lock().watches.close(stream);
    }

    /// The periodic progress notification.
    pub fn progress_tick(&self) {
        let mut st = self.lock();
        let st = &mut *st;
        let responses = st.watches.hub.progress_tick(&st.sm.mvcc);
        st.watches.dispatch(responses, self);
    }
}
