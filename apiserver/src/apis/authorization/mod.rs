//! `authorization.k8s.io/v1`: the reviews of what someone may do (`kubectl auth can-i`), never stored.
//!
//! Each is answered by the server's authorization chain (`apis::rbac::authorizer`): the access reviews
//! with its decision about the attributes they name (`KK/pkg/registry/authorization/*/rest.go`), the rules
//! review with the rules its resolvers list. Under `AlwaysAllow`, kube-apiserver's default, every access
//! review is allowed with no reason and the rules review lists the one rule that allows all.

pub(crate) mod localsubjectaccessreviews;
pub(crate) mod selfsubjectaccessreviews;
pub(crate) mod selfsubjectrulesreviews;
pub(crate) mod subjectaccessreviews;

use std::sync::Arc;

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::apis::authentication::unstored_meta;
use crate::apis::rbac::authorizer;
use crate::apis::{printers, ResourceInfo, Verb};
use crate::registry::authorizer::{Attributes, Decision, ResourceAttributes};
use crate::registry::error::RegistryError;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::resource::Resource;
use crate::registry::review::{Review, ReviewContext, Unstored};
use crate::registry::user::UserInfo;

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

/// The user a subject access review asks about (`authorizationutil.AuthorizationAttributesFrom`): the
/// spec's user, groups, uid and extra.
fn spec_user(spec: &Value) -> UserInfo {
    let text = |key: &str| spec.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().map_or(Vec::new(), |l| l.iter().filter_map(Value::as_str).map(str::to_string).collect())
    };
    let extra: BTreeMap<String, Vec<String>> = spec
        .get("extra")
        .and_then(Value::as_object)
        .map_or(BTreeMap::new(), |m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect());
    UserInfo {
        username: text("user"),
        uid: text("uid"),
        groups: strings(spec.get("groups").unwrap_or(&Value::Null)),
        extra,
    }
}

/// What a review's spec asks `user` may do (`ResourceAttributesFrom`, `NonResourceAttributesFrom`); a
/// resource request without a version asks about every version ("*"). Validation has made sure exactly
/// one kind of attributes is there.
fn spec_attributes<'a>(spec: &'a Value, user: &'a UserInfo) -> Attributes<'a> {
    let field = |attrs: Option<&'a Value>, key: &str| -> &'a str {
        attrs.and_then(|a| a.get(key)).and_then(Value::as_str).unwrap_or("")
    };
    match spec.get("resourceAttributes").filter(|a| a.is_object()) {
        Some(attrs) => {
            let version = field(Some(attrs), "version");
            Attributes {
                user,
                verb: field(Some(attrs), "verb"),
                resource: Some(ResourceAttributes {
                    namespace: field(Some(attrs), "namespace"),
                    api_group: field(Some(attrs), "group"),
                    api_version: if version.is_empty() { "*" } else { version },
                    resource: field(Some(attrs), "resource"),
                    subresource: field(Some(attrs), "subresource"),
                    name: field(Some(attrs), "name"),
                }),
                path: "",
            }
        }
        None => {
            let attrs = spec.get("nonResourceAttributes");
            Attributes { user, verb: field(attrs, "verb"), resource: None, path: field(attrs, "path") }
        }
    }
}

/// The answer of an access review about `user`: the request with the chain's decision.
async fn answer(ctx: &ReviewContext<'_>, obj: Value, user: &UserInfo) -> Value {
    let decision = {
        let attrs = spec_attributes(obj.get("spec").unwrap_or(&Value::Null), user);
        authorizer::authorize(ctx.authorization, ctx.stores, &attrs).await
    };
    with_status(obj, &decision)
}

/// The request with `SubjectAccessReviewStatus` filled in from a decision (`denied` and `reason` only when
/// set, as their `omitempty` writes them).
fn with_status(mut obj: Value, decision: &Decision) -> Value {
    unstored_meta(&mut obj);
    let mut status = json!({"allowed": decision.allowed()});
    if matches!(decision, Decision::Deny { .. }) {
        status["denied"] = json!(true);
    }
    if !decision.reason().is_empty() {
        status["reason"] = json!(decision.reason());
    }
    obj["status"] = status;
    obj
}

#[cfg(test)]
mod tests;
