//! [`Rest`]: one resource's registry as the HTTP layer calls it, object-safe so that the server holds every
//! resource in one table whatever its storage (the watch cache or etcd directly). It is kube's set of
//! `rest.Getter`, `rest.Lister`, `rest.Watcher`, `rest.Creater`, `rest.Updater`, `rest.Patcher`,
//! `rest.GracefulDeleter` and `rest.CollectionDeleter`, which its generic `Store` implements in full, as
//! [`Store`] does here.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::options::{CreateOptions, DeleteOptions, UpdateOptions};
use crate::registry::store::{ApplyRequest, DeleteResult, ListRequest, Store};
use crate::registry::strategy::{Strategy, Subresource};
use crate::storage::{GetOptions, ObjectList, Storage, Watcher};

/// Every resource's registry, by group, version and plural.
pub(crate) type Registry = std::collections::BTreeMap<(String, String, String), std::sync::Arc<dyn Rest>>;

/// A boxed future, as an object-safe async method returns.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A patch function: the new object from the current one (see [`Store::patch`]).
pub(crate) type PatchFn<'a> = &'a mut (dyn FnMut(&Value) -> Result<Value, RegistryError> + Send);

/// One resource's registry.
pub(crate) trait Rest: Send + Sync {
    fn strategy(&self) -> &dyn Strategy;

    fn get<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        opts: &'a GetOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>>;

    fn list<'a>(&'a self, ns: &'a str, request: &'a ListRequest) -> BoxFuture<'a, Result<ObjectList, RegistryError>>;

    fn watch<'a>(&'a self, ns: &'a str, request: &'a ListRequest) -> BoxFuture<'a, Result<Watcher, RegistryError>>;

    fn create<'a>(
        &'a self,
        ns: &'a str,
        obj: Value,
        opts: &'a CreateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>>;

    /// Returns the stored object and whether the update created it.
    fn update<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        obj: Value,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>>;

    fn update_subresource<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        sub: Subresource,
        obj: Value,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>>;

    fn patch<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        sub: Option<Subresource>,
        apply: PatchFn<'a>,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>>;

    /// Server-side apply; returns the stored object and whether the apply created it.
    fn apply<'a>(
        &'a self,
        ns: &'a str,
        config: Value,
        request: &'a ApplyRequest<'a>,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>>;

    fn delete<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        opts: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<DeleteResult, RegistryError>>;

    /// Deletes every object the list request selects; returns the list of what each delete answered.
    fn delete_collection<'a>(
        &'a self,
        ns: &'a str,
        request: &'a ListRequest,
        opts: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<ObjectList, RegistryError>>;
}

impl<S: Storage + Clone + 'static> Rest for Store<S> {
    fn strategy(&self) -> &dyn Strategy {
        Store::strategy(self)
    }

    fn get<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        opts: &'a GetOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(Store::get(self, ns, name, opts))
    }

    fn list<'a>(&'a self, ns: &'a str, request: &'a ListRequest) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        Box::pin(Store::list(self, ns, request))
    }

    fn watch<'a>(&'a self, ns: &'a str, request: &'a ListRequest) -> BoxFuture<'a, Result<Watcher, RegistryError>> {
        Box::pin(Store::watch(self, ns, request))
    }

    fn create<'a>(
        &'a self,
        ns: &'a str,
        obj: Value,
        opts: &'a CreateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(Store::create_with(self, ns, obj, opts))
    }

    fn update<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        obj: Value,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        Box::pin(Store::update_with(self, ns, name, obj, opts))
    }

    fn update_subresource<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        sub: Subresource,
        obj: Value,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(Store::update_subresource(self, ns, name, sub, obj, opts))
    }

    fn patch<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        sub: Option<Subresource>,
        apply: PatchFn<'a>,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(Store::patch(self, ns, name, sub, apply, opts))
    }

    fn apply<'a>(
        &'a self,
        ns: &'a str,
        config: Value,
        request: &'a ApplyRequest<'a>,
        opts: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        Box::pin(Store::apply(self, ns, config, request, opts))
    }

    fn delete<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
        opts: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<DeleteResult, RegistryError>> {
        Box::pin(Store::delete_with(self, ns, name, opts))
    }

    fn delete_collection<'a>(
        &'a self,
        ns: &'a str,
        request: &'a ListRequest,
        opts: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        Box::pin(Store::delete_collection(self, ns, request, opts))
    }
}
