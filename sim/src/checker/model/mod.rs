//! `KvModel`: a deterministic model of etcd's KV and lease semantics, the oracle of the linearizability
//! checker (and a reference fake for tests).
//!
//! The model predicts every field a client can observe: the header revision, kvs with their create/mod
//! revisions, versions and leases, `count` and `more`, `prev_kv(s)`, `deleted`, a txn's `succeeded` and
//! per-op responses, and etcd's error for a request it rejects. Semantics follow etcd 3.4
//! (etcd 3.4's `mvcc`, `etcdserver/apply.go` and `lease`): one revision per mutating request, a txn's compares and
//! nested compares evaluated against the state before it, later txn ops seeing earlier writes, a VALUE
//! compare on a missing key being false, compaction, leases deleting their keys at one revision on revoke.
//!
//! The model keeps every record ever written (compaction only moves the compaction revision), so that reads
//! at past revisions and stale (serializable) reads can be answered. Each change is undoable in O(change),
//! which the checker's depth-first search relies on, and the state carries an incrementally maintained
//! 128-bit fingerprint, which the search memoises on instead of comparing whole states.
//!
//! What the model leaves out: lease TTLs and expiry (no clock: an expiry is a `LeaseRevoke` the harness
//! records for the member, with the revision the member reports once it is applied, and an unknown outcome
//! until then), auth, and request-size limits.

mod apply;
mod fingerprint;
mod range;
mod refusal;
mod validate;

use std::collections::{BTreeMap, BTreeSet};

pub use fingerprint::Fingerprint;
pub(crate) use range::compare_by;
pub use refusal::Refusal;

use crate::history::{Bytes, KeyValue, LeaseId, RangeRequest, RangeResult, Request, Response, Revision};

/// One version of a key: a live value or a tombstone, written at `mod_revision`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Record {
    mod_revision: Revision,
    live: Option<Live>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Live {
    create_revision: Revision,
    version: i64,
    value: Bytes,
    lease: LeaseId,
}

/// The store: revision counters, every key's full record history, and the granted leases.
#[derive(Clone, Debug)]
pub struct KvModel {
    revision: Revision,
    /// -1 until the first compaction, as etcd's `compactMainRev` (so that `Compact(0)` behaves as etcd's).
    compact_revision: Revision,
    /// Each key's records in increasing `mod_revision`.
    keys: BTreeMap<Bytes, Vec<Record>>,
    leases: BTreeSet<LeaseId>,
    /// The wrapping sum of the fingerprints of every record and lease (see [`KvModel::fingerprint`]).
    contents: Fingerprint,
}

/// What one step changed, so that [`KvModel::undo`] can take it back.
#[derive(Debug)]
pub struct Undo {
    revision: Revision,
    compact_revision: Revision,
    contents: Fingerprint,
    /// Keys that got one record appended, in order.
    appended: Vec<Bytes>,
    granted: Option<LeaseId>,
    revoked: Option<LeaseId>,
}

impl Default for KvModel {
    fn default() -> KvModel {
        KvModel::new()
    }
}

impl KvModel {
    /// An empty store at revision 1, as a fresh etcd cluster reports.
    pub fn new() -> KvModel {
        KvModel {
            revision: Revision(1),
            compact_revision: Revision(-1),
            keys: BTreeMap::new(),
            leases: BTreeSet::new(),
            contents: Fingerprint::ZERO,
        }
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The revision of the last compaction; 0 before any.
    pub fn compact_revision(&self) -> Revision {
        self.compact_revision.max(Revision::ZERO)
    }

    pub fn has_lease(&self, id: LeaseId) -> bool {
        self.leases.contains(&id)
    }

    /// A fingerprint of the whole state: equal states have equal fingerprints, and different states
    /// collide with probability about 2^-128 per pair. It is the sum of per-record and per-lease hashes,
    /// so a step updates it in O(change) rather than rehashing the store.
    pub fn fingerprint(&self) -> Fingerprint {
        self.contents.plus(Fingerprint::of(&(self.revision, self.compact_revision)))
    }

    /// Applies `request` as etcd would at this instant and returns its response or error, with the undo
    /// record for the change (which is empty when the request changed nothing). An error is one of etcd's
    /// [`Refusal`]s, in the model's own terms.
    ///
    /// `granted` names the id of a `LeaseGrant` that left the choice to the server (id 0): the checker
    /// passes the id the client saw; without one the model picks the smallest unused positive id.
    pub fn apply(&mut self, request: &Request, granted: Option<LeaseId>) -> (Result<Response, Refusal>, Undo) {
        let mut undo = self.begin_undo();
        let result = match validate::request(request) {
            Err(err) => Err(err),
            Ok(()) => apply::request(self, request, granted, &mut undo),
        };
        (result, undo)
    }

    /// Takes back the step `undo` was returned with. Steps must be undone in reverse order.
    pub fn undo(&mut self, undo: Undo) {
        for key in undo.appended.iter().rev() {
            let records = self.keys.get_mut(key.as_slice()).expect("undo of a key that is not in the store");
            records.pop();
            if records.is_empty() {
                self.keys.remove(key.as_slice());
            }
        }
        if let Some(id) = undo.granted {
            self.leases.remove(&id);
        }
        if let Some(id) = undo.revoked {
            self.leases.insert(id);
        }
        self.revision = undo.revision;
        self.compact_revision = undo.compact_revision;
        self.contents = undo.contents;
    }

    /// Serves a Range the way a member whose applied revision is `served_at` would (a serializable read):
    /// at `served_at` when the request asks for the latest revision, else at the requested revision, which
    /// must not be above `served_at`. Compaction is ignored, because the member may not have compacted yet.
    /// `None` if the read is impossible at `served_at`.
    pub fn stale_range(&self, request: &RangeRequest, served_at: Revision) -> Option<RangeResult> {
        if served_at > self.revision || served_at < Revision(1) {
            return None;
        }
        let at = if request.revision > Revision::ZERO { request.revision } else { served_at };
        if at > served_at {
            return None;
        }
        Some(range::read(self, request, at))
    }

    fn begin_undo(&self) -> Undo {
        Undo {
            revision: self.revision,
            compact_revision: self.compact_revision,
            contents: self.contents,
            appended: Vec::new(),
            granted: None,
            revoked: None,
        }
    }

    /// The key's record in force at `rev`, if any.
    fn record_at(records: &[Record], rev: Revision) -> Option<&Record> {
        let n = records.partition_point(|r| r.mod_revision <= rev);
        n.checked_sub(1).map(|i| &records[i])
    }

    /// The key's value at `rev` as a client would see it, if the key was live then.
    fn kv_at(&self, key: &[u8], rev: Revision) -> Option<KeyValue> {
        let records = self.keys.get(key)?;
        Self::record_at(records, rev).and_then(|r| Self::to_kv(key, r))
    }

    fn to_kv(key: &[u8], record: &Record) -> Option<KeyValue> {
        let live = record.live.as_ref()?;
        Some(KeyValue {
            key: Bytes(key.to_vec()),
            create_revision: live.create_revision,
            mod_revision: record.mod_revision,
            version: live.version,
            value: live.value.clone(),
            lease: live.lease,
        })
    }

    /// Appends a record for `key` and books it in the fingerprint and the undo log.
    fn append(&mut self, key: &Bytes, record: Record, undo: &mut Undo) {
        self.contents = self.contents.plus(Fingerprint::of(&(key, &record)));
        let records = self.keys.entry(key.clone()).or_default();
        // Equal revisions happen when one txn puts and then deletes a key through two nested txns, which
        // etcd's duplicate-key check lets through; the later record wins, as in etcd's key index.
        debug_assert!(records.last().is_none_or(|r| r.mod_revision <= record.mod_revision));
        records.push(record);
        undo.appended.push(key.clone());
    }

    fn grant(&mut self, id: LeaseId, undo: &mut Undo) {
        let fresh = self.leases.insert(id);
        debug_assert!(fresh && undo.granted.is_none());
        self.contents = self.contents.plus(Fingerprint::of(&("lease", id)));
        undo.granted = Some(id);
    }

    fn revoke(&mut self, id: LeaseId, undo: &mut Undo) {
        let held = self.leases.remove(&id);
        debug_assert!(held && undo.revoked.is_none());
        self.contents = self.contents.minus(Fingerprint::of(&("lease", id)));
        undo.revoked = Some(id);
    }
}

#[cfg(test)]
mod tests;
