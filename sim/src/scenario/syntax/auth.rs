//! `auth = { op = "...", ... }`: one request of etcd's Auth service, as etcdctl's `user`, `role` and `auth`
//! commands send them, plus `login` and `logout`, which give the step's client a simple token (every later
//! request of that client carries it, as clientv3 does after `Authenticate`) or take it away. Which of the
//! other keys an op takes is checked by validation, each refusal at its place.

use serde::{Deserialize, Serialize};
use toml::Spanned;

/// An Auth request as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Auth {
    /// `enable`, `disable`, `user-add`, `user-delete`, `user-get`, `user-list`, `user-change-password`,
    /// `user-grant-role`, `user-revoke-role`, `role-add`, `role-delete`, `role-get`, `role-list`,
    /// `role-grant-permission`, `role-revoke-permission`, `login`, `logout`.
    pub op: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<Spanned<String>>,
    /// `user-add`: a user without a password, who cannot log in (etcd 3.4's `--no-password`).
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub no_password: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Spanned<String>>,
    /// The permission's keys: `key` alone, or with `prefix = true`, `range_end` or `from_key = true`, as a
    /// get's. An empty `key` is sent as it is (etcd refuses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub from_key: bool,
    /// `role-grant-permission`: `read`, `write` or `readwrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perm: Option<Spanned<String>>,
}
