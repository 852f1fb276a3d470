//! Pods (`KK/pkg/registry/core/pod/strategy.go`), in part: namespaced, names are DNS subdomains, a new
//! pod is Pending with its QoS class, v1's spec defaults and what the default admission plugins add;
//! status belongs to `/status` (whose strategy keeps spec and ownerReferences); the spec must name at
//! least one container with a name and an image, and only images, the deadline and tolerations may
//! change; deletion is graceful and answers with the pod. kube 1.32 sets no
//! `metadata.generation` on pods (1.33 does).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::pod_defaults;
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `pods`.
pub fn resource() -> Resource {
    Resource::core("Pod", "pods")
}

/// The Pod strategy.
pub struct Pods;

/// The field selector keys pods support besides the metadata ones (`pod.ToSelectableFields`, in part).
const POD_FIELDS: &[(&str, &str, &str)] = &[
    ("spec.nodeName", "spec", "nodeName"),
    ("spec.restartPolicy", "spec", "restartPolicy"),
    ("spec.schedulerName", "spec", "schedulerName"),
    ("spec.serviceAccountName", "spec", "serviceAccountName"),
    ("status.phase", "status", "phase"),
    ("status.podIP", "status", "podIP"),
];

fn containers(pod: &Value) -> &[Value] {
    pod.get("spec").and_then(|s| s.get("containers")).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// `qos.GetPodQOS`, simplified to its three outcomes: no requests or limits anywhere is BestEffort; cpu and
/// memory limits on every container, with requests (if any) equal to them, is Guaranteed; else Burstable.
fn qos_class(pod: &Value) -> &'static str {
    let resources = |c: &Value, what: &str| c.get("resources").and_then(|r| r.get(what)).cloned();
    let any = containers(pod).iter().any(|c| {
        ["requests", "limits"]
            .iter()
            .any(|w| resources(c, w).and_then(|m| m.as_object().map(|o| !o.is_empty())) == Some(true))
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers(pod).iter().all(|c| {
        let limits = resources(c, "limits").unwrap_or(Value::Null);
        let requests = resources(c, "requests").unwrap_or(Value::Null);
        ["cpu", "memory"]
            .iter()
            .all(|r| limits.get(r).is_some() && requests.get(r).is_none_or(|q| Some(q) == limits.get(r)))
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn validate_spec(pod: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if containers(pod).is_empty() {
        errs.push(FieldError::required("spec.containers", ""));
    }
    let mut seen = BTreeSet::new();
    for (i, c) in containers(pod).iter().enumerate() {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        let path = format!("spec.containers[{i}]");
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{path}.name"), ""));
        } else {
            for msg in names::dns1123_label(name) {
                errs.push(FieldError::invalid(&format!("{path}.name"), name, &msg));
            }
            if !seen.insert(name) {
                errs.push(FieldError {
                    kind: FieldErrorType::Duplicate,
                    field: format!("{path}.name"),
                    value: BadValue::Str(name.to_string()),
                    detail: String::new(),
                });
            }
        }
        if c.get("image").and_then(Value::as_str).unwrap_or("").trim().is_empty() {
            errs.push(FieldError::required(&format!("{path}.image"), ""));
        }
    }
    errs
}

impl Strategy for Pods {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending", "qosClass": qos_class(obj)});
        // v1's pod spec defaults (graceful deletion reads the termination grace period among them); what
        // the admission plugins add (priority, tolerations, the service account's token) is theirs.
        if let Some(spec) = obj.get_mut("spec") {
            pod_defaults::default_pod_spec(spec);
            pod_defaults::default_pod(spec);
        }
    }

    fn supports(&self, sub: Subresource) -> bool {
        matches!(sub, Subresource::Status | Subresource::Binding)
    }

    fn prepare_for_subresource_update(&self, sub: Subresource, new: &mut Value, old: &Value) {
        if sub == Subresource::Binding {
            // The binding made the new pod from the stored one (`pod_binding::bind`); nothing to reset.
            return;
        }
        // podStatusStrategy: the spec is the kubelet's to read, not to write, and old kubelets corrupted
        // ownerReferences, so both come from the stored pod.
        new["spec"] = old.get("spec").cloned().unwrap_or(json!({}));
        meta::copy(new, old, "ownerReferences");
        // The QoS class is set once, on create; old kubelets dropped it from the status they sent back.
        let qos = old.get("status").and_then(|s| s.get("qosClass")).cloned();
        if let (Some(status), Some(qos)) = (new.get_mut("status").and_then(Value::as_object_mut), qos) {
            status.entry("qosClass").or_insert(qos);
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        new["status"] = old.get("status").cloned().unwrap_or(json!({}));
        if let Some(spec) = new.get_mut("spec") {
            pod_defaults::default_pod_spec(spec);
            pod_defaults::default_pod(spec);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        errs.extend(validate_spec_update(new, old));
        errs
    }

    fn validate_subresource_update(&self, sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        match sub {
            // A binding is written straight to storage upstream, past the pod update rules it breaks on
            // purpose (`spec.nodeName`).
            Subresource::Binding => Vec::new(),
            _ => self.validate_update(new, old),
        }
    }

    fn selectable_field(&self, obj: &Value, key: &str) -> Option<String> {
        let (_, section, field) = POD_FIELDS.iter().find(|(k, _, _)| *k == key)?;
        Some(obj.get(section).and_then(|s| s.get(field)).and_then(Value::as_str).unwrap_or("").to_string())
    }

    fn unsupported_field_message(&self, key: &str) -> String {
        format!("field label not supported: {key}")
    }

    fn supports_field(&self, key: &str) -> bool {
        POD_FIELDS.iter().any(|(k, _, _)| *k == key)
    }
}

/// What a pod update may change (`ValidatePodUpdate`, kube 1.32), as its error lists it.
const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,\
`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be \
set to 1 if it was previously negative)";

/// `ValidatePodUpdate`'s rule: a pod's spec is fixed once created, but for its containers' images, its
/// deadline, added tolerations, a negative grace period raised to 1, and scheduling gates removed. The
/// spec with those taken from the old pod must equal the old spec. Upstream appends a diff of the two
/// specs (`cmp.Diff`) to the message; kubesim does not.
fn validate_spec_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let (Some(new_spec), Some(old_spec)) = (new.get("spec"), old.get("spec")) else { return Vec::new() };
    let mut munged = new_spec.clone();
    for list in ["containers", "initContainers"] {
        let old_list = old_spec.get(list).and_then(Value::as_array);
        if let (Some(Value::Array(items)), Some(old_items)) = (munged.get_mut(list), old_list) {
            for (item, old_item) in items.iter_mut().zip(old_items) {
                if let (Some(item), Some(image)) = (item.as_object_mut(), old_item.get("image")) {
                    item.insert("image".into(), image.clone());
                }
            }
        }
    }
    for field in ["activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates"] {
        if let Some(map) = munged.as_object_mut() {
            match old_spec.get(field) {
                Some(v) => map.insert(field.into(), v.clone()),
                None => map.remove(field),
            };
        }
    }
    if &munged == old_spec {
        return Vec::new();
    }
    vec![FieldError::forbidden("spec", &format!("pod updates may not change fields other than {UPDATABLE}"))]
}

impl crate::registry::strategy::DeleteStrategy for Pods {
    /// The pod store answers a delete with the pod (`ReturnDeletedObject`), graceful or not.
    fn return_deleted_object(&self) -> bool {
        true
    }

    /// `CheckGracefulDelete`: the requested grace, else the pod's own; none for a pod that never ran on a
    /// node or has finished, since there is nothing to stop.
    fn graceful_period(&self, pod: &Value, requested: Option<i64>) -> Option<i64> {
        let spec = pod.get("spec");
        let own = spec.and_then(|s| s.get("terminationGracePeriodSeconds")).and_then(Value::as_i64);
        let mut period = requested.or(own).unwrap_or(0);
        if spec.and_then(|s| s.get("nodeName")).and_then(Value::as_str).unwrap_or("").is_empty() {
            period = 0;
        }
        let phase = pod.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str).unwrap_or("");
        if matches!(phase, "Failed" | "Succeeded") {
            period = 0;
        }
        Some(if period < 0 { 1 } else { period })
    }
}
