//! SelfSubjectAccessReviews, `authorization.k8s.io/v1` (`KK/pkg/registry/authorization/
//! selfsubjectaccessreview`): whether the requesting user may do something (`kubectl auth can-i`).
//! Validated as upstream (`ValidateSelfSubjectAccessReview`), then answered with the authorizer's
//! decision for the request's user; nothing is stored.

use std::sync::Arc;

use serde_json::Value;

use super::{answer, invalid, metadata_empty_but, metadata_error, review_info, validate_attributes};
use crate::apis::ResourceInfo;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    review_info(
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        "selfsubjectaccessreview",
        false,
        Arc::new(Reviews),
    )
}

struct Reviews;

impl Review for Reviews {
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move {
            validate(&obj)?;
            Ok(answer(&ctx, obj, ctx.user).await)
        })
    }
}

/// `ValidateSelfSubjectAccessReview`.
fn validate(obj: &Value) -> Result<(), RegistryError> {
    let mut errors = validate_attributes(obj.get("spec").unwrap_or(&Value::Null));
    if !metadata_empty_but(obj, &[]) {
        errors.push(metadata_error(obj, "must be empty"));
    }
    if !errors.is_empty() {
        return Err(invalid("SelfSubjectAccessReview", errors));
    }
    Ok(())
}
