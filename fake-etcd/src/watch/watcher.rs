//! One watcher: what it watches, which revision it is owed next, and whether it is synced.

use etcd_proto::etcdserverpb::watch_create_request::FilterType;
use etcd_proto::etcdserverpb::WatchCreateRequest;
use etcd_proto::mvccpb::event::EventType;
use etcd_proto::mvccpb::Event;

use crate::error::EtcdError;
use crate::mvcc::KeyRange;
use crate::types::Revision;

/// Why a create request was refused. The texts go out as `cancel_reason` and clients compare them whole, so
/// they are etcd's (`mvcc/watcher.go`; a negative start gets `ErrCompacted`'s text since etcd 3.4.38).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CreateError {
    NegativeStart,
    EmptyRange,
    DuplicateId,
}

impl CreateError {
    pub(super) fn reason(self) -> String {
        match self {
            CreateError::NegativeStart => EtcdError::Compacted.to_string(),
            CreateError::EmptyRange => "mvcc: watcher range is empty".to_owned(),
            CreateError::DuplicateId => "mvcc: duplicate watch ID provided on the WatchStream".to_owned(),
        }
    }
}

/// A create request, validated except for its id (which only the stream can check).
#[derive(Clone, Debug)]
pub(super) struct WatchSpec {
    pub(super) range: KeyRange,
    /// As requested; 0 means "from the next revision".
    pub(super) start: Revision,
    pub(super) no_put: bool,
    pub(super) no_delete: bool,
    pub(super) prev_kv: bool,
    pub(super) fragment: bool,
    pub(super) progress_notify: bool,
}

impl WatchSpec {
    /// Checks in etcd's order: the start revision first, then the range.
    pub(super) fn parse(req: &WatchCreateRequest) -> Result<WatchSpec, CreateError> {
        if req.start_revision < 0 {
            return Err(CreateError::NegativeStart);
        }
        // etcd reads an empty key as "\0", the smallest key, so that "" with range_end "\0" means every key.
        let key: &[u8] = if req.key.is_empty() { &[0] } else { &req.key };
        let bounded = !req.range_end.is_empty() && req.range_end != [0];
        if bounded && key >= req.range_end.as_slice() {
            return Err(CreateError::EmptyRange);
        }
        let has = |f: FilterType| req.filters.contains(&(f as i32));
        Ok(WatchSpec {
            range: KeyRange::new(key, &req.range_end),
            start: Revision(req.start_revision),
            no_put: has(FilterType::Noput),
            no_delete: has(FilterType::Nodelete),
            prev_kv: req.prev_kv,
            fragment: req.fragment,
            progress_notify: req.progress_notify,
        })
    }
}

#[derive(Clone, Debug)]
pub(super) struct Watcher {
    pub(super) spec: WatchSpec,
    /// The lowest revision it may still be sent (etcd's `minRev`): everything below was delivered or did
    /// not concern it.
    pub(super) next: Revision,
    /// Synced watchers get live changes from `notify`; unsynced ones wait for a catch-up from the store.
    pub(super) synced: bool,
    /// No response with events went out since the last progress tick, so the next tick owes it one.
    pub(super) quiet: bool,
    /// The revision of the last event delivered, for the ordering invariant.
    pub(super) last_delivered: Revision,
    /// `next` as it was at creation: where etcd's synced watchers still stood before etcd #15271 was fixed,
    /// because live delivery did not advance their `minRev`. Only the restore bug switch reads it.
    pub(super) first: Revision,
}

impl Watcher {
    /// A watcher created when the store is at `current`. Whether it starts synced is the caller's choice
    /// (a stalled stream's watchers never are); its `next` is the same either way.
    pub(super) fn new(spec: WatchSpec, current: Revision) -> Watcher {
        let next = if spec.start == Revision::ZERO { current.next() } else { spec.start };
        Watcher { spec, next, synced: false, quiet: true, last_delivered: Revision::ZERO, first: next }
    }

    /// Whether the watcher is still waiting for a start revision the store has not reached.
    pub(super) fn is_future(&self, current: Revision) -> bool {
        self.next > current.next() && self.next == self.spec.start
    }

    /// Whether a progress notification at `current` is allowed. Besides being synced, a watcher whose
    /// requested start is still ahead of the store gets none: a progress revision below its start would
    /// move a resuming client backwards (etcd #20221, fixed in 3.4.38). A start of 0 never blocks.
    pub(super) fn progress_ready(&self, current: Revision) -> bool {
        self.synced && current >= self.spec.start
    }

    /// Its invariants with the store at `current`.
    pub(super) fn check(&self, id: i64, current: Revision) {
        debug_assert!(self.next > Revision::ZERO, "watcher {id}: next revision {} is not positive", self.next);
        debug_assert!(
            self.last_delivered < self.next,
            "watcher {id}: delivered {} but next is {}",
            self.last_delivered,
            self.next
        );
        if self.synced {
            // A synced watcher has seen everything up to the current revision, and nothing beyond.
            debug_assert!(
                self.next == current.next() || self.is_future(current),
                "watcher {id}: synced at next revision {} with the store at {current}",
                self.next
            );
        } else {
            debug_assert!(
                self.next <= current.next() || self.is_future(current),
                "watcher {id}: unsynced at next revision {} with the store at {current}",
                self.next
            );
        }
    }

    /// Whether `ev` concerns it: in its range and at or above `next`. Filters come later, because etcd
    /// counts a catch-up batch's revisions before filtering.
    pub(super) fn is_owed(&self, ev: &Event) -> bool {
        let kv = ev.kv.as_ref().expect("a watch event always carries its kv");
        self.spec.range.contains(&kv.key) && kv.mod_revision >= self.next.0
    }

    /// Whether its NOPUT / NODELETE filters let `ev` through.
    pub(super) fn passes_filters(&self, ev: &Event) -> bool {
        match EventType::try_from(ev.r#type) {
            Ok(EventType::Put) => !self.spec.no_put,
            Ok(EventType::Delete) => !self.spec.no_delete,
            Err(_) => true,
        }
    }
}
