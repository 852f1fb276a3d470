//! Who a client request comes from: the simple token in its `token` metadata (clientv3's key; etcd's
//! gateway uses `authorization`, which etcd accepts too), resolved by the member.

use tonic::{Request, Status};

use crate::auth::AuthInfo;
use crate::service::member::Member;

/// The metadata keys etcd reads a token from, in the order it tries them.
const TOKEN_KEYS: [&str; 2] = ["token", "authorization"];

/// The token `req` carries, if any.
pub(super) fn token_of<T>(req: &Request<T>) -> Option<String> {
    TOKEN_KEYS.iter().find_map(|key| req.metadata().get(*key)).map(|v| v.to_str().unwrap_or_default().to_string())
}

/// The user `req` was made by (nobody without a token); an unknown or expired token is refused with etcd's
/// "invalid auth token".
pub(super) fn requester<T>(member: &Member, req: &Request<T>) -> Result<AuthInfo, Status> {
    Ok(member.auth_info(token_of(req).as_deref())?)
}
