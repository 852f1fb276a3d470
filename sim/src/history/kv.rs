//! The KV and lease requests a client can make, and what it can see come back: etcd's KV API as plain data.
//!
//! These mirror `etcdserverpb` field for field where the checkers need the field, and drop what no checker
//! reads (cluster and member ids, raft terms, inner txn headers, which etcd documents as meaningless).
//! `proto.rs` converts from the wire types.

use serde::{Deserialize, Serialize};

use super::{Bytes, LeaseId, Revision};

/// A request a client sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    Range(RangeRequest),
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
    Compact(CompactRequest),
    LeaseGrant(LeaseGrantRequest),
    LeaseRevoke(LeaseRevokeRequest),
}

impl Request {
    /// Whether the request can never change the store (a Range). Everything else may.
    pub fn is_read_only(&self) -> bool {
        matches!(self, Request::Range(_))
    }
}

/// etcd's key interval: empty `range_end` is the single key `key`; `"\0"` is every key `>= key`; anything
/// else is `[key, range_end)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySpan {
    pub key: Bytes,
    pub range_end: Bytes,
}

impl KeySpan {
    pub fn single(key: impl Into<Bytes>) -> KeySpan {
        KeySpan { key: key.into(), range_end: Bytes::default() }
    }

    pub fn range(key: impl Into<Bytes>, range_end: impl Into<Bytes>) -> KeySpan {
        KeySpan { key: key.into(), range_end: range_end.into() }
    }

    /// Every key that starts with `prefix` (etcd's `GetPrefixRangeEnd`).
    pub fn prefix(prefix: impl Into<Bytes>) -> KeySpan {
        let key: Bytes = prefix.into();
        let range_end = Bytes(fake_etcd::mvcc::prefix_end(key.as_slice()));
        KeySpan { key, range_end }
    }

    /// The exclusive upper bound, `None` when unbounded; a single key has the bound `key + "\0"`.
    pub fn end_exclusive(&self) -> Option<Vec<u8>> {
        if self.range_end.is_empty() {
            let mut end = self.key.0.clone();
            end.push(0);
            Some(end)
        } else if self.range_end.as_slice() == [0] {
            None
        } else {
            Some(self.range_end.0.clone())
        }
    }

    pub fn contains(&self, k: &[u8]) -> bool {
        if self.range_end.is_empty() {
            return self.key.as_slice() == k;
        }
        k >= self.key.as_slice() && self.end_exclusive().is_none_or(|end| k < end.as_slice())
    }

    /// Whether the two spans share a key.
    pub fn overlaps(&self, other: &KeySpan) -> bool {
        let below = |a: &KeySpan, b: &KeySpan| a.end_exclusive().is_some_and(|end| end.as_slice() <= b.key.as_slice());
        !below(self, other) && !below(other, self)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SortOrder {
    #[default]
    None,
    Ascend,
    Descend,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SortTarget {
    #[default]
    Key,
    Version,
    Create,
    Mod,
    Value,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeRequest {
    pub span: KeySpan,
    /// At most this many kvs; 0 means no limit.
    pub limit: i64,
    /// `<= 0` reads the latest revision.
    pub revision: Revision,
    /// Served from the contacted member's local state, which may be stale.
    pub serializable: bool,
    pub keys_only: bool,
    pub count_only: bool,
    pub sort_order: SortOrder,
    pub sort_target: SortTarget,
    /// The min/max filters; 0 means no bound.
    pub min_mod_revision: Revision,
    pub max_mod_revision: Revision,
    pub min_create_revision: Revision,
    pub max_create_revision: Revision,
}

impl RangeRequest {
    pub fn key(key: impl Into<Bytes>) -> RangeRequest {
        RangeRequest { span: KeySpan::single(key), ..RangeRequest::default() }
    }

    pub fn span(span: KeySpan) -> RangeRequest {
        RangeRequest { span, ..RangeRequest::default() }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PutRequest {
    pub key: Bytes,
    pub value: Bytes,
    pub lease: LeaseId,
    pub prev_kv: bool,
    pub ignore_value: bool,
    pub ignore_lease: bool,
}

impl PutRequest {
    pub fn new(key: impl Into<Bytes>, value: impl Into<Bytes>) -> PutRequest {
        PutRequest { key: key.into(), value: value.into(), ..PutRequest::default() }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteRangeRequest {
    pub span: KeySpan,
    pub prev_kv: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareResult {
    Equal,
    Greater,
    Less,
    NotEqual,
}

/// What a compare looks at, with the operand it compares against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareTarget {
    Version(i64),
    Create(Revision),
    Mod(Revision),
    Value(Bytes),
    Lease(LeaseId),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compare {
    pub span: KeySpan,
    pub result: CompareResult,
    pub target: CompareTarget,
}

/// One operation of a txn branch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnOp {
    Range(RangeRequest),
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnRequest {
    pub compare: Vec<Compare>,
    pub success: Vec<TxnOp>,
    pub failure: Vec<TxnOp>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactRequest {
    pub revision: Revision,
    pub physical: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseGrantRequest {
    pub ttl_s: i64,
    /// `LeaseId::NONE` lets the server pick the id.
    pub id: LeaseId,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRevokeRequest {
    pub id: LeaseId,
}

/// A stored key-value record as a client sees it (`mvccpb.KeyValue`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyValue {
    pub key: Bytes,
    pub create_revision: Revision,
    pub mod_revision: Revision,
    pub version: i64,
    pub value: Bytes,
    pub lease: LeaseId,
}

/// A successful response: the header revision and what came with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// `header.revision`: the store revision after the request took effect.
    pub header_revision: Revision,
    pub body: ResponseBody,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResponseBody {
    Range(RangeResult),
    Put(PutResult),
    DeleteRange(DeleteResult),
    Txn(TxnResult),
    Compact,
    LeaseGrant(LeaseGrantResult),
    LeaseRevoke,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeResult {
    pub kvs: Vec<KeyValue>,
    pub more: bool,
    pub count: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PutResult {
    pub prev_kv: Option<KeyValue>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteResult {
    pub deleted: i64,
    pub prev_kvs: Vec<KeyValue>,
}

/// A txn's result; `responses` is aligned with the branch that ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnResult {
    pub succeeded: bool,
    pub responses: Vec<TxnOpResult>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnOpResult {
    Range(RangeResult),
    Put(PutResult),
    DeleteRange(DeleteResult),
    Txn(TxnResult),
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseGrantResult {
    pub id: LeaseId,
    /// The TTL the server granted (it may raise a short one to its minimum; the checkers do not read it).
    pub ttl_s: i64,
}
