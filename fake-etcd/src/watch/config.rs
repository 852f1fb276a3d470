//! [`HubConfig`]: how a watch hub fragments and batches its responses, and the bug switches that put back
//! fixed etcd watch bugs. Its own module because both the hub and the catch-up step read it, and the hub
//! calls the catch-up step: the configuration sits below both.

#[derive(Clone, Copy, Debug)]
pub(crate) struct HubConfig {
    /// Responses of fragmenting watchers are split at or above this many encoded bytes (`--max-request-bytes`).
    pub max_request_bytes: usize,
    /// At most this many revisions per catch-up response (etcd's `watchBatchMaxRevs`).
    pub batch_max_revs: usize,
    /// Bug switch, off by default: reproduces etcd before #15271 and #20221 were fixed, for negative tests.
    /// On a snapshot restore, every synced watcher moves back to the revision it was created at (so it
    /// replays events it already delivered) and a watcher on a future revision is lowered to the restored
    /// revision (so it gets events below its start). See [`WatchHub::restore`](super::WatchHub::restore).
    pub restore_lowers_watchers: bool,
    /// Bug switch, off by default: reproduces etcd before #17529 was fixed. A slow watcher (one whose stream
    /// stalled) that compaction overtook resumes from the compaction revision when its stream drains, instead
    /// of being canceled with `compact_revision`, so it silently loses the compacted events. See
    /// `catch_up::catch_up`.
    pub slow_watcher_skips_compacted: bool,
    /// Bug switch, off by default: reproduces etcd 3.4 before #15220 was fixed. A progress request is answered
    /// at once with the current revision, even while a watcher on the stream is unsynced and still owes
    /// events below it. See [`WatchHub::handle`](super::WatchHub::handle).
    pub progress_ignores_unsynced: bool,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            max_request_bytes: etcd_proto::DEFAULT_MAX_REQUEST_BYTES,
            batch_max_revs: 1000,
            restore_lowers_watchers: false,
            slow_watcher_skips_compacted: false,
            progress_ignores_unsynced: false,
        }
    }
}
