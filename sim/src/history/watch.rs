//! Watch streams as a client saw them: the create request, then every response in arrival order.

use serde::{Deserialize, Serialize};

use super::{ClientId, KeySpan, KeyValue, Revision, Stamp};

/// One watch: what was asked for and everything that came back for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchRecord {
    pub client: ClientId,
    pub request: WatchCreate,
    pub opened: Stamp,
    /// In arrival order. A stream-wide progress response (`watch_id == -1`, the answer to a
    /// `WatchProgressRequest`) speaks for every watch on its stream: the recorder files it under each.
    pub responses: Vec<WatchReceived>,
}

/// `WatchCreateRequest`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchCreate {
    pub span: KeySpan,
    /// 0 means "from the revision after the current one".
    pub start_revision: Revision,
    pub prev_kv: bool,
    pub progress_notify: bool,
    pub filters: Vec<WatchFilter>,
    pub fragment: bool,
}

impl WatchCreate {
    /// Whether an event of this kind on this key is one the watch asked for.
    pub fn wants(&self, kind: EventKind, key: &[u8]) -> bool {
        let filtered = match kind {
            EventKind::Put => self.filters.contains(&WatchFilter::NoPut),
            EventKind::Delete => self.filters.contains(&WatchFilter::NoDelete),
        };
        !filtered && self.span.contains(key)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum WatchFilter {
    NoPut,
    NoDelete,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchReceived {
    pub at: Stamp,
    pub response: WatchResponse,
}

/// `WatchResponse`, less the cluster/member/term parts of the header.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchResponse {
    pub header_revision: Revision,
    pub watch_id: i64,
    pub created: bool,
    pub canceled: bool,
    pub compact_revision: Revision,
    pub cancel_reason: String,
    pub fragment: bool,
    pub events: Vec<Event>,
}

impl WatchResponse {
    /// A progress notification: no events and nothing else to say but the header revision (clientv3's
    /// `IsProgressNotify`).
    pub fn is_progress_notify(&self) -> bool {
        self.events.is_empty()
            && !self.created
            && !self.canceled
            && self.compact_revision == Revision::ZERO
            && self.header_revision != Revision::ZERO
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum EventKind {
    Put,
    Delete,
}

/// `mvccpb.Event`. A DELETE's kv carries only the key and the deletion revision (as `mod_revision`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    pub kv: KeyValue,
    pub prev_kv: Option<KeyValue>,
}

impl Event {
    /// The revision the change was committed at.
    pub fn revision(&self) -> Revision {
        self.kv.mod_revision
    }
}
