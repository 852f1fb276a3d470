//! `AuthStore`: users, roles, the enabled flag and the auth revision, and what each committed auth request
//! does to them (etcd 3.4's `auth/store.go` with the admin checks of `etcdserver/apply_auth.go`).
//!
//! Maps are ordered, so listings come out in name order as etcd's bolt buckets give them, and the store
//! serialises to the same bytes on every member.

use std::collections::BTreeMap;

use etcd_proto::authpb;
use etcd_proto::etcdserverpb::*;
use serde::{Deserialize, Serialize};

use super::request::{AuthRequest, AuthResponse, Permission};
use super::{AuthInfo, ROOT};
use crate::error::EtcdError;
use crate::types::AuthRevision;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct User {
    /// Sorted, without duplicates (etcd keeps them sorted to binary-search for the root role).
    pub roles: Vec<String>,
    /// The bcrypt hash; `None` for a user added with `--no-password`.
    pub password: Option<String>,
}

impl User {
    pub(crate) fn has_role(&self, role: &str) -> bool {
        self.roles.binary_search_by(|r| r.as_str().cmp(role)).is_ok()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Role {
    /// Sorted by key (etcd sorts by key only, so two ranges from one key keep their grant order).
    pub perms: Vec<Permission>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthStore {
    enabled: bool,
    revision: AuthRevision,
    users: BTreeMap<String, User>,
    roles: BTreeMap<String, Role>,
}

impl Default for AuthStore {
    fn default() -> AuthStore {
        AuthStore::new()
    }
}

type Answer = Result<AuthResponse, EtcdError>;

impl AuthStore {
    /// A fresh store: disabled, no users or roles, at revision 1 (etcd commits revision 1 when it creates the
    /// store, so that 0 can mean "no user").
    pub(crate) fn new() -> AuthStore {
        AuthStore { enabled: false, revision: AuthRevision(1), users: BTreeMap::new(), roles: BTreeMap::new() }
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled
    }

    pub(crate) fn revision(&self) -> AuthRevision {
        self.revision
    }

    pub(crate) fn user(&self, name: &str) -> Option<&User> {
        self.users.get(name)
    }

    pub(crate) fn role(&self, name: &str) -> Option<&Role> {
        self.roles.get(name)
    }

    /// The password hash to check a login against, and the revision it was read at (etcd's
    /// `CheckPassword`, split so the slow bcrypt comparison runs outside the member's lock).
    pub(crate) fn password_hash(&self, name: &str) -> Result<(String, AuthRevision), EtcdError> {
        if !self.enabled {
            return Err(EtcdError::AuthNotEnabled);
        }
        match self.users.get(name).map(|u| u.password.clone()) {
            Some(Some(hash)) => Ok((hash, self.revision)),
            // etcd 3.4.23 passes this one on untranslated (measured: code Unknown, the auth package's text).
            Some(None) => Err(EtcdError::AuthUntranslated(
                "authentication failed, password was given for no password user".into(),
            )),
            None => Err(EtcdError::AuthFailed),
        }
    }

    /// Whether `by` may administer auth: anyone while auth is disabled, a user with the root role otherwise
    /// (etcd's `IsAdminPermitted`; it does not look at the revision).
    pub(crate) fn check_admin(&self, by: &AuthInfo) -> Result<(), EtcdError> {
        if !self.enabled {
            return Ok(());
        }
        if by.user.is_empty() {
            return Err(EtcdError::UserEmpty);
        }
        match self.users.get(&by.user) {
            None => Err(EtcdError::UserNotFound),
            Some(u) if !u.has_role(ROOT) => Err(EtcdError::PermissionDenied),
            Some(_) => Ok(()),
        }
    }

    /// Applies one committed auth request made by `by`. An `Err` leaves the store unchanged.
    pub(crate) fn apply(&mut self, req: &AuthRequest, by: &AuthInfo) -> Answer {
        if req.needs_admin() {
            self.check_admin(by)?;
        }
        match req {
            AuthRequest::Enable => self.enable(),
            AuthRequest::Disable => {
                if self.enabled {
                    self.enabled = false;
                    self.bump();
                }
                Ok(AuthResponse::Disable(AuthDisableResponse::default()))
            }
            AuthRequest::Authenticate { name, .. } => self.authenticate(name),
            AuthRequest::UserAdd { name, hashed_password } => self.user_add(name, hashed_password.clone()),
            AuthRequest::UserDelete { name } => self.user_delete(name),
            AuthRequest::UserChangePassword { name, hashed_password } => {
                let user = self.users.get_mut(name).ok_or(EtcdError::UserNotFound)?;
                user.password = Some(hashed_password.clone());
                self.bump();
                Ok(AuthResponse::UserChangePassword(AuthUserChangePasswordResponse::default()))
            }
            AuthRequest::UserGrantRole { user, role } => self.user_grant_role(user, role),
            AuthRequest::UserRevokeRole { name, role } => self.user_revoke_role(name, role),
            AuthRequest::UserGet { name } => {
                // A user may look at themself; anyone else needs the root role.
                if let Err(e) = self.check_admin(by) {
                    if *name != by.user {
                        return Err(e);
                    }
                }
                let user = self.users.get(name).ok_or(EtcdError::UserNotFound)?;
                Ok(AuthResponse::UserGet(AuthUserGetResponse { header: None, roles: user.roles.clone() }))
            }
            AuthRequest::UserList => {
                let users = self.users.keys().cloned().collect();
                Ok(AuthResponse::UserList(AuthUserListResponse { header: None, users }))
            }
            AuthRequest::RoleAdd { name } => self.role_add(name),
            AuthRequest::RoleDelete { role } => self.role_delete(role),
            AuthRequest::RoleGet { role } => self.role_get(role, by),
            AuthRequest::RoleList => {
                let roles = self.roles.keys().cloned().collect();
                Ok(AuthResponse::RoleList(AuthRoleListResponse { header: None, roles }))
            }
            AuthRequest::RoleGrantPermission { name, perm } => self.role_grant_permission(name, perm),
            AuthRequest::RoleRevokePermission { role, key, range_end } => {
                self.role_revoke_permission(role, key, range_end)
            }
        }
    }

    /// etcd's `commitRevision`.
    fn bump(&mut self) {
        self.revision = self.revision.next();
    }

    /// Enabling needs a root user holding the root role; enabling twice is a no-op. Neither moves the
    /// revision (etcd 3.4 re-reads it rather than committing a new one).
    fn enable(&mut self) -> Answer {
        if !self.enabled {
            let root = self.users.get(ROOT).ok_or(EtcdError::RootUserNotExist)?;
            if !root.has_role(ROOT) {
                return Err(EtcdError::RootRoleNotExist);
            }
            self.enabled = true;
        }
        Ok(AuthResponse::Enable(AuthEnableResponse::default()))
    }

    fn authenticate(&self, name: &str) -> Answer {
        if !self.enabled {
            return Err(EtcdError::AuthNotEnabled);
        }
        // The password was checked before Raft; a user deleted or made password-less since fails here.
        match self.users.get(name) {
            Some(u) if u.password.is_some() => Ok(AuthResponse::Authenticate(AuthenticateResponse::default())),
            _ => Err(EtcdError::AuthFailed),
        }
    }

    fn user_add(&mut self, name: &str, password: Option<String>) -> Answer {
        if name.is_empty() {
            return Err(EtcdError::UserEmpty);
        }
        if self.users.contains_key(name) {
            return Err(EtcdError::UserAlreadyExist);
        }
        self.users.insert(name.to_string(), User { roles: Vec::new(), password });
        self.bump();
        Ok(AuthResponse::UserAdd(AuthUserAddResponse::default()))
    }

    fn user_delete(&mut self, name: &str) -> Answer {
        if self.enabled && name == ROOT {
            return Err(EtcdError::InvalidAuthMgmt);
        }
        self.users.remove(name).ok_or(EtcdError::UserNotFound)?;
        self.bump();
        Ok(AuthResponse::UserDelete(AuthUserDeleteResponse::default()))
    }

    /// Granting a role twice is not an error and changes nothing. The root role may be granted before it
    /// exists (etcdctl's `auth enable` relies on it).
    fn user_grant_role(&mut self, user: &str, role: &str) -> Answer {
        if !self.users.contains_key(user) {
            return Err(EtcdError::UserNotFound);
        }
        if role != ROOT && !self.roles.contains_key(role) {
            return Err(EtcdError::RoleNotFound);
        }
        let u = self.users.get_mut(user).expect("checked above");
        if let Err(at) = u.roles.binary_search_by(|r| r.as_str().cmp(role)) {
            u.roles.insert(at, role.to_string());
            self.bump();
        }
        Ok(AuthResponse::UserGrantRole(AuthUserGrantRoleResponse::default()))
    }

    fn user_revoke_role(&mut self, name: &str, role: &str) -> Answer {
        if self.enabled && name == ROOT && role == ROOT {
            return Err(EtcdError::InvalidAuthMgmt);
        }
        let user = self.users.get_mut(name).ok_or(EtcdError::UserNotFound)?;
        let at = user.roles.binary_search_by(|r| r.as_str().cmp(role)).map_err(|_| EtcdError::RoleNotGranted)?;
        user.roles.remove(at);
        self.bump();
        Ok(AuthResponse::UserRevokeRole(AuthUserRevokeRoleResponse::default()))
    }

    fn role_add(&mut self, name: &str) -> Answer {
        if name.is_empty() {
            return Err(EtcdError::RoleEmpty);
        }
        if self.roles.contains_key(name) {
            return Err(EtcdError::RoleAlreadyExist);
        }
        self.roles.insert(name.to_string(), Role::default());
        self.bump();
        Ok(AuthResponse::RoleAdd(AuthRoleAddResponse::default()))
    }

    /// Deleting a role also takes it from every user that holds it.
    fn role_delete(&mut self, role: &str) -> Answer {
        if self.enabled && role == ROOT {
            return Err(EtcdError::InvalidAuthMgmt);
        }
        self.roles.remove(role).ok_or(EtcdError::RoleNotFound)?;
        for user in self.users.values_mut() {
            user.roles.retain(|r| r != role);
        }
        self.bump();
        Ok(AuthResponse::RoleDelete(AuthRoleDeleteResponse::default()))
    }

    /// A user may read a role they hold; anyone else needs the root role. The root role lists no
    /// permissions of its own: it is allowed everything without them.
    fn role_get(&self, role: &str, by: &AuthInfo) -> Answer {
        if let Err(e) = self.check_admin(by) {
            if !self.users.get(&by.user).is_some_and(|u| u.roles.iter().any(|r| r == role)) {
                return Err(e);
            }
        }
        let found = self.roles.get(role).ok_or(EtcdError::RoleNotFound)?;
        let perm = found
            .perms
            .iter()
            .map(|p| authpb::Permission {
                perm_type: p.perm_type.to_wire(),
                key: p.key.clone(),
                range_end: p.range_end.clone(),
            })
            .collect();
        Ok(AuthResponse::RoleGet(AuthRoleGetResponse { header: None, perm }))
    }

    /// A permission on exactly the same key and range end replaces the old one's type; any other is added,
    /// and the list kept sorted by key.
    fn role_grant_permission(&mut self, name: &str, perm: &Permission) -> Answer {
        let role = self.roles.get_mut(name).ok_or(EtcdError::RoleNotFound)?;
        // etcd looks only at the first permission whose key is not below the new one's.
        let at = role.perms.partition_point(|p| p.key < perm.key);
        match role.perms.get_mut(at).filter(|p| p.key == perm.key && p.range_end == perm.range_end) {
            Some(existing) => existing.perm_type = perm.perm_type,
            None => {
                role.perms.push(perm.clone());
                // A stable sort on the key alone, as etcd's `permSlice` orders them.
                role.perms.sort_by(|a, b| a.key.cmp(&b.key));
            }
        }
        self.bump();
        Ok(AuthResponse::RoleGrantPermission(AuthRoleGrantPermissionResponse::default()))
    }

    fn role_revoke_permission(&mut self, name: &str, key: &[u8], range_end: &[u8]) -> Answer {
        let role = self.roles.get_mut(name).ok_or(EtcdError::RoleNotFound)?;
        let before = role.perms.len();
        role.perms.retain(|p| p.key != key || p.range_end != range_end);
        if role.perms.len() == before {
            return Err(EtcdError::PermissionNotGranted);
        }
        self.bump();
        Ok(AuthResponse::RoleRevokePermission(AuthRoleRevokePermissionResponse::default()))
    }
}
