//! The record log: every stored change, ordered by (main, sub) revision, as etcd's backend orders its `key`
//! bucket. Reads fetch values from it through the key index; watchers replay it by revision range.

use std::collections::BTreeMap;
use std::ops::Bound;

use etcd_proto::mvccpb::{event::EventType, Event, KeyValue};

use super::key_index::RevPair;

/// One stored change.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Record {
    /// The full key-value pair as of this put.
    Put(#[serde(with = "kv_as_protobuf")] KeyValue),
    /// A deletion of this key.
    Tombstone(Vec<u8>),
}

impl Record {
    pub(super) fn key(&self) -> &[u8] {
        match self {
            Record::Put(kv) => &kv.key,
            Record::Tombstone(key) => key,
        }
    }

    fn size_bytes(&self) -> i64 {
        match self {
            Record::Put(kv) => (kv.key.len() + kv.value.len()) as i64,
            Record::Tombstone(key) => key.len() as i64,
        }
    }

    /// The record as a watch event: a PUT carries the full kv, a DELETE only the key and the deletion revision.
    pub(super) fn to_event(&self, rev: RevPair) -> Event {
        match self {
            Record::Put(kv) => Event { r#type: EventType::Put as i32, kv: Some(kv.clone()), prev_kv: None },
            Record::Tombstone(key) => Event {
                r#type: EventType::Delete as i32,
                kv: Some(KeyValue { key: key.clone(), mod_revision: rev.main, ..KeyValue::default() }),
                prev_kv: None,
            },
        }
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct RecordLog {
    records: BTreeMap<RevPair, Record>,
    size_bytes: i64,
}

impl RecordLog {
    pub(super) fn insert(&mut self, rev: RevPair, record: Record) {
        if let Record::Put(kv) = &record {
            // Write-side half of the record invariants checked in `put_at`.
            debug_assert_eq!(kv.mod_revision, rev.main, "a put record carries its own revision");
            debug_assert!(kv.version >= 1 && kv.create_revision <= kv.mod_revision);
        }
        self.size_bytes += record.size_bytes();
        let previous = self.records.insert(rev, record);
        assert!(previous.is_none(), "record log overwrote revision {rev:?}");
    }

    /// The put stored at `rev` for `key`. A miss means the index and the log disagree, which is a bug.
    pub(super) fn put_at(&self, rev: RevPair, key: &[u8]) -> &KeyValue {
        match self.records.get(&rev) {
            Some(Record::Put(kv)) => {
                debug_assert_eq!(kv.key.as_slice(), key, "index points at another key's record");
                debug_assert_eq!(kv.mod_revision, rev.main, "a put record carries its own revision");
                debug_assert!(kv.version >= 1 && kv.create_revision <= kv.mod_revision);
                debug_assert!(kv.version > 1 || kv.create_revision == kv.mod_revision, "version 1 is a create");
                kv
            }
            other => panic!("index points at {rev:?} for key {key:?}, log holds {other:?}"),
        }
    }

    /// Every record with main revision in `[from, to]`, in revision order; nothing if `from > to`.
    pub(super) fn between(&self, from: i64, to: i64) -> impl Iterator<Item = (&RevPair, &Record)> {
        let lo = RevPair::new(from, i64::MIN);
        // `[lo, lo)` is empty and, unlike an inverted range, accepted by `BTreeMap::range`.
        let hi = if from <= to { Bound::Included(RevPair::new(to, i64::MAX)) } else { Bound::Excluded(lo) };
        self.records.range((Bound::Included(lo), hi))
    }

    /// Every record with main revision `<= to`, in revision order.
    pub(super) fn upto(&self, to: i64) -> impl Iterator<Item = (&RevPair, &Record)> {
        self.records.range(..=RevPair::new(to, i64::MAX))
    }

    /// Removes every record below `below` (main revision) for which `keep` says no.
    pub(super) fn retain_below(&mut self, below: i64, mut keep: impl FnMut(RevPair, &Record) -> bool) {
        let doomed: Vec<RevPair> = self
            .records
            .range(..RevPair::new(below, 0))
            .filter(|(rev, record)| !keep(**rev, record))
            .map(|(rev, _)| *rev)
            .collect();
        for rev in doomed {
            if let Some(record) = self.records.remove(&rev) {
                self.size_bytes -= record.size_bytes();
            }
        }
        debug_assert!(self.size_bytes >= 0);
    }

    pub(super) fn size_bytes(&self) -> i64 {
        self.size_bytes
    }
}

/// A `KeyValue` in a state-machine snapshot, as its protobuf bytes: the wire type has no serde derives, and
/// its own encoding is the one etcd stores in its backend too.
mod kv_as_protobuf {
    use etcd_proto::mvccpb::KeyValue;
    use prost::Message as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(kv: &KeyValue, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&kv.encode_to_vec())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<KeyValue, D::Error> {
        let bytes = <Vec<u8>>::deserialize(d)?;
        KeyValue::decode(bytes.as_slice()).map_err(serde::de::Error::custom)
    }
}
