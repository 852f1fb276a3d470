//! [`Strategy`]: what differs per resource (kube's `RESTCreateStrategy` and `RESTUpdateStrategy`), so that
//! the generic [`crate::registry::Store`] works for any resource, custom ones included.

use serde_json::Value;

use crate::registry::field_error::FieldError;

/// A subresource that replaces part of an object through its own update (`PUT .../status`,
/// `PUT /api/v1/namespaces/<name>/finalize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// `/status`: only `status` changes.
    Status,
    /// `/finalize` of namespaces: only `spec.finalizers` changes.
    Finalize,
    /// `/scale` of workloads: only `spec.replicas` changes, through the main strategy (the generation
    /// follows), read and written as an `autoscaling/v1` `Scale`.
    Scale,
    /// `/binding` of pods: a scheduler's `Binding` sets `spec.nodeName` once (`POST`).
    Binding,
    /// `/token` of service accounts: a `TokenRequest` (`POST`) answers a signed token; nothing is written.
    Token,
    /// `/eviction` of pods: an `Eviction` (`POST`) deletes the pod if its disruption budgets allow it.
    Eviction,
    /// `/approval` of certificate signing requests: only `status.conditions` change.
    Approval,
}

impl Subresource {
    /// The subresource's name in a path and in a managed fields entry (`status`, `scale`).
    pub fn path_name(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Finalize => "finalize",
            Subresource::Scale => "scale",
            Subresource::Binding => "binding",
            Subresource::Approval => "approval",
            Subresource::Token => "token",
            Subresource::Eviction => "eviction",
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

    /// Whether objects expire: the store writes them under an etcd lease of the server's TTL for the
    /// resource (kube's `TTLFunc`; events and `--event-ttl`).
    fn expires(&self) -> bool {
        false
    }

    /// What decoding a request's object does before anything else sees it, field tracking included:
    /// custom resources are pruned of unknown fields and defaulted there (upstream's CRD codec).
    fn decode(&self, _obj: &mut Value) {}

    /// How the kind's fields are owned and merged by server-side apply, when the strategy knows (custom
    /// resources: their CRD's schema); `None` reads it from the built-in types' schemas.
    fn field_shape(&self) -> Option<crate::registry::managed_fields::shape::Shape> {
        None
    }

    /// The fields of `obj` its kind does not know, for `fieldValidation`, when the strategy knows them
    /// (custom resources: what their schema prunes); `None` leaves it to the built-in types' schemas.
    fn unknown_fields(&self, _obj: &Value) -> Option<Vec<String>> {
        None
    }

    /// Clears or sets what clients may not set on create (status, generation), before validation.
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// Resets what the main endpoint may not change (status) and bumps the generation where kube does.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// Whether the resource serves `sub`; an update of a subresource it lacks is a 404.
    fn supports(&self, _sub: Subresource) -> bool {
        false
    }

    /// `/scale`: the object as an `autoscaling/v1` `Scale` (workloads read `spec.replicas`, `status.replicas`
    /// and `spec.selector`; custom resources the paths their CRD names); `None` for kinds without `/scale`.
    fn to_scale(&self, _obj: &Value) -> Option<Value> {
        None
    }

    /// `/scale`: the object with the replicas `scale` asks for (and its resourceVersion, so that a stale Scale
    /// conflicts as a stale object would); `None` for kinds without `/scale`.
    fn apply_scale(&self, _obj: &Value, _scale: &Value) -> Option<Value> {
        None
    }

    /// Resets what an update of `sub` may not change. The default is kube's custom-resource status
    /// strategy: everything comes from the stored object except the new `status`.
    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        let status = new.get("status").cloned();
        *new = old.clone();
        match status {
            Some(status) => new["status"] = status,
            None => {
                new.as_object_mut().map(|o| o.remove("status"));
            }
        }
    }

    /// Validates a new object, metadata included (`Validate`).
    fn validate(&self, obj: &Value) -> Vec<FieldError>;

    /// Validates an update (`ValidateUpdate`).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError>;

    /// Validates an update of the subresource `sub`; the main endpoint's rules by default, as most
    /// status strategies call them.
    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

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

    /// Why a field selector key is refused. Kinds with a field-label conversion of their own (pods, nodes,
    /// events, namespaces, secrets, services in kubernetes `pkg/apis/core/v1/conversion.go`, and custom
    /// resources) say `field label not supported: KEY`; the rest get apimachinery's default conversion's words.
    fn unsupported_field_message(&self, key: &str) -> String {
        format!("{key:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")
    }
}

/// Per-resource behaviour of delete (kube's `RESTDeleteStrategy` and the store options around it).
pub trait DeleteStrategy: Send + Sync {
    /// Whether deleting `obj` must wait for finalizers: it then only gets a `deletionTimestamp`.
    fn has_pending_finalizers(&self, obj: &Value) -> bool {
        crate::registry::meta::get(obj, "finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty())
    }

    /// `CheckGracefulDelete`: for resources deleted gracefully (pods), the grace period in seconds that a
    /// delete of `obj` gets, given the `gracePeriodSeconds` the client asked for (already at least 0);
    /// `None` for resources deleted at once.
    fn graceful_period(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// `ShouldDeleteDuringUpdate`: whether the update of `old` into `new` deletes the object instead,
    /// because it removes the last finalizer of an object whose deletion waits only for them (a
    /// `deletionTimestamp` with no grace period left).
    fn should_delete_during_update(&self, new: &Value, old: &Value) -> bool {
        generic_should_delete_during_update(new, old)
    }

    /// Marks `obj` as being deleted beyond `deletionTimestamp` (namespaces: phase Terminating).
    fn prepare_for_delete(&self, _obj: &mut Value) {}

    /// Whether a delete answers with the object rather than a Success `Status` (`ReturnDeletedObject`).
    fn return_deleted_object(&self) -> bool {
        false
    }

    /// `DefaultGarbageCollectionPolicy`: what a delete that names no propagation policy does to dependents.
    fn default_gc_policy(&self) -> GcPolicy {
        GcPolicy::DeleteDependents
    }

    /// Why `name` may never be deleted, if so (the immortal namespaces).
    fn undeletable(&self, _name: &str) -> Option<&'static str> {
        None
    }
}

/// `rest.GarbageCollectionPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcPolicy {
    /// Dependents are deleted (in the background unless the delete asks for the foreground).
    DeleteDependents,
    /// Dependents are orphaned unless the delete says otherwise.
    OrphanDependents,
    /// The resource takes no part in garbage collection: deletes add no finalizer, whatever they ask.
    Unsupported,
}

/// The finalizer that makes a delete wait while the garbage collector orphans the dependents.
pub(crate) const ORPHAN_FINALIZER: &str = "orphan";
/// The finalizer that makes a delete wait while the garbage collector deletes the dependents first.
pub(crate) const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// The generic `ShouldDeleteDuringUpdate`: no finalizers left in `new`, and `old` was deleted with no grace
/// period left.
pub(crate) fn generic_should_delete_during_update(new: &Value, old: &Value) -> bool {
    use crate::registry::meta;
    let finalizers = meta::get(new, "finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
    let grace = meta::get(old, "deletionGracePeriodSeconds").and_then(Value::as_i64);
    !finalizers && !meta::get_str(old, "deletionTimestamp").is_empty() && grace.is_none_or(|g| g == 0)
}
