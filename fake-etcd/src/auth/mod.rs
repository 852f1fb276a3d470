//! etcd's authentication and authorization as pure state: users, roles and their key permissions, the
//! enabled flag and the auth revision ([`AuthStore`], applied from committed [`AuthRequest`]s), the
//! permission checks every KV request passes while auth is enabled ([`perms`]), password hashes
//! ([`password`]) and the in-memory simple tokens with their TTL ([`SimpleTokens`]).
//!
//! Semantics are etcd 3.4's `auth/store.go`, `auth/range_perm_cache.go`, `auth/simple_token.go` and
//! `etcdserver/apply_auth.go`. What this module must not do: read a clock (time comes in as
//! [`crate::types::Millis`]), draw randomness (salts and token prefixes come in from the shell, which draws
//! them from the member's seeded generator), or know about Raft, gRPC metadata or the member.

pub mod password;
pub(crate) mod perms;
mod request;
mod store;
mod tokens;

#[cfg(test)]
mod tests;

pub(crate) use request::{AuthRequest, AuthResponse, PermType, Permission};
pub(crate) use store::AuthStore;
pub use tokens::SIMPLE_TOKEN_TTL_S;
pub(crate) use tokens::{token_prefix, SimpleTokens};

use serde::{Deserialize, Serialize};

use crate::types::AuthRevision;

/// The name of the user and of the role that may do everything (etcd's `rootUser` and `rootRole`).
pub(crate) const ROOT: &str = "root";

/// Who sent a request, as the serving member resolved its token: etcd's `AuthInfo`, carried in the Raft
/// entry's header (`RequestHeader.username` and `auth_revision`) so that every member checks a write
/// against the same user. The default, an empty user at revision 0, is a request without a token.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AuthInfo {
    pub user: String,
    /// The auth store's revision when the token was resolved; a store that moved on since refuses the
    /// request with "revision of auth store is old".
    pub revision: AuthRevision,
}

impl AuthInfo {
    /// Whether this is a request without a user (no token).
    pub(crate) fn is_anonymous(&self) -> bool {
        self.user.is_empty() && self.revision == AuthRevision(0)
    }
}
