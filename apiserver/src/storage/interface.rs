//! [`Storage`]: the storage interface every backend implements (the etcd3 store and the Cacher), with
//! its contracts. The conformance suite (`apiserver/tests/storage_conformance.rs`) checks them per backend.
//!
//! Keys are relative to the backend's path prefix (`/configmaps/ns/name`). Lists and watches take a key
//! prefix (`/configmaps/ns`) and cover every key under it.

use std::future::Future;

use serde_json::Value;

use crate::storage::error::StorageError;
use crate::storage::object::SharedObject;
use crate::storage::options::{GetOptions, ListOptions, Preconditions};
use crate::storage::resource_version::ResourceVersion;
use crate::storage::watch::Watcher;

/// A page of a list. Its items are shared with the watch cache they may come from.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectList {
    pub items: Vec<SharedObject>,
    /// The revision the list was read at (not the largest item resourceVersion).
    pub resource_version: ResourceVersion,
    /// Set when more items follow; pass it as the next page's `continue_token`.
    pub continue_token: Option<String>,
    /// Items left after this page, reported only for unfiltered lists with a next page.
    pub remaining_item_count: Option<i64>,
}

/// What an update function learns about the state it updates besides the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseMeta {
    /// The resourceVersion of the current state (0 if the object does not exist).
    pub resource_version: ResourceVersion,
}

/// The storage interface.
pub trait Storage: Send + Sync {
    /// Creates `obj` at `key`; fails with `KeyExists` if the key is present and with
    /// `ResourceVersionSetOnCreate` if `obj` carries a resourceVersion. Returns the stored object with its
    /// new resourceVersion.
    fn create(&self, key: &str, obj: Value) -> impl Future<Output = Result<Value, StorageError>> + Send;

    /// Reads `key` (see [`GetOptions`] for resourceVersion semantics); `KeyNotFound` if absent.
    fn get(&self, key: &str, opts: &GetOptions) -> impl Future<Output = Result<Value, StorageError>> + Send;

    /// Lists the objects under `key` with resourceVersion, resourceVersionMatch, limit/continue and predicate.
    fn get_list(&self, key: &str, opts: &ListOptions) -> impl Future<Output = Result<ObjectList, StorageError>> + Send;

    /// Read-modify-write with retry on conflict. Reads the current object (or starts from `cached`, a
    /// possibly stale copy, re-reading before trusting any failure it causes), checks `preconditions`,
    /// applies `update`, and writes only if the stored bytes change; if another write got in between it
    /// retries `update` on the fresh object. With `ignore_not_found`, a missing object is `Value::Null`
    /// with resourceVersion 0 and the write creates it. Returns the resulting object.
    fn guaranteed_update<F>(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: Option<&Preconditions>,
        update: F,
        cached: Option<Value>,
    ) -> impl Future<Output = Result<Value, StorageError>> + Send
    where
        F: FnMut(Value, ResponseMeta) -> Result<Value, StorageError> + Send;

    /// Deletes `key` if `preconditions` and `validate` accept the current object, retrying on a concurrent
    /// write; `cached` may spare the first read (a stale one is re-read before any failure is reported).
    /// Returns the deleted object with the deletion's resourceVersion.
    fn delete<V>(
        &self,
        key: &str,
        preconditions: Option<&Preconditions>,
        validate: V,
        cached: Option<Value>,
    ) -> impl Future<Output = Result<Value, StorageError>> + Send
    where
        V: FnMut(&Value) -> Result<(), StorageError> + Send;

    /// Watches the objects under `key`: from `opts.resource_version` N, every change after N; from "" or
    /// "0", the current state as ADDED events, then every change. Failures after the start arrive as one
    /// ERROR event.
    fn watch(&self, key: &str, opts: &ListOptions) -> impl Future<Output = Result<Watcher, StorageError>> + Send;

    /// How many objects are stored under `key`.
    fn count(&self, key: &str) -> impl Future<Output = Result<i64, StorageError>> + Send;

    /// The store's current revision.
    fn current_resource_version(&self) -> impl Future<Output = Result<ResourceVersion, StorageError>> + Send;
}
