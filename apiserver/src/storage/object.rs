//! [`Object`]: what the storage layer needs to know about a stored object, over plain JSON; and
//! [`SharedObject`], an object shared by every list and watch that reads it, with its JSON made once.
//!
//! The storage layer works on any resource, so objects are `serde_json::Value`s (typed k8s-openapi objects
//! convert to and from them losslessly). Only `metadata` is interpreted: name, namespace, uid, generation
//! and resourceVersion. The resourceVersion is never stored: [`Object::encode_for_storage`] drops it, and
//! every read writes it from the key's etcd revision.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::storage::resource_version::ResourceVersion;

/// Access to a stored object's metadata.
pub trait Object {
    fn name(&self) -> &str;
    fn namespace(&self) -> &str;
    fn uid(&self) -> &str;
    fn generation(&self) -> i64;
    /// `metadata.resourceVersion` as written, "" when absent.
    fn resource_version(&self) -> &str;
    /// Writes `metadata.resourceVersion`, creating `metadata` if needed.
    fn set_resource_version(&mut self, rv: ResourceVersion);
    /// The bytes to store: the object without `metadata.resourceVersion`. serde_json's map is ordered, so
    /// equal objects encode to equal bytes (the "no write if unchanged" rule relies on it).
    fn encode_for_storage(&self) -> Vec<u8>;
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("")
}

impl Object for Value {
    fn name(&self) -> &str {
        meta_str(self, "name")
    }

    fn namespace(&self) -> &str {
        meta_str(self, "namespace")
    }

    fn uid(&self) -> &str {
        meta_str(self, "uid")
    }

    fn generation(&self) -> i64 {
        self.get("metadata").and_then(|m| m.get("generation")).and_then(Value::as_i64).unwrap_or(0)
    }

    fn resource_version(&self) -> &str {
        meta_str(self, "resourceVersion")
    }

    fn set_resource_version(&mut self, rv: ResourceVersion) {
        if !self.is_object() {
            *self = Value::Object(Map::new());
        }
        let root = self.as_object_mut().expect("made an object above");
        let meta = root.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        meta.as_object_mut()
            .expect("made an object above")
            .insert("resourceVersion".into(), Value::String(rv.to_string()));
    }

    fn encode_for_storage(&self) -> Vec<u8> {
        let mut copy = self.clone();
        if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
        }
        serde_json::to_vec(&copy).expect("a serde_json::Value always serializes")
    }
}

/// A stored object as lists and watches hand it out: immutable, shared (the watch cache keeps one copy that
/// every list and every watcher reads), with its JSON encodings made the first time they are needed and
/// kept (kube-apiserver's `cachingObject`). Encoding 10,000 cached objects for a LIST is then copying
/// bytes, not serializing them again for every request and watcher.
#[derive(Clone)]
pub struct SharedObject(Arc<Shared>);

struct Shared {
    value: Value,
    json: OnceLock<Bytes>,
    list_item_json: OnceLock<Bytes>,
}

impl SharedObject {
    pub(crate) fn new(value: Value) -> SharedObject {
        SharedObject(Arc::new(Shared { value, json: OnceLock::new(), list_item_json: OnceLock::new() }))
    }

    pub fn value(&self) -> &Value {
        &self.0.value
    }

    /// The object itself, without a copy when nothing else shares it.
    pub(crate) fn into_value(self) -> Value {
        match Arc::try_unwrap(self.0) {
            Ok(shared) => shared.value,
            Err(arc) => arc.value.clone(),
        }
    }

    /// The object's JSON as kube writes it (Go's key order and escapes, no trailing newline).
    pub(crate) fn json(&self) -> Bytes {
        self.0.json.get_or_init(|| Bytes::from(crate::go_json::to_vec(&self.0.value))).clone()
    }

    /// The object's JSON as a typed list carries it: without `kind` and `apiVersion`.
    pub(crate) fn list_item_json(&self) -> Bytes {
        self.0.list_item_json.get_or_init(|| Bytes::from(crate::go_json::to_vec_list_item(&self.0.value))).clone()
    }

    /// Whether two handles share one object (the watch cache hands out the same one to everyone): what the
    /// tests check; the code itself never needs to ask.
    #[cfg(test)]
    pub(crate) fn ptr_eq(a: &SharedObject, b: &SharedObject) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl From<Value> for SharedObject {
    fn from(value: Value) -> SharedObject {
        SharedObject::new(value)
    }
}

impl std::ops::Deref for SharedObject {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0.value
    }
}

impl<'a> std::ops::Index<&'a str> for SharedObject {
    type Output = Value;

    fn index(&self, key: &'a str) -> &Value {
        &self.0.value[key]
    }
}

impl PartialEq for SharedObject {
    fn eq(&self, other: &SharedObject) -> bool {
        self.0.value == other.0.value
    }
}

impl PartialEq<Value> for SharedObject {
    fn eq(&self, other: &Value) -> bool {
        &self.0.value == other
    }
}

impl PartialEq<SharedObject> for Value {
    fn eq(&self, other: &SharedObject) -> bool {
        self == &other.0.value
    }
}

impl std::fmt::Debug for SharedObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.value.fmt(f)
    }
}

impl serde::Serialize for SharedObject {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn resource_version_is_never_stored() {
        let mut obj = json!({"metadata": {"name": "a", "resourceVersion": "7"}, "data": {"k": "v"}});
        assert_eq!(obj.encode_for_storage(), br#"{"data":{"k":"v"},"metadata":{"name":"a"}}"#.to_vec());
        obj.set_resource_version(ResourceVersion(9));
        assert_eq!(obj.resource_version(), "9");
        assert_eq!(obj.name(), "a");
    }

    #[test]
    fn shared_objects_encode_once_and_as_lists_carry_them() {
        let obj = SharedObject::new(
            json!({"apiVersion": "v1", "data": {"k": "v"}, "kind": "ConfigMap", "metadata": {"name": "a"}}),
        );
        assert_eq!(
            obj.json(),
            Bytes::from_static(br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}}"#)
        );
        assert_eq!(obj.list_item_json(), Bytes::from_static(br#"{"metadata":{"name":"a"},"data":{"k":"v"}}"#));
        // The second call hands out the same bytes, not a new encoding.
        assert_eq!(obj.json().as_ptr(), obj.json().as_ptr());
        let copy = obj.clone();
        assert!(SharedObject::ptr_eq(&obj, &copy));
        assert_eq!(copy.name(), "a");
        assert_eq!(obj["kind"], "ConfigMap");
    }
}
