//! [`Store`]: the backend a shared case runs against, the etcd3 store or a Cacher, behind the one storage
//! interface.
//!
//! Through the Cacher, a write returns as soon as etcd has it, and the cache learns it a little later from
//! its watch. The shared cases read "any" state (resourceVersion "0", watches from "0") right after their
//! own writes, which only a caught-up cache answers the way etcd does; so this wrapper waits, after each
//! write, until the cache has reached the write's resourceVersion. The Cacher's own cases (`cacher.rs`) use
//! a bare Cacher, where that lag is part of what they check.

use std::time::Duration;

use apiserver::storage::cacher::Cacher;
use apiserver::storage::etcd3::Etcd3Store;
use apiserver::storage::{
    GetOptions, ListOptions, ObjectList, Preconditions, ResourceVersion, ResponseMeta, Storage, StorageError, Watcher,
};
use serde_json::Value;

/// A backend under test.
#[derive(Clone)]
pub enum Store {
    Etcd3(Box<Etcd3Store>),
    Cacher(Cacher),
}

impl Store {
    /// After a write through the Cacher, waits until its cache has caught up with `written`.
    async fn settle(&self, written: &Result<Value, StorageError>) {
        let (Store::Cacher(cacher), Ok(obj)) = (self, written) else { return };
        let rv = obj["metadata"]["resourceVersion"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
        for _ in 0..500 {
            if cacher.resource_version() >= ResourceVersion(rv) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the cache never reached resourceVersion {rv}");
    }
}

impl Storage for Store {
    async fn create(&self, key: &str, obj: Value) -> Result<Value, StorageError> {
        let out = match self {
            Store::Etcd3(s) => s.create(key, obj).await,
            Store::Cacher(s) => s.create(key, obj).await,
        };
        self.settle(&out).await;
        out
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Value, StorageError> {
        match self {
            Store::Etcd3(s) => s.get(key, opts).await,
            Store::Cacher(s) => s.get(key, opts).await,
        }
    }

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<ObjectList, StorageError> {
        match self {
            Store::Etcd3(s) => s.get_list(key, opts).await,
            Store::Cacher(s) => s.get_list(key, opts).await,
        }
    }

    async fn guaranteed_update<F>(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: Option<&Preconditions>,
        update: F,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        F: FnMut(Value, ResponseMeta) -> Result<Value, StorageError> + Send,
    {
        let out = match self {
            Store::Etcd3(s) => s.guaranteed_update(key, ignore_not_found, preconditions, update, cached).await,
            Store::Cacher(s) => s.guaranteed_update(key, ignore_not_found, preconditions, update, cached).await,
        };
        self.settle(&out).await;
        out
    }

    async fn delete<V>(
        &self,
        key: &str,
        preconditions: Option<&Preconditions>,
        validate: V,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        V: FnMut(&Value) -> Result<(), StorageError> + Send,
    {
        let out = match self {
            Store::Etcd3(s) => s.delete(key, preconditions, validate, cached).await,
            Store::Cacher(s) => s.delete(key, preconditions, validate, cached).await,
        };
        self.settle(&out).await;
        out
    }

    async fn watch(&self, key: &str, opts: &ListOptions) -> Result<Watcher, StorageError> {
        match self {
            Store::Etcd3(s) => s.watch(key, opts).await,
            Store::Cacher(s) => s.watch(key, opts).await,
        }
    }

    async fn count(&self, key: &str) -> Result<i64, StorageError> {
        match self {
            Store::Etcd3(s) => s.count(key).await,
            Store::Cacher(s) => s.count(key).await,
        }
    }

    async fn current_resource_version(&self) -> Result<ResourceVersion, StorageError> {
        match self {
            Store::Etcd3(s) => s.current_resource_version().await,
            Store::Cacher(s) => s.current_resource_version().await,
        }
    }
}
