//! What a step's client must observe, once validated: expressions parsed, names resolved, every key one
//! the step's kind judges. `None` (or empty) fields are not checked; [`Expectations::written`] says which
//! keys the author wrote, so that the judge can prove it judged each of them.

use std::collections::BTreeSet;

use super::expect::{EventType, ExpectOutcome};
use crate::history::GrpcCode;
use crate::scenario::expr::Expr;

/// What a `kube` step's client must observe; `None` fields are not checked.
#[derive(Clone, Debug, Default)]
pub struct KubeExpect {
    /// The code, or the codes one of which it must be.
    pub code: Option<Vec<u16>>,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub message_contains: Option<String>,
    /// JSON pointer and the value it must hold.
    pub fields: Vec<(String, serde_json::Value)>,
    /// JSON pointers that must hold something (not null, `""`, `[]` or `{}`).
    pub non_empty: Vec<String>,
    /// JSON pointers that must be absent (or null).
    pub absent: Vec<String>,
    pub rv: Option<Expr>,
    pub items: Option<Vec<String>>,
    pub watch_events: Option<Vec<WatchEventExpect>>,
}

/// One event a `kube` watch must deliver.
#[derive(Clone, Debug)]
pub struct WatchEventExpect {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    pub name: Option<String>,
    pub rv: Option<Expr>,
    pub initial_events_end: Option<bool>,
    pub code: Option<u16>,
}

/// What a step's client must observe; `None` fields are not checked.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    pub outcome: Option<ExpectOutcome>,
    pub error: Option<(GrpcCode, Option<String>)>,
    pub revision: Option<Expr>,
    /// What the response itself must hold (`kvs`, `count`, `more`, `prev_value`, `succeeded`).
    pub body: ResponseExpect,
    pub ttl_s: Option<Expr>,
    /// lease_time_to_live: the keys attached, in order.
    pub keys: Option<Vec<String>>,
    /// lease_leases: the `lease_grant` steps whose leases are listed, and no others.
    pub leases: Option<Vec<String>>,
    /// auth lists and gets: the names in the answer, in order.
    pub names: Option<Vec<String>>,
    /// txn: one per operation of the branch that ran.
    pub responses: Option<Vec<ResponseExpect>>,
    pub events: Option<Vec<EventExpect>>,
    pub canceled: Option<bool>,
    pub compact_revision: Option<Expr>,
    pub cancel_reason: Option<String>,
    pub progress_count: Option<Expr>,
    pub progress_revision: Option<Expr>,
    /// A `kube` step's expectations (also a controller's, whose answer is an update's).
    pub kube: KubeExpect,
    /// An informer's expectations.
    pub informer: InformerExpect,
    /// controller: how many attempts it made.
    pub attempts: Option<Expr>,
    /// move_leader: the member that leads once the step is done.
    pub leader: Option<String>,
    /// move_leader: whether another member leads than before.
    pub leader_changed: Option<bool>,
    /// The keys the author wrote, by their names in the file: each must be judged.
    pub written: BTreeSet<&'static str>,
}

/// What an informer must have come to: `None` fields are not checked. (The newest resourceVersion it was
/// told is `rv`, read from [`KubeExpect::rv`].)
#[derive(Clone, Debug, Default)]
pub struct InformerExpect {
    pub synced: Option<bool>,
    pub relists: Option<Expr>,
    pub expired: Option<Expr>,
    /// The names in its store at the end of the run, in order.
    pub store: Option<Vec<String>>,
}

/// What a response must hold: a step's own, or one operation's in a txn branch; `None` fields are not
/// checked.
#[derive(Clone, Debug, Default)]
pub struct ResponseExpect {
    pub kvs: Option<Vec<KvExpect>>,
    pub count: Option<Expr>,
    pub more: Option<bool>,
    pub prev_value: Option<String>,
    pub succeeded: Option<bool>,
}

impl ResponseExpect {
    /// The keys given, by their names in the file.
    pub fn given(&self) -> Vec<&'static str> {
        let keys = [
            ("kvs", self.kvs.is_some()),
            ("count", self.count.is_some()),
            ("more", self.more.is_some()),
            ("prev_value", self.prev_value.is_some()),
            ("succeeded", self.succeeded.is_some()),
        ];
        keys.iter().filter(|(_, set)| *set).map(|(k, _)| *k).collect()
    }

    /// The first key given that a response of `kind` cannot hold.
    pub fn misfit(&self, kind: ResponseKind) -> Option<&'static str> {
        self.given().into_iter().find(|k| !kind.keys().contains(k))
    }
}

/// What kind of response a [`ResponseExpect`] is judged against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseKind {
    Get,
    Put,
    Delete,
    Txn,
}

impl ResponseKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ResponseKind::Get => "get",
            ResponseKind::Put => "put",
            ResponseKind::Delete => "delete",
            ResponseKind::Txn => "txn",
        }
    }

    /// The keys of [`ResponseExpect`] a response of this kind can meet.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            ResponseKind::Get => &["kvs", "count", "more"],
            ResponseKind::Put => &["prev_value"],
            ResponseKind::Delete => &["count", "prev_value"],
            ResponseKind::Txn => &["succeeded"],
        }
    }
}

#[derive(Clone, Debug)]
pub struct KvExpect {
    pub key: String,
    pub value: Option<String>,
    pub create_revision: Option<Expr>,
    pub mod_revision: Option<Expr>,
    pub version: Option<Expr>,
    pub lease: Option<String>,
}

#[derive(Clone, Debug)]
pub struct EventExpect {
    pub kind: EventType,
    pub key: String,
    pub value: Option<String>,
    pub mod_revision: Option<Expr>,
    pub create_revision: Option<Expr>,
    pub version: Option<Expr>,
    pub prev_value: Option<String>,
}
