//! Who a request runs as. The one authenticator this server has is kube's service account token
//! authenticator: a `Bearer` token this cluster issued, unexpired, whose service account still exists,
//! makes the request that account's. Every other request (no token, or a token this server does not know,
//! such as the `kubesim` placeholder of the kubeconfig it writes) runs as the anonymous user, which the
//! `AlwaysAllow` authorizer lets do anything: kube-apiserver would answer an unknown token 401, which the
//! authentication step of the next issue brings.

use rand::RngCore;

use crate::apis::authentication::tokenreviews;
use crate::endpoints::ApiServer;
use crate::registry::review::ReviewContext;
use crate::registry::system::uuid_v4;
use crate::registry::user::UserInfo;

/// The user of a request with this `Authorization` header.
pub(crate) async fn user(server: &ApiServer, authorization: Option<&str>) -> UserInfo {
    let Some(token) = authorization.and_then(|h| h.strip_prefix("Bearer ")).map(str::trim) else {
        return UserInfo::anonymous();
    };
    let served = server.served();
    let anonymous = UserInfo::anonymous();
    let ctx = ReviewContext {
        namespace: "",
        user: &anonymous,
        now_unix_s: server.clock.now_unix_s(),
        tokens: &server.config.service_account_tokens,
        stores: &served.registry,
        dry_run: &[],
    };
    let audiences = vec![server.config.service_account_tokens.issuer().to_string()];
    match tokenreviews::authenticate(&ctx, token, &audiences).await {
        Ok((user, _)) => user,
        Err(_) => anonymous,
    }
}

/// A fresh token id, from the server's seeded generator.
pub(crate) fn token_id(server: &ApiServer) -> String {
    let mut bytes = [0u8; 16];
    server.rng.lock().expect("the generator lock is never poisoned").fill_bytes(&mut bytes);
    uuid_v4(bytes)
}
