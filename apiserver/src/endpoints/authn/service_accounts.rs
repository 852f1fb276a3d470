//! The service account token authenticator: a bearer token this cluster issued, unexpired, for the
//! server's issuer, whose service account (and bound object) still exists, is that account's.

use rand::RngCore;

use crate::apis::authentication::tokenreviews;
use crate::endpoints::ApiServer;
use crate::registry::review::ReviewContext;
use crate::registry::system::uuid_v4;
use crate::registry::user::UserInfo;

/// The account of `token`, if it is one of this server's service account tokens.
pub(crate) async fn user(server: &ApiServer, token: &str) -> Option<UserInfo> {
    let served = server.served();
    let anonymous = UserInfo::anonymous();
    let ctx = ReviewContext {
        namespace: "",
        user: &anonymous,
        now_unix_s: server.clock.now_unix_s(),
        tokens: &server.config.service_account_tokens,
        stores: &served.registry,
        dry_run: &[],
        authorization: &server.config.authorization,
        static_tokens: crate::registry::token_file::TokenFile::empty(),
    };
    let audiences = vec![server.config.service_account_tokens.issuer().to_string()];
    tokenreviews::authenticate(&ctx, token, &audiences).await.ok().map(|(user, _)| user)
}

/// A fresh token id, from the server's seeded generator.
pub(crate) fn token_id(server: &ApiServer) -> String {
    let mut bytes = [0u8; 16];
    server.rng.lock().expect("the generator lock is never poisoned").fill_bytes(&mut bytes);
    uuid_v4(bytes)
}
