//! `pods/binding` (`KK/pkg/registry/core/pod/storage/storage.go`, `BindingREST`): how a scheduler assigns
//! a pod to a node. A `Binding` names the pod and its target node; the pod gets `spec.nodeName` and a
//! `PodScheduled` condition, once: a pod already assigned, or being deleted, refuses a second binding with
//! a 409 on `pods/binding`. The binding's annotations are copied onto the pod.

use serde_json::{json, Value};

use crate::registry::error::RegistryError;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::storage::GroupResource;

/// The resource a refused binding names (`api.Resource("pods/binding")`).
fn binding_resource() -> GroupResource {
    GroupResource::new("", "pods/binding")
}

/// `ValidatePodBinding` and the name check of `BindingREST.Create`.
pub(crate) fn validate(binding: &Value, url_name: &str) -> Result<(), RegistryError> {
    if meta::get_str(binding, "name") != url_name {
        return Err(RegistryError::BadRequest("name in URL does not match name in Binding object".into()));
    }
    let mut errors = Vec::new();
    let kind = binding.pointer("/target/kind").and_then(Value::as_str).unwrap_or("");
    if !kind.is_empty() && kind != "Node" {
        errors.push(FieldError::not_supported("target.kind", kind, &["Node", "<empty>"]));
    }
    if binding.pointer("/target/name").and_then(Value::as_str).unwrap_or("").is_empty() {
        errors.push(FieldError::required("target.name", ""));
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(RegistryError::Invalid { group: String::new(), kind: "Binding".into(), name: url_name.into(), errors })
}

/// `setPodNodeAndMetadata`: `pod` bound to the binding's node at `now` (RFC 3339).
pub(crate) fn bind(pod: &Value, binding: &Value, now: &str) -> Result<Value, RegistryError> {
    let name = meta::get_str(pod, "name").to_string();
    let conflict = |why: String| RegistryError::Conflict { resource: binding_resource(), name: name.clone(), why };
    if !meta::get_str(pod, "deletionTimestamp").is_empty() {
        return Err(conflict(format!("pod {name} is being deleted, cannot be assigned to a host")));
    }
    let assigned = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("");
    if !assigned.is_empty() {
        return Err(conflict(format!("pod {name} is already assigned to node {assigned:?}")));
    }
    let node = binding.pointer("/target/name").and_then(Value::as_str).unwrap_or("");
    let mut bound = pod.clone();
    bound["spec"]["nodeName"] = Value::from(node);
    if let Some(Value::Object(annotations)) = meta::get(binding, "annotations") {
        let mut merged = meta::get(&bound, "annotations").and_then(Value::as_object).cloned().unwrap_or_default();
        merged.extend(annotations.clone());
        meta::set(&mut bound, "annotations", Some(Value::Object(merged)));
    }
    if !bound.get("status").is_some_and(Value::is_object) {
        bound["status"] = json!({});
    }
    let conditions =
        bound["status"].as_object_mut().expect("just made an object").entry("conditions").or_insert(json!([]));
    if let Some(list) = conditions.as_array_mut() {
        list.retain(|c| c.get("type").and_then(Value::as_str) != Some("PodScheduled"));
        list.push(json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now}));
    }
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_is_bound_once() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": []}, "status": {"phase": "Pending"}});
        let binding =
            json!({"metadata": {"name": "p", "annotations": {"a": "b"}}, "target": {"kind": "Node", "name": "n1"}});
        validate(&binding, "p").unwrap();
        let bound = bind(&pod, &binding, "2023-11-14T22:13:20Z").unwrap();
        assert_eq!(bound["spec"]["nodeName"], "n1");
        assert_eq!(bound["metadata"]["annotations"]["a"], "b");
        assert_eq!(bound["status"]["conditions"][0]["type"], "PodScheduled");
        let again = bind(&bound, &binding, "2023-11-14T22:13:21Z").unwrap_err();
        assert_eq!(
            again.to_status().message.as_deref(),
            Some("Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\"")
        );
        let nameless = json!({"metadata": {"name": "p"}, "target": {}});
        assert_eq!(
            validate(&nameless, "p").unwrap_err().to_status().message.as_deref(),
            Some("Binding \"p\" is invalid: target.name: Required value")
        );
    }
}
