//! VolumeAttachments, `storage.k8s.io/v1` (`KK/pkg/registry/storage/volumeattachment`,
//! `KK/pkg/apis/storage/validation`: `ValidateVolumeAttachment`, `ValidateVolumeAttachmentV1`,
//! `ValidateVolumeAttachmentUpdate`): cluster-scoped, names are DNS subdomains, a `/status` subresource.
//! The attacher is required and, on create, a valid CSI driver name; the source names exactly one of a
//! persistent volume (non-empty and, on create, a DNS subdomain) or an inline volume spec; the node name is
//! a DNS subdomain; the status's attachment metadata is at most 256 KiB and its error messages at most
//! 1024 bytes (upstream's message names the 256 KiB bound). The main endpoint resets the status (`attached:
//! false` on create, the stored one on update) and never changes the spec (upstream's message prints Go's
//! `%#v` of the spec; its pointers show as one fixed address). `/status` keeps the spec. Updates need a
//! resourceVersion; a delete answers the deleted object. Not here: the checks of an inline volume spec
//! (`ValidatePersistentVolumeSpec`).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::ingresses::invalid_go;
use crate::apis::printers::{age, age_column, doc_column, name, name_column};
use crate::apis::storage::csinodes::validate_csi_driver_name;
use crate::apis::{status, Printer, ResourceInfo};
use crate::go_text::quote;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        subresources: vec![status("VolumeAttachment")],
        ..ResourceInfo::new(resource(), "volumeattachment", Arc::new(VolumeAttachments), printer())
    }
}

fn resource() -> Resource {
    Resource::group("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments")
}

/// The VolumeAttachment strategy.
struct VolumeAttachments;

/// `maxAttachedVolumeMetadataSize` and `maxVolumeErrorMessageSize`.
const MAX_METADATA_SIZE: usize = 256 * 1024;
const MAX_ERROR_MESSAGE_SIZE: usize = 1024;
const ONE_SOURCE: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";

fn at<'a>(obj: &'a Value, pointer: &str) -> Option<&'a Value> {
    obj.pointer(pointer).filter(|v| !v.is_null())
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    at(obj, pointer).and_then(Value::as_str).unwrap_or("")
}

/// `validateVolumeAttachmentSpec`.
fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if text(obj, "/spec/attacher").is_empty() {
        errs.push(FieldError::required("spec.attacher", ""));
    }
    let pv = at(obj, "/spec/source/persistentVolumeName");
    match (at(obj, "/spec/source/inlineVolumeSpec"), pv) {
        (None, None) => errs.push(FieldError::required("spec.source", ONE_SOURCE)),
        (Some(_), Some(_)) => errs.push(FieldError::forbidden("spec.source", ONE_SOURCE)),
        (None, Some(pv)) => {
            if pv.as_str().unwrap_or("").is_empty() {
                errs.push(FieldError::required(
                    "spec.source.persistentVolumeName",
                    "must specify non empty persistentVolumeName",
                ));
            }
        }
        (Some(_), None) => {}
    }
    let node = text(obj, "/spec/nodeName");
    for msg in names::name_is_dns_subdomain(node, false) {
        errs.push(FieldError::invalid("spec.nodeName", node, &msg));
    }
    errs
}

/// `validateVolumeAttachmentStatus`.
fn validate_status(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let size: usize = at(obj, "/status/attachmentMetadata")
        .and_then(Value::as_object)
        .map_or(0, |m| m.iter().map(|(k, v)| k.len() + v.as_str().unwrap_or("").len()).sum());
    if size > MAX_METADATA_SIZE {
        errs.push(FieldError::too_long("status.attachmentMetadata", MAX_METADATA_SIZE));
    }
    for which in ["attachError", "detachError"] {
        if text(obj, &format!("/status/{which}/message")).len() > MAX_ERROR_MESSAGE_SIZE {
            errs.push(FieldError::too_long(&format!("status.{which}.message"), MAX_METADATA_SIZE));
        }
    }
    errs
}

/// `ValidateVolumeAttachment`.
fn validate_common(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    errs.extend(validate_spec(obj));
    errs.extend(validate_status(obj));
    errs
}

/// `ValidateVolumeAttachmentV1`: what new v1 attachments must also satisfy.
fn validate_v1(obj: &Value) -> Vec<FieldError> {
    let mut errs = validate_csi_driver_name(text(obj, "/spec/attacher"), "spec.attacher");
    if let Some(pv) = at(obj, "/spec/source/persistentVolumeName") {
        let pv = pv.as_str().unwrap_or("");
        for msg in names::name_is_dns_subdomain(pv, false) {
            errs.push(FieldError::invalid("spec.source.persistentVolumeName", pv, &msg));
        }
    }
    errs
}

/// A spec as `apiequality.Semantic` compares it.
fn comparable(obj: &Value) -> Value {
    crate::apis::storage::csidrivers::semantic(obj.get("spec").unwrap_or(&Value::Null))
}

/// Go's `%#v` of a `storage.VolumeAttachmentSpec`, a set pointer shown as one fixed address.
fn go_spec(obj: &Value) -> String {
    let pointer = |p: &str, ty: &str| match at(obj, p) {
        Some(_) => format!("(*{ty})(0xc000000000)"),
        None => format!("(*{ty})(nil)"),
    };
    format!(
        "storage.VolumeAttachmentSpec{{Attacher:{}, Source:storage.VolumeAttachmentSource{{PersistentVolumeName:{}, InlineVolumeSpec:{}}}, NodeName:{}}}",
        quote(text(obj, "/spec/attacher")),
        pointer("/spec/source/persistentVolumeName", "string"),
        pointer("/spec/source/inlineVolumeSpec", "core.PersistentVolumeSpec"),
        quote(text(obj, "/spec/nodeName")),
    )
}

/// The generic metadata checks, `ValidateVolumeAttachment` of the new object (twice upstream: the
/// strategy and `ValidateVolumeAttachmentUpdate` each run it), and the spec that never changes.
fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
    errs.extend(validate_common(new));
    errs.extend(validate_common(new));
    if comparable(new) != comparable(old) {
        errs.push(invalid_go("spec", go_spec(new), "field is immutable"));
    }
    errs
}

impl Strategy for VolumeAttachments {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"attached": false});
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
        if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
            status.entry("attached").or_insert(Value::Bool(false));
        } else {
            new["status"] = json!({"attached": false});
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_common(obj);
        errs.extend(validate_v1(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_update(new, old)
    }
}

/// The volumeattachments store answers a delete with the deleted object (`ReturnDeletedObject`).
impl DeleteStrategy for VolumeAttachments {
    fn return_deleted_object(&self) -> bool {
        true
    }
}

/// `printVolumeAttachment`: attacher, persistent volume (empty for an inline spec), node, attached.
fn printer() -> Printer {
    const SPEC: &str = "io.k8s.api.storage.v1.VolumeAttachmentSpec";
    let attacher = doc_column("Attacher", "string", SPEC, "attacher", 0);
    Printer {
        columns: vec![
            name_column(),
            crate::apis::printers::Column { format: "name".into(), ..attacher },
            doc_column("PV", "string", "io.k8s.api.storage.v1.VolumeAttachmentSource", "persistentVolumeName", 0),
            doc_column("Node", "string", SPEC, "nodeName", 0),
            doc_column("Attached", "boolean", "io.k8s.api.storage.v1.VolumeAttachmentStatus", "attached", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            vec![
                name(obj),
                Value::from(text(obj, "/spec/attacher")),
                Value::from(text(obj, "/spec/source/persistentVolumeName")),
                Value::from(text(obj, "/spec/nodeName")),
                Value::from(at(obj, "/status/attached").and_then(Value::as_bool).unwrap_or(false)),
                age(obj, now),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn va(spec: Value) -> Value {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va-1"},
            "spec": spec})
    }

    fn good() -> Value {
        va(json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": "pv-1"}, "nodeName": "node-1"}))
    }

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    #[test]
    fn attachments_are_validated_as_upstream_validates_them() {
        let s = VolumeAttachments;
        let mut obj = good();
        s.prepare_for_create(&mut obj);
        assert_eq!(obj["status"], json!({"attached": false}));
        assert_eq!(messages(s.validate(&obj)), Vec::<String>::new());
        let cases: Vec<(Value, Vec<String>)> = vec![
            (
                va(json!({"attacher": "", "source": {}, "nodeName": "Node_1"})),
                vec![
                    "spec.attacher: Required value".into(),
                    format!("spec.source: Required value: {ONE_SOURCE}"),
                    format!("spec.nodeName: Invalid value: \"Node_1\": {SUBDOMAIN}"),
                    "spec.attacher: Required value".into(),
                    format!("spec.attacher: Invalid value: \"\": {SUBDOMAIN}"),
                ],
            ),
            (
                va(
                    json!({"attacher": "CSI.Example.com", "source": {"persistentVolumeName": "pv", "inlineVolumeSpec": {}}, "nodeName": "n"}),
                ),
                vec![format!("spec.source: Forbidden: {ONE_SOURCE}")],
            ),
            (
                va(json!({"attacher": "a.com", "source": {"persistentVolumeName": ""}, "nodeName": "n"})),
                vec![
                    "spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName"
                        .into(),
                    format!("spec.source.persistentVolumeName: Invalid value: \"\": {SUBDOMAIN}"),
                ],
            ),
            (
                va(json!({"attacher": "a_b", "source": {"persistentVolumeName": "PV"}, "nodeName": "n"})),
                vec![
                    format!("spec.attacher: Invalid value: \"a_b\": {SUBDOMAIN}"),
                    format!("spec.source.persistentVolumeName: Invalid value: \"PV\": {SUBDOMAIN}"),
                ],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
        let mut big = good();
        big["status"] = json!({"attachmentMetadata": {"k": "v".repeat(MAX_METADATA_SIZE)},
            "detachError": {"message": "m".repeat(MAX_ERROR_MESSAGE_SIZE + 1)}});
        assert_eq!(
            messages(validate_status(&big)),
            [
                "status.attachmentMetadata: Too long: may not be more than 262144 bytes",
                "status.detachError.message: Too long: may not be more than 262144 bytes",
            ]
        );
    }

    #[test]
    fn the_spec_never_changes_and_the_status_is_its_subresources() {
        let s = VolumeAttachments;
        let mut old = good();
        s.prepare_for_create(&mut old);
        let mut new = old.clone();
        new["spec"]["nodeName"] = json!("node-2");
        new["status"] = json!({"attached": true});
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"attached": false}));
        assert_eq!(
            messages(s.validate_update(&new, &old)),
            ["spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:\"csi.example.com\", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(0xc000000000), InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:\"node-2\"}: field is immutable"]
        );
        let mut via_status = old.clone();
        via_status["spec"]["nodeName"] = json!("node-3");
        via_status["status"] = json!({"attached": true, "attachmentMetadata": {"dev": "/dev/sdb"}});
        s.prepare_for_subresource_update(Subresource::Status, &mut via_status, &old);
        assert_eq!(via_status["spec"], old["spec"]);
        assert_eq!(via_status["status"]["attached"], true);
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &via_status, &old)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_printer_shows_attacher_volume_node_and_attached() {
        let mut obj = good();
        obj["status"] = json!({"attached": true});
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![
                json!("va-1"),
                json!("csi.example.com"),
                json!("pv-1"),
                json!("node-1"),
                json!(true),
                json!("<unknown>")
            ]
        );
        let inline = va(json!({"attacher": "a.com", "source": {"inlineVolumeSpec": {}}, "nodeName": "n"}));
        assert_eq!((printer().cells)(&inline, 0, &[])[2..5], [json!(""), json!("n"), json!(false)]);
        assert_eq!(printer().columns[1].format, "name");
    }
}
