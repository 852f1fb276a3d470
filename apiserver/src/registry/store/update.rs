//! Update: kube's `Store.Update` inside one guaranteed update. The resourceVersion in the body is the
//! optimistic lock (409 Conflict if stale; none at all is allowed only for types that allow unconditional
//! updates); a uid in the body is a precondition; a missing object is created only where the strategy
//! allows it; then `BeforeUpdate`. Subresources (`/status`, `/finalize`) take the
//! same path with their own resets and never create (ST1-ST4, N4). An update that removes the last
//! finalizer of an object waiting only for them deletes it instead, answering with the submitted object
//! (U8). A dry run reads the current object and answers as if it had written.

use serde_json::Value;

use crate::bug::Bug;
use crate::registry::admission::{AdmissionHook, Attributes, Operation as AdmissionOp};
use crate::registry::error::{RegistryError, OPTIMISTIC_LOCK_MESSAGE};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::options::{self, UpdateOptions};
use crate::registry::store::{Parked, Store};
use crate::registry::strategy::Subresource;
use crate::registry::typecheck;
use crate::storage::status::Operation;
use crate::storage::{GetOptions, Object, Preconditions, Storage, StorageError};

/// How an update goes: through which subresource, whose fields it writes, and whether it may create.
pub(super) struct How<'a> {
    pub sub: Option<Subresource>,
    /// The field manager the write's changes go to (`None`: not tracked, or tracked by the caller).
    pub manager: Option<&'a str>,
    /// A missing object is created whatever the strategy says (server-side apply's `forceAllowCreate`).
    pub create: bool,
    /// The request's admission chain.
    pub admission: &'a AdmissionHook,
}

/// How many times an admitted update is retried when the object changes under its admission (the
/// guaranteed update's own conflict retries, with admission run again on each, as upstream's `tryUpdate`).
const ADMITTED_ATTEMPTS: usize = 16;

/// The sentinel of an admitted attempt whose object changed since it was read.
const STALE_ADMISSION: &str = "the object changed under admission";

/// What one update attempt decided.
#[derive(Clone)]
enum Outcome {
    /// Store this object.
    Write(Value),
    /// Delete the object instead; answer with this one (the update emptied its finalizers).
    Delete(Value),
}

impl<S: Storage + Clone> Store<S> {
    /// Replaces the object `namespace`/`name` with `obj`; returns the stored object and whether it was
    /// created.
    pub async fn update(&self, namespace: &str, name: &str, obj: Value) -> Result<(Value, bool), RegistryError> {
        self.update_with(namespace, name, obj, &UpdateOptions::default()).await
    }

    /// [`Store::update`] with options (a dry run).
    pub async fn update_with(
        &self,
        namespace: &str,
        name: &str,
        obj: Value,
        opts: &UpdateOptions,
    ) -> Result<(Value, bool), RegistryError> {
        self.update_inner(namespace, name, obj, None, opts).await
    }

    /// An update of the subresource `sub` (`PUT .../status`, `PUT .../finalize`): only the part `sub` owns
    /// changes; a resource without `sub` answers 404.
    pub async fn update_subresource(
        &self,
        namespace: &str,
        name: &str,
        sub: Subresource,
        obj: Value,
        opts: &UpdateOptions,
    ) -> Result<Value, RegistryError> {
        if !self.strategy.supports(sub) {
            return Err(RegistryError::NoSuchPath);
        }
        Ok(self.update_inner(namespace, name, obj, Some(sub), opts).await?.0)
    }

    /// A patch of `namespace`/`name` (or of its subresource `sub`): `apply` turns the current object into
    /// the new one, inside the guaranteed update, so that a retry after a conflict re-applies it to the
    /// newer state. The result is an update in every other respect: a resourceVersion the
    /// patch sets is the optimistic lock, and none never conflicts. A missing object is a 404.
    pub(crate) async fn patch(
        &self,
        namespace: &str,
        name: &str,
        sub: Option<Subresource>,
        apply: &mut (dyn FnMut(&Value) -> Result<Value, RegistryError> + Send),
        opts: &UpdateOptions,
    ) -> Result<Value, RegistryError> {
        if sub.is_some_and(|sub| !self.strategy.supports(sub)) {
            return Err(RegistryError::NoSuchPath);
        }
        let dry_run = options::dry_run("UpdateOptions", &opts.dry_run)?;
        let key = self.key(namespace, name);
        let mut produce = |existing: &Value| -> Result<Value, RegistryError> {
            if existing.is_null() {
                return Err(RegistryError::NotFound { resource: self.resource.group_resource(), name: name.into() });
            }
            let obj = typecheck::decode(&self.resource, apply(existing)?)?;
            self.check_body_name(&obj, name)?;
            Ok(obj)
        };
        let how = How { sub, manager: opts.field_manager.as_deref(), create: false, admission: &opts.admission };
        if dry_run {
            return Ok(self.dry_run_update(namespace, name, &key, &mut produce, &how, None).await?.0);
        }
        Ok(self.write_update(namespace, name, &key, &mut produce, &how, None).await?.0)
    }

    /// A body's name must be the URL's, if it has one.
    pub(super) fn check_body_name(&self, obj: &Value, name: &str) -> Result<(), RegistryError> {
        let body_name = meta::get_str(obj, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(RegistryError::BadRequest(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        Ok(())
    }

    async fn update_inner(
        &self,
        namespace: &str,
        name: &str,
        obj: Value,
        sub: Option<Subresource>,
        opts: &UpdateOptions,
    ) -> Result<(Value, bool), RegistryError> {
        let dry_run = options::dry_run("UpdateOptions", &opts.dry_run)?;
        let obj = typecheck::decode(&self.resource, obj)?;
        self.check_body_name(&obj, name)?;
        let uid = meta::get_str(&obj, "uid");
        let preconditions =
            (!uid.is_empty()).then(|| Preconditions { uid: Some(uid.to_string()), resource_version: None });
        let key = self.key(namespace, name);
        let mut produce = |_: &Value| Ok(obj.clone());
        let how = How { sub, manager: opts.field_manager.as_deref(), create: false, admission: &opts.admission };
        if dry_run {
            return self.dry_run_update(namespace, name, &key, &mut produce, &how, preconditions.as_ref()).await;
        }
        self.write_update(namespace, name, &key, &mut produce, &how, preconditions.as_ref()).await
    }

    /// The guaranteed update behind an update or a patch: `produce` makes the new object from the current one
    /// (`Value::Null` if absent) on every attempt (kube's `rest.UpdatedObjectInfo`). With an admission chain,
    /// each attempt is admitted first against the object as read, and written only if that is still the
    /// stored one (the chain is async and the storage's attempt is not).
    pub(super) async fn write_update(
        &self,
        namespace: &str,
        name: &str,
        key: &str,
        produce: &mut (dyn FnMut(&Value) -> Result<Value, RegistryError> + Send),
        how: &How<'_>,
        preconditions: Option<&Preconditions>,
    ) -> Result<(Value, bool), RegistryError> {
        if !how.admission.is_some() {
            let mut attempt = |existing: &Value| {
                produce(existing).and_then(|obj| self.try_update(namespace, name, obj, existing, how))
            };
            return self.guaranteed(name, key, &mut attempt, preconditions).await;
        }
        // The first attempt is judged against the watch cache's copy, as upstream's GuaranteedUpdate starts
        // from the Cacher's suggestion; a failure on it is retried against a live read only if the copy
        // was stale (kubernetes PR #104182), so that a webhook that refuses is asked once.
        let mut existing = self.read_for_update(key, name, "0").await?;
        let mut live = false;
        for _ in 0..ADMITTED_ATTEMPTS {
            let judged = match (preconditions, existing.is_null()) {
                (Some(pre), false) => {
                    pre.check(key, &existing).map_err(|err| self.storage_error(err, Operation::Update, name))
                }
                _ => Ok(()),
            };
            let judged = match judged {
                Ok(()) => self.admitted(namespace, name, produce, &existing, how, false).await,
                Err(err) => Err(err),
            };
            let outcome = match judged {
                Ok(outcome) => outcome,
                Err(err) if live => return Err(err),
                Err(err) => {
                    let fresh = self.read_for_update(key, name, "").await?;
                    let current = fresh.resource_version() == existing.resource_version();
                    if current && !self.bugs.has(Bug::AdmissionRejectionRetried) {
                        return Err(err);
                    }
                    (existing, live) = (fresh, true);
                    continue;
                }
            };
            let read_rv = existing.resource_version().to_string();
            let mut attempt = |current: &Value| {
                if current.resource_version() != read_rv {
                    return Err(RegistryError::Internal(STALE_ADMISSION.into()));
                }
                Ok(outcome.clone())
            };
            match self.guaranteed(name, key, &mut attempt, preconditions).await {
                Ok(done) => return Ok(done),
                Err(RegistryError::Internal(why)) if why == STALE_ADMISSION => {
                    (existing, live) = (self.read_for_update(key, name, "").await?, true);
                }
                Err(err) => return Err(err),
            }
        }
        Err(RegistryError::Conflict {
            resource: self.resource.group_resource(),
            name: name.to_string(),
            why: OPTIMISTIC_LOCK_MESSAGE.to_string(),
        })
    }

    /// The object an update starts from, read at `resource_version` ("0": the watch cache's copy; "": etcd's),
    /// `Value::Null` if there is none.
    async fn read_for_update(&self, key: &str, name: &str, resource_version: &str) -> Result<Value, RegistryError> {
        match self.storage.get(key, &GetOptions { resource_version: resource_version.into() }).await {
            Ok(existing) => Ok(existing),
            Err(StorageError::KeyNotFound { .. }) => Ok(Value::Null),
            Err(err) => Err(self.storage_error(err, Operation::Update, name)),
        }
    }

    /// One attempt of an update through the admission chain: produce, mutate, `BeforeUpdate`, validate.
    async fn admitted(
        &self,
        namespace: &str,
        name: &str,
        produce: &mut (dyn FnMut(&Value) -> Result<Value, RegistryError> + Send),
        existing: &Value,
        how: &How<'_>,
        dry_run: bool,
    ) -> Result<Outcome, RegistryError> {
        let attrs = Attributes {
            operation: if existing.is_null() { AdmissionOp::Create } else { AdmissionOp::Update },
            resource: &self.resource,
            subresource: how.sub.map_or("", Subresource::path_name),
            namespace,
            name,
            dry_run,
        };
        let mut obj = produce(existing)?;
        how.admission.admit(attrs, &mut obj, existing).await?;
        let outcome = self.try_update(namespace, name, obj, existing, how)?;
        let (Outcome::Write(new) | Outcome::Delete(new)) = &outcome;
        how.admission.validate(attrs, new, existing).await?;
        Ok(outcome)
    }

    /// The storage's guaranteed update, each attempt decided by `attempt`; returns the stored object, whether
    /// it was created, and carries out a delete an attempt asks for.
    async fn guaranteed(
        &self,
        name: &str,
        key: &str,
        attempt: &mut (dyn FnMut(&Value) -> Result<Outcome, RegistryError> + Send),
        preconditions: Option<&Preconditions>,
    ) -> Result<(Value, bool), RegistryError> {
        let mut parked = Parked::default();
        let mut created = false;
        let mut emptied = None;
        let result = self
            .storage
            .guaranteed_update(
                key,
                true,
                preconditions,
                |existing, _| {
                    created = existing.is_null();
                    emptied = None;
                    match attempt(&existing) {
                        Ok(Outcome::Write(obj)) => Ok(obj),
                        Ok(Outcome::Delete(obj)) => {
                            // Not an error: it stops the write, and the delete follows below.
                            emptied = Some(obj);
                            Err(StorageError::Internal("the update empties the finalizers".into()))
                        }
                        Err(err) => Err(parked.park(err)),
                    }
                },
                None,
            )
            .await;
        if let Some(answer) = emptied {
            return self.delete_during_update(key, name, answer, preconditions).await;
        }
        match result {
            Ok(stored) => Ok((stored, created)),
            Err(err) => Err(parked.take_or(err, |err| self.storage_error(err, Operation::Update, name))),
        }
    }

    /// `deleteWithoutFinalizers`: the object goes; the client gets the object it sent, as after any update.
    /// A concurrent update may have deleted it already, which is the same outcome.
    async fn delete_during_update(
        &self,
        key: &str,
        name: &str,
        answer: Value,
        preconditions: Option<&Preconditions>,
    ) -> Result<(Value, bool), RegistryError> {
        match self.storage.delete(key, preconditions, |_| Ok(()), None).await {
            Ok(_) | Err(StorageError::KeyNotFound { .. }) => Ok((answer, false)),
            Err(err) => Err(self.storage_error(err, Operation::Delete, name)),
        }
    }

    /// The dry-run storage's guaranteed update: one attempt against the current object, nothing written.
    pub(super) async fn dry_run_update(
        &self,
        namespace: &str,
        name: &str,
        key: &str,
        produce: &mut (dyn FnMut(&Value) -> Result<Value, RegistryError> + Send),
        how: &How<'_>,
        preconditions: Option<&Preconditions>,
    ) -> Result<(Value, bool), RegistryError> {
        let existing = match self.storage.get(key, &GetOptions::default()).await {
            Ok(existing) => existing,
            Err(StorageError::KeyNotFound { .. }) => Value::Null,
            Err(err) => return Err(self.storage_error(err, Operation::Update, name)),
        };
        if let (Some(pre), false) = (preconditions, existing.is_null()) {
            pre.check(key, &existing).map_err(|err| self.storage_error(err, Operation::Update, name))?;
        }
        let created = existing.is_null();
        let outcome = if how.admission.is_some() {
            self.admitted(namespace, name, produce, &existing, how, true).await?
        } else {
            self.try_update(namespace, name, produce(&existing)?, &existing, how)?
        };
        match outcome {
            Outcome::Write(obj) => Ok((obj, created)),
            Outcome::Delete(obj) => Ok((obj, false)),
        }
    }

    /// One attempt against the current state `existing` (`Value::Null` if absent).
    fn try_update(
        &self,
        namespace: &str,
        name: &str,
        obj: Value,
        existing: &Value,
        how: &How<'_>,
    ) -> Result<Outcome, RegistryError> {
        let sub = how.sub;
        let mut obj = obj;
        self.strategy.decode(&mut obj);
        let mut obj = self.track(existing, obj, how.manager, sub);
        if existing.is_null() {
            if sub.is_some() || !(how.create || self.strategy.allow_create_on_update()) {
                return Err(RegistryError::NotFound { resource: self.resource.group_resource(), name: name.into() });
            }
            // A create through update follows the create rules, with the name from the URL. (No strategy
            // served so far allows it; namespace admission for it is not modelled yet.)
            meta::set(&mut obj, "resourceVersion", None);
            meta::set(&mut obj, "name", Some(Value::from(name)));
            return self.before_create(namespace, obj).map(Outcome::Write);
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
        let new = self.before_update(namespace, obj, existing, sub)?;
        if self.strategy.should_delete_during_update(&new, existing) {
            return Ok(Outcome::Delete(new));
        }
        Ok(Outcome::Write(new))
    }

    /// `rest.BeforeUpdate`: namespace from the URL, the strategy's resets, system fields from the old
    /// object, then validation and canonicalization.
    fn before_update(
        &self,
        namespace: &str,
        mut obj: Value,
        old: &Value,
        sub: Option<Subresource>,
    ) -> Result<Value, RegistryError> {
        self.ensure_namespace(&mut obj, namespace)?;
        // Clients may not set the generation; the strategy bumps it from the old one.
        meta::copy(&mut obj, old, "generation");
        // The strategies reset what a write may not change, from the old object; the managed fields are
        // the field manager's, already computed for this write, and stay (upstream's status strategies
        // keep them too).
        let managed = obj.pointer("/metadata/managedFields").cloned();
        match sub {
            None => self.strategy.prepare_for_update(&mut obj, old),
            Some(sub) => self.strategy.prepare_for_subresource_update(sub, &mut obj, old),
        }
        meta::set(&mut obj, "managedFields", managed);
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
        let errs = match sub {
            None => self.strategy.validate_update(&obj, old),
            Some(sub) => self.strategy.validate_subresource_update(sub, &obj, old),
        };
        if !errs.is_empty() {
            return Err(self.invalid(&name, errs));
        }
        self.strategy.canonicalize(&mut obj);
        Ok(obj)
    }
}
