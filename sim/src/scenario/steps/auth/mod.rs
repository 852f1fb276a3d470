//! `auth = { op = "...", ... }`: one request of etcd's Auth service from the step's client, as etcdctl's
//! `user`, `role` and `auth` commands send them, plus `login` and `logout`, which give the step's client a
//! simple token (every later request of that client carries it, as clientv3 does after `Authenticate`) or
//! take it away. The op must be one etcd has, and the step must give exactly the keys that op takes, each
//! refusal pointing at the key (or at the op, for a missing one). Auth requests are not filed in the KV
//! history: they change no key, and what they change shows in the answers of the requests after them. It
//! judges the outcome, etcd's error, and for the listing ops the names listed.

pub mod plan;
mod send;

use std::fmt::{self, Formatter};

use etcd_proto::etcdserverpb as pb;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ctx::{Finished, RunCx};
use super::judging::StepJudge;
use super::observed::{AuthOutcome, Observed};
use super::{ClientKind, PlanCx, StepKind};
use crate::history::KeySpan;
use crate::scenario::lang::expectations::Expectations;
use crate::scenario::lang::names::Gives;
use crate::scenario::lang::source::{Result, Source};
use crate::scenario::lang::suggest;
use crate::scenario::lang::value::is_false;
pub use plan::{Auth, Perm, OPS};

/// An Auth request as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    /// `enable`, `disable`, `user-add`, `user-delete`, `user-get`, `user-list`, `user-change-password`,
    /// `user-grant-role`, `user-revoke-role`, `role-add`, `role-delete`, `role-get`, `role-list`,
    /// `role-grant-permission`, `role-revoke-permission`, `login`, `logout`.
    pub op: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<Spanned<String>>,
    /// `user-add`: a user without a password, who cannot log in (etcd 3.4's `--no-password`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_password: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Spanned<String>>,
    /// The permission's keys: `key` alone, or with `prefix = true`, `range_end` or `from_key = true`, as a
    /// get's. An empty `key` is sent as it is (etcd refuses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_end: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub from_key: bool,
    /// `role-grant-permission`: `read`, `write` or `readwrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perm: Option<Spanned<String>>,
}

impl StepKind for Auth {
    const KEY: &'static str = "auth";
    const CLIENT: ClientKind = ClientKind::Etcd;
    const GIVES: Gives = Gives::Nothing;
    type Syntax = Syntax;

    fn variants() -> &'static [(&'static str, &'static [&'static str])] {
        &[("request", &["outcome", "error"]), ("listing", &["outcome", "error", "names"]), ("logout", &[])]
    }

    fn variant(&self) -> &'static str {
        match self {
            Auth::Logout => "logout",
            a if a.lists() => "listing",
            _ => "request",
        }
    }

    fn plan(cx: &PlanCx, syntax: &Spanned<Syntax>) -> Result<Auth> {
        auth_plan(cx.src, syntax.get_ref())
    }

    fn text(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }

    async fn run(&self, cx: &mut RunCx<'_>) -> Finished {
        let client = &mut *cx.client;
        let outcome = match self {
            Auth::Logout => {
                client.set_token(None);
                AuthOutcome::Ok(Vec::new())
            }
            Auth::Login { user, password } => {
                let req = pb::AuthenticateRequest { name: user.clone(), password: password.clone() };
                let (outcome, token) = send::send(
                    client,
                    |mut a, r| async move { a.authenticate(r).await },
                    req,
                    |r| (Vec::new(), Some(r.token.clone())),
                )
                .await;
                if let Some(token) = token {
                    client.set_token(Some(token));
                }
                outcome
            }
            _ => send::request(client, self).await,
        };
        cx.ctx.trace.event(cx.client_name, format_args!("{} {self} -> {outcome}", cx.label));
        (Observed::Auth(outcome), None, None)
    }

    /// The answer: its outcome, etcd's code and text for a refusal, the names a list returned.
    fn judge(&self, j: &mut StepJudge<'_>, observed: &Observed, expect: Option<&Expectations>) {
        let (Observed::Auth(answer), Some(e)) = (observed, expect) else { return };
        let got = answer.to_string();
        if let Some(want) = e.outcome {
            let (ok, err, unknown) = match answer {
                AuthOutcome::Ok(_) => (true, false, false),
                AuthOutcome::Err(_) => (false, true, false),
                AuthOutcome::Unknown(_) => (false, false, true),
            };
            j.outcome(want, &got, ok, unknown, err, false);
        }
        if let Some(want) = &e.error {
            let status = match answer {
                AuthOutcome::Err(status) => Some(status),
                _ => None,
            };
            j.error(want, status, &got);
        }
        if let Some(want) = &e.names {
            let what = format!("names {want:?}");
            match answer {
                AuthOutcome::Ok(names) => j.push("names", what, names == want, format!("got {names:?}")),
                _ => j.fail("names", &what, got),
            }
        }
    }
}

/// The plan of an `auth` step.
pub fn auth_plan(src: &Source, a: &Syntax) -> Result<Auth> {
    let op = a.op.get_ref().as_str();
    let Some((_, needs)) = OPS.iter().find(|(name, _)| *name == op) else {
        let known = OPS.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        let hint = suggest::hint(op, OPS.iter().map(|(n, _)| *n));
        return Err(src.err(a.op.span(), format!("`auth` op {op:?} is unknown; expected one of {known}{hint}")));
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
        "enable" => Auth::Enable,
        "disable" => Auth::Disable,
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
            Auth::UserAdd { user: user()?, password }
        }
        "user-delete" => Auth::UserDelete { user: user()? },
        "user-get" => Auth::UserGet { user: user()? },
        "user-list" => Auth::UserList,
        "user-change-password" => Auth::UserChangePassword { user: user()?, password: password()? },
        "user-grant-role" => Auth::UserGrantRole { user: user()?, role: role()? },
        "user-revoke-role" => Auth::UserRevokeRole { user: user()?, role: role()? },
        "role-add" => Auth::RoleAdd { role: role()? },
        "role-delete" => Auth::RoleDelete { role: role()? },
        "role-get" => Auth::RoleGet { role: role()? },
        "role-list" => Auth::RoleList,
        "role-grant-permission" => {
            let perm = a.perm.as_ref().ok_or_else(|| src.err(a.op.span(), format!("`auth` op `{op}` needs `perm`")))?;
            let Some(p) = Perm::parse(perm.get_ref()) else {
                let known = Perm::NAMES.map(|n| format!("`{n}`")).join(", ");
                return Err(
                    src.err(perm.span(), format!("`perm` {:?} is unknown; expected one of {known}", perm.get_ref()))
                );
            };
            Auth::RoleGrantPermission { role: role()?, keys: keys(src, a)?, perm: p }
        }
        "role-revoke-permission" => Auth::RoleRevokePermission { role: role()?, keys: keys(src, a)? },
        "login" => Auth::Login { user: user()?, password: password()? },
        "logout" => Auth::Logout,
        _ => unreachable!("every op of OPS has its plan"),
    })
}

/// A permission's keys. Unlike a get's, an empty `key` is sent as written: etcd refuses it with its own
/// words, which a scenario may expect.
fn keys(src: &Source, a: &Syntax) -> Result<KeySpan> {
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
