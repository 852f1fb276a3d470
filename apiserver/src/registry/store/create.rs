//! Create: the NamespaceLifecycle admission check, kube's `BeforeCreate` (namespace, strategy, system
//! fields, generateName, validation, canonicalization), then the storage create, retried with a new
//! generated name on a collision. A dry run does all of it but the write: a
//! name already taken is still a 409, and the answer has no resourceVersion (CR5).

use serde_json::Value;

use crate::registry::admission;
use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::options::{self, CreateOptions};
use crate::registry::store::Store;
use crate::registry::strategies::namespaces;
use crate::registry::typecheck;
use crate::storage::status::Operation;
use crate::storage::{GetOptions, Storage, StorageError};

/// How many names a create with `generateName` tries (`maxNameGenerationCreateAttempts`).
const GENERATE_NAME_ATTEMPTS: usize = 8;

impl<S: Storage + Clone> Store<S> {
    /// Creates `obj` in `namespace` ("" for cluster-scoped resources) and returns it as stored.
    pub async fn create(&self, namespace: &str, obj: Value) -> Result<Value, RegistryError> {
        self.create_with(namespace, obj, &CreateOptions::default()).await
    }

    /// [`Store::create`] with options (a dry run).
    pub async fn create_with(&self, namespace: &str, obj: Value, opts: &CreateOptions) -> Result<Value, RegistryError> {
        let dry_run = options::dry_run("CreateOptions", &opts.dry_run)?;
        let mut obj = typecheck::decode(&self.resource, obj)?;
        self.strategy.decode(&mut obj);
        self.admit_create(namespace, &obj).await?;
        // Admission sees the name the client gave: "" for a create with `generateName`.
        let given_name = meta::get_str(&obj, "name").to_string();
        let attrs = admission::Attributes {
            operation: admission::Operation::Create,
            resource: &self.resource,
            subresource: "",
            namespace,
            name: "",
            dry_run,
        };
        opts.admission.admit(attrs.named(&given_name), &mut obj, &Value::Null).await?;
        let obj = self.track(&Value::Null, obj, opts.field_manager.as_deref(), None);
        let generated = meta::get_str(&obj, "name").is_empty() && !meta::get_str(&obj, "generateName").is_empty();
        let mut last_name = String::new();
        for _ in 0..GENERATE_NAME_ATTEMPTS {
            let prepared = self.before_create(namespace, obj.clone())?;
            let name = meta::get_str(&prepared, "name").to_string();
            let key = self.key(meta::get_str(&prepared, "namespace"), &name);
            opts.admission.validate(attrs.named(&name), &prepared, &Value::Null).await?;
            let result = if dry_run {
                self.dry_run_create(&key, prepared).await
            } else {
                self.storage.create(&key, prepared).await
            };
            match result {
                Ok(created) => return Ok(created),
                Err(StorageError::KeyExists { .. }) if generated => last_name = name,
                Err(err) => return Err(self.storage_error(err, Operation::Create, &name)),
            }
        }
        Err(RegistryError::GenerateNameConflict { resource: self.resource.group_resource(), name: last_name })
    }

    /// The dry-run storage's create: the key must be free, and the object comes back as it would be stored,
    /// without a resourceVersion (`DryRunnableStorage.Create`).
    async fn dry_run_create(&self, key: &str, obj: Value) -> Result<Value, StorageError> {
        match self.storage.get(key, &GetOptions::default()).await {
            Ok(_) => Err(StorageError::KeyExists { key: key.to_string(), rv: 0 }),
            Err(StorageError::KeyNotFound { .. }) => Ok(obj),
            Err(err) => Err(err),
        }
    }

    /// The NamespaceLifecycle admission plugin on create: the namespace must exist and not be terminating.
    /// It runs before the registry names the object, so a generated name is reported by its prefix.
    pub(super) async fn admit_create(&self, namespace: &str, obj: &Value) -> Result<(), RegistryError> {
        let Some(namespaces) = &self.namespaces else { return Ok(()) };
        if namespace.is_empty() {
            return Ok(());
        }
        let key = format!("/{}/{namespace}", namespaces::resource().etcd_prefix);
        let ns = match namespaces.get(&key, &GetOptions::default()).await {
            Ok(ns) => ns,
            Err(StorageError::KeyNotFound { .. }) => {
                return Err(RegistryError::NamespaceNotFound { namespace: namespace.to_string() })
            }
            Err(err) => return Err(self.storage_error(err, Operation::Get, namespace)),
        };
        if namespaces::phase(&ns) == "Terminating" {
            let name = match meta::get_str(obj, "name") {
                "" => meta::get_str(obj, "generateName"),
                name => name,
            };
            return Err(RegistryError::NamespaceTerminating {
                resource: self.resource.group_resource(),
                name: name.to_string(),
                namespace: namespace.to_string(),
            });
        }
        Ok(())
    }

    /// `rest.BeforeCreate`: everything the server decides about a new object before it is stored.
    pub(crate) fn before_create(&self, namespace: &str, mut obj: Value) -> Result<Value, RegistryError> {
        meta::set(&mut obj, "deletionTimestamp", None);
        meta::set(&mut obj, "deletionGracePeriodSeconds", None);
        self.ensure_namespace(&mut obj, namespace)?;
        // The uid comes first, as kube fills the system fields before the strategy runs (a Job's
        // generated selector names it).
        meta::set(&mut obj, "uid", Some(Value::from(self.system.new_uid())));
        self.strategy.prepare_for_create(&mut obj);
        meta::set(&mut obj, "creationTimestamp", Some(Value::from(self.system.now())));
        if meta::get_str(&obj, "name").is_empty() && !meta::get_str(&obj, "generateName").is_empty() {
            let name = self.system.generate_name(meta::get_str(&obj, "generateName"));
            meta::set(&mut obj, "name", Some(Value::from(name)));
        }
        let name = meta::get_str(&obj, "name").to_string();
        let errs = self.strategy.validate(&obj);
        if !errs.is_empty() {
            return Err(self.invalid(&name, errs));
        }
        // The generic check runs after the strategy's, so that the more specific messages win.
        let errs: Vec<_> = names::path_segment_name(&name, false)
            .into_iter()
            .map(|msg| crate::registry::field_error::FieldError::invalid("metadata.name", &name, &msg))
            .collect();
        if !errs.is_empty() {
            return Err(self.invalid(&name, errs));
        }
        self.strategy.canonicalize(&mut obj);
        Ok(obj)
    }
}
