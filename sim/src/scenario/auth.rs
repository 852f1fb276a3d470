//! The validated `auth` step ([`AuthPlan`]): one request of etcd's Auth service, or a client's login or
//! logout. Its text (`auth role-grant-permission reader read /secret/*`) is what traces and snapshots show.

use std::fmt;

use crate::describe;
use crate::history::KeySpan;

/// A key permission's type, as etcd's `authpb.Permission.Type` has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Perm {
    Read,
    Write,
    ReadWrite,
}

impl Perm {
    pub const NAMES: [&'static str; 3] = ["read", "write", "readwrite"];

    pub fn parse(name: &str) -> Option<Perm> {
        match name {
            "read" => Some(Perm::Read),
            "write" => Some(Perm::Write),
            "readwrite" => Some(Perm::ReadWrite),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Perm::Read => "read",
            Perm::Write => "write",
            Perm::ReadWrite => "readwrite",
        }
    }

    /// etcd's wire value (`authpb.Permission_Type`).
    pub fn wire(self) -> i32 {
        match self {
            Perm::Read => 0,
            Perm::Write => 1,
            Perm::ReadWrite => 2,
        }
    }

    pub fn from_wire(value: i32) -> &'static str {
        match value {
            0 => "read",
            1 => "write",
            2 => "readwrite",
            _ => "unknown",
        }
    }
}

/// An `auth` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthPlan {
    Enable,
    Disable,
    /// `password: None`: a user without one (`no_password = true`).
    UserAdd {
        user: String,
        password: Option<String>,
    },
    UserDelete {
        user: String,
    },
    UserGet {
        user: String,
    },
    UserList,
    UserChangePassword {
        user: String,
        password: String,
    },
    UserGrantRole {
        user: String,
        role: String,
    },
    UserRevokeRole {
        user: String,
        role: String,
    },
    RoleAdd {
        role: String,
    },
    RoleDelete {
        role: String,
    },
    RoleGet {
        role: String,
    },
    RoleList,
    RoleGrantPermission {
        role: String,
        keys: KeySpan,
        perm: Perm,
    },
    RoleRevokePermission {
        role: String,
        keys: KeySpan,
    },
    /// `Authenticate`; the token it gets goes with every later request of the client.
    Login {
        user: String,
        password: String,
    },
    /// The client forgets its token (nothing is sent).
    Logout,
}

/// Every op name, with the keys it needs besides `op` (the range keys go with `key`).
pub const OPS: &[(&str, &[&str])] = &[
    ("enable", &[]),
    ("disable", &[]),
    ("user-add", &["user", "password"]),
    ("user-delete", &["user"]),
    ("user-get", &["user"]),
    ("user-list", &[]),
    ("user-change-password", &["user", "password"]),
    ("user-grant-role", &["user", "role"]),
    ("user-revoke-role", &["user", "role"]),
    ("role-add", &["role"]),
    ("role-delete", &["role"]),
    ("role-get", &["role"]),
    ("role-list", &[]),
    ("role-grant-permission", &["role", "key", "perm"]),
    ("role-revoke-permission", &["role", "key"]),
    ("login", &["user", "password"]),
    ("logout", &[]),
];

impl AuthPlan {
    /// Whether the answer lists names (`expect.names` applies).
    pub fn lists(&self) -> bool {
        matches!(self, AuthPlan::UserGet { .. } | AuthPlan::UserList | AuthPlan::RoleGet { .. } | AuthPlan::RoleList)
    }
}

impl fmt::Display for AuthPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthPlan::Enable => f.write_str("auth enable"),
            AuthPlan::Disable => f.write_str("auth disable"),
            AuthPlan::UserAdd { user, password: Some(_) } => write!(f, "auth user-add {user}"),
            AuthPlan::UserAdd { user, password: None } => write!(f, "auth user-add {user} no-password"),
            AuthPlan::UserDelete { user } => write!(f, "auth user-delete {user}"),
            AuthPlan::UserGet { user } => write!(f, "auth user-get {user}"),
            AuthPlan::UserList => f.write_str("auth user-list"),
            AuthPlan::UserChangePassword { user, .. } => write!(f, "auth user-change-password {user}"),
            AuthPlan::UserGrantRole { user, role } => write!(f, "auth user-grant-role {user} {role}"),
            AuthPlan::UserRevokeRole { user, role } => write!(f, "auth user-revoke-role {user} {role}"),
            AuthPlan::RoleAdd { role } => write!(f, "auth role-add {role}"),
            AuthPlan::RoleDelete { role } => write!(f, "auth role-delete {role}"),
            AuthPlan::RoleGet { role } => write!(f, "auth role-get {role}"),
            AuthPlan::RoleList => f.write_str("auth role-list"),
            AuthPlan::RoleGrantPermission { role, keys, perm } => {
                write!(f, "auth role-grant-permission {role} {} {}", perm.name(), describe::span(keys))
            }
            AuthPlan::RoleRevokePermission { role, keys } => {
                write!(f, "auth role-revoke-permission {role} {}", describe::span(keys))
            }
            AuthPlan::Login { user, .. } => write!(f, "auth login {user}"),
            AuthPlan::Logout => f.write_str("auth logout"),
        }
    }
}
