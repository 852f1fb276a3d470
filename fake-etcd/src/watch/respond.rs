//! The `WatchResponse`s the hub sends, and the one path by which events reach a watcher (filters, `prev_kv`,
//! fragmenting, bookkeeping).

use etcd_proto::etcdserverpb::{ResponseHeader, WatchResponse};
use etcd_proto::mvccpb::event::EventType;
use etcd_proto::mvccpb::Event;

use super::fragment::split;
use super::watcher::Watcher;
use crate::mvcc::{KeyRange, MvccStore, RangeOptions};
use crate::types::Revision;

/// The watch id of responses that belong to no watcher: failed creates and stream-wide progress
/// (clientv3's `InvalidWatchID`).
pub(super) const NO_WATCH_ID: i64 = -1;

/// A header with only the revision; the shell stamps cluster id, member id and term.
fn header(rev: Revision) -> Option<ResponseHeader> {
    Some(ResponseHeader { revision: rev.0, ..Default::default() })
}

pub(super) fn created(watch_id: i64, current: Revision) -> WatchResponse {
    WatchResponse { header: header(current), watch_id, created: true, ..Default::default() }
}

pub(super) fn create_failed(reason: String, current: Revision) -> WatchResponse {
    WatchResponse {
        header: header(current),
        watch_id: NO_WATCH_ID,
        created: true,
        canceled: true,
        cancel_reason: reason,
        ..Default::default()
    }
}

pub(super) fn canceled(watch_id: i64, current: Revision) -> WatchResponse {
    WatchResponse { header: header(current), watch_id, canceled: true, ..Default::default() }
}

/// The watcher needs history below `compact_rev`. etcd sends this with header revision 0 and an empty
/// cancel reason (etcd-transcript §13); clients derive the error text from `compact_revision`.
pub(super) fn compacted(watch_id: i64, compact_rev: Revision) -> WatchResponse {
    debug_assert!(compact_rev > Revision::ZERO, "a compaction cancel needs a compaction");
    WatchResponse {
        header: header(Revision::ZERO),
        watch_id,
        canceled: true,
        compact_revision: compact_rev.0,
        ..Default::default()
    }
}

/// An empty response at `current`: "every event up to `current` has been sent".
pub(super) fn progress(watch_id: i64, current: Revision) -> WatchResponse {
    WatchResponse { header: header(current), watch_id, ..Default::default() }
}

/// Sends `batch` (events the watcher is owed, in revision order, unfiltered) as one logical response with
/// header revision `header_rev`: filters it, fills `prev_kv`, and splits it if the watcher asked for fragments
/// and it is too large. Returns nothing when the filters leave no event, as etcd does.
pub(super) fn deliver<'e>(
    w: &mut Watcher,
    watch_id: i64,
    batch: impl IntoIterator<Item = &'e Event>,
    header_rev: Revision,
    store: &MvccStore,
    max_request_bytes: usize,
) -> Vec<WatchResponse> {
    let mut events: Vec<Event> = batch.into_iter().filter(|ev| w.passes_filters(ev)).cloned().collect();
    let (Some(first), Some(last)) = (events.first(), events.last()) else {
        return Vec::new();
    };
    let (first_rev, last_rev) = (event_rev(first), event_rev(last));
    debug_assert!(
        first_rev > w.last_delivered,
        "watcher {watch_id} got revision {first_rev} after {}",
        w.last_delivered
    );
    debug_assert!(events.windows(2).all(|p| event_rev(&p[0]) <= event_rev(&p[1])), "events out of order");
    debug_assert!(last_rev <= header_rev, "event at {last_rev} above header revision {header_rev}");
    w.last_delivered = last_rev;
    w.quiet = false;

    if w.spec.prev_kv {
        for ev in &mut events {
            ev.prev_kv = prev_kv(ev, store);
        }
    }
    let resp = WatchResponse { header: header(header_rev), watch_id, events, ..Default::default() };
    if w.spec.fragment {
        split(resp, max_request_bytes)
    } else {
        vec![resp]
    }
}

pub(super) fn event_rev(ev: &Event) -> Revision {
    Revision(ev.kv.as_ref().expect("a watch event always carries its kv").mod_revision)
}

/// The key as it was just before the event: read at `mod_revision - 1`. A creation has none, and a
/// compacted revision gives none rather than an error.
fn prev_kv(ev: &Event, store: &MvccStore) -> Option<etcd_proto::mvccpb::KeyValue> {
    let kv = ev.kv.as_ref().expect("a watch event always carries its kv");
    let is_create = ev.r#type == EventType::Put as i32 && kv.create_revision == kv.mod_revision;
    let before = Revision(kv.mod_revision).prev();
    // Revision 0 would read the current revision; no event can be at revision 1 anyway.
    if is_create || before <= Revision::ZERO {
        return None;
    }
    let opts = RangeOptions { rev: before, ..Default::default() };
    let found = store.range(&KeyRange::Single(kv.key.clone()), opts).ok()?;
    found.kvs.into_iter().next()
}
