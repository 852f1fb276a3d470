//! The watch hub: every watcher of one member, grouped by gRPC stream. Sans IO: it turns requests, committed
//! changes and ticks into the `WatchResponse`s to send, and the async shell sends them.
//!
//! Semantics are etcd 3.4's `mvcc/watchable_store.go` and `v3rpc/watch.go` with the fixed behaviour of
//! etcd #18089, #19179 and #17529:
//! - a created response (`created`, the watch id, header revision = current) precedes any event;
//! - a watcher starting at or below the current revision first catches up from the store, in batches of at
//!   most 1,000 revisions, with header revision = the current revision; then it is *synced* and receives
//!   live changes, one response per revision, header revision = that revision;
//! - a start below the compaction revision gets one response `canceled = true, compact_revision = <compact
//!   rev>` with header revision 0, and the watcher is gone; a watch from exactly the compaction revision
//!   delivers the events at it, deletes included (C1, C2);
//! - a stalled (slow) stream's watchers become *unsynced*; when they catch up, any that compaction overtook
//!   are canceled with `compact_revision` rather than silently skipping history (C3);
//! - progress: periodic for synced watchers with `progress_notify` that got no event since the last tick;
//!   on request (`watch_id = -1`) only once every watcher on the stream is synced (etcd #15220, fixed).
//!
//! Details that clients can see, each as etcd 3.4 has it (the fixes of later 3.4 releases included):
//! - watch ids are per stream; 0 asks for the next free one, and auto ids never go back. A watcher canceled
//!   by compaction keeps its id taken until the client cancels it (clientv3 does, and gets `canceled`);
//! - a create is refused for a negative start revision (3.4.38), an empty range, or an id in use, in that
//!   order; a cancel of an unknown id is not answered;
//! - catch-up batches count revisions before the NOPUT/NODELETE filters apply, and a response the filters
//!   leave empty is not sent;
//! - a watcher whose requested start revision is still above the store's gets no progress notification,
//!   periodic or requested (#20221, fixed in 3.4.38); a start of 0 never holds progress back;
//! - several progress requests waiting on one stream get one answer; a stream without watchers gets none;
//! - a fragmenting watcher's response of at least `max_request_bytes` with two or more events is split
//!   into pieces below the limit (a piece takes at least one event), `fragment = true` on all but the last.
//!
//! Bug switches put some of these fixes back for negative tests, each off by default (`crate::bug` declares
//! them): [`HubConfig`]'s `restore_lowers_watchers` (#15271, #20221), `slow_watcher_skips_compacted` (#17529)
//! and `progress_ignores_unsynced` (#15220); the tombstone kept at the compaction revision (#18089, #19179)
//! is the store's, in `crate::mvcc::MvccConfig`.
//!
//! Headers carry only `revision`; the shell stamps cluster id, member id and term, so the fragment sizes do
//! not count those few bytes.
//!
//! Invariants, asserted in debug builds on entry to and exit from every call that sees the store: a
//! watcher's delivered revisions strictly increase; a synced watcher's next revision is `current + 1`
//! (or its start revision, while that is still in the future); a watcher is synced exactly when its stream
//! is not stalled; a waiting progress request has a watcher that is not ready for it.

mod catch_up;
mod config;
mod fragment;
mod hub;
mod respond;
mod stream;
mod watcher;
mod wire_size;

#[cfg(test)]
mod tests;

pub(crate) use config::HubConfig;
pub use hub::StreamId;
pub(crate) use hub::WatchHub;
