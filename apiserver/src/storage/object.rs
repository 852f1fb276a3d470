//! [`Object`]: what the storage layer needs to know about a stored object, over plain JSON.
//!
//! The storage layer works on any resource, so objects are `serde_json::Value`s (typed k8s-openapi objects
//! convert to and from them losslessly). Only `metadata` is interpreted: name, namespace, uid, generation
//! and resourceVersion. The resourceVersion is never stored: [`Object::encode_for_storage`] drops it, and
//! every read writes it from the key's etcd revision.

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
}
