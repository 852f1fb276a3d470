//! RuntimeClasses, `node.k8s.io/v1` (`KK/pkg/registry/node/runtimeclass`, `KK/pkg/apis/node/validation`):
//! cluster-scoped, names are DNS subdomains. `handler` is a DNS label (so an empty one is refused) and
//! never changes; `scheduling.nodeSelector` is a valid label map. The overhead's quantities and the
//! scheduling tolerations are stored as given, unchecked here.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::networkpolicies::validate_label_map;
use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        ..ResourceInfo::new(resource(), "runtimeclass", Arc::new(RuntimeClasses), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "node.k8s.io".into(),
        version: "v1".into(),
        kind: "RuntimeClass".into(),
        plural: "runtimeclasses".into(),
        etcd_prefix: "runtimeclasses".into(),
    }
}

/// The RuntimeClass strategy.
struct RuntimeClasses;

impl Strategy for RuntimeClasses {
    fn namespace_scoped(&self) -> bool {
        false
    }

    /// `ValidateRuntimeClass`.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
        let handler = obj.get("handler").and_then(Value::as_str).unwrap_or("");
        for msg in names::name_is_dns_label(handler, false) {
            errs.push(FieldError::invalid("handler", handler, &msg));
        }
        if let Some(scheduling) = obj.get("scheduling").filter(|s| s.is_object()) {
            errs.extend(validate_label_map(scheduling.get("nodeSelector"), "scheduling.nodeSelector"));
        }
        errs
    }

    /// `ValidateRuntimeClassUpdate`: the metadata, and the handler unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        let handler = |obj: &Value| Some(obj.get("handler").cloned().unwrap_or(json!("")));
        errs.extend(common::immutable(handler(new).as_ref(), handler(old).as_ref(), "handler"));
        errs
    }
}

impl DeleteStrategy for RuntimeClasses {}

/// `printRuntimeClass`: the handler (its column has no description upstream).
fn printer() -> Printer {
    Printer {
        columns: vec![name_column(), column("Handler", "string", "", 0), age_column()],
        cells: |obj, now, _| {
            let handler = obj.get("handler").and_then(Value::as_str).unwrap_or("");
            vec![name(obj), Value::from(handler), age(obj, now)]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn rc(handler: &str) -> Value {
        json!({"metadata": {"name": "gvisor"}, "handler": handler})
    }

    #[test]
    fn classes_are_validated_as_upstream_validates_them() {
        let s = RuntimeClasses;
        let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
        let cases: Vec<(Value, Vec<String>)> = vec![
            (rc("runsc"), vec![]),
            (rc(""), vec![format!("handler: Invalid value: \"\": {label}")]),
            (rc("run.sc"), vec![format!("handler: Invalid value: \"run.sc\": {label}")]),
            (
                json!({"metadata": {"name": "g"}, "handler": "runsc", "scheduling": {"nodeSelector": {"sandbox": "-yes"}}}),
                vec!["scheduling.nodeSelector: Invalid value: \"-yes\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into()],
            ),
            (
                json!({"metadata": {"name": "g", "namespace": "ns"}, "handler": "runsc"}),
                vec!["metadata.namespace: Forbidden: not allowed on this type".into()],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn the_handler_never_changes() {
        let s = RuntimeClasses;
        let old = rc("runsc");
        let new = rc("kata");
        assert_eq!(messages(s.validate_update(&new, &old)), ["handler: Invalid value: \"kata\": field is immutable"]);
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        assert_eq!(messages(s.validate_update(&relabelled, &old)), Vec::<String>::new());
    }

    #[test]
    fn the_printer_shows_the_handler() {
        assert_eq!((printer().cells)(&rc("runsc"), 0, &[]), vec![json!("gvisor"), json!("runsc"), json!("<unknown>")]);
    }
}
