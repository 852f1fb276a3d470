//! [`Store`]: the generic registry store (k8s.io/apiserver's `registry/generic/registry.Store`, by
//! behaviour) over any [`Storage`]: keys, the strategy hooks around each write, namespace-lifecycle
//! admission, and the one translation of storage errors per operation.
//!
//! Files: `create` (BeforeCreate, generateName retries, admission), `read` (get, list, watch with
//! selectors), `update` (optimistic concurrency, BeforeUpdate), `delete` (preconditions, finalizers, the
//! object or Status answer).

mod create;
mod delete;
mod fields;
mod read;
mod update;

use std::sync::Arc;

use serde_json::Value;

use crate::bug::Bugs;
use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::resource::Resource;
use crate::registry::strategy::Strategy;
use crate::registry::system::SystemFields;
use crate::storage::status::Operation;
use crate::storage::{Storage, StorageError};

pub(crate) use delete::DeleteResult;
pub use fields::ApplyRequest;
pub use read::ListRequest;

/// The registry of one resource.
#[derive(Clone)]
pub struct Store<S: Storage> {
    resource: Resource,
    strategy: Arc<dyn Strategy>,
    storage: S,
    system: SystemFields,
    /// The namespaces' storage, for the NamespaceLifecycle admission check on create; `None` for
    /// cluster-scoped resources.
    namespaces: Option<S>,
    /// The bug switches on for this store's apiserver (none unless a simulation puts one back).
    bugs: Bugs,
}

impl<S: Storage + Clone> Store<S> {
    /// A store of `resource` with `strategy` over `storage`. `namespaces` is the storage of namespaces,
    /// consulted before a namespaced object is created.
    pub fn new(
        resource: Resource,
        strategy: Arc<dyn Strategy>,
        storage: S,
        system: SystemFields,
        namespaces: Option<S>,
    ) -> Store<S> {
        assert!(
            namespaces.is_some() || !strategy.namespace_scoped(),
            "a namespaced resource needs the namespaces' storage for admission"
        );
        Store { resource, strategy, storage, system, namespaces, bugs: Bugs::none() }
    }

    /// This store with the apiserver's bug switches (`crate::server::ServerOptions::bugs`).
    pub fn with_bugs(mut self, bugs: Bugs) -> Store<S> {
        self.bugs = bugs;
        self
    }

    pub(crate) fn strategy(&self) -> &dyn Strategy {
        self.strategy.as_ref()
    }

    /// The storage key of an object: `/<prefix>/<namespace>/<name>`, or `/<prefix>/<name>` for
    /// cluster-scoped resources (kube's `NamespaceKeyFunc` and `NoNamespaceKeyFunc`).
    pub(crate) fn key(&self, namespace: &str, name: &str) -> String {
        if self.strategy.namespace_scoped() {
            format!("/{}/{namespace}/{name}", self.resource.etcd_prefix)
        } else {
            format!("/{}/{name}", self.resource.etcd_prefix)
        }
    }

    /// The key prefix of a list or watch: one namespace, or all of them when `namespace` is "".
    pub(crate) fn list_prefix(&self, namespace: &str) -> String {
        if self.strategy.namespace_scoped() && !namespace.is_empty() {
            format!("/{}/{namespace}", self.resource.etcd_prefix)
        } else {
            format!("/{}", self.resource.etcd_prefix)
        }
    }

    /// A storage failure of `op` on `name`, translated later by the storage layer's rules.
    fn storage_error(&self, err: StorageError, op: Operation, name: &str) -> RegistryError {
        RegistryError::Storage {
            err: Box::new(err),
            op,
            resource: self.resource.group_resource(),
            name: name.to_string(),
        }
    }

    /// kube's `EnsureObjectNamespaceMatchesRequestNamespace`: a namespaced object takes the request's
    /// namespace (and may not name another), a cluster-scoped one has none.
    fn ensure_namespace(&self, obj: &mut Value, namespace: &str) -> Result<(), RegistryError> {
        ensure_namespace(obj, namespace, self.strategy.namespace_scoped())
    }

    fn invalid(&self, name: &str, errors: Vec<crate::registry::field_error::FieldError>) -> RegistryError {
        RegistryError::Invalid {
            group: self.resource.group.clone(),
            kind: self.resource.kind.clone(),
            name: name.to_string(),
            errors,
        }
    }
}

/// Carries a [`RegistryError`] out of a storage callback, which may only fail with a [`StorageError`]: the
/// callback parks the typed error here and fails with its `Status`; the caller takes it back afterwards.
#[derive(Default)]
pub(crate) struct Parked(Option<RegistryError>);

impl Parked {
    pub(crate) fn park(&mut self, err: RegistryError) -> StorageError {
        let status = err.to_status();
        self.0 = Some(err);
        StorageError::Caller(Box::new(status))
    }

    /// The parked error if the storage call failed because of it, else `fallback` for the storage error.
    pub(crate) fn take_or(
        &mut self,
        err: StorageError,
        fallback: impl FnOnce(StorageError) -> RegistryError,
    ) -> RegistryError {
        match (self.0.take(), &err) {
            (Some(parked), StorageError::Caller(_)) => parked,
            _ => fallback(err),
        }
    }
}

/// kube's `EnsureObjectNamespaceMatchesRequestNamespace`: a namespaced object takes the request's
/// namespace (and may not name another), a cluster-scoped one has none.
pub(crate) fn ensure_namespace(obj: &mut Value, namespace: &str, namespaced: bool) -> Result<(), RegistryError> {
    if !namespaced {
        meta::set(obj, "namespace", None);
        return Ok(());
    }
    match meta::get_str(obj, "namespace") {
        "" => meta::set(obj, "namespace", Some(Value::from(namespace))),
        ns if ns != namespace => {
            return Err(RegistryError::BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request".into(),
            ))
        }
        _ => {}
    }
    Ok(())
}
