//! StorageClasses, `storage.k8s.io/v1` (`KK/pkg/registry/storage/storageclass`,
//! `KK/pkg/apis/storage/validation`: `ValidateStorageClass`, `ValidateStorageClassUpdate`;
//! `KK/pkg/apis/storage/v1/defaults.go`: `SetDefaults_StorageClass`): cluster-scoped, names are DNS
//! subdomains; the reclaim policy defaults to `Delete` and the binding mode to `Immediate`. The
//! provisioner is required and a qualified name (checked in lower case), the parameters are at most 512
//! with non-empty keys and 256 KiB in all, the reclaim policy is `Delete` or `Retain` and the binding mode
//! `Immediate` or `WaitForFirstConsumer`. Parameters, provisioner, reclaim policy and binding mode never
//! change. A delete answers the deleted object.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::printers::{age, age_column, doc_column, meta_str, name_column};
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
        short_names: &["sc"],
        namespaced: false,
        ..ResourceInfo::new(resource(), "storageclass", Arc::new(StorageClasses), printer())
    }
}

fn resource() -> Resource {
    Resource::group("storage.k8s.io", "v1", "StorageClass", "storageclasses")
}

/// The StorageClass strategy.
struct StorageClasses;

const RECLAIM_POLICIES: &[&str] = &["Delete", "Retain"];
const BINDING_MODES: &[&str] = &["Immediate", "WaitForFirstConsumer"];
/// `maxProvisionerParameterLen` and `maxProvisionerParameterSize`.
const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;

/// The annotations that make a class the default (`IsDefaultAnnotation`).
const DEFAULT_ANNOTATIONS: &[&str] =
    &["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"];

/// `SetDefaults_StorageClass`.
fn default(obj: &mut Value) {
    if let Some(map) = obj.as_object_mut() {
        for (field, value) in [("reclaimPolicy", "Delete"), ("volumeBindingMode", "Immediate")] {
            if map.get(field).is_none_or(Value::is_null) {
                map.insert(field.into(), Value::from(value));
            }
        }
    }
}

fn text<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or("")
}

/// `validateParameters` (empty parameters allowed).
fn validate_parameters(obj: &Value) -> Vec<FieldError> {
    let Some(params) = obj.get("parameters").and_then(Value::as_object) else { return Vec::new() };
    if params.len() > MAX_PARAMETERS {
        return vec![FieldError::too_long("parameters", MAX_PARAMETERS)];
    }
    let mut errs = Vec::new();
    let mut size = 0;
    for (k, v) in params {
        if k.is_empty() {
            errs.push(FieldError::invalid("parameters", k, "field can not be empty."));
        }
        size += k.len() + v.as_str().unwrap_or("").len();
    }
    if size > MAX_PARAMETERS_SIZE {
        errs.push(FieldError::too_long("parameters", MAX_PARAMETERS_SIZE));
    }
    errs
}

/// `ValidateStorageClass`.
fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    let provisioner = text(obj, "provisioner");
    if provisioner.is_empty() {
        errs.push(FieldError::required("provisioner", ""));
    } else {
        let lower = provisioner.to_lowercase();
        for msg in names::qualified_name(&lower) {
            errs.push(FieldError::invalid("provisioner", &lower, &msg));
        }
    }
    errs.extend(validate_parameters(obj));
    let policy = text(obj, "reclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported("reclaimPolicy", policy, RECLAIM_POLICIES));
    }
    match obj.get("volumeBindingMode").filter(|m| !m.is_null()) {
        None => errs.push(FieldError::required("volumeBindingMode", "")),
        Some(mode) => {
            let mode = mode.as_str().unwrap_or("");
            if !BINDING_MODES.contains(&mode) {
                errs.push(FieldError::not_supported("volumeBindingMode", mode, BINDING_MODES));
            }
        }
    }
    errs
}

impl Strategy for StorageClasses {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        default(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    /// `ValidateStorageClass` of the new class, then `ValidateStorageClassUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(new);
        errs.extend(meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain));
        let empty = json!({});
        let params = |o: &'_ Value| o.get("parameters").filter(|p| !p.is_null()).cloned().unwrap_or(empty.clone());
        let non_empty = |p: Value| p.as_object().is_some_and(|m| !m.is_empty()).then_some(p);
        if non_empty(params(new)) != non_empty(params(old)) {
            errs.push(FieldError::forbidden("parameters", "updates to parameters are forbidden."));
        }
        if text(new, "provisioner") != text(old, "provisioner") {
            errs.push(FieldError::forbidden("provisioner", "updates to provisioner are forbidden."));
        }
        if text(new, "reclaimPolicy") != text(old, "reclaimPolicy") {
            errs.push(FieldError::forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."));
        }
        errs.extend(common::immutable(new.get("volumeBindingMode"), old.get("volumeBindingMode"), "volumeBindingMode"));
        errs
    }
}

/// The storageclasses store answers a delete with the deleted object (`ReturnDeletedObject`).
impl DeleteStrategy for StorageClasses {
    fn return_deleted_object(&self) -> bool {
        true
    }
}

/// `printStorageClass`: the name (` (default)` for the default class), provisioner, reclaim policy,
/// binding mode, whether volumes may expand.
fn printer() -> Printer {
    const DEFINITION: &str = "io.k8s.api.storage.v1.StorageClass";
    Printer {
        columns: vec![
            name_column(),
            doc_column("Provisioner", "string", DEFINITION, "provisioner", 0),
            doc_column("ReclaimPolicy", "string", DEFINITION, "reclaimPolicy", 0),
            doc_column("VolumeBindingMode", "string", DEFINITION, "volumeBindingMode", 0),
            doc_column("AllowVolumeExpansion", "string", DEFINITION, "allowVolumeExpansion", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let is_default = DEFAULT_ANNOTATIONS
                .iter()
                .any(|a| meta::get(obj, "annotations").and_then(|m| m.get(*a)).and_then(Value::as_str) == Some("true"));
            let mut name = meta_str(obj, "name").to_string();
            if is_default {
                name.push_str(" (default)");
            }
            let or = |field: &str, absent: &str| match obj.get(field).and_then(Value::as_str) {
                Some(v) => v.to_string(),
                None => absent.to_string(),
            };
            vec![
                Value::from(name),
                Value::from(text(obj, "provisioner")),
                Value::from(or("reclaimPolicy", "Delete")),
                Value::from(or("volumeBindingMode", "Immediate")),
                Value::from(obj.get("allowVolumeExpansion").and_then(Value::as_bool).unwrap_or(false)),
                age(obj, now),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn sc(name: &str, provisioner: &str) -> Value {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner})
    }

    fn created(mut obj: Value) -> Value {
        StorageClasses.prepare_for_create(&mut obj);
        obj
    }

    #[test]
    fn a_class_gets_its_defaults() {
        let obj = created(sc("fast", "kubernetes.io/no-provisioner"));
        assert_eq!(obj["reclaimPolicy"], "Delete");
        assert_eq!(obj["volumeBindingMode"], "Immediate");
        assert_eq!(messages(StorageClasses.validate(&obj)), Vec::<String>::new());
    }

    #[test]
    fn classes_are_validated_as_upstream_validates_them() {
        let with = |field: &str, value: Value| {
            let mut obj = sc("c", "example.com/disk");
            obj[field] = value;
            created(obj)
        };
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (created(sc("c", "")), vec!["provisioner: Required value"]),
            (
                created(sc("c", "Example.com/Bad Disk")),
                vec!["provisioner: Invalid value: \"example.com/bad disk\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
            ),
            (
                with("reclaimPolicy", json!("Recycle")),
                vec!["reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\""],
            ),
            (
                with("volumeBindingMode", json!("Later")),
                vec!["volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\""],
            ),
            (with("parameters", json!({"": "x"})), vec!["parameters: Invalid value: \"\": field can not be empty."]),
            (
                with("parameters", json!({"k": "x".repeat(MAX_PARAMETERS_SIZE)})),
                vec!["parameters: Too long: may not be more than 262144 bytes"],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(StorageClasses.validate(&obj)), want, "{obj}");
        }
        let many: serde_json::Map<String, Value> =
            (0..=MAX_PARAMETERS).map(|i| (format!("k{i}"), json!("v"))).collect();
        let obj = with("parameters", Value::Object(many));
        assert_eq!(messages(StorageClasses.validate(&obj)), ["parameters: Too long: may not be more than 512 bytes"]);
    }

    #[test]
    fn the_class_settings_never_change() {
        let mut old = sc("c", "example.com/disk");
        old["parameters"] = json!({"type": "ssd"});
        let old = created(old);
        let mut new = old.clone();
        new["parameters"] = json!({"type": "hdd"});
        new["provisioner"] = json!("example.com/other");
        new["reclaimPolicy"] = json!("Retain");
        new["volumeBindingMode"] = json!("WaitForFirstConsumer");
        new["allowVolumeExpansion"] = json!(true);
        StorageClasses.prepare_for_update(&mut new, &old);
        assert_eq!(
            messages(StorageClasses.validate_update(&new, &old)),
            [
                "parameters: Forbidden: updates to parameters are forbidden.",
                "provisioner: Forbidden: updates to provisioner are forbidden.",
                "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
                "volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable",
            ]
        );
        let mut expand = old.clone();
        expand["allowVolumeExpansion"] = json!(true);
        expand["metadata"]["labels"] = json!({"a": "b"});
        assert_eq!(messages(StorageClasses.validate_update(&expand, &old)), Vec::<String>::new());
    }

    #[test]
    fn the_printer_marks_the_default_class() {
        let mut obj = created(sc("standard", "example.com/disk"));
        obj["metadata"]["annotations"] = json!({"storageclass.kubernetes.io/is-default-class": "true"});
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![
                json!("standard (default)"),
                json!("example.com/disk"),
                json!("Delete"),
                json!("Immediate"),
                json!(false),
                json!("<unknown>")
            ]
        );
    }
}
