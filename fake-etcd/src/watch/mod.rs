//! The watch hub: every watcher of one member, grouped by gRPC stream. Sans IO: it turns requests, committed
//! changes and ticks into the `WatchResponse`s to send, and the async shell sends them.
//!
//! Semantics are etcd 3.4's `mvcc/watchable_store.go` and `v3rpc/watch.go` (`shared/reference/raft-and-etcd.md`
//! B.8), with the fixed behaviour of the etcd bugs in `races-catalog.md` C1–C3:
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
//! Headers carry only `revision`; the shell stamps cluster id, member id and term.

mod catch_up;
mod fragment;
mod hub;
mod respond;
mod stream;
mod watcher;
mod wire_size;

#[cfg(test)]
mod tests;

pub use hub::{HubConfig, StreamId, WatchHub};
