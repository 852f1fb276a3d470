//! SelfSubjectRulesReviews, `authorization.k8s.io/v1` (`KK/pkg/registry/authorization/
//! selfsubjectrulesreview`): what the requesting user may do in a namespace (`kubectl auth can-i --list`).
//! The answer is a fresh object holding only the status: the rules the chain's resolvers list (RBAC's from
//! the user's bindings, `AlwaysAllow`'s one rule that allows everything), whether the list is incomplete,
//! and any resolution error; nothing is stored.

use std::sync::Arc;

use serde_json::{json, Value};

use super::review_info;
use crate::apis::rbac::authorizer::{self, SubjectRules};
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
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move {
            let namespace = obj.pointer("/spec/namespace").and_then(Value::as_str).unwrap_or("");
            if namespace.is_empty() {
                return Err(RegistryError::BadRequest("no namespace on request".into()));
            }
            Ok(answer(&authorizer::rules_for(ctx.authorization, ctx.stores, ctx.user, namespace).await))
        })
    }
}

/// The review the REST handler builds: a new object with nothing but the status (its empty spec and
/// metadata are written as Go writes zero values).
fn answer(rules: &SubjectRules) -> Value {
    json!({
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {},
        "status": rules.status(),
    })
}
