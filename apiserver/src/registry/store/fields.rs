//! Field management around the store's writes ([`crate::registry::managed_fields`]): every tracked create,
//! update and patch records its manager's fields in `metadata.managedFields` inside the guaranteed update,
//! against the object it replaces; server-side apply merges a configuration into the current object (or
//! creates it), also inside the guaranteed update, so a retry after a conflict applies to the newer state.

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::managed_fields::path::FieldSet;
use crate::registry::managed_fields::shape::Shape;
use crate::registry::managed_fields::{self, ApplyError, Writer};
use crate::registry::options::{self, UpdateOptions};
use crate::registry::schema::schemas;
use crate::registry::store::update::How;
use crate::registry::store::Store;
use crate::registry::strategy::Subresource;
use crate::registry::typecheck;
use crate::storage::{GetOptions, Storage, StorageError};

/// What a server-side apply names besides its configuration.
#[derive(Clone, Copy, Debug)]
pub struct ApplyRequest<'a> {
    /// The object's name, from the URL.
    pub name: &'a str,
    pub sub: Option<Subresource>,
    /// The applier (`fieldManager`, required for an apply).
    pub manager: &'a str,
    /// `force`: take conflicting fields from their managers instead of failing.
    pub force: bool,
}

/// How `managedFields` names a subresource.
fn subresource_name(sub: Option<Subresource>) -> &'static str {
    sub.map_or("", Subresource::path_name)
}

impl<S: Storage + Clone> Store<S> {
    /// How this resource's fields are owned.
    fn shape(&self) -> Shape {
        self.strategy.field_shape().unwrap_or_else(|| {
            Shape::root(schemas().kind(&self.resource.group, &self.resource.version, &self.resource.kind))
        })
    }

    /// The fields a write through `sub` may not own.
    fn ignored(&self, sub: Option<Subresource>) -> FieldSet {
        managed_fields::ignored_fields(subresource_name(sub), self.strategy.supports(Subresource::Status))
    }

    /// `new`, replacing `live` (`Value::Null` for a create), with the changes recorded as `manager`'s;
    /// `new` as it is when the write is not tracked.
    pub(super) fn track(&self, live: &Value, new: Value, manager: Option<&str>, sub: Option<Subresource>) -> Value {
        let Some(manager) = manager else { return new };
        let now = self.system.now();
        let api_version = self.resource.api_version();
        let writer = Writer { manager, subresource: subresource_name(sub), api_version: &api_version, now: &now };
        managed_fields::update(live, &new, &writer, &self.shape(), &self.ignored(sub))
    }

    /// Server-side apply of `config` by `request.manager` to `namespace`/`request.name` (or its
    /// subresource): the stored object and whether the apply created it. A conflict with another manager's
    /// fields is a 409 unless forced.
    pub async fn apply(
        &self,
        namespace: &str,
        config: Value,
        request: &ApplyRequest<'_>,
        opts: &UpdateOptions,
    ) -> Result<(Value, bool), RegistryError> {
        let sub = request.sub;
        if sub.is_some_and(|sub| !self.strategy.supports(sub)) {
            return Err(RegistryError::NoSuchPath);
        }
        let dry_run = options::dry_run("PatchOptions", &opts.dry_run)?;
        let text = |field: &str| config.get(field).and_then(Value::as_str).unwrap_or("");
        if text("apiVersion") != self.resource.api_version() || text("kind") != self.resource.kind {
            return Err(RegistryError::BadRequest(managed_fields::invalid_object_type(
                text("apiVersion"),
                text("kind"),
            )));
        }
        self.check_declared(&config)?;
        let key = self.key(namespace, request.name);
        if sub.is_none() {
            // An apply that creates passes the create admission (the namespace must exist).
            if let Err(StorageError::KeyNotFound { .. }) = self.storage.get(&key, &GetOptions::default()).await {
                self.admit_create(namespace, &config).await?;
            }
        }
        let mut produce = |existing: &Value| self.applied(existing, &config, request);
        let how = How { sub, manager: None, create: sub.is_none(), admission: &opts.admission };
        if dry_run {
            return self.dry_run_update(namespace, request.name, &key, &mut produce, &how, None).await;
        }
        self.write_update(namespace, request.name, &key, &mut produce, &how, None).await
    }

    /// `config` applied to `existing` (`Value::Null`: the apply creates), decoded as the kind: the patch
    /// function of an apply, for this store's [`Store::apply`] and for registries that patch and create
    /// their own way around the store (services).
    pub(crate) fn applied(
        &self,
        existing: &Value,
        config: &Value,
        request: &ApplyRequest<'_>,
    ) -> Result<Value, RegistryError> {
        let now = self.system.now();
        let api_version = self.resource.api_version();
        let sub = request.sub;
        let writer = Writer {
            manager: request.manager,
            subresource: subresource_name(sub),
            api_version: &api_version,
            now: &now,
        };
        let applied =
            managed_fields::apply(existing, config, &writer, request.force, &self.shape(), &self.ignored(sub))
                .map_err(|err| match err {
                    ApplyError::Conflicts(conflicts) => RegistryError::ApplyConflict { conflicts },
                    ApplyError::BadRequest(why) => RegistryError::BadRequest(why),
                    ApplyError::Internal(why) => RegistryError::Internal(why),
                })?;
        let obj = typecheck::decode(&self.resource, applied)?;
        self.check_body_name(&obj, request.name)?;
        Ok(obj)
    }

    /// An applied configuration may only set fields its kind declares: upstream cannot type it otherwise,
    /// and answers 500 with structured-merge-diff's words.
    fn check_declared(&self, config: &Value) -> Result<(), RegistryError> {
        let unknown = typecheck::unknown_fields(&self.resource, config);
        let Some(first) = unknown.first() else { return Ok(()) };
        let meta = |field: &str| config.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("");
        let group_version = if self.resource.group.is_empty() {
            format!("/{}", self.resource.version)
        } else {
            self.resource.api_version()
        };
        Err(RegistryError::Unconverted(format!(
            "failed to create typed patch object ({}/{}; {group_version}, Kind={}): .{first}: field not declared in schema",
            meta("namespace"),
            meta("name"),
            self.resource.kind
        )))
    }
}
