//! What authorization decides about, as data: kube's `authorizer.Attributes` of a request, the
//! `--authorization-mode` list, and a `Decision`. The modes themselves are evaluated above this layer
//! (`apis::rbac::authorizer` reads Roles and bindings from the registry); the endpoints ask before a
//! request reaches its handler, and the access reviews ask the same question for someone else.

use crate::registry::user::UserInfo;

/// One `--authorization-mode` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Every request is allowed (kube-apiserver's default when no mode is given).
    AlwaysAllow,
    /// Every request is denied.
    AlwaysDeny,
    /// The node authorizer: accepted for `Node,RBAC`; it has no opinion about anyone but kubelets, which
    /// the simulation does not run.
    Node,
    /// Role-based access control over Roles, ClusterRoles and their bindings.
    Rbac,
}

impl Mode {
    /// A mode by its flag name (`AlwaysAllow`, `AlwaysDeny`, `Node`, `RBAC`).
    pub fn parse(name: &str) -> Result<Mode, String> {
        match name {
            "AlwaysAllow" => Ok(Mode::AlwaysAllow),
            "AlwaysDeny" => Ok(Mode::AlwaysDeny),
            "Node" => Ok(Mode::Node),
            "RBAC" => Ok(Mode::Rbac),
            other => Err(format!(
                "authorization-mode {other:?} is not a valid mode (supported: AlwaysAllow, AlwaysDeny, Node, RBAC)"
            )),
        }
    }
}

/// The server's authorization chain, asked in order until one mode decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modes(pub Vec<Mode>);

impl Default for Modes {
    fn default() -> Modes {
        Modes(vec![Mode::AlwaysAllow])
    }
}

impl Modes {
    /// `--authorization-mode`'s value: comma separated, no repeats.
    pub fn parse(list: &str) -> Result<Modes, String> {
        let mut modes = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let mode = Mode::parse(name)?;
            if modes.contains(&mode) {
                return Err(format!("authorization-mode {name:?} has mode specified more than once"));
            }
            modes.push(mode);
        }
        if modes.is_empty() {
            return Err("at least one authorization-mode must be passed".into());
        }
        Ok(Modes(modes))
    }

    /// Whether any mode consults RBAC.
    pub fn rbac(&self) -> bool {
        self.0.contains(&Mode::Rbac)
    }
}

/// What a request asks to do (`authorizer.AttributesRecord`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attributes<'a> {
    pub user: &'a UserInfo,
    /// The verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`, or for
    /// non-resource requests the lowercased HTTP method; `impersonate`, `bind`, `escalate`, `use` and the
    /// like for the checks that name them.
    pub verb: &'a str,
    /// A resource request (`Some`) or a non-resource path (`None`, with `path`).
    pub resource: Option<ResourceAttributes<'a>>,
    /// The path of a non-resource request (`/healthz`, `/apis`).
    pub path: &'a str,
}

/// The resource part of [`Attributes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceAttributes<'a> {
    pub namespace: &'a str,
    pub api_group: &'a str,
    pub api_version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub name: &'a str,
}

/// What a mode decided, and why (the reason RBAC gives, shown in a 403 and in access reviews).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow { reason: String },
    Deny { reason: String },
    NoOpinion { reason: String },
}

impl Decision {
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allow { .. })
    }

    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow { reason } | Decision::Deny { reason } | Decision::NoOpinion { reason } => reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_as_kube_apiserver_reads_the_flag() {
        assert_eq!(Modes::parse("Node,RBAC"), Ok(Modes(vec![Mode::Node, Mode::Rbac])));
        assert_eq!(Modes::parse("AlwaysAllow"), Ok(Modes(vec![Mode::AlwaysAllow])));
        assert!(Modes::parse("RBAC,RBAC").unwrap_err().contains("more than once"));
        assert!(Modes::parse("ABAC").unwrap_err().contains("not a valid mode"));
        assert!(Modes::parse("").is_err());
    }
}
