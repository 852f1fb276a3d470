//! Update: kube's `Store.Update` inside one guaranteed update. The resourceVersion in the body is the
//! optimistic lock (409 Conflict if stale; none at all is allowed only for types that allow unconditional
//! updates); a uid in the body is a precondition; a missing object is created only where the strategy
//! allows it; then `BeforeUpdate` (reference U1-U4, U7).

use serde_json::Value;

use crate::registry::error::{RegistryError, OPTIMISTIC_LOCK_MESSAGE};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::store::{Parked, Store};
use crate::storage::status::Operation;
use crate::storage::{Object, Preconditions, Storage};

impl<S: Storage + Clone> Store<S> {
    /// Replaces the object `namespace`/`name` with `obj`; returns the stored object and whether it was
    /// created.
    pub async fn update(&self, namespace: &str, name: &str, obj: Value) -> Result<(Value, bool), RegistryError> {
        let body_name = meta::get_str(&obj, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(RegistryError::BadRequest(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let uid = meta::get_str(&obj, "uid");
        let preconditions =
            (!uid.is_empty()).then(|| Preconditions { uid: Some(uid.to_string()), resource_version: None });
        let mut parked = Parked::default();
        let mut created = false;
        let result = self
            .storage
            .guaranteed_update(
                &self.key(namespace, name),
                true,
                preconditions.as_ref(),
                |existing, _| {
                    created = existing.is_null();
                    self.try_update(namespace, name, obj.clone(), &existing).map_err(|e| parked.park(e))
                },
                None,
            )
            .await;
        match result {
            Ok(stored) => Ok((stored, created)),
            Err(err) => Err(parked.take_or(err, |err| self.storage_error(err, Operation::Update, name))),
        }
    }

    /// One attempt against the current state `existing` (`Value::Null` if absent).
    fn try_update(
        &self,
        namespace: &str,
        name: &str,
        mut obj: Value,
        existing: &Value,
    ) -> Result<Value, RegistryError> {
        if existing.is_null() {
            if !self.strategy.allow_create_on_update() {
                return Err(RegistryError::NotFound { resource: self.resource.group_resource(), name: name.into() });
            }
            // A create through update follows the create rules, with the name from the URL. (No strategy
            // served so far allows it; namespace admission for it is not modelled yet.)
            meta::set(&mut obj, "resourceVersion", None);
            meta::set(&mut obj, "name", Some(Value::from(name)));
            return self.before_create(namespace, obj);
        }
        let rv = obj.resource_version().to_string();
        if rv.is_empty() {
            if !self.strategy.allow_unconditional_update() {
                let err = FieldError::invalid_int("metadata.resourceVersion", 0, "must be specified for an update");
                return Err(self.invalid(name, vec![err]));
            }
        } else if rv != existing.resource_version() {
            return Err(RegistryError::Conflict {
                resource: self.resource.group_resource(),
                name: name.to_string(),
                why: OPTIMISTIC_LOCK_MESSAGE.to_string(),
            });
        }
        self.before_update(namespace, obj, existing)
    }

    /// `rest.BeforeUpdate`: namespace from the URL, the strategy's resets, system fields from the old
    /// object, then validation and canonicalization.
    fn before_update(&self, namespace: &str, mut obj: Value, old: &Value) -> Result<Value, RegistryError> {
        if self.strategy.namespace_scoped() {
            match meta::get_str(&obj, "namespace") {
                "" => meta::set(&mut obj, "namespace", Some(Value::from(namespace))),
                ns if ns != namespace => {
                    return Err(RegistryError::BadRequest(
                        "the namespace of the provided object does not match the namespace sent on the request".into(),
                    ))
                }
                _ => {}
            }
        } else {
            meta::set(&mut obj, "namespace", None);
        }
        // Clients may not set the generation; the strategy bumps it from the old one.
        meta::copy(&mut obj, old, "generation");
        self.strategy.prepare_for_update(&mut obj, old);
        if meta::get_str(&obj, "uid").is_empty() {
            meta::copy(&mut obj, old, "uid");
        }
        if !meta::get_str(old, "creationTimestamp").is_empty() {
            meta::copy(&mut obj, old, "creationTimestamp");
        }
        // An update can neither set nor clear a deletion in progress.
        meta::copy(&mut obj, old, "deletionTimestamp");
        meta::copy(&mut obj, old, "deletionGracePeriodSeconds");
        let name = meta::get_str(&obj, "name").to_string();
        let errs = self.strategy.validate_update(&obj, old);
        if !errs.is_empty() {
            return Err(self.invalid(&name, errs));
        }
        self.strategy.canonicalize(&mut obj);
        Ok(obj)
    }
}
