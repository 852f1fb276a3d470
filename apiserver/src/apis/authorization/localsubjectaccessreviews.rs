//! LocalSubjectAccessReviews, `authorization.k8s.io/v1` (`KK/pkg/registry/authorization/
//! localsubjectaccessreview`): a subject access review confined to one namespace, the one in its path,
//! which its metadata and resource attributes must name. Answered with the authorizer's decision; nothing
//! is stored.

use std::sync::Arc;

use serde_json::Value;

use super::{
    answer, go_invalid, go_non_resource, invalid, metadata_empty_but, metadata_error, review_info, spec_user,
    validate_subject,
};
use crate::apis::ResourceInfo;
use crate::registry::error::RegistryError;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    review_info(
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        "localsubjectaccessreview",
        true,
        Arc::new(Reviews),
    )
}

struct Reviews;

impl Review for Reviews {
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move {
            validate(ctx.namespace, &obj)?;
            let user = spec_user(obj.get("spec").unwrap_or(&Value::Null));
            Ok(answer(&ctx, obj, &user).await)
        })
    }
}

/// `ValidateLocalSubjectAccessReview`, then the path's namespace against the object's.
fn validate(namespace: &str, obj: &Value) -> Result<(), RegistryError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut errors = validate_subject(spec);
    if !metadata_empty_but(obj, &["namespace"]) {
        errors.push(metadata_error(obj, "must be empty except for namespace"));
    }
    let object_ns = meta::get_str(obj, "namespace");
    if let Some(attrs) = spec.get("resourceAttributes").filter(|a| a.is_object()) {
        let attrs_ns = attrs.get("namespace").and_then(Value::as_str).unwrap_or("");
        if attrs_ns != object_ns {
            errors.push(FieldError::invalid(
                "spec.resourceAttributes.namespace",
                attrs_ns,
                "must match metadata.namespace",
            ));
        }
    }
    if let Some(nr) = spec.get("nonResourceAttributes").filter(|a| a.is_object()) {
        errors.push(go_invalid(
            "spec.nonResourceAttributes",
            &go_non_resource(nr),
            "disallowed on this kind of request",
        ));
    }
    if !errors.is_empty() {
        return Err(invalid("LocalSubjectAccessReview", errors));
    }
    if namespace != object_ns {
        return Err(RegistryError::BadRequest(format!(
            "spec.resourceAttributes.namespace must match namespace: {namespace}"
        )));
    }
    Ok(())
}
