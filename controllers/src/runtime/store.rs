//! An informer's local store and the notifications its handlers get, as client-go's DeltaFIFO and indexer
//! produce them (`tools/cache/delta_fifo.go`, `shared_informer.go`): watch events update the store one by
//! one; a relist replaces it, announcing every listed object as an update (or an add) and every object
//! that disappeared as a delete of a `DeletedFinalStateUnknown` tombstone, which carries the last state the
//! store had, possibly stale (a DELETE the watch never delivered). Sans-IO: objects in, notifications out.
//!
//! Objects are kept behind `Arc`s, as client-go's indexer keeps pointers: a controller that lists a
//! namespace's ten thousand pods on every sync then copies ten thousand pointers, not ten thousand JSON trees.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

/// What a handler is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    Add,
    Update,
    Delete,
    /// A delete the informer inferred from a relist: the object is gone, and its last known state (which
    /// the handler gets) may be older than its deletion.
    DeleteTombstone,
}

/// One notification: what happened to which object, at the object's resourceVersion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    pub notice: Notice,
    /// `namespace/name` (`name` for cluster-scoped objects), client-go's `MetaNamespaceKeyFunc`.
    pub key: String,
    pub rv: u64,
}

/// The informer's view: objects by key.
#[derive(Clone, Debug, Default)]
pub struct Store {
    objects: BTreeMap<String, Arc<Value>>,
}

/// `MetaNamespaceKeyFunc`.
pub fn object_key(obj: &Value) -> String {
    let meta = |f: &str| obj.pointer(&format!("/metadata/{f}")).and_then(Value::as_str).unwrap_or("");
    match meta("namespace") {
        "" => meta("name").to_string(),
        ns => format!("{ns}/{}", meta("name")),
    }
}

/// An object's resourceVersion as a number (0 if it has none).
pub fn object_rv(obj: &Value) -> u64 {
    obj.pointer("/metadata/resourceVersion").and_then(Value::as_str).and_then(|rv| rv.parse().ok()).unwrap_or(0)
}

impl Store {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.objects.get(key).map(|obj| &**obj)
    }

    /// The object at `key`, shared.
    pub fn get_shared(&self, key: &str) -> Option<&Arc<Value>> {
        self.objects.get(key)
    }

    /// Every object, by key.
    pub fn objects(&self) -> &BTreeMap<String, Arc<Value>> {
        &self.objects
    }

    /// An ADDED or MODIFIED event: an add for a key the store lacks, else an update.
    pub fn upsert(&mut self, obj: impl Into<Arc<Value>>) -> Notification {
        let obj = obj.into();
        let key = object_key(&obj);
        let rv = object_rv(&obj);
        let notice = if self.objects.contains_key(&key) { Notice::Update } else { Notice::Add };
        self.objects.insert(key.clone(), obj);
        Notification { notice, key, rv }
    }

    /// A DELETED event (its object carries the deletion's resourceVersion).
    pub fn delete(&mut self, obj: &Value) -> Notification {
        let key = object_key(obj);
        self.objects.remove(&key);
        Notification { notice: Notice::Delete, key, rv: object_rv(obj) }
    }

    /// A relist: the store becomes `items`. Listed objects are announced (updates for known keys, adds for
    /// new ones), then each object the list lacks as a tombstone with its last known resourceVersion.
    pub fn replace<T: Into<Arc<Value>>>(&mut self, items: Vec<T>) -> Vec<Notification> {
        let mut next = BTreeMap::new();
        let mut out = Vec::new();
        for obj in items {
            let obj: Arc<Value> = obj.into();
            let key = object_key(&obj);
            let notice = if self.objects.contains_key(&key) { Notice::Update } else { Notice::Add };
            out.push(Notification { notice, key: key.clone(), rv: object_rv(&obj) });
            next.insert(key, obj);
        }
        for (key, old) in &self.objects {
            if !next.contains_key(key) {
                out.push(Notification { notice: Notice::DeleteTombstone, key: key.clone(), rv: object_rv(old) });
            }
        }
        self.objects = next;
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(name: &str, rv: u64) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv.to_string()}})
    }

    #[test]
    fn events_add_update_and_delete() {
        let mut store = Store::default();
        assert_eq!(store.upsert(obj("a", 3)).notice, Notice::Add);
        assert_eq!(store.upsert(obj("a", 4)).notice, Notice::Update);
        let deleted = store.delete(&obj("a", 5));
        assert_eq!((deleted.notice, deleted.key.as_str(), deleted.rv), (Notice::Delete, "ns/a", 5));
        assert!(store.get("ns/a").is_none());
    }

    #[test]
    fn a_relist_turns_a_missed_delete_into_a_stale_tombstone() {
        let mut store = Store::default();
        store.upsert(obj("gone", 3));
        store.upsert(obj("kept", 4));
        let notes = store.replace(vec![obj("kept", 6), obj("new", 7)]);
        assert_eq!(
            notes,
            vec![
                Notification { notice: Notice::Update, key: "ns/kept".into(), rv: 6 },
                Notification { notice: Notice::Add, key: "ns/new".into(), rv: 7 },
                Notification { notice: Notice::DeleteTombstone, key: "ns/gone".into(), rv: 3 },
            ]
        );
        assert_eq!(store.objects().len(), 2);
    }
}
