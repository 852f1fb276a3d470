//! Delete: existence and preconditions checked against a quorum read (409 with kube's precondition texts),
//! then kube's `BeforeDelete` and `updateForGracefulDeletionAndFinalizers`: a resource deleted gracefully
//! (pods) first gets `deletionTimestamp` = now + grace and `deletionGracePeriodSeconds`, which a later
//! delete may only shorten, and goes at once when the grace is 0; an object with finalizers gets a
//! `deletionTimestamp` and waits for them (namespaces also turn Terminating). Anything else is the storage
//! delete, checked again atomically. The answer is the object or a Success `Status`, as the resource's
//! store says. A dry run answers the same and writes nothing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};
use serde_json::Value;

use crate::bug::Bug;
use crate::registry::admission::{Attributes, Operation as AdmissionOp};
use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::options::{self, DeleteOptions, PropagationPolicy};
use crate::registry::store::{ListRequest, Parked, Store};
use crate::registry::strategy::{GcPolicy, FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
use crate::registry::system::parse_rfc3339;
use crate::storage::status::Operation;
use crate::storage::{GetOptions, Object, ObjectList, Preconditions, Storage, StorageError};

/// What a delete did and what kube-apiserver answers with.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteResult {
    /// Whether the object is gone (false: it waits for its grace period or finalizers).
    pub deleted: bool,
    /// The response body: the object, or a Success `Status` naming it.
    pub body: Value,
}

/// `BeforeDelete`'s verdict on one state of the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Graceful {
    /// Not deleted gracefully (or its grace is over): finalizers decide.
    No,
    /// A graceful deletion is already under way and this delete does not shorten it: nothing changes.
    Pending,
    /// The object now carries a deletion timestamp `period` seconds away.
    Start { period: i64 },
}

/// What marking one state of the object as deleting decided.
enum Marked {
    /// Store this object; it is gone only when `delete_now` (grace 0 and no finalizers).
    Write { obj: Value, delete_now: bool },
    /// Another delete got there first and this one changes nothing.
    Pending,
    /// Nothing waits: delete at once.
    DeleteNow,
}

/// The page size of the lists behind a collection delete (`deleteCollectionPageSize`).
const DELETE_COLLECTION_PAGE_SIZE: i64 = 10_000;

impl<S: Storage + Clone> Store<S> {
    /// Deletes every object of `namespace` ("" for all) that `request` selects, page by page, each with
    /// `opts`; an object already gone is skipped. Returns the list as read, with every item listed (kube's
    /// `DeleteCollection`). A request with a limit deletes one page. Deletes run one after another, where
    /// kube runs a few workers: the order of the writes is then the list's, the same on every run.
    pub(crate) async fn delete_collection(
        &self,
        namespace: &str,
        request: &ListRequest,
        opts: &DeleteOptions,
    ) -> Result<ObjectList, RegistryError> {
        let mut request = request.clone();
        let has_limit = request.limit > 0;
        if !has_limit {
            request.limit = DELETE_COLLECTION_PAGE_SIZE;
        }
        let mut all: Option<ObjectList> = None;
        loop {
            let page = self.list(namespace, &request).await?;
            for item in &page.items {
                match self.delete_with(namespace, item.name(), opts).await {
                    Ok(_) => {}
                    Err(err) if is_not_found(&err) => {}
                    Err(err) => return Err(err),
                }
            }
            if has_limit {
                return Ok(page);
            }
            let next = page.continue_token.clone();
            match &mut all {
                None => all = Some(ObjectList { continue_token: None, remaining_item_count: None, ..page }),
                Some(list) => list.items.extend(page.items),
            }
            match next {
                Some(token) => {
                    request.continue_token = token;
                    request.resource_version = String::new();
                    request.resource_version_match = None;
                }
                None => return Ok(all.expect("set above")),
            }
        }
    }
    /// Deletes `namespace`/`name` if `preconditions` hold.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
    ) -> Result<DeleteResult, RegistryError> {
        self.delete_with(namespace, name, &DeleteOptions::with_preconditions(preconditions.clone())).await
    }

    /// [`Store::delete`] with options (grace period, dry run).
    pub async fn delete_with(
        &self,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<DeleteResult, RegistryError> {
        let dropped;
        let opts = if self.bugs.has(Bug::DeleteIgnoresRvPrecondition) && opts.preconditions.resource_version.is_some() {
            // The old API had no such field: the decoder dropped it, and the delete went ahead on whatever
            // the object had become since its client read it (kubernetes #73648).
            let mut old = opts.clone();
            old.preconditions.resource_version = None;
            dropped = old;
            &dropped
        } else {
            opts
        };
        let dry_run = options::dry_run("DeleteOptions", &opts.dry_run)?;
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
        self.check_preconditions(name, &opts.preconditions, &current)?;
        let attrs = Attributes {
            operation: AdmissionOp::Delete,
            resource: &self.resource,
            subresource: "",
            namespace,
            name,
            dry_run,
        };
        opts.admission.validate(attrs, &Value::Null, &current).await?;
        let mut preconditions = opts.preconditions.clone();
        // A probe on a copy: the marks themselves are made by `mark`, against the state the guaranteed
        // update reads, which may be newer than this one.
        let grace = self.before_delete(&mut current.clone(), opts.grace_period_seconds);
        if grace == Graceful::Pending {
            return Ok(DeleteResult { deleted: false, body: self.finalize_delete(name, current) });
        }
        let gc_finalizers = self.gc_finalizers(&current, opts).is_some();
        if matches!(grace, Graceful::Start { .. }) || self.strategy.has_pending_finalizers(&current) || gc_finalizers {
            let marked =
                if dry_run { self.mark(current.clone(), opts)? } else { self.mark_deleting(&key, name, opts).await? };
            match marked {
                Marked::Write { obj, delete_now: false } => return Ok(DeleteResult { deleted: false, body: obj }),
                Marked::Pending => {
                    return Ok(DeleteResult { deleted: false, body: self.finalize_delete(name, current) })
                }
                // kube answers a dry run with the marked object itself here, even where a real delete
                // would answer with a Status.
                Marked::Write { obj, delete_now: true } if dry_run => {
                    return Ok(DeleteResult { deleted: true, body: obj })
                }
                Marked::Write { obj, delete_now: true } => {
                    // The marks were a write: a resourceVersion precondition now names the marked object.
                    if preconditions.resource_version.is_some() {
                        preconditions.resource_version = Some(obj.resource_version().to_string());
                    }
                }
                Marked::DeleteNow => {}
            }
        }
        if dry_run {
            return Ok(DeleteResult { deleted: true, body: self.finalize_delete(name, current) });
        }
        let deleted = self
            .storage
            .delete(&key, Some(&preconditions), |_| Ok(()), None)
            .await
            .map_err(|e| self.storage_error(e, Operation::Delete, name))?;
        Ok(DeleteResult { deleted: true, body: self.finalize_delete(name, deleted) })
    }

    /// `rest.BeforeDelete`: decides whether this delete starts, shortens or leaves a graceful deletion,
    /// writing the new `deletionTimestamp` and `deletionGracePeriodSeconds` into `obj`.
    fn before_delete(&self, obj: &mut Value, requested: Option<i64>) -> Graceful {
        // Negative grace periods count as one second, on the request and on the object.
        let requested = requested.map(|g| if g < 0 { 1 } else { g });
        if meta::get(obj, "deletionGracePeriodSeconds").and_then(Value::as_i64).is_some_and(|g| g < 0) {
            meta::set(obj, "deletionGracePeriodSeconds", Some(Value::from(1)));
        }
        let Some(period) = self.strategy.graceful_period(obj, requested) else { return Graceful::No };
        let timestamp = meta::get_str(obj, "deletionTimestamp").to_string();
        if !timestamp.is_empty() {
            let current = meta::get(obj, "deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0);
            // A graceful deletion with no grace left waits only for finalizers (or a failed delete is retried).
            if current == 0 {
                return Graceful::No;
            }
            let Some(shorter) = requested.filter(|&p| p < current) else { return Graceful::Pending };
            let at = match parse_rfc3339(&timestamp) {
                Some(t) => crate::registry::system::rfc3339(t - current + shorter),
                None => self.system.now_plus(shorter),
            };
            meta::set(obj, "deletionTimestamp", Some(Value::from(at)));
            meta::set(obj, "deletionGracePeriodSeconds", Some(Value::from(shorter)));
            return Graceful::Start { period: shorter };
        }
        meta::set(obj, "deletionTimestamp", Some(Value::from(self.system.now_plus(period))));
        meta::set(obj, "deletionGracePeriodSeconds", Some(Value::from(period)));
        bump_generation(obj);
        Graceful::Start { period }
    }

    /// One attempt of `updateForGracefulDeletionAndFinalizers` on the state `obj`: the grace period, then
    /// the garbage collector's finalizers as the options ask (which a deletion already under way keeps),
    /// then whatever finalizers remain.
    fn mark(&self, mut obj: Value, opts: &DeleteOptions) -> Result<Marked, RegistryError> {
        let grace = self.before_delete(&mut obj, opts.grace_period_seconds);
        if grace == Graceful::Pending {
            return Ok(Marked::Pending);
        }
        if let Some(finalizers) = self.gc_finalizers(&obj, opts) {
            let list = (!finalizers.is_empty()).then(|| Value::from(finalizers));
            meta::set(&mut obj, "finalizers", list);
        }
        let finalizers = self.strategy.has_pending_finalizers(&obj);
        match grace {
            Graceful::Pending => Ok(Marked::Pending),
            Graceful::No if finalizers => {
                self.mark_as_deleting(&mut obj);
                self.strategy.prepare_for_delete(&mut obj);
                Ok(Marked::Write { obj, delete_now: false })
            }
            Graceful::No => Ok(Marked::DeleteNow),
            Graceful::Start { period } => Ok(Marked::Write { obj, delete_now: !finalizers && period == 0 }),
        }
    }

    /// `deletionFinalizersForGarbageCollection`: the finalizers `obj` must carry for the propagation the
    /// delete asks for (`orphan` for Orphan, `foregroundDeletion` for Foreground, neither for Background),
    /// or `None` when they are already those. The garbage collector (`kubesim-controllers`, a client) removes
    /// them once it has dealt with the dependents; without it an object given one waits until a client does.
    fn gc_finalizers(&self, obj: &Value, opts: &DeleteOptions) -> Option<Vec<String>> {
        let policy = self.strategy.default_gc_policy();
        if policy == GcPolicy::Unsupported {
            return None;
        }
        let existing: Vec<String> = meta::get(obj, "finalizers")
            .and_then(Value::as_array)
            .map(|f| f.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let has = |f: &str| {
            existing.iter().find(|e| *e == ORPHAN_FINALIZER || *e == FOREGROUND_FINALIZER).is_some_and(|e| e == f)
        };
        // shouldOrphanDependents and shouldDeleteDependents, in their order of precedence.
        let (orphan, foreground) = match (opts.orphan_dependents, opts.propagation_policy) {
            (Some(orphan), _) => (orphan, false),
            (None, Some(PropagationPolicy::Orphan)) => (true, false),
            (None, Some(PropagationPolicy::Foreground)) => (false, true),
            (None, Some(PropagationPolicy::Background)) => (false, false),
            (None, None) if has(ORPHAN_FINALIZER) => (true, false),
            (None, None) if has(FOREGROUND_FINALIZER) => (false, true),
            (None, None) => (policy == GcPolicy::OrphanDependents, false),
        };
        let mut wanted: Vec<String> =
            existing.iter().filter(|f| *f != ORPHAN_FINALIZER && *f != FOREGROUND_FINALIZER).cloned().collect();
        if orphan {
            wanted.push(ORPHAN_FINALIZER.into());
        }
        if foreground {
            wanted.push(FOREGROUND_FINALIZER.into());
        }
        let as_set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
        (as_set(&wanted) != as_set(&existing)).then_some(wanted)
    }

    /// `markAsDeleting`: a deletion waiting only for finalizers has no grace period, and its timestamp is
    /// now unless an earlier delete set one that is not in the future.
    fn mark_as_deleting(&self, obj: &mut Value) {
        let timestamp = meta::get_str(obj, "deletionTimestamp").to_string();
        let now = self.system.now();
        if timestamp.is_empty() {
            bump_generation(obj);
        }
        let later = match (parse_rfc3339(&timestamp), parse_rfc3339(&now)) {
            (Some(t), Some(n)) => t > n,
            _ => false,
        };
        if timestamp.is_empty() || later {
            meta::set(obj, "deletionTimestamp", Some(Value::from(now)));
        }
        meta::set(obj, "deletionGracePeriodSeconds", Some(Value::from(0)));
    }

    /// Writes the marks of [`Store::mark`] in one guaranteed update; watchers see MODIFIED.
    async fn mark_deleting(&self, key: &str, name: &str, opts: &DeleteOptions) -> Result<Marked, RegistryError> {
        let mut parked = Parked::default();
        let mut stop = None;
        let result = self
            .storage
            .guaranteed_update(
                key,
                false,
                Some(&opts.preconditions),
                |obj, _| {
                    stop = None;
                    if obj.is_null() {
                        let err =
                            RegistryError::NotFound { resource: self.resource.group_resource(), name: name.into() };
                        return Err(parked.park(err));
                    }
                    match self.mark(obj, opts) {
                        Ok(Marked::Write { obj, .. }) => Ok(obj),
                        Ok(other) => {
                            // Not an error: nothing is to be written, and the caller acts on `stop`.
                            stop = Some(other);
                            Err(StorageError::Internal("nothing to mark".into()))
                        }
                        Err(err) => Err(parked.park(err)),
                    }
                },
                None,
            )
            .await;
        if let Some(stop) = stop {
            return Ok(stop);
        }
        let obj = result.map_err(|err| parked.take_or(err, |err| self.storage_error(err, Operation::Delete, name)))?;
        let finalizers = self.strategy.has_pending_finalizers(&obj);
        let grace = meta::get(&obj, "deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0);
        Ok(Marked::Write { obj, delete_now: !finalizers && grace == 0 })
    }

    /// `finalizeDelete`: the answer to a delete, the object itself or a Success `Status` naming it.
    fn finalize_delete(&self, name: &str, obj: Value) -> Value {
        if self.strategy.return_deleted_object() {
            obj
        } else {
            self.success(name, &obj)
        }
    }

    /// `BeforeDelete`'s early precondition check, with its own texts (the storage layer's apply only to
    /// the race where the object changes between this read and the delete). It names the object by its
    /// kind, not its resource (`Operation cannot be fulfilled on ConfigMap "a"`), as upstream's does.
    fn check_preconditions(&self, name: &str, pre: &Preconditions, current: &Value) -> Result<(), RegistryError> {
        let by_kind = crate::storage::GroupResource::new(&self.resource.group, &self.resource.kind);
        let conflict = |why: String| RegistryError::Conflict { resource: by_kind.clone(), name: name.into(), why };
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

    /// The Success `Status` of an immediate delete: it names the object by resource plural and uid.
    fn success(&self, name: &str, deleted: &Value) -> Value {
        let status = Status {
            status: Some("Success".into()),
            details: Some(StatusDetails {
                name: Some(name.into()),
                group: crate::storage::status::non_empty(&self.resource.group),
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

/// Bumps `metadata.generation` for types that track it (a deletion counts as a change of intent).
fn bump_generation(obj: &mut Value) {
    let generation = meta::get(obj, "generation").and_then(Value::as_i64).unwrap_or(0);
    if generation > 0 {
        meta::set(obj, "generation", Some(Value::from(generation + 1)));
    }
}

/// Whether a delete failed because the object is already gone.
fn is_not_found(err: &RegistryError) -> bool {
    match err {
        RegistryError::NotFound { .. } => true,
        RegistryError::Storage { err, .. } => matches!(**err, StorageError::KeyNotFound { .. }),
        _ => false,
    }
}
