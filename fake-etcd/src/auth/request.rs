//! The auth requests etcd 3.4 orders through Raft, as they travel in a log entry, and the answers the store
//! gives. Passwords never travel: the serving member hashes them before proposing (etcd 3.4 hashes at apply
//! on every member, with a salt of its own; one hash for all members gives the same observable behaviour
//! and keeps every member's store, and so every snapshot, identical).

use etcd_proto::etcdserverpb::{
    AuthDisableResponse, AuthEnableResponse, AuthRoleAddResponse, AuthRoleDeleteResponse, AuthRoleGetResponse,
    AuthRoleGrantPermissionResponse, AuthRoleListResponse, AuthRoleRevokePermissionResponse, AuthUserAddResponse,
    AuthUserChangePasswordResponse, AuthUserDeleteResponse, AuthUserGetResponse, AuthUserGrantRoleResponse,
    AuthUserListResponse, AuthUserRevokeRoleResponse, AuthenticateResponse,
};
use serde::{Deserialize, Serialize};

/// What a permission allows (authpb `Permission.Type`, with its wire numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PermType {
    Read,
    Write,
    ReadWrite,
}

impl PermType {
    pub(crate) fn from_wire(n: i32) -> PermType {
        match n {
            1 => PermType::Write,
            2 => PermType::ReadWrite,
            // READ is 0, and proto3 decodes any unknown value too; etcd would store it and never match it
            // against READ or WRITE, which only arises from a broken client.
            _ => PermType::Read,
        }
    }

    pub(crate) fn to_wire(self) -> i32 {
        match self {
            PermType::Read => 0,
            PermType::Write => 1,
            PermType::ReadWrite => 2,
        }
    }

    pub(crate) fn allows_read(self) -> bool {
        matches!(self, PermType::Read | PermType::ReadWrite)
    }

    pub(crate) fn allows_write(self) -> bool {
        matches!(self, PermType::Write | PermType::ReadWrite)
    }
}

/// A key permission of a role: one key (empty `range_end`), a range `[key, range_end)`, or every key from
/// `key` on (`range_end` = `[0]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permission {
    pub perm_type: PermType,
    pub key: Vec<u8>,
    pub range_end: Vec<u8>,
}

/// A committed auth request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuthRequest {
    Enable,
    Disable,
    /// A login whose password the serving member already checked; `token_prefix` is the random part of the
    /// simple token, which the entry's index completes.
    Authenticate {
        name: String,
        token_prefix: String,
    },
    /// `hashed_password` is `None` for a user added with `--no-password`, who can never log in.
    UserAdd {
        name: String,
        hashed_password: Option<String>,
    },
    UserDelete {
        name: String,
    },
    UserChangePassword {
        name: String,
        hashed_password: String,
    },
    UserGrantRole {
        user: String,
        role: String,
    },
    UserRevokeRole {
        name: String,
        role: String,
    },
    UserGet {
        name: String,
    },
    UserList,
    RoleAdd {
        name: String,
    },
    RoleDelete {
        role: String,
    },
    RoleGet {
        role: String,
    },
    RoleList,
    RoleGrantPermission {
        name: String,
        perm: Permission,
    },
    RoleRevokePermission {
        role: String,
        key: Vec<u8>,
        range_end: Vec<u8>,
    },
}

impl AuthRequest {
    /// Whether only a user with the root role may make it while auth is enabled (etcd's
    /// `needAdminPermission`; UserGet and RoleGet are checked on their own terms, Authenticate not at all).
    pub(crate) fn needs_admin(&self) -> bool {
        !matches!(self, AuthRequest::Authenticate { .. } | AuthRequest::UserGet { .. } | AuthRequest::RoleGet { .. })
    }
}

/// The store's answer, as etcd's response message with the header left for the caller to fill.
#[derive(Clone, Debug, PartialEq)]
pub enum AuthResponse {
    Enable(AuthEnableResponse),
    Disable(AuthDisableResponse),
    /// The token is empty here: the shell completes it with the entry's index and remembers it.
    Authenticate(AuthenticateResponse),
    UserAdd(AuthUserAddResponse),
    UserDelete(AuthUserDeleteResponse),
    UserChangePassword(AuthUserChangePasswordResponse),
    UserGrantRole(AuthUserGrantRoleResponse),
    UserRevokeRole(AuthUserRevokeRoleResponse),
    UserGet(AuthUserGetResponse),
    UserList(AuthUserListResponse),
    RoleAdd(AuthRoleAddResponse),
    RoleDelete(AuthRoleDeleteResponse),
    RoleGet(AuthRoleGetResponse),
    RoleList(AuthRoleListResponse),
    RoleGrantPermission(AuthRoleGrantPermissionResponse),
    RoleRevokePermission(AuthRoleRevokePermissionResponse),
}

impl AuthResponse {
    /// The response's header, for the caller to stamp.
    pub(crate) fn header_mut(&mut self) -> &mut Option<etcd_proto::etcdserverpb::ResponseHeader> {
        match self {
            AuthResponse::Enable(r) => &mut r.header,
            AuthResponse::Disable(r) => &mut r.header,
            AuthResponse::Authenticate(r) => &mut r.header,
            AuthResponse::UserAdd(r) => &mut r.header,
            AuthResponse::UserDelete(r) => &mut r.header,
            AuthResponse::UserChangePassword(r) => &mut r.header,
            AuthResponse::UserGrantRole(r) => &mut r.header,
            AuthResponse::UserRevokeRole(r) => &mut r.header,
            AuthResponse::UserGet(r) => &mut r.header,
            AuthResponse::UserList(r) => &mut r.header,
            AuthResponse::RoleAdd(r) => &mut r.header,
            AuthResponse::RoleDelete(r) => &mut r.header,
            AuthResponse::RoleGet(r) => &mut r.header,
            AuthResponse::RoleList(r) => &mut r.header,
            AuthResponse::RoleGrantPermission(r) => &mut r.header,
            AuthResponse::RoleRevokePermission(r) => &mut r.header,
        }
    }
}
