//! Who a request runs as: kube-apiserver's authenticators in its order — client certificates
//! (`--client-ca-file`), static bearer tokens (`--token-auth-file`), service account tokens — then the
//! anonymous user (`--anonymous-auth`), then impersonation. The first authenticator that knows the
//! request wins; a credential no authenticator accepts is a 401, even where anonymous requests are
//! allowed, as upstream's union authenticator decides.

pub(crate) mod impersonation;
pub(crate) mod service_accounts;
pub mod x509;

use http::HeaderMap;

use crate::endpoints::ApiServer;
use crate::registry::user::UserInfo;

pub use crate::registry::token_file::TokenFile;
pub use x509::ClientCa;

/// `user.AllAuthenticated`: the group every authenticated user is in.
pub(crate) const AUTHENTICATED: &str = "system:authenticated";

/// The authenticators a server runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authentication {
    /// `--anonymous-auth` (on by default): a request with no credentials runs as `system:anonymous`.
    pub anonymous: bool,
    /// `--token-auth-file`, plus the binary's own admin token.
    pub tokens: TokenFile,
    /// `--client-ca-file`.
    pub client_ca: Option<ClientCa>,
}

impl Default for Authentication {
    fn default() -> Authentication {
        Authentication { anonymous: true, tokens: TokenFile::default(), client_ca: None }
    }
}

/// The client certificate chain a TLS connection presented (leaf first; empty over plain HTTP), which
/// the serving loop puts into each request's extensions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCertificates(pub Vec<Vec<u8>>);

/// Why a request is not authenticated (logged, never shown: the client gets upstream's bare 401).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unauthenticated(pub String);

/// The user of a request with these headers and client certificates.
pub(crate) async fn authenticate(
    server: &ApiServer,
    headers: &HeaderMap,
    certificates: &ClientCertificates,
) -> Result<UserInfo, Unauthenticated> {
    let config = &server.config.authentication;
    let mut errors = Vec::new();
    if let (Some(ca), false) = (&config.client_ca, certificates.0.is_empty()) {
        match ca.verify(&certificates.0, server.clock.now_unix_s()) {
            Ok(user) => return Ok(authenticated(user)),
            Err(err) => errors.push(format!("verifying certificate: {err}")),
        }
    }
    if let Some(token) = bearer(headers) {
        if let Some(user) = config.tokens.user(token) {
            return Ok(authenticated(user.clone()));
        }
        match service_accounts::user(server, token).await {
            Some(user) => return Ok(authenticated(user)),
            None => errors.push("invalid bearer token".into()),
        }
    }
    if !errors.is_empty() {
        return Err(Unauthenticated(errors.join(", ")));
    }
    if config.anonymous {
        return Ok(UserInfo::anonymous());
    }
    Err(Unauthenticated("no credentials, and anonymous requests are off".into()))
}

/// The token of an `Authorization: Bearer` header (the scheme in any case, as upstream reads it).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// `AuthenticatedGroupAdder`: every authenticated user is in `system:authenticated`.
fn authenticated(mut user: UserInfo) -> UserInfo {
    if !user.groups.iter().any(|g| g == AUTHENTICATED) && user.username != "system:anonymous" {
        user.groups.push(AUTHENTICATED.into());
    }
    user
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_as_upstream_reads_them() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert("authorization", "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert("authorization", "bearer  abc ".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert("authorization", "Basic abc".parse().unwrap());
        assert_eq!(bearer(&headers), None);
        headers.insert("authorization", "Bearer ".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn authenticated_users_join_the_authenticated_group_once() {
        let user = UserInfo { username: "bob".into(), groups: vec!["dev".into()], ..UserInfo::anonymous() };
        assert_eq!(authenticated(user.clone()).groups, vec!["dev", AUTHENTICATED]);
        assert_eq!(authenticated(authenticated(user)).groups, vec!["dev", AUTHENTICATED]);
    }
}
