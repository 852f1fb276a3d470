//! `auth` steps: the op must be one of etcd's Auth requests (or `login`, `logout`), and the step must give
//! exactly the keys that op takes, each refusal pointing at the key (or at the op, for a missing one).

use toml::Spanned;

use super::{Result, Source};
use crate::history::KeySpan;
use crate::scenario::auth::{AuthPlan, Perm, OPS};
use crate::scenario::syntax;

/// The plan of an `auth` step.
pub(super) fn auth_plan(src: &Source, a: &syntax::Auth) -> Result<AuthPlan> {
    let op = a.op.get_ref().as_str();
    let Some((_, needs)) = OPS.iter().find(|(name, _)| *name == op) else {
        let known = OPS.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        return Err(src.err(a.op.span(), format!("`auth` op {op:?} is unknown; expected one of {known}")));
    };
    // Every key given, with its span; each must be one the op takes.
    let span = |v: &Option<Spanned<String>>| v.as_ref().map(Spanned::span);
    let given = [
        ("user", span(&a.user)),
        ("password", span(&a.password)),
        ("role", span(&a.role)),
        ("key", span(&a.key)),
        ("range_end", span(&a.range_end)),
        ("perm", span(&a.perm)),
    ];
    let takes_range = needs.contains(&"key");
    for (key, at) in &given {
        let taken = needs.contains(key) || (*key == "range_end" && takes_range);
        if let (Some(at), false) = (at, taken) {
            return Err(src.err(at.clone(), format!("`auth` op `{op}` takes no `{key}`")));
        }
    }
    for (flag, set) in [("prefix", a.prefix), ("from_key", a.from_key)] {
        if set && !takes_range {
            return Err(src.err(a.op.span(), format!("`auth` op `{op}` takes no `{flag}`")));
        }
    }
    if a.no_password && op != "user-add" {
        return Err(src.err(a.op.span(), format!("`auth` op `{op}` takes no `no_password`")));
    }
    let need = |key: &str, v: &Option<Spanned<String>>| -> Result<String> {
        v.as_ref()
            .map(|v| v.get_ref().clone())
            .ok_or_else(|| src.err(a.op.span(), format!("`auth` op `{op}` needs `{key}`")))
    };
    let user = || need("user", &a.user);
    let role = || need("role", &a.role);
    let password = || need("password", &a.password);
    Ok(match op {
        "enable" => AuthPlan::Enable,
        "disable" => AuthPlan::Disable,
        "user-add" => {
            let password = match (&a.password, a.no_password) {
                (Some(p), false) => Some(p.get_ref().clone()),
                (None, true) => None,
                (Some(p), true) => {
                    return Err(src.err(p.span(), "`password` contradicts `no_password = true`; give one of them"))
                }
                (None, false) => {
                    return Err(src.err(a.op.span(), "`auth` op `user-add` needs `password` or `no_password = true`"))
                }
            };
            AuthPlan::UserAdd { user: user()?, password }
        }
        "user-delete" => AuthPlan::UserDelete { user: user()? },
        "user-get" => AuthPlan::UserGet { user: user()? },
        "user-list" => AuthPlan::UserList,
        "user-change-password" => AuthPlan::UserChangePassword { user: user()?, password: password()? },
        "user-grant-role" => AuthPlan::UserGrantRole { user: user()?, role: role()? },
        "user-revoke-role" => AuthPlan::UserRevokeRole { user: user()?, role: role()? },
        "role-add" => AuthPlan::RoleAdd { role: role()? },
        "role-delete" => AuthPlan::RoleDelete { role: role()? },
        "role-get" => AuthPlan::RoleGet { role: role()? },
        "role-list" => AuthPlan::RoleList,
        "role-grant-permission" => {
            let perm = a.perm.as_ref().ok_or_else(|| src.err(a.op.span(), format!("`auth` op `{op}` needs `perm`")))?;
            let Some(p) = Perm::parse(perm.get_ref()) else {
                let known = Perm::NAMES.map(|n| format!("`{n}`")).join(", ");
                return Err(
                    src.err(perm.span(), format!("`perm` {:?} is unknown; expected one of {known}", perm.get_ref()))
                );
            };
            AuthPlan::RoleGrantPermission { role: role()?, keys: keys(src, a)?, perm: p }
        }
        "role-revoke-permission" => AuthPlan::RoleRevokePermission { role: role()?, keys: keys(src, a)? },
        "login" => AuthPlan::Login { user: user()?, password: password()? },
        "logout" => AuthPlan::Logout,
        _ => unreachable!("every op of OPS has its plan"),
    })
}

/// A permission's keys. Unlike a get's, an empty `key` is sent as written: etcd refuses it with its own
/// words, which a scenario may expect.
fn keys(src: &Source, a: &syntax::Auth) -> Result<KeySpan> {
    let key =
        a.key.as_ref().ok_or_else(|| src.err(a.op.span(), format!("`auth` op `{}` needs `key`", a.op.get_ref())))?;
    let k = key.get_ref().as_str();
    let set = usize::from(a.prefix) + usize::from(a.from_key) + usize::from(a.range_end.is_some());
    if set > 1 {
        return Err(src.err(key.span(), "give at most one of `prefix`, `from_key` and `range_end`"));
    }
    Ok(if a.prefix {
        KeySpan::prefix(k)
    } else if a.from_key {
        KeySpan::range(k, "\0")
    } else if let Some(end) = &a.range_end {
        KeySpan::range(k, end.get_ref().as_str())
    } else {
        KeySpan::single(k)
    })
}
