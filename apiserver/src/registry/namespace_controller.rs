//! The namespace controller's finalization, reduced to one synchronous pass: kube-controller-manager
//! deletes everything in a Terminating namespace, then removes the `kubernetes` finalizer through
//! `/finalize`, and that update deletes the namespace once no finalizer is left. Here a caller runs
//! [`finalize`] when it wants that to happen; without it a namespace stays Terminating, as in a cluster
//! with no controller.

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::options::UpdateOptions;
use crate::registry::store::{ListRequest, Store};
use crate::registry::strategies::namespaces::KUBERNETES_FINALIZER;
use crate::registry::strategy::Subresource;
use crate::storage::{GetOptions, Preconditions, Storage, StorageError};

/// What a finalization pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Finalized {
    /// Objects deleted from the namespace.
    pub n_deleted: usize,
    /// Whether the namespace itself is gone.
    pub namespace_deleted: bool,
}

/// Finalizes the namespace `name` if it is being deleted: empties it of the resources in `contents`,
/// drops the `kubernetes` finalizer, and deletes it when no finalizer remains.
pub async fn finalize<S: Storage + Clone>(
    namespaces: &Store<S>,
    contents: &[&Store<S>],
    name: &str,
) -> Result<Finalized, RegistryError> {
    let mut done = Finalized::default();
    let ns = namespaces.get("", name, &GetOptions::default()).await?;
    if meta::get_str(&ns, "deletionTimestamp").is_empty() {
        return Ok(done);
    }
    for store in contents {
        let list = store.list(name, &ListRequest::default()).await?;
        for obj in &list.items {
            match store.delete(name, meta::get_str(obj, "name"), &Preconditions::default()).await {
                Ok(_) => done.n_deleted += 1,
                Err(RegistryError::Storage { err, .. }) if matches!(*err, StorageError::KeyNotFound { .. }) => {}
                Err(err) => return Err(err),
            }
        }
    }
    let mut ns = namespaces.get("", name, &GetOptions::default()).await?;
    if let Some(list) = ns.get_mut("spec").and_then(|s| s.get_mut("finalizers")).and_then(Value::as_array_mut) {
        list.retain(|f| f != KUBERNETES_FINALIZER);
    }
    namespaces.update_subresource("", name, Subresource::Finalize, ns, &UpdateOptions::default()).await?;
    done.namespace_deleted = match namespaces.get("", name, &GetOptions::default()).await {
        Ok(_) => false,
        Err(RegistryError::Storage { err, .. }) if matches!(*err, StorageError::KeyNotFound { .. }) => true,
        Err(err) => return Err(err),
    };
    Ok(done)
}
