//! SubjectAccessReviews, `authorization.k8s.io/v1` (`KK/pkg/registry/authorization/subjectaccessreview`):
//! whether a given user or group may do something. Validated as upstream (`ValidateSubjectAccessReview`),
//! then answered with the authorizer's decision; nothing is stored.

use std::sync::Arc;

use serde_json::Value;

use super::{allowed, invalid, metadata_empty_but, metadata_error, review_info, validate_subject};
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
    fn review<'a>(&'a self, _ctx: ReviewContext<'a>, obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move { review(obj) })
    }
}

fn review(obj: Value) -> Result<Value, RegistryError> {
    let mut errors = validate_subject(obj.get("spec").unwrap_or(&Value::Null));
    if !metadata_empty_but(&obj, &[]) {
        errors.push(metadata_error(&obj, "must be empty"));
    }
    if !errors.is_empty() {
        return Err(invalid("SubjectAccessReview", errors));
    }
    Ok(allowed(obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reviews_are_checked_then_allowed() {
        let cases: Vec<(Value, Result<Value, &str>)> = vec![
            (
                json!({"spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}}}),
                Ok(
                    json!({"metadata": {"creationTimestamp": null}, "spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}}, "status": {"allowed": true}}),
                ),
            ),
            (
                json!({"spec": {"groups": ["devs"], "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}),
                Ok(
                    json!({"metadata": {"creationTimestamp": null}, "spec": {"groups": ["devs"], "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}, "status": {"allowed": true}}),
                ),
            ),
            (
                json!({"spec": {}}),
                Err(
                    r#"SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]"#,
                ),
            ),
            (
                json!({"spec": {"user": "a", "resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}}),
                Err(
                    r#"SubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes"#,
                ),
            ),
        ];
        for (obj, want) in cases {
            let got = review(obj.clone()).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_string), "{obj}");
        }
        let named = review(json!({"metadata": {"name": "x"}, "spec": {"user": "a", "resourceAttributes": {}}}));
        let message = named.unwrap_err().to_string();
        assert!(
            message.starts_with(r#"SubjectAccessReview.authorization.k8s.io "" is invalid: metadata: Invalid value: v1.ObjectMeta{Name:"x", GenerateName:"""#),
            "{message}"
        );
        assert!(message.ends_with(": must be empty"), "{message}");
    }
}
