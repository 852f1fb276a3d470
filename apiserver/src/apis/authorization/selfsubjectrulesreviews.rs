//! SelfSubjectRulesReviews, `authorization.k8s.io/v1` (`KK/pkg/registry/authorization/
//! selfsubjectrulesreview`): what the requesting user may do in a namespace (`kubectl auth can-i --list`).
//! `AlwaysAllow` lists one rule for resources and one for other paths, each allowing everything, and the
//! list is complete; nothing is stored.

use std::sync::Arc;

use serde_json::{json, Value};

use super::review_info;
use crate::apis::authentication::unstored_meta;
use crate::apis::ResourceInfo;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    review_info("SelfSubjectRulesReview", "selfsubjectrulesreviews", "selfsubjectrulesreview", false, Arc::new(Reviews))
}

struct Reviews;

impl Review for Reviews {
    fn review<'a>(&'a self, _ctx: ReviewContext<'a>, obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move { review(obj) })
    }
}

fn review(mut obj: Value) -> Result<Value, RegistryError> {
    if obj.pointer("/spec/namespace").and_then(Value::as_str).unwrap_or("").is_empty() {
        return Err(RegistryError::BadRequest("no namespace on request".into()));
    }
    unstored_meta(&mut obj);
    obj["status"] = json!({
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
        "incomplete": false,
    });
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_namespace_allows_everything() {
        let answer = review(json!({"spec": {"namespace": "default"}})).unwrap();
        assert_eq!(
            answer["status"]["resourceRules"],
            json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])
        );
        assert_eq!(answer["status"]["incomplete"], json!(false));
        assert_eq!(review(json!({"spec": {}})), Err(RegistryError::BadRequest("no namespace on request".into())));
    }
}
