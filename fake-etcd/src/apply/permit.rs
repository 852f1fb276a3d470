//! What a committed command needs the permission of its user for, while auth is enabled (etcd 3.4's
//! `authApplierV3`): a put writes its key (and reads it for `prev_kv`), and may not attach a lease holding
//! keys the user cannot write; a delete writes its range (and reads it for `prev_kv`); a txn is checked on
//! every key it touches; a lease revoke needs write access to every key on the lease (or the root role).
//! Auth requests are checked by the auth store itself; grants and compactions need nothing.

use super::command::Command;
use crate::auth::perms::Access;
use crate::auth::{AuthInfo, AuthStore};
use crate::error::EtcdError;
use crate::lease::Lessor;
use crate::types::LeaseId;

/// `Ok` if `by` may make `cmd` (always, while auth is disabled).
pub(super) fn check(auth: &AuthStore, lessor: &Lessor, cmd: &Command, by: &AuthInfo) -> Result<(), EtcdError> {
    if !auth.is_enabled() {
        return Ok(());
    }
    match cmd {
        Command::Put(req) => {
            auth.check(by, &req.key, &[], Access::Write)?;
            lease_keys_writable(auth, lessor, LeaseId(req.lease), by)?;
            if req.prev_kv {
                auth.check(by, &req.key, &[], Access::Read)?;
            }
            Ok(())
        }
        Command::DeleteRange(req) => {
            auth.check(by, &req.key, &req.range_end, Access::Write)?;
            if req.prev_kv {
                auth.check(by, &req.key, &req.range_end, Access::Read)?;
            }
            Ok(())
        }
        Command::Txn(req) => auth.check_txn(by, req),
        Command::LeaseRevoke(id) => lease_keys_writable(auth, lessor, *id, by),
        Command::Compact(_) | Command::LeaseGrant { .. } | Command::Auth(_) => Ok(()),
    }
}

/// A user who could not revoke a lease may not attach keys to it either: every key already on it must be
/// writable by them, unless they hold the root role.
fn lease_keys_writable(auth: &AuthStore, lessor: &Lessor, id: LeaseId, by: &AuthInfo) -> Result<(), EtcdError> {
    if id.is_none() || auth.check_admin(by).is_ok() {
        return Ok(());
    }
    for key in lessor.keys(id) {
        auth.check(by, &key, &[], Access::Write)?;
    }
    Ok(())
}
