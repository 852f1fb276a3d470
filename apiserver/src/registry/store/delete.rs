//! Delete: existence and preconditions checked against a quorum read (409 with kube's precondition texts),
//! then either a pending deletion for an object with finalizers (it gets a `deletionTimestamp`; namespaces
//! also turn Terminating) or the storage delete, checked again atomically. The answer is the object or a
//! Success `Status`, as the resource's store says (reference D1-D3, N2, N3).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};
use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::store::{Parked, Store};
use crate::storage::status::Operation;
use crate::storage::{GetOptions, Object, Preconditions, Storage};

/// What a delete did and what kube-apiserver answers with.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteResult {
    /// Whether the object is gone (false: it waits for finalizers).
    pub deleted: bool,
    /// The response body: the object, or a Success `Status` naming it.
    pub body: Value,
}

impl<S: Storage + Clone> Store<S> {
    /// Deletes `namespace`/`name` if `preconditions` hold.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
    ) -> Result<DeleteResult, RegistryError> {
        if let Some(reason) = self.strategy.undeletable(name) {
            let resource = self.resource.group_resource();
            return Err(RegistryError::Forbidden { resource, name: name.into(), reason: reason.into() });
        }
        let key = self.key(namespace, name);
        let current = self
            .storage
            .get(&key, &GetOptions::default())
            .await
            .map_err(|e| self.storage_error(e, Operation::Delete, name))?;
        self.check_preconditions(name, preconditions, &current)?;
        if self.strategy.has_pending_finalizers(&current) {
            let object = self.mark_deleting(&key, name, preconditions).await?;
            return Ok(DeleteResult { deleted: false, body: object });
        }
        let deleted = self
            .storage
            .delete(&key, Some(preconditions), |_| Ok(()), None)
            .await
            .map_err(|e| self.storage_error(e, Operation::Delete, name))?;
        let body = if self.strategy.return_deleted_object() { deleted } else { self.success(name, &deleted) };
        Ok(DeleteResult { deleted: true, body })
    }

    /// `BeforeDelete`'s early precondition check, with its own texts (the storage layer's apply only to
    /// the race where the object changes between this read and the delete).
    fn check_preconditions(&self, name: &str, pre: &Preconditions, current: &Value) -> Result<(), RegistryError> {
        let conflict =
            |why: String| RegistryError::Conflict { resource: self.resource.group_resource(), name: name.into(), why };
        if let Some(uid) = &pre.uid {
            if uid != current.uid() {
                return Err(conflict(format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                    current.uid()
                )));
            }
        }
        if let Some(rv) = &pre.resource_version {
            if rv != current.resource_version() {
                return Err(conflict(format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                    current.resource_version()
                )));
            }
        }
        Ok(())
    }

    /// Sets `deletionTimestamp` (kept if already set) and a zero grace period, and lets the strategy mark
    /// the object; watchers see MODIFIED.
    async fn mark_deleting(&self, key: &str, name: &str, pre: &Preconditions) -> Result<Value, RegistryError> {
        let now = self.system.now();
        let mut parked = Parked::default();
        let result = self
            .storage
            .guaranteed_update(
                key,
                false,
                Some(pre),
                |mut obj, _| {
                    if obj.is_null() {
                        let err =
                            RegistryError::NotFound { resource: self.resource.group_resource(), name: name.into() };
                        return Err(parked.park(err));
                    }
                    if meta::get_str(&obj, "deletionTimestamp").is_empty() {
                        meta::set(&mut obj, "deletionTimestamp", Some(Value::from(now.clone())));
                        meta::set(&mut obj, "deletionGracePeriodSeconds", Some(Value::from(0)));
                    }
                    self.strategy.prepare_for_delete(&mut obj);
                    Ok(obj)
                },
                None,
            )
            .await;
        result.map_err(|err| parked.take_or(err, |err| self.storage_error(err, Operation::Delete, name)))
    }

    /// The Success `Status` of an immediate delete: it names the object by resource plural and uid.
    fn success(&self, name: &str, deleted: &Value) -> Value {
        let status = Status {
            status: Some("Success".into()),
            details: Some(StatusDetails {
                name: Some(name.into()),
                group: Some(self.resource.group.clone()),
                kind: Some(self.resource.plural.clone()),
                uid: Some(deleted.uid().to_string()),
                ..StatusDetails::default()
            }),
            metadata: ListMeta::default(),
            ..Status::default()
        };
        serde_json::to_value(&status).expect("a Status always serializes")
    }
}
