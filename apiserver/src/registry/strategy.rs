//! [`Strategy`]: what differs per resource (kube's `RESTCreateStrategy` and `RESTUpdateStrategy`), and
//! [`Resource`], the small descriptor that names a resource, so that the generic [`crate::registry::Store`]
//! works for any resource, custom ones included.

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::storage::status::GroupResource;

/// A resource as the registry names it: API group and version, kind, plural, and where its objects live
/// in etcd (relative to the store's path prefix, kube's `/registry/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The plural (`configmaps`): what URLs and most error messages name.
    pub plural: String,
    /// The etcd key prefix, usually the plural (`/registry/configmaps/...`).
    pub etcd_prefix: String,
}

impl Resource {
    /// A core-group (`v1`) resource stored under its plural.
    pub fn core(kind: &str, plural: &str) -> Resource {
        Resource {
            group: String::new(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            etcd_prefix: plural.into(),
        }
    }

    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }

    /// `apiVersion` as objects carry it (`v1`, `apps/v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// Per-resource behaviour of create and update (delete: the [`DeleteStrategy`] supertrait). Objects are JSON;
/// hooks edit them in place.
pub trait Strategy: DeleteStrategy {
    /// Whether objects live in a namespace (`NamespaceScoped`).
    fn namespace_scoped(&self) -> bool;

    /// Whether an update of a missing object creates it (`AllowCreateOnUpdate`).
    fn allow_create_on_update(&self) -> bool {
        false
    }

    /// Whether an update without `metadata.resourceVersion` overwrites whatever is stored
    /// (`AllowUnconditionalUpdate`); built-in types say yes, custom resources no.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// Clears or sets what clients may not set on create (status, generation), before validation.
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// Resets what the main endpoint may not change (status) and bumps the generation where kube does.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// Validates a new object, metadata included (`Validate`).
    fn validate(&self, obj: &Value) -> Vec<FieldError>;

    /// Validates an update (`ValidateUpdate`).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError>;

    /// Normalizes a valid object before it is stored (`Canonicalize`).
    fn canonicalize(&self, _obj: &mut Value) {}

    /// The value of a field selector key beyond `metadata.name` and `metadata.namespace`
    /// (`GetAttrs`); `None` means the key is not supported for this resource.
    fn selectable_field(&self, _obj: &Value, _key: &str) -> Option<String> {
        None
    }

    /// Whether the field selector key is supported beyond the metadata ones.
    fn supports_field(&self, _key: &str) -> bool {
        false
    }
}

/// Per-resource behaviour of delete (kube's `RESTDeleteStrategy` and the store options around it).
pub trait DeleteStrategy: Send + Sync {
    /// Whether deleting `obj` must wait for finalizers: it then only gets a `deletionTimestamp` (reference D3).
    fn has_pending_finalizers(&self, obj: &Value) -> bool {
        crate::registry::meta::get(obj, "finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty())
    }

    /// Marks `obj` as being deleted beyond `deletionTimestamp` (namespaces: phase Terminating).
    fn prepare_for_delete(&self, _obj: &mut Value) {}

    /// Whether a delete answers with the object rather than a Success `Status` (`ReturnDeletedObject`).
    fn return_deleted_object(&self) -> bool {
        false
    }

    /// Why `name` may never be deleted, if so (the immortal namespaces).
    fn undeletable(&self, _name: &str) -> Option<&'static str> {
        None
    }
}
