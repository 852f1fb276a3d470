//! The `customresourcedefinitions` resource itself (apiextensions-apiserver's
//! `pkg/registry/customresourcedefinition/strategy.go` and `pkg/apis/apiextensions/validation`): its
//! defaults, what create and update may set, and its validation — names that are `plural.group`, a group
//! with a dot, one storage version, a structural schema for every version, CEL rules that compile.
//!
//! Cluster-scoped, with `/status`, which the CRD controller (`crate::apiextensions::controller`, above this
//! layer) writes: accepted names and the `NamesAccepted`, `Established` and `Terminating` conditions, read
//! and set through [`conditions`].

pub(crate) mod conditions;

use serde_json::{json, Value};

use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};
use crate::registry::structural::{cel_rules, Structural};

/// The group of CRDs.
pub(crate) const GROUP: &str = "apiextensions.k8s.io";

/// The finalizer a CRD carries from its first delete until its custom resources are gone.
pub(crate) const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The descriptor of `customresourcedefinitions`.
pub(crate) fn resource() -> Resource {
    Resource::group(GROUP, "v1", "CustomResourceDefinition", "customresourcedefinitions")
}

/// The CRD strategy.
pub(crate) struct Crds;

/// The column types a printer column may have.
const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];

impl Strategy for Crds {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        // What the server knows of a new CRD: nothing accepted yet, and the version it will store in.
        let mut status = json!({"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": []});
        if let Some(storage) = storage_version(obj) {
            status["storedVersions"] = json!([storage]);
        }
        obj["status"] = status;
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
        if new.get("spec") != old.get("spec") {
            let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
            meta::set(new, "generation", Some(Value::from(generation + 1)));
        }
        // A new storage version joins the stored ones: objects may now be written in it.
        if let Some(storage) = storage_version(new) {
            let stored = new.pointer_mut("/status/storedVersions").and_then(Value::as_array_mut);
            match stored {
                Some(stored) if !stored.iter().any(|v| v.as_str() == Some(&storage)) => stored.push(storage.into()),
                Some(_) => {}
                None => {
                    if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
                        status.insert("storedVersions".into(), json!([storage]));
                    }
                }
            }
        }
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_metadata(obj, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        if conditions::established(old) {
            // These decide where and how objects are stored, which an established CRD cannot change.
            errs.extend(common::immutable(new.pointer("/spec/scope"), old.pointer("/spec/scope"), "spec.scope"));
            errs.extend(common::immutable(
                new.pointer("/spec/names/kind"),
                old.pointer("/spec/names/kind"),
                "spec.names.kind",
            ));
        }
        errs.extend(common::immutable(new.pointer("/spec/group"), old.pointer("/spec/group"), "spec.group"));
        errs.extend(common::immutable(
            new.pointer("/spec/names/plural"),
            old.pointer("/spec/names/plural"),
            "spec.names.plural",
        ));
        errs.extend(validate_stored_versions(new));
        errs
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain)
    }
}

impl DeleteStrategy for Crds {
    /// A CRD always waits on its first delete: the delete adds the cleanup finalizer (apiextensions-apiserver's
    /// `REST.Delete`), which the controller removes once the custom resources are gone.
    fn has_pending_finalizers(&self, obj: &Value) -> bool {
        meta::get_str(obj, "deletionTimestamp").is_empty() || !meta::finalizers(obj).is_empty()
    }

    fn prepare_for_delete(&self, obj: &mut Value) {
        if !meta::finalizers(obj).contains(&CLEANUP_FINALIZER) {
            let mut finalizers: Vec<Value> = meta::finalizers(obj).into_iter().map(Value::from).collect();
            finalizers.push(CLEANUP_FINALIZER.into());
            meta::set(obj, "finalizers", Some(Value::Array(finalizers)));
        }
        let now = meta::get_str(obj, "deletionTimestamp").to_string();
        let pending = conditions::condition(
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        );
        if !obj.get("status").is_some_and(Value::is_object) {
            obj["status"] = json!({});
        }
        conditions::set_condition(&mut obj["status"], pending, &now);
    }
}

/// The defaults of `apiextensions/v1` (`SetDefaults_CustomResourceDefinitionSpec`): the singular is the
/// kind in lower case, the list kind is the kind with `List`, and the conversion strategy is `None`.
pub(crate) fn set_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else { return };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
        if !kind.is_empty() {
            if names.get("singular").and_then(Value::as_str).unwrap_or("").is_empty() {
                names.insert("singular".into(), kind.to_lowercase().into());
            }
            if names.get("listKind").and_then(Value::as_str).unwrap_or("").is_empty() {
                names.insert("listKind".into(), format!("{kind}List").into());
            }
        }
    }
    if !spec.contains_key("conversion") {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

/// The name of the version marked `storage: true` (the first, if a bad CRD marks several).
pub(crate) fn storage_version(crd: &Value) -> Option<String> {
    versions(crd)
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
        .map(str::to_string)
}

/// `spec.versions`.
pub(crate) fn versions(crd: &Value) -> &[Value] {
    crd.pointer("/spec/versions").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn validate_metadata(obj: &Value, name_check: names::NameCheck) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, name_check);
    let name = meta::get_str(obj, "name");
    let plural = str_at(obj, "/spec/names/plural");
    let group = str_at(obj, "/spec/group");
    if !name.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid("metadata.name", name, "must be spec.names.plural+\".\"+spec.group"));
    }
    errs
}

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `ValidateCustomResourceDefinitionSpec`.
fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let group = str_at(obj, "/spec/group");
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if let Some(problems) = Some(names::dns1123_subdomain(group)).filter(|p| !p.is_empty()) {
        errs.push(FieldError::invalid("spec.group", group, &problems.join(",")));
    } else if !group.contains('.') {
        errs.push(FieldError::invalid("spec.group", group, "should be a domain with at least one dot"));
    }

    match str_at(obj, "/spec/scope") {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported("spec.scope", other, &["Cluster", "Namespaced"])),
    }

    errs.extend(validate_versions(obj));
    errs.extend(validate_names(obj));

    match str_at(obj, "/spec/conversion/strategy") {
        "None" => {}
        "Webhook" => errs.push(FieldError::forbidden(
            "spec.conversion.strategy",
            "kubesim serves custom resources with the None conversion only; it calls no webhooks",
        )),
        other => errs.push(FieldError::not_supported("spec.conversion.strategy", other, &["None", "Webhook"])),
    }
    errs
}

/// The versions: unique DNS-1035 names, exactly one storage version, and per version a structural schema
/// whose CEL rules compile, valid subresources and printer columns.
fn validate_versions(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let versions = versions(obj);
    if versions.is_empty() {
        errs.push(FieldError::required("spec.versions", "must have exactly one version marked as storage version"));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    for (i, version) in versions.iter().enumerate() {
        let name = version.get("name").and_then(Value::as_str).unwrap_or("");
        if seen.contains(&name) {
            unique = false;
        }
        seen.push(name);
        let problems = names::dns1035_label(name);
        if !problems.is_empty() {
            errs.push(FieldError::invalid(&format!("spec.versions[{i}].name"), name, &problems.join(",")));
        }
    }
    let shown = go_versions(versions);
    if !unique {
        errs.push(invalid_go("spec.versions", &shown, "must contain unique version names"));
    }
    let storage = versions.iter().filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true)).count();
    if storage != 1 {
        errs.push(invalid_go("spec.versions", &shown, "must have exactly one version marked as storage version"));
    }
    for (i, version) in versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        match version.pointer("/schema/openAPIV3Schema") {
            None => errs.push(FieldError::required(&format!("{at}.schema.openAPIV3Schema"), "schemas are required")),
            Some(schema) => {
                let path = format!("{at}.schema.openAPIV3Schema");
                match Structural::parse(schema, &path) {
                    Err(schema_errs) => errs.extend(schema_errs),
                    Ok(_) => {
                        if let Err(rule_errs) = cel_rules::RuleTree::compile(schema, &path) {
                            errs.extend(rule_errs);
                        }
                    }
                }
            }
        }
        errs.extend(validate_subresources(version, &at));
        errs.extend(validate_printer_columns(version, &at));
    }
    errs
}

/// A Go `%#v`-like rendering of the versions, as upstream's `Invalid` shows them: the names suffice to find
/// the problem, and the full struct dump kube prints is not reproduced.
fn go_versions(versions: &[Value]) -> String {
    let names: Vec<String> = versions
        .iter()
        .map(|v| {
            format!(
                "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}}}",
                crate::go_text::quote(v.get("name").and_then(Value::as_str).unwrap_or("")),
                v.get("served").and_then(Value::as_bool).unwrap_or(false),
                v.get("storage").and_then(Value::as_bool).unwrap_or(false),
            )
        })
        .collect();
    format!("[]apiextensions.CustomResourceDefinitionVersion{{{}}}", names.join(", "))
}

fn invalid_go(field: &str, value: &str, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: BadValue::GoSyntax(value.into()),
        detail: detail.into(),
    }
}

/// `ValidateCustomResourceDefinitionNames` plus the required names of the spec.
fn validate_names(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let names_of = |field: &str| str_at(obj, &format!("/spec/names/{field}")).to_string();
    let (plural, singular, kind, list_kind) =
        (names_of("plural"), names_of("singular"), names_of("kind"), names_of("listKind"));
    for (field, value) in [("plural", &plural), ("singular", &singular), ("kind", &kind), ("listKind", &list_kind)] {
        if value.is_empty() {
            errs.push(FieldError::required(&format!("spec.names.{field}"), ""));
        }
    }
    for (field, value) in [("plural", &plural), ("singular", &singular)] {
        let problems = names::dns1035_label(value);
        if !value.is_empty() && !problems.is_empty() {
            errs.push(FieldError::invalid(&format!("spec.names.{field}"), value, &problems.join(",")));
        }
    }
    for (field, value) in [("kind", &kind), ("listKind", &list_kind)] {
        let problems = names::dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !problems.is_empty() {
            let detail = format!("may have mixed case, but should otherwise match: {}", problems.join(","));
            errs.push(FieldError::invalid(&format!("spec.names.{field}"), value, &detail));
        }
    }
    for list in ["shortNames", "categories"] {
        let items = obj.pointer(&format!("/spec/names/{list}")).and_then(Value::as_array).cloned().unwrap_or_default();
        for (i, item) in items.iter().enumerate() {
            let value = item.as_str().unwrap_or("");
            let problems = names::dns1035_label(value);
            if !problems.is_empty() {
                errs.push(FieldError::invalid(&format!("spec.names.{list}[{i}]"), value, &problems.join(",")));
            }
        }
    }
    if !kind.is_empty() && kind == list_kind {
        errs.push(FieldError::invalid("spec.names.listKind", &list_kind, "kind and listKind may not be the same"));
    }
    errs
}

/// The scale subresource's paths: the replicas paths are required and must be simple paths under `.spec`
/// and `.status`; the label selector path, if any, under `.status` too.
fn validate_subresources(version: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(scale) = version.pointer("/subresources/scale") else { return errs };
    let field = |name: &str| format!("{at}.subresources.scale.{name}");
    let path = |name: &str| scale.get(name).and_then(Value::as_str).unwrap_or("");
    match path("specReplicasPath") {
        "" => errs.push(FieldError::required(&field("specReplicasPath"), "")),
        p if !p.starts_with(".spec.") => {
            errs.push(FieldError::invalid(&field("specReplicasPath"), p, "should be a json path under .spec"))
        }
        _ => {}
    }
    match path("statusReplicasPath") {
        "" => errs.push(FieldError::required(&field("statusReplicasPath"), "")),
        p if !p.starts_with(".status.") => {
            errs.push(FieldError::invalid(&field("statusReplicasPath"), p, "should be a json path under .status"))
        }
        _ => {}
    }
    match path("labelSelectorPath") {
        "" => {}
        p if !p.starts_with(".spec.") && !p.starts_with(".status.") => errs.push(FieldError::invalid(
            &field("labelSelectorPath"),
            p,
            "should be a json path under either .spec or .status",
        )),
        _ => {}
    }
    errs
}

/// `additionalPrinterColumns`: a name, a known type, and a JSONPath.
fn validate_printer_columns(version: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let columns = version.get("additionalPrinterColumns").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, column) in columns.iter().enumerate() {
        let field = |name: &str| format!("{at}.additionalPrinterColumns[{i}].{name}");
        let get = |name: &str| column.get(name).and_then(Value::as_str).unwrap_or("").to_string();
        if get("name").is_empty() {
            errs.push(FieldError::required(&field("name"), ""));
        }
        match get("type").as_str() {
            "" => errs.push(FieldError::required(&field("type"), "")),
            t if !COLUMN_TYPES.contains(&t) => errs.push(FieldError::not_supported(&field("type"), t, COLUMN_TYPES)),
            _ => {}
        }
        if get("jsonPath").is_empty() {
            errs.push(FieldError::required(&field("JSONPath"), ""));
        }
    }
    errs
}

/// `ValidateCustomResourceDefinitionStoredVersions`: every stored version is still in the spec.
fn validate_stored_versions(new: &Value) -> Vec<FieldError> {
    let names: Vec<&str> = versions(new).iter().filter_map(|v| v.get("name").and_then(Value::as_str)).collect();
    let stored = new.pointer("/status/storedVersions").and_then(Value::as_array).cloned().unwrap_or_default();
    stored
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let v = v.as_str().unwrap_or("");
            (!names.contains(&v))
                .then(|| FieldError::invalid(&format!("status.storedVersions[{i}]"), v, "must appear in spec.versions"))
        })
        .collect()
}
