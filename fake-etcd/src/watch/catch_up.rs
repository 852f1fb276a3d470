//! Bringing one unsynced watcher up to the current revision from the store's history, or canceling it when
//! compaction has removed part of what it is owed.

use etcd_proto::etcdserverpb::WatchResponse;

use super::config::HubConfig;
use super::respond::{compacted, deliver, event_rev};
use super::stream::Stream;
use crate::mvcc::MvccStore;

/// Why a watcher is behind: the one bug switch here concerns only slow watchers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Behind {
    /// Just created with a start at or below the current revision.
    New,
    /// Its stream stalled and has drained since (etcd's slow, unsynced watcher).
    Slow,
    /// The store under it was replaced by a snapshot's.
    Restored,
}

/// One step of catching up watcher `id` of `stream`: the next batch of what it is owed, at most
/// [`HubConfig::batch_max_revs`] revisions (etcd's `watchBatchMaxRevs`; a batch may still be several
/// responses when the watcher fragments). Afterwards the watcher is synced if nothing more is owed, still
/// behind (its next revision moved past the batch) if more is, or gone if it needed history below the
/// compaction revision (it then gets `compact_revision` instead of a silent gap: etcd #17529, fixed).
///
/// One batch per step, as etcd's `syncWatchers` sends an unsynced watcher one batch per round and leaves it
/// unsynced while more is owed: the caller decides how many steps a stream can take now (see
/// `WatchHub::sync`), so a drained stream's backlog is never materialised all at once.
///
/// With [`HubConfig::slow_watcher_skips_compacted`] a slow watcher that compaction overtook resumes from the
/// compaction revision instead. Before etcd's fix, `syncWatchers` tried to send such a watcher its compaction
/// cancel without blocking; when the slow stream's channel was full it left the watcher in the batch it was
/// syncing, which moved it past the events it read, so the watcher went on as if nothing was missing. Where
/// exactly it resumed depended on the other watchers in that batch; the compaction revision is the least it
/// could skip.
pub(super) fn catch_up(
    stream: &mut Stream,
    id: i64,
    store: &MvccStore,
    config: &HubConfig,
    behind: Behind,
) -> Vec<WatchResponse> {
    let current = store.current_revision();
    let compact_rev = store.compact_revision();
    let w = stream.watchers.get_mut(&id).expect("catching up a registered watcher");
    debug_assert!(!w.synced, "watcher {id} is already synced");
    debug_assert!(!stream.stalled, "catching up on a stalled stream");

    // Reading from exactly the compaction revision is legal: the store keeps what happened at it.
    if w.next < compact_rev {
        if behind == Behind::Slow && config.slow_watcher_skips_compacted {
            w.next = compact_rev;
        } else {
            stream.retire(id);
            return vec![compacted(id, compact_rev)];
        }
    }
    if w.next > current {
        // Nothing happened since, or it starts in the future.
        w.synced = true;
        return Vec::new();
    }
    let (events, rest) = match store.events_batch(&w.spec.range, w.next, current, config.batch_max_revs) {
        Ok(batch) => batch,
        Err(err) => {
            debug_assert!(false, "history [{}, {current}] unreadable above compaction {compact_rev}: {err}", w.next);
            stream.retire(id);
            return vec![compacted(id, compact_rev)];
        }
    };
    debug_assert!(
        events.iter().all(|ev| w.is_owed(ev) && event_rev(ev) <= current),
        "the store returned events outside the range or outside [{}, {current}]",
        w.next
    );
    debug_assert!(
        rest.is_none_or(|rest| rest > w.next && rest <= current && events.iter().all(|ev| event_rev(ev) < rest)),
        "the rest of the backlog must begin after this batch"
    );
    // Catch-up responses carry the revision the watcher is being synced to, not the batch's last one.
    let out = deliver(w, id, &events, current, store, config.max_request_bytes);
    match rest {
        Some(rest) => w.next = rest,
        None => {
            w.next = current.next();
            w.synced = true;
        }
    }
    out
}
