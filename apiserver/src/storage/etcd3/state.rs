//! An object as read from etcd: the decoded object with its resourceVersion written in, the stored bytes
//! (compared by the "no write if unchanged" rule) and the key's mod revision (the optimistic-lock value).

use etcd_proto::mvccpb::KeyValue;
use serde_json::Value;

use crate::storage::error::StorageError;
use crate::storage::object::Object;
use crate::storage::resource_version::ResourceVersion;

/// The state a write starts from.
#[derive(Clone, Debug)]
pub(super) struct ObjState {
    /// The object with its resourceVersion; `Value::Null` for "does not exist".
    pub obj: Value,
    /// The stored bytes (empty for "does not exist").
    pub data: Vec<u8>,
    /// The key's mod revision, 0 for "does not exist".
    pub rev: i64,
}

/// Decodes stored bytes into an object whose resourceVersion is `rev`.
pub(super) fn decode(key: &str, data: &[u8], rev: i64) -> Result<Value, StorageError> {
    let mut obj: Value = serde_json::from_slice(data)
        .map_err(|e| StorageError::CorruptObj { key: key.to_string(), message: e.to_string() })?;
    // An object read from etcd exists at a revision; its resourceVersion is that revision, nothing else.
    assert!(rev > 0, "etcd3 store: decoding {key} at mod revision {rev}");
    obj.set_resource_version(ResourceVersion::from_revision(rev));
    debug_assert_eq!(obj.resource_version(), rev.to_string(), "etcd3 store: {key}'s resourceVersion is its revision");
    Ok(obj)
}

/// The state of `key` from a read: `kv` is what etcd returned (`None` if the key is absent).
pub(super) fn from_kv(key: &str, kv: Option<&KeyValue>, ignore_not_found: bool) -> Result<ObjState, StorageError> {
    match kv {
        Some(kv) => {
            Ok(ObjState { obj: decode(key, &kv.value, kv.mod_revision)?, data: kv.value.clone(), rev: kv.mod_revision })
        }
        None if ignore_not_found => Ok(ObjState { obj: Value::Null, data: Vec::new(), rev: 0 }),
        None => Err(StorageError::KeyNotFound { key: key.to_string(), rv: 0 }),
    }
}

/// The state a caller's cached copy claims: its resourceVersion and its storage encoding.
pub(super) fn from_cached(obj: Value) -> Result<ObjState, StorageError> {
    let rv = ResourceVersion::parse(obj.resource_version())
        .map_err(|e| StorageError::Internal(format!("couldn't get resource version: {e}")))?;
    Ok(ObjState { data: obj.encode_for_storage(), rev: rv.revision(), obj })
}
