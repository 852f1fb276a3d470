//! Namespaces (`KK/pkg/registry/core/namespace/strategy.go`): cluster-scoped, names are DNS labels, every
//! new namespace is Active with the `kubernetes` finalizer, and the main endpoint may change neither
//! `spec.finalizers` nor `status`: `/status` changes only status and `/finalize` only
//! `spec.finalizers`, and an update that leaves a deleted namespace with no finalizer of either kind
//! deletes it (N4).

use serde_json::{json, Value};

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `namespaces`.
pub fn resource() -> Resource {
    Resource::core("Namespace", "namespaces")
}

/// The finalizer the namespace controller removes once the namespace is empty.
pub(crate) const KUBERNETES_FINALIZER: &str = "kubernetes";
/// The label every namespace carries with its own name, so that selectors can pick namespaces by name.
pub(crate) const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The Namespace strategy.
pub struct Namespaces;

/// `status.phase` of a namespace ("" if unset).
pub(crate) fn phase(ns: &Value) -> &str {
    ns.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str).unwrap_or("")
}

impl Strategy for Namespaces {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        matches!(sub, Subresource::Status | Subresource::Finalize)
    }

    fn prepare_for_subresource_update(&self, sub: Subresource, new: &mut Value, old: &Value) {
        // namespaceStatusStrategy keeps the spec; namespaceFinalizeStrategy keeps the status.
        let kept = match sub {
            Subresource::Status => "spec",
            Subresource::Finalize
            | Subresource::Scale
            | Subresource::Binding
            | Subresource::Token
            | Subresource::Eviction
            | Subresource::Approval => "status",
        };
        match old.get(kept) {
            Some(v) => new[kept] = v.clone(),
            None => {
                new.as_object_mut().map(|o| o.remove(kept));
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Active"});
        let spec = obj.as_object_mut().expect("a namespace is an object").entry("spec").or_insert_with(|| json!({}));
        if !spec.is_object() {
            *spec = json!({});
        }
        let finalizers = spec.as_object_mut().expect("made an object above").entry("finalizers").or_insert(json!([]));
        if !finalizers.is_array() {
            *finalizers = json!([]);
        }
        let list = finalizers.as_array_mut().expect("made an array above");
        if !list.iter().any(|f| f == KUBERNETES_FINALIZER) {
            list.push(json!(KUBERNETES_FINALIZER));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // spec.finalizers change only through /finalize and status only through /status.
        let old_finalizers = old.get("spec").and_then(|s| s.get("finalizers")).cloned();
        match (new.get_mut("spec").and_then(Value::as_object_mut), old_finalizers) {
            (Some(spec), Some(f)) => {
                spec.insert("finalizers".into(), f);
            }
            (Some(spec), None) => {
                spec.remove("finalizers");
            }
            (None, Some(f)) => new["spec"] = json!({"finalizers": f}),
            (None, None) => {}
        }
        match old.get("status") {
            Some(status) => new["status"] = status.clone(),
            None => {
                new.as_object_mut().map(|o| o.remove("status"));
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        meta::validate_object_meta(obj, false, names::name_is_dns_label)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, false, names::name_is_dns_label)
    }

    fn canonicalize(&self, obj: &mut Value) {
        // A generated name is known only now, so the name label is set here rather than by defaulting.
        let name = meta::get_str(obj, "name").to_string();
        let labels = meta::meta_mut(obj).entry("labels").or_insert_with(|| json!({}));
        if !labels.is_object() {
            *labels = json!({});
        }
        labels.as_object_mut().expect("made an object above").insert(NAME_LABEL.into(), json!(name));
    }

    fn selectable_field(&self, obj: &Value, key: &str) -> Option<String> {
        match key {
            "status.phase" => Some(phase(obj).to_string()),
            "name" => Some(meta::get_str(obj, "name").to_string()),
            _ => None,
        }
    }

    fn unsupported_field_message(&self, key: &str) -> String {
        format!("field label not supported: {key}")
    }

    fn supports_field(&self, key: &str) -> bool {
        matches!(key, "status.phase" | "name")
    }
}

/// The namespaces that may never be deleted (the NamespaceLifecycle admission plugin's immortal set).
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

impl crate::registry::strategy::DeleteStrategy for Namespaces {
    fn has_pending_finalizers(&self, obj: &Value) -> bool {
        let spec = obj.get("spec").and_then(|s| s.get("finalizers")).and_then(Value::as_array);
        let metadata = meta::get(obj, "finalizers").and_then(Value::as_array);
        spec.is_some_and(|f| !f.is_empty()) || metadata.is_some_and(|f| !f.is_empty())
    }

    fn prepare_for_delete(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Terminating"});
    }

    /// `ShouldDeleteNamespaceDuringUpdate`: the generic rule, and `spec.finalizers` empty too.
    fn should_delete_during_update(&self, new: &Value, old: &Value) -> bool {
        let spec = new.get("spec").and_then(|s| s.get("finalizers")).and_then(Value::as_array);
        let generic = crate::registry::strategy::generic_should_delete_during_update(new, old);
        spec.is_none_or(|f| f.is_empty()) && generic
    }

    fn return_deleted_object(&self) -> bool {
        true
    }

    fn undeletable(&self, name: &str) -> Option<&'static str> {
        IMMORTAL.contains(&name).then_some("this namespace may not be deleted")
    }
}
