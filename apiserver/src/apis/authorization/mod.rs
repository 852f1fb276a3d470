//! `authorization.k8s.io/v1`: the reviews of what someone may do (`kubectl auth can-i`), never stored.
//!
//! The server's authorizer is kube's `AlwaysAllow` (kube-apiserver's default `--authorization-mode`): every
//! access review is allowed, with no reason, and every rules review lists the one rule that allows all.
//! RBAC's objects are served and stored, but nothing enforces them yet.

pub(crate) mod localsubjectaccessreviews;
pub(crate) mod selfsubjectaccessreviews;
pub(crate) mod selfsubjectrulesreviews;
pub(crate) mod subjectaccessreviews;

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::authentication::unstored_meta;
use crate::apis::{printers, ResourceInfo, Verb};
use crate::registry::error::RegistryError;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::resource::Resource;
use crate::registry::review::{Review, Unstored};

/// The catalog entry of a review kind of this group.
fn review_info(
    kind: &str,
    plural: &str,
    singular: &'static str,
    namespaced: bool,
    review: Arc<dyn Review>,
) -> ResourceInfo {
    let resource = Resource {
        group: "authorization.k8s.io".into(),
        version: "v1".into(),
        kind: kind.into(),
        plural: plural.into(),
        etcd_prefix: plural.into(),
    };
    ResourceInfo {
        namespaced,
        verbs: &[Verb::Create],
        review: Some(review),
        ..ResourceInfo::new(resource, singular, Arc::new(Unstored { namespaced }), printers::default_printer())
    }
}

/// An access review's 422 (`NewInvalid(authorizationapi.Kind(kind), "", errs)`).
fn invalid(kind: &str, errors: Vec<FieldError>) -> RegistryError {
    RegistryError::Invalid { group: "authorization.k8s.io".into(), kind: kind.into(), name: String::new(), errors }
}

/// The checks every access review's spec gets (`ValidateSelfSubjectAccessReviewSpec`): exactly one of
/// resource and non-resource attributes.
fn validate_attributes(spec: &Value) -> Vec<FieldError> {
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut errors = Vec::new();
    match (resource, non_resource) {
        (Some(_), Some(nr)) => errors.push(go_invalid(
            "spec.nonResourceAttributes",
            &go_non_resource(nr),
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => errors.push(FieldError::invalid(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    errors
}

/// `ValidateSubjectAccessReviewSpec`: the attributes, and a user or a group to ask about.
fn validate_subject(spec: &Value) -> Vec<FieldError> {
    let mut errors = validate_attributes(spec);
    let user = spec.get("user").and_then(Value::as_str).unwrap_or("");
    let has_groups = spec.get("groups").and_then(Value::as_array).is_some_and(|g| !g.is_empty());
    if user.is_empty() && !has_groups {
        errors.push(FieldError::invalid("spec.user", user, "at least one of user or group must be specified"));
    }
    errors
}

/// An Invalid error whose bad value Go prints with `%#v` (a struct).
fn go_invalid(field: &str, go_value: &str, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: BadValue::GoSyntax(go_value.into()),
        detail: detail.into(),
    }
}

/// Go's `%#v` of the internal `NonResourceAttributes`, as a field error prints the bad value.
fn go_non_resource(nr: &Value) -> String {
    let field = |f: &str| nr.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    format!("authorization.NonResourceAttributes{{Path:{:?}, Verb:{:?}}}", field("path"), field("verb"))
}

/// Whether `metadata` holds nothing but what `allowed` names (and `managedFields`).
fn metadata_empty_but(obj: &Value, allowed: &[&str]) -> bool {
    obj.get("metadata").and_then(Value::as_object).is_none_or(|m| {
        m.iter().all(|(k, v)| {
            allowed.contains(&k.as_str()) || k == "managedFields" || v.is_null() || v.as_str() == Some("")
        })
    })
}

/// The metadata refusal (`metadata: Invalid value: v1.ObjectMeta{...}: must be empty`); the bad value is
/// Go's `%#v` of the whole ObjectMeta, written here for the fields a client sets.
fn metadata_error(obj: &Value, detail: &str) -> FieldError {
    let meta = obj.get("metadata").cloned().unwrap_or(json!({}));
    let s = |f: &str| meta.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let map = |f: &str| match meta.get(f).and_then(Value::as_object) {
        None => "map[string]string(nil)".to_string(),
        Some(m) => {
            let entries: Vec<String> =
                m.iter().map(|(k, v)| format!("{:?}:{:?}", k, v.as_str().unwrap_or(""))).collect();
            format!("map[string]string{{{}}}", entries.join(", "))
        }
    };
    let value = format!(
        "v1.ObjectMeta{{Name:{:?}, GenerateName:{:?}, Namespace:{:?}, SelfLink:\"\", UID:{:?}, ResourceVersion:{:?}, Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:{}, Annotations:{}, OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), ManagedFields:[]v1.ManagedFieldsEntry(nil)}}",
        s("name"),
        s("generateName"),
        s("namespace"),
        s("uid"),
        s("resourceVersion"),
        map("labels"),
        map("annotations"),
    );
    go_invalid("metadata", &value, detail)
}

/// The answer of an access review: the request with `AlwaysAllow`'s decision.
fn allowed(mut obj: Value) -> Value {
    unstored_meta(&mut obj);
    obj["status"] = json!({"allowed": true});
    obj
}
