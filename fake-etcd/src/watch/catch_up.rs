//! Bringing one unsynced watcher up to the current revision from the store's history, or canceling it when
//! compaction has removed part of what it is owed.

use etcd_proto::etcdserverpb::WatchResponse;
use etcd_proto::mvccpb::Event;

use super::respond::{compacted, deliver, event_rev};
use super::stream::Stream;
use super::HubConfig;
use crate::mvcc::MvccStore;
use crate::types::Revision;

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

/// Catches up watcher `id` of `stream`: the responses it is owed, in order. Afterwards the watcher is synced,
/// or gone if it needed history below the compaction revision (it then gets `compact_revision` instead of a
/// silent gap: etcd #17529, fixed).
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
    let events = match store.events(&w.spec.range, w.next, current) {
        Ok(events) => events,
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
    let mut out = Vec::new();
    for batch in revision_batches(&events, config.batch_max_revs) {
        // Catch-up responses carry the revision the watcher is now synced to, not the batch's last one.
        out.extend(deliver(w, id, batch, current, store, config.max_request_bytes));
    }
    w.next = current.next();
    w.synced = true;
    out
}

/// Splits revision-ordered `events` into runs of at most `max_revs` distinct revisions; a revision is never
/// split between runs.
fn revision_batches(events: &[Event], max_revs: usize) -> Vec<&[Event]> {
    debug_assert!(max_revs > 0, "a batch holds at least one revision");
    let mut batches = Vec::new();
    let mut start = 0;
    let mut n_revs = 0;
    let mut last_rev = Revision::ZERO;
    for (idx, ev) in events.iter().enumerate() {
        let rev = event_rev(ev);
        debug_assert!(rev >= last_rev, "events out of revision order");
        if rev != last_rev {
            if n_revs == max_revs {
                batches.push(&events[start..idx]);
                start = idx;
                n_revs = 0;
            }
            n_revs += 1;
            last_rev = rev;
        }
    }
    if start < events.len() {
        batches.push(&events[start..]);
    }
    batches
}

#[cfg(test)]
mod tests {
    use etcd_proto::mvccpb::KeyValue;

    use super::*;

    #[test]
    fn batches_count_distinct_revisions() {
        let ev = |rev| Event { kv: Some(KeyValue { mod_revision: rev, ..Default::default() }), ..Default::default() };
        let events: Vec<Event> = [2, 2, 3, 4, 4, 4, 5].into_iter().map(ev).collect();
        let revs = |max| {
            revision_batches(&events, max)
                .iter()
                .map(|b| b.iter().map(|e| event_rev(e).0).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        assert_eq!(revs(1), vec![vec![2, 2], vec![3], vec![4, 4, 4], vec![5]]);
        assert_eq!(revs(2), vec![vec![2, 2, 3], vec![4, 4, 4, 5]]);
        assert_eq!(revs(4), vec![vec![2, 2, 3, 4, 4, 4, 5]]);
        assert!(revision_batches(&[], 3).is_empty());
    }
}
