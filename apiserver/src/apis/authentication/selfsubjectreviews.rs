//! SelfSubjectReviews, `authentication.k8s.io/v1` (`KK/pkg/registry/authentication/selfsubjectreview`):
//! `kubectl auth whoami`. A create answers who the request runs as, stamped with the time; nothing is
//! stored.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::{printers, ResourceInfo, Verb};
use crate::registry::error::RegistryError;
use crate::registry::resource::Resource;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext, Unstored};
use crate::registry::system::rfc3339;

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        verbs: &[Verb::Create],
        review: Some(Arc::new(SelfSubjectReviews)),
        ..ResourceInfo::new(
            resource(),
            "selfsubjectreview",
            Arc::new(Unstored { namespaced: false }),
            printers::default_printer(),
        )
    }
}

fn resource() -> Resource {
    Resource {
        group: "authentication.k8s.io".into(),
        version: "v1".into(),
        kind: "SelfSubjectReview".into(),
        plural: "selfsubjectreviews".into(),
        etcd_prefix: "selfsubjectreviews".into(),
    }
}

struct SelfSubjectReviews;

impl Review for SelfSubjectReviews {
    /// A new object (the request's fields are not kept): the time and the user.
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, _obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        let answer = json!({
            "kind": "SelfSubjectReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": rfc3339(ctx.now_unix_s)},
            "status": {"userInfo": ctx.user.to_json()},
        });
        Box::pin(async move { Ok(answer) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::tokens::ServiceAccountTokens;
    use crate::registry::user::UserInfo;

    #[test]
    fn the_answer_is_the_requesting_user() {
        let tokens = ServiceAccountTokens::from_seed(0);
        let user = UserInfo::anonymous();
        let stores = crate::registry::rest::Registry::new();
        let modes = crate::registry::authorizer::Modes::default();
        let ctx = ReviewContext {
            namespace: "",
            user: &user,
            now_unix_s: 0,
            tokens: &tokens,
            stores: &stores,
            dry_run: &[],
            authorization: &modes,
            static_tokens: crate::registry::token_file::TokenFile::empty(),
        };
        let answer = futures::executor::block_on(SelfSubjectReviews.review(ctx, json!({"metadata": {"name": "x"}})));
        assert_eq!(
            answer.unwrap(),
            json!({
                "kind": "SelfSubjectReview",
                "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": "1970-01-01T00:00:00Z"},
                "status": {"userInfo": {"username": "system:anonymous", "groups": ["system:unauthenticated"]}},
            })
        );
    }
}
