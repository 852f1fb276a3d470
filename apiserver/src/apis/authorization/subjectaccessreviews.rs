//! SubjectAccessReviews, `authorization.k8s.io/v1` (`KK/pkg/registry/authorization/subjectaccessreview`):
//! whether a given user or group may do something. Validated as upstream (`ValidateSubjectAccessReview`),
//! then answered with the authorizer's decision; nothing is stored.

use std::sync::Arc;

use serde_json::Value;

use super::{answer, invalid, metadata_empty_but, metadata_error, review_info, spec_user, validate_subject};
use crate::apis::ResourceInfo;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    review_info("SubjectAccessReview", "subjectaccessreviews", "subjectaccessreview", false, Arc::new(Reviews))
}

struct Reviews;

impl Review for Reviews {
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move {
            validate(&obj)?;
            let user = spec_user(obj.get("spec").unwrap_or(&Value::Null));
            Ok(answer(&ctx, obj, &user).await)
        })
    }
}

/// `ValidateSubjectAccessReview`.
fn validate(obj: &Value) -> Result<(), RegistryError> {
    let mut errors = validate_subject(obj.get("spec").unwrap_or(&Value::Null));
    if !metadata_empty_but(obj, &[]) {
        errors.push(metadata_error(obj, "must be empty"));
    }
    if !errors.is_empty() {
        return Err(invalid("SubjectAccessReview", errors));
    }
    Ok(())
}
