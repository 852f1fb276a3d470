//! TokenReviews, `authentication.k8s.io/v1` (`KK/pkg/registry/authentication/tokenreview`): whether a
//! bearer token authenticates, and as whom. A create answers the review with its status; nothing is stored.
//!
//! The tokens this server knows are the service account tokens it issued (`serviceaccounts/token`): one
//! authenticates while it has not expired, is for one of the audiences asked for (by default the
//! server's, its issuer), and its service account still exists with the uid it was issued for. Any other
//! token does not authenticate, and the status says why.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::authentication::unstored_meta;
use crate::apis::{printers, ResourceInfo, Verb};
use crate::registry::error::RegistryError;
use crate::registry::resource::Resource;
use crate::registry::rest::BoxFuture;
use crate::registry::review::{Review, ReviewContext, Unstored};
use crate::registry::tokens::{Claims, ServiceAccountTokens, TokenError};
use crate::registry::user::UserInfo;
use crate::storage::GetOptions;

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        verbs: &[Verb::Create],
        review: Some(Arc::new(TokenReviews)),
        ..ResourceInfo::new(
            resource(),
            "tokenreview",
            Arc::new(Unstored { namespaced: false }),
            printers::default_printer(),
        )
    }
}

fn resource() -> Resource {
    Resource {
        group: "authentication.k8s.io".into(),
        version: "v1".into(),
        kind: "TokenReview".into(),
        plural: "tokenreviews".into(),
        etcd_prefix: "tokenreviews".into(),
    }
}

struct TokenReviews;

impl Review for TokenReviews {
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, mut obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move {
            let token = obj.pointer("/spec/token").and_then(Value::as_str).unwrap_or("").to_string();
            if token.is_empty() {
                return Err(RegistryError::BadRequest("token is required for TokenReview in authentication".into()));
            }
            let audiences = requested_audiences(&obj, ctx.tokens);
            let result = match static_token(&ctx, &token, &audiences) {
                Some(result) => result,
                None => authenticate(&ctx, &token, &audiences).await,
            };
            let status = match result {
                Ok((user, audiences)) => {
                    json!({"authenticated": true, "user": user.to_json(), "audiences": audiences})
                }
                Err(why) => json!({"user": {}, "error": why}),
            };
            unstored_meta(&mut obj);
            obj["status"] = status;
            Ok(obj)
        })
    }
}

/// The audiences the review asks about: its own, or the server's (`--api-audiences`, the issuer).
fn requested_audiences(obj: &Value, tokens: &ServiceAccountTokens) -> Vec<String> {
    let asked: Vec<String> = obj
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if asked.is_empty() {
        vec![tokens.issuer().to_string()]
    } else {
        asked
    }
}

/// The user of a static token (`--token-auth-file`), if it is one. Static tokens know no audiences: they
/// are for the server's own (`WrapAudienceAgnosticToken`), so a review asking for others fails.
fn static_token(
    ctx: &ReviewContext<'_>,
    token: &str,
    audiences: &[String],
) -> Option<Result<(UserInfo, Vec<String>), String>> {
    let mut user = ctx.static_tokens.user(token)?.clone();
    let implicit = vec![ctx.tokens.issuer().to_string()];
    let accepted: Vec<String> = audiences.iter().filter(|a| implicit.contains(a)).cloned().collect();
    if accepted.is_empty() {
        return Some(Err(format!(
            "token audiences {} is invalid for the target audiences {}",
            go_quoted(&implicit),
            go_quoted(audiences)
        )));
    }
    if !user.groups.iter().any(|g| g == "system:authenticated") {
        user.groups.push("system:authenticated".into());
    }
    Some(Ok((user, accepted)))
}

/// The user a service account token stands for, and the audiences it was accepted for; or why not.
pub(crate) async fn authenticate(
    ctx: &ReviewContext<'_>,
    token: &str,
    audiences: &[String],
) -> Result<(UserInfo, Vec<String>), String> {
    let claims = ctx.tokens.verify(token, ctx.now_unix_s, audiences).map_err(|e| match e {
        TokenError::Audience { got, want } => {
            format!("token audiences {} is invalid for the target audiences {}", go_quoted(&got), go_quoted(&want))
        }
        other => other.to_string(),
    })?;
    let accepted: Vec<String> = claims.aud.iter().filter(|a| audiences.contains(a)).cloned().collect();
    check_account(ctx, &claims).await?;
    let account = &claims.kubernetes;
    let user = UserInfo::service_account(
        &account.namespace,
        &account.serviceaccount.name,
        &account.serviceaccount.uid,
        &claims.jti,
    );
    Ok((user, accepted))
}

/// The token's service account must still be the one it was issued for (`validator.Validate`).
async fn check_account(ctx: &ReviewContext<'_>, claims: &Claims) -> Result<(), String> {
    let Some(accounts) = ctx.store("", "v1", "serviceaccounts") else {
        return Err("service account token has been invalidated".into());
    };
    let account = &claims.kubernetes.serviceaccount;
    let stored = accounts
        .get(&claims.kubernetes.namespace, &account.name, &GetOptions::default())
        .await
        .map_err(|_| "service account token has been invalidated".to_string())?;
    let uid = stored.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("");
    if uid != account.uid {
        return Err(format!("service account UID ({uid}) does not match claim ({})", account.uid));
    }
    if stored.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return Err(format!("service account {}/{} has been deleted", claims.kubernetes.namespace, account.name));
    }
    Ok(())
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn go_quoted(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_STORES: crate::registry::rest::Registry = crate::registry::rest::Registry::new();

    fn ctx<'a>(tokens: &'a ServiceAccountTokens, user: &'a UserInfo) -> ReviewContext<'a> {
        static MODES: std::sync::LazyLock<crate::registry::authorizer::Modes> =
            std::sync::LazyLock::new(crate::registry::authorizer::Modes::default);
        ReviewContext {
            namespace: "",
            user,
            now_unix_s: 2000,
            tokens,
            stores: &NO_STORES,
            dry_run: &[],
            authorization: &MODES,
            static_tokens: crate::registry::token_file::TokenFile::empty(),
        }
    }

    fn review(obj: Value) -> Result<Value, RegistryError> {
        let tokens = ServiceAccountTokens::from_seed(0);
        let user = UserInfo::anonymous();
        futures::executor::block_on(TokenReviews.review(ctx(&tokens, &user), obj))
    }

    #[test]
    fn static_tokens_review_as_their_user_for_the_servers_audience_only() {
        use crate::registry::tokens::DEFAULT_ISSUER;
        let tokens = ServiceAccountTokens::from_seed(0);
        let user = UserInfo::anonymous();
        let file = crate::registry::token_file::TokenFile::parse("t.csv", "bob-token,bob,7,dev\n").unwrap();
        let ctx = || ReviewContext { static_tokens: &file, ..ctx(&tokens, &user) };
        let run = |obj| futures::executor::block_on(TokenReviews.review(ctx(), obj)).unwrap()["status"].clone();
        assert_eq!(
            run(json!({"spec": {"token": "bob-token"}})),
            json!({
                "authenticated": true,
                "user": {"username": "bob", "uid": "7", "groups": ["dev", "system:authenticated"]},
                "audiences": [DEFAULT_ISSUER],
            })
        );
        assert_eq!(
            run(json!({"spec": {"token": "bob-token", "audiences": ["vault"]}})),
            json!({"user": {}, "error": format!("token audiences [\"{DEFAULT_ISSUER}\"] is invalid for the target audiences [\"vault\"]")})
        );
    }

    #[test]
    fn a_review_needs_a_token() {
        assert_eq!(
            review(json!({"spec": {}})),
            Err(RegistryError::BadRequest("token is required for TokenReview in authentication".into()))
        );
    }

    #[test]
    fn a_token_this_server_did_not_issue_does_not_authenticate() {
        assert_eq!(
            review(json!({"spec": {"token": "kubesim"}})).unwrap(),
            json!({"spec": {"token": "kubesim"}, "metadata": {"creationTimestamp": null}, "status": {"user": {}, "error": "invalid bearer token"}})
        );
    }

    #[test]
    fn audiences_default_to_the_issuer_and_print_as_go_does() {
        let tokens = ServiceAccountTokens::from_seed(0);
        assert_eq!(requested_audiences(&json!({"spec": {}}), &tokens), [crate::registry::tokens::DEFAULT_ISSUER]);
        assert_eq!(requested_audiences(&json!({"spec": {"audiences": ["a"]}}), &tokens), ["a"]);
        assert_eq!(go_quoted(&["a".into(), "b".into()]), r#"["a" "b"]"#);
    }
}
