//! [`Converting`]: a [`Storage`] that keeps its objects in one version and serves them in another, as
//! kube-apiserver's storage codec does when two API groups share one etcd resource (`events.k8s.io/v1`
//! events are stored as core `v1` events). Every object on the way in goes through
//! [`Conversion::to_storage`], every object on the way out (reads, lists, watch events, what an update
//! function or a delete's check sees) through [`Conversion::from_storage`], and selection predicates
//! judge the served form.

use std::sync::Arc;

use serde_json::Value;

use crate::storage::options::{Matcher, SelectionPredicate};
use crate::storage::{
    GetOptions, ListOptions, ObjectList, Preconditions, ResourceVersion, ResponseMeta, SharedObject, Storage,
    StorageError, Watcher,
};

/// One direction of a conversion.
pub(crate) type Convert = Arc<dyn Fn(Value) -> Value + Send + Sync>;

/// The two directions between the served form and the stored form.
#[derive(Clone)]
pub struct Conversion {
    pub to_storage: Convert,
    pub from_storage: Convert,
}

impl Conversion {
    pub(crate) fn new(
        to_storage: impl Fn(Value) -> Value + Send + Sync + 'static,
        from_storage: impl Fn(Value) -> Value + Send + Sync + 'static,
    ) -> Conversion {
        Conversion { to_storage: Arc::new(to_storage), from_storage: Arc::new(from_storage) }
    }

    /// No conversion: the served form is the stored one.
    pub(crate) fn identity() -> Conversion {
        Conversion::new(std::convert::identity, std::convert::identity)
    }

    /// The `None` conversion of a CRD's versions: the same object, its `apiVersion` the stored version's in
    /// etcd and the served version's on the way out.
    pub(crate) fn api_version(stored: String, served: String) -> Conversion {
        let set = |api_version: String| {
            move |mut obj: Value| {
                if let Some(map) = obj.as_object_mut() {
                    map.insert("apiVersion".into(), Value::String(api_version.clone()));
                }
                obj
            }
        };
        Conversion::new(set(stored), set(served))
    }
}

impl std::fmt::Debug for Conversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Conversion")
    }
}

/// A storage serving `inner`'s objects through `conversion`.
#[derive(Clone)]
pub(crate) struct Converting<S> {
    inner: S,
    conversion: Conversion,
}

impl<S: Storage + Clone> Converting<S> {
    pub(crate) fn new(inner: S, conversion: Conversion) -> Converting<S> {
        Converting { inner, conversion }
    }

    fn out(&self, obj: Value) -> Value {
        if obj.is_null() {
            return obj;
        }
        (self.conversion.from_storage)(obj)
    }

    /// List options whose predicate judges the served form.
    fn served_options(&self, opts: &ListOptions) -> ListOptions {
        let mut opts = opts.clone();
        if let Some(matcher) = opts.predicate.matcher.take() {
            let from_storage = self.conversion.from_storage.clone();
            let served: Matcher = Arc::new(move |obj: &Value| matcher(&from_storage(obj.clone())));
            opts.predicate = SelectionPredicate { matcher: Some(served), ..opts.predicate };
        }
        opts
    }
}

impl<S: Storage + Clone + 'static> Storage for Converting<S> {
    async fn create(&self, key: &str, obj: Value) -> Result<Value, StorageError> {
        let stored = self.inner.create(key, (self.conversion.to_storage)(obj)).await?;
        Ok(self.out(stored))
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Value, StorageError> {
        Ok(self.out(self.inner.get(key, opts).await?))
    }

    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<ObjectList, StorageError> {
        let mut list = self.inner.get_list(key, &self.served_options(opts)).await?;
        list.items = list.items.into_iter().map(|item| SharedObject::new(self.out(item.into_value()))).collect();
        Ok(list)
    }

    async fn guaranteed_update<F>(
        &self,
        key: &str,
        ignore_not_found: bool,
        preconditions: Option<&Preconditions>,
        mut update: F,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        F: FnMut(Value, ResponseMeta) -> Result<Value, StorageError> + Send,
    {
        let conversion = self.conversion.clone();
        let cached = cached.map(|c| (conversion.to_storage)(c));
        let stored_update = move |current: Value, meta: ResponseMeta| {
            let served = if current.is_null() { current } else { (conversion.from_storage)(current) };
            update(served, meta).map(|v| (conversion.to_storage)(v))
        };
        let stored = self.inner.guaranteed_update(key, ignore_not_found, preconditions, stored_update, cached).await?;
        Ok(self.out(stored))
    }

    async fn delete<V>(
        &self,
        key: &str,
        preconditions: Option<&Preconditions>,
        mut validate: V,
        cached: Option<Value>,
    ) -> Result<Value, StorageError>
    where
        V: FnMut(&Value) -> Result<(), StorageError> + Send,
    {
        let from_storage = self.conversion.from_storage.clone();
        let stored_validate = move |current: &Value| validate(&from_storage(current.clone()));
        let cached = cached.map(|c| (self.conversion.to_storage)(c));
        Ok(self.out(self.inner.delete(key, preconditions, stored_validate, cached).await?))
    }

    async fn watch(&self, key: &str, opts: &ListOptions) -> Result<Watcher, StorageError> {
        let watcher = self.inner.watch(key, &self.served_options(opts)).await?;
        let from_storage = self.conversion.from_storage.clone();
        Ok(watcher.map(move |obj| SharedObject::new(from_storage(obj.into_value()))))
    }

    async fn count(&self, key: &str) -> Result<i64, StorageError> {
        self.inner.count(key).await
    }

    async fn current_resource_version(&self) -> Result<ResourceVersion, StorageError> {
        self.inner.current_resource_version().await
    }
}
