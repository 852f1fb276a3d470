//! The server's authorizer: kube-apiserver's chain of `--authorization-mode`s with RBAC among them, what
//! a request is refused with, and the rules a user holds (what `SelfSubjectRulesReview` lists).
//!
//! The chain is upstream's (`KK/pkg/kubeapiserver/authorizer/reload.go` `newForConfig`, unioned by
//! `staging/src/k8s.io/apiserver/pkg/authorization/union/union.go`): members of `system:masters` are
//! allowed before any mode is asked; then each mode in order until one allows or denies, the reasons of
//! those without an opinion joined by newlines. `AlwaysAllow` allows; `AlwaysDeny` has no opinion, with
//! the reason "Everything is forbidden." (`authorizerfactory/builtin.go`; a refusal, since nothing else
//! allows); `Node` has no opinion (the simulation runs no kubelets, so no request comes from a node);
//! `RBAC` reads the Roles, ClusterRoles and bindings and evaluates them ([`rules`]).
//!
//! The core ([`decide`], [`resolve_rules`]) is a pure function of the modes, the request and a [`Policy`];
//! [`authorize`] and [`rules_for`] read the policy from the registry first, and only when RBAC is asked.

pub(crate) mod rules;
#[cfg(test)]
pub(crate) mod tests;

use serde_json::{json, Map, Value};

pub(crate) use rules::Policy;

use crate::go_text::quote;
use crate::registry::authorizer::{Attributes, Decision, Mode, Modes};
use crate::registry::rest::Registry;
use crate::registry::store::ListRequest;
use crate::registry::user::UserInfo;

use super::GROUP;

/// `user.SystemPrivilegedGroup`: its members may do anything, whatever the modes.
const SYSTEM_PRIVILEGED_GROUP: &str = "system:masters";

/// `user.NodesGroup` and the node user name prefix the node authorizer recognises a kubelet by.
const NODES_GROUP: &str = "system:nodes";
const NODE_USER_PREFIX: &str = "system:node:";

/// `authorizerfactory.alwaysDenyAuthorizer`'s reason.
const EVERYTHING_IS_FORBIDDEN: &str = "Everything is forbidden.";

/// The node authorizer's `RulesFor` error for a node: its rights are not rules.
const NODE_RULES_UNSUPPORTED: &str = "node authorizer does not support user rule resolution";

/// The decision of the chain, the policy already read (`None` when RBAC is not asked, or was not read
/// because the answer did not need it).
pub(crate) fn decide(modes: &Modes, attrs: &Attributes, policy: Option<&Policy>) -> Decision {
    // `authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)`, first in the union.
    if privileged(attrs.user) {
        return Decision::Allow { reason: String::new() };
    }
    let mut reasons: Vec<String> = Vec::new();
    for mode in &modes.0 {
        let decision = match mode {
            Mode::AlwaysAllow => Decision::Allow { reason: String::new() },
            Mode::AlwaysDeny => Decision::NoOpinion { reason: EVERYTHING_IS_FORBIDDEN.into() },
            Mode::Node => Decision::NoOpinion { reason: String::new() },
            Mode::Rbac => match policy {
                Some(policy) => policy.authorize(attrs),
                None => Policy::default().authorize(attrs),
            },
        };
        match decision {
            Decision::Allow { .. } | Decision::Deny { .. } => return decision,
            Decision::NoOpinion { reason } if !reason.is_empty() => reasons.push(reason),
            Decision::NoOpinion { .. } => {}
        }
    }
    Decision::NoOpinion { reason: reasons.join("\n") }
}

/// Whether deciding about `user` reaches RBAC: not a privileged user, and no `AlwaysAllow` before it.
fn reaches_rbac(modes: &Modes, user: &UserInfo) -> bool {
    !privileged(user) && modes.0.iter().take_while(|m| **m != Mode::AlwaysAllow).any(|m| *m == Mode::Rbac)
}

fn privileged(user: &UserInfo) -> bool {
    user.groups.iter().any(|g| g == SYSTEM_PRIVILEGED_GROUP)
}

/// The chain's decision about a request, reading the RBAC objects from `stores` when RBAC is asked.
pub(crate) async fn authorize(modes: &Modes, stores: &Registry, attrs: &Attributes<'_>) -> Decision {
    let policy = if reaches_rbac(modes, attrs.user) {
        Some(read_policy(stores, attrs.resource.map_or("", |r| r.namespace), PolicySource::Cache).await)
    } else {
        None
    };
    decide(modes, attrs, policy.as_ref())
}

/// Where the RBAC objects of a decision are read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PolicySource {
    /// The watch cache (resourceVersion "0"), as upstream's authorizer reads its informers' caches: a binding
    /// a moment old may not count yet, in both.
    Cache,
    /// The stores themselves (a consistent list), as the registry's rule resolver behind the escalation
    /// check reads them; a missing role then reads as the store's 404 text.
    Storage,
}

/// The RBAC objects a decision in `namespace` reads: every ClusterRole and ClusterRoleBinding, and the
/// namespace's Roles and RoleBindings. A kind that is not served reads as empty; a failed list is an error
/// the evaluation reports, as upstream's resolver reports a lister's.
pub(crate) async fn read_policy(stores: &Registry, namespace: &str, source: PolicySource) -> Policy {
    let cluster_role_bindings = list(stores, "clusterrolebindings", "", source).await;
    let cluster_roles = list(stores, "clusterroles", "", source).await;
    let (roles, role_bindings) = if namespace.is_empty() {
        (Ok(Vec::new()), Ok(Vec::new()))
    } else {
        (list(stores, "roles", namespace, source).await, list(stores, "rolebindings", namespace, source).await)
    };
    let mut errors = Vec::new();
    let mut objects = |read: Result<Vec<Value>, String>| {
        read.unwrap_or_else(|err| {
            errors.push(err);
            Vec::new()
        })
    };
    let (cluster_role_bindings, cluster_roles) = (objects(cluster_role_bindings), objects(cluster_roles));
    let (roles, role_bindings) = (objects(roles), objects(role_bindings));
    let mut policy = Policy::new(roles, cluster_roles, role_bindings, cluster_role_bindings);
    if source == PolicySource::Storage {
        policy = policy.read_from_storage();
    }
    for error in errors {
        policy = policy.with_read_error(error);
    }
    policy
}

/// The objects of one RBAC kind in `namespace` ("" for all), none when the kind is not served.
async fn list(stores: &Registry, plural: &str, namespace: &str, source: PolicySource) -> Result<Vec<Value>, String> {
    let Some(rest) = stores.get(&(GROUP.to_string(), "v1".to_string(), plural.to_string())) else {
        return Ok(Vec::new());
    };
    let resource_version = if source == PolicySource::Cache { "0" } else { "" };
    let request = ListRequest { resource_version: resource_version.into(), ..ListRequest::default() };
    let list = rest.list(namespace, &request).await.map_err(|err| err.to_string())?;
    Ok(list.items.iter().map(|o| o.value().clone()).collect())
}

/// `forbiddenMessage` (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`),
/// sanitized as `ForbiddenStatusError` does so that it never reads as HTML: `User "u" cannot get resource
/// "pods" in API group "" in the namespace "ns"`, `... at the cluster scope`, or for a path `User "u"
/// cannot get path "/foo"`.
pub(crate) fn forbidden_message(attrs: &Attributes) -> String {
    let user = quote(&attrs.user.username);
    let message = match attrs.resource {
        None => format!("User {user} cannot {} path {}", attrs.verb, quote(attrs.path)),
        Some(r) => {
            let resource = if r.subresource.is_empty() {
                r.resource.to_string()
            } else {
                format!("{}/{}", r.resource, r.subresource)
            };
            let scope = if r.namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace {}", quote(r.namespace))
            };
            format!(
                "User {user} cannot {} resource {} in API group {} {scope}",
                attrs.verb,
                quote(&resource),
                quote(r.api_group)
            )
        }
    };
    message.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// What the chain's rule resolvers say a user may do in a namespace (`RulesFor` of the union): the
/// `status` of a `SelfSubjectRulesReview`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SubjectRules {
    /// `authorization.k8s.io/v1` `ResourceRule`s.
    pub resource_rules: Vec<Value>,
    /// `authorization.k8s.io/v1` `NonResourceRule`s.
    pub non_resource_rules: Vec<Value>,
    pub incomplete: bool,
    /// The aggregated resolution errors, "" when none.
    pub evaluation_error: String,
}

impl SubjectRules {
    /// The `SubjectRulesReviewStatus` (both rule lists always written, the error only when there is one).
    pub(crate) fn status(&self) -> Value {
        let mut status = json!({
            "resourceRules": self.resource_rules,
            "nonResourceRules": self.non_resource_rules,
            "incomplete": self.incomplete,
        });
        if !self.evaluation_error.is_empty() {
            status["evaluationError"] = json!(self.evaluation_error);
        }
        status
    }
}

/// The rules of every mode, in order (`unionAuthzRulesHandler.RulesFor`). The privileged group is not a
/// rule resolver, so `system:masters` sees the rules its bindings give it.
pub(crate) fn resolve_rules(modes: &Modes, user: &UserInfo, namespace: &str, policy: Option<&Policy>) -> SubjectRules {
    let mut out = SubjectRules {
        resource_rules: Vec::new(),
        non_resource_rules: Vec::new(),
        incomplete: false,
        evaluation_error: String::new(),
    };
    let mut errors: Vec<String> = Vec::new();
    for mode in &modes.0 {
        match mode {
            Mode::AlwaysAllow => {
                out.resource_rules.push(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
                out.non_resource_rules.push(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
            }
            Mode::AlwaysDeny => {}
            Mode::Node => {
                if node_identity(user) {
                    out.incomplete = true;
                    errors.push(NODE_RULES_UNSUPPORTED.into());
                }
            }
            Mode::Rbac => {
                let empty = Policy::default();
                let (rules, rbac_errors) = policy.unwrap_or(&empty).rules_for(user, namespace);
                for rule in &rules {
                    push_rule_infos(rule, &mut out);
                }
                // Nested aggregates flatten when printed, so the errors join the union's list.
                errors.extend(rbac_errors);
            }
        }
    }
    out.evaluation_error = rules::aggregate_errors(&errors);
    out
}

/// The rules RBAC grants a user in a namespace, with the other modes', reading the policy when needed.
pub(crate) async fn rules_for(modes: &Modes, stores: &Registry, user: &UserInfo, namespace: &str) -> SubjectRules {
    let policy = if modes.rbac() { Some(read_policy(stores, namespace, PolicySource::Cache).await) } else { None };
    resolve_rules(modes, user, namespace, policy.as_ref())
}

/// `RBACAuthorizer.RulesFor`: a policy rule with resources is a resource rule, one with non-resource URLs
/// a non-resource rule (and, were it both, both).
fn push_rule_infos(rule: &Value, out: &mut SubjectRules) {
    let non_empty = |key: &str| rule.get(key).and_then(Value::as_array).filter(|l| !l.is_empty());
    let verbs = rule.get("verbs").cloned().unwrap_or(Value::Null);
    if non_empty("resources").is_some() {
        let mut info = Map::new();
        info.insert("verbs".into(), verbs.clone());
        for key in ["apiGroups", "resources", "resourceNames"] {
            if let Some(list) = non_empty(key) {
                info.insert(key.into(), Value::Array(list.clone()));
            }
        }
        out.resource_rules.push(Value::Object(info));
    }
    if let Some(urls) = non_empty("nonResourceURLs") {
        out.non_resource_rules.push(json!({"verbs": verbs, "nonResourceURLs": urls}));
    }
}

/// `NodeIdentity`: a `system:node:` user in the `system:nodes` group.
fn node_identity(user: &UserInfo) -> bool {
    user.username.starts_with(NODE_USER_PREFIX) && user.groups.iter().any(|g| g == NODES_GROUP)
}
