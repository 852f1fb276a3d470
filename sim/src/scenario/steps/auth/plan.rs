//! The validated `auth` step ([`Auth`]): one request of etcd's Auth service, or a client's login or
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
pub enum Auth {
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

impl Auth {
    /// Whether the answer lists names (`expect.names` applies).
    pub fn lists(&self) -> bool {
        matches!(self, Auth::UserGet { .. } | Auth::UserList | Auth::RoleGet { .. } | Auth::RoleList)
    }
}

impl fmt::Display for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Enable => f.write_str("auth enable"),
            Auth::Disable => f.write_str("auth disable"),
            Auth::UserAdd { user, password: Some(_) } => write!(f, "auth user-add {user}"),
            Auth::UserAdd { user, password: None } => write!(f, "auth user-add {user} no-password"),
            Auth::UserDelete { user } => write!(f, "auth user-delete {user}"),
            Auth::UserGet { user } => write!(f, "auth user-get {user}"),
            Auth::UserList => f.write_str("auth user-list"),
            Auth::UserChangePassword { user, .. } => write!(f, "auth user-change-password {user}"),
            Auth::UserGrantRole { user, role } => write!(f, "auth user-grant-role {user} {role}"),
            Auth::UserRevokeRole { user, role } => write!(f, "auth user-revoke-role {user} {role}"),
            Auth::RoleAdd { role } => write!(f, "auth role-add {role}"),
            Auth::RoleDelete { role } => write!(f, "auth role-delete {role}"),
            Auth::RoleGet { role } => write!(f, "auth role-get {role}"),
            Auth::RoleList => f.write_str("auth role-list"),
            Auth::RoleGrantPermission { role, keys, perm } => {
                write!(f, "auth role-grant-permission {role} {} {}", perm.name(), describe::span(keys))
            }
            Auth::RoleRevokePermission { role, keys } => {
                write!(f, "auth role-revoke-permission {role} {}", describe::span(keys))
            }
            Auth::Login { user, .. } => write!(f, "auth login {user}"),
            Auth::Logout => f.write_str("auth logout"),
        }
    }
}
