//! ControllerRevisions, `apps/v1` (`KK/pkg/registry/apps/controllerrevision`, `KK/pkg/apis/apps/validation`
//! `ValidateControllerRevision`): the snapshots DaemonSets and StatefulSets keep of their templates. A name
//! is a DNS subdomain, `data` is required and never changes, `revision` is not negative. No controller here
//! writes them yet; clients may.

use std::sync::Arc;

use serde_json::Value;

use crate::apis::printers::{age, age_column, column, doc_column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::workloads::validate_non_negative;
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo::new(resource(), "controllerrevision", Arc::new(ControllerRevisions), printer())
}

fn resource() -> Resource {
    Resource {
        group: "apps".into(),
        version: "v1".into(),
        kind: "ControllerRevision".into(),
        plural: "controllerrevisions".into(),
        etcd_prefix: "controllerrevisions".into(),
    }
}

struct ControllerRevisions;

impl Strategy for ControllerRevisions {
    fn namespace_scoped(&self) -> bool {
        true
    }

    /// `ValidateControllerRevisionCreate`.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_revision(obj));
        errs
    }

    /// `ValidateControllerRevisionUpdate`: the metadata rules, the object's own, and `data` unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_revision(new));
        if new.get("data") != old.get("data") {
            errs.push(FieldError {
                kind: FieldErrorType::Invalid,
                field: "data".into(),
                value: BadValue::GoSyntax(go_raw_extension(new.get("data"))),
                detail: "field is immutable".into(),
            });
        }
        errs
    }
}

impl DeleteStrategy for ControllerRevisions {}

fn validate_revision(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if obj.get("data").is_none_or(Value::is_null) {
        errs.push(FieldError::required("data", "data is mandatory"));
    }
    errs.extend(validate_non_negative(obj, "/revision", "revision"));
    errs
}

/// Go's `%#v` of the `runtime.RawExtension` a field error shows for `data`: its raw JSON bytes (here the
/// compact form of the stored value, which is what a client sending compact JSON sent).
fn go_raw_extension(data: Option<&Value>) -> String {
    let raw = match data.filter(|d| !d.is_null()) {
        Some(d) => {
            let bytes: Vec<String> = d.to_string().bytes().map(|b| format!("{b:#x}")).collect();
            format!("[]uint8{{{}}}", bytes.join(", "))
        }
        None => "[]uint8(nil)".into(),
    };
    format!("runtime.RawExtension{{Raw:{raw}, Object:runtime.Object(nil)}}")
}

/// `printControllerRevision`: the controller as `kind.group/name`, and the revision.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Controller", "string", "Controller of the object", 0),
            doc_column("Revision", "string", "io.k8s.api.apps.v1.ControllerRevision", "revision", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            vec![
                name(obj),
                Value::from(controller(obj)),
                obj.get("revision").cloned().unwrap_or(Value::from(0)),
                age(obj, now),
            ]
        },
    }
}

/// The owner reference marked `controller`, as `formatResourceName` writes it, or `<none>`.
fn controller(obj: &Value) -> String {
    let owners = obj.pointer("/metadata/ownerReferences").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let Some(owner) = owners.iter().find(|o| o.get("controller") == Some(&Value::Bool(true))) else {
        return "<none>".into();
    };
    let field = |f: &str| owner.get(f).and_then(Value::as_str).unwrap_or("");
    let group = field("apiVersion").rsplit_once('/').map_or("", |(g, _)| g);
    let kind = if group.is_empty() { field("kind").to_string() } else { format!("{}.{group}", field("kind")) };
    format!("{}/{}", kind.to_lowercase(), field("name"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    #[test]
    fn revisions_need_data_and_a_non_negative_number() {
        let s = ControllerRevisions;
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!({"metadata": {"name": "web-1", "namespace": "ns"}, "data": {"a": 1}, "revision": 1}), vec![]),
            (
                json!({"metadata": {"name": "web-1", "namespace": "ns"}, "revision": -1}),
                vec![
                    "data: Required value: data is mandatory",
                    "revision: Invalid value: -1: must be greater than or equal to 0",
                ],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn data_never_changes() {
        let s = ControllerRevisions;
        let old =
            json!({"metadata": {"name": "r", "namespace": "ns", "resourceVersion": "1"}, "data": {}, "revision": 1});
        let mut new = old.clone();
        new["data"] = json!({"a": 1});
        assert_eq!(
            messages(s.validate_update(&new, &old)),
            ["data: Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31, 0x7d}, Object:runtime.Object(nil)}: field is immutable"]
        );
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        assert!(s.validate_update(&relabelled, &old).is_empty());
    }

    #[test]
    fn the_printer_names_the_controller() {
        let owned = json!({"metadata": {"name": "web-5d4f", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "web", "controller": true}
        ]}, "revision": 3});
        assert_eq!(
            (printer().cells)(&owned, 0, &[]),
            vec![json!("web-5d4f"), json!("daemonset.apps/web"), json!(3), json!("<unknown>")]
        );
        assert_eq!(controller(&json!({"metadata": {}})), "<none>");
    }
}
