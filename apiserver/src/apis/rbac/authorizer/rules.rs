//! The sans-IO core of the RBAC authorizer: which rules a user holds in a namespace, and whether one of
//! them allows a request, over the Roles, ClusterRoles and bindings as plain objects.
//!
//! Upstream: the rule resolver `DefaultRuleResolver` (`KK/pkg/registry/rbac/validation/rule.go`:
//! `VisitRulesFor`, `GetRoleReferenceRules`, `appliesTo`, the binding describers), the authorizer's
//! visitor and `RuleAllows` (`KK/plugin/pkg/auth/authorizer/rbac/rbac.go`), and the matchers of
//! `KK/pkg/apis/rbac/v1/evaluation_helpers.go`.
//!
//! Aggregated cluster roles are resolved here, when a [`Policy`] is built: a ClusterRole with an
//! `aggregationRule` holds the rules of every ClusterRole its selectors match, as the
//! clusterrole-aggregation controller would have written them (the same fixed point as
//! [`bootstrap::aggregate`]). The stored object keeps the rules it was written with; only the decision
//! sees the aggregated ones.

use serde_json::{json, Value};

use crate::apis::rbac::bootstrap;
use crate::go_text::quote;
use crate::registry::authorizer::{Attributes, Decision};
use crate::registry::user::UserInfo;

/// `rbacv1.VerbAll`, `APIGroupAll`, `ResourceAll` and `NonResourceAll` are all this.
const ALL: &str = "*";

/// `serviceaccount.ServiceAccountUsernamePrefix`.
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// The RBAC objects an evaluation reads: the cluster-wide ones, and the Roles and RoleBindings of the
/// namespace asked about (others are ignored, so a caller may pass more).
#[derive(Clone, Debug, Default)]
pub(crate) struct Policy {
    roles: Vec<Value>,
    cluster_roles: Vec<Value>,
    role_bindings: Vec<Value>,
    cluster_role_bindings: Vec<Value>,
    /// Failures of reading the objects, reported as the resolver reports a lister's error.
    read_errors: Vec<String>,
    /// Whether the objects were read from storage rather than informers' caches, which changes how a
    /// missing role reads (see [`Policy::read_from_storage`]).
    from_storage: bool,
}

impl Policy {
    /// The policy over these objects, with aggregated cluster roles given their aggregated rules.
    pub(crate) fn new(
        roles: Vec<Value>,
        mut cluster_roles: Vec<Value>,
        role_bindings: Vec<Value>,
        cluster_role_bindings: Vec<Value>,
    ) -> Policy {
        // The aggregation writes `rules` into each role it changes, which needs an object.
        cluster_roles.retain(Value::is_object);
        bootstrap::aggregate(&mut cluster_roles);
        Policy {
            roles,
            cluster_roles,
            role_bindings,
            cluster_role_bindings,
            read_errors: Vec::new(),
            from_storage: false,
        }
    }

    /// Marks the objects as read from storage, as the RBAC registry's own rule resolver reads them
    /// (`KK/pkg/registry/rbac/rest/storage_rbac.go` builds it over the stores): a missing role is then the
    /// store's NotFound, `roles.rbac.authorization.k8s.io "r" not found`, not a lister's `role...`.
    pub(crate) fn read_from_storage(mut self) -> Policy {
        self.from_storage = true;
        self
    }

    /// Records that reading some of the objects failed; the evaluation goes on with what it has.
    pub(crate) fn with_read_error(mut self, error: String) -> Policy {
        self.read_errors.push(error);
        self
    }

    /// `VisitRulesFor`: every rule the user holds in `namespace` ("" for cluster-wide requests), cluster
    /// role bindings first, then the namespace's role bindings, each in list order, with every error of
    /// resolving a binding's role in between. Stops when `visit` returns false.
    fn visit<'p>(&'p self, user: &UserInfo, namespace: &'p str, visit: &mut dyn FnMut(Found<'p>) -> bool) {
        for error in &self.read_errors {
            if !visit(Found::Error(error.clone())) {
                return;
            }
        }
        for binding in &self.cluster_role_bindings {
            let Some(subject) = applies_to(user, binding, "") else { continue };
            let source = Source { binding, subject, namespace: None };
            if !self.visit_binding(binding, "", source, visit) {
                return;
            }
        }
        if namespace.is_empty() {
            return;
        }
        for binding in self.role_bindings.iter().filter(|b| str_at(b, "/metadata/namespace") == namespace) {
            let Some(subject) = applies_to(user, binding, namespace) else { continue };
            let source = Source { binding, subject, namespace: Some(namespace) };
            if !self.visit_binding(binding, namespace, source, visit) {
                return;
            }
        }
    }

    /// The rules of one binding that applies, or the error of resolving its role; false to stop.
    fn visit_binding<'p>(
        &'p self,
        binding: &'p Value,
        namespace: &str,
        source: Source<'p>,
        visit: &mut dyn FnMut(Found<'p>) -> bool,
    ) -> bool {
        match self.role_ref_rules(binding.get("roleRef").unwrap_or(&Value::Null), namespace) {
            Err(error) => visit(Found::Error(error)),
            Ok(rules) => rules.iter().all(|rule| visit(Found::Rule(source, rule))),
        }
    }

    /// `GetRoleReferenceRules`: the rules of the role a binding refers to, or the getter's NotFound.
    pub(crate) fn role_ref_rules(&self, role_ref: &Value, namespace: &str) -> Result<&[Value], String> {
        let name = str_at(role_ref, "/name");
        // A lister's `errors.NewNotFound(rbac.Resource("role"), name)`; a store's names the plural.
        let (found, resource) = match str_at(role_ref, "/kind") {
            "Role" => (
                self.roles.iter().find(|r| {
                    !namespace.is_empty()
                        && str_at(r, "/metadata/namespace") == namespace
                        && str_at(r, "/metadata/name") == name
                }),
                if self.from_storage { "roles" } else { "role" },
            ),
            "ClusterRole" => (
                self.cluster_roles.iter().find(|r| str_at(r, "/metadata/name") == name),
                if self.from_storage { "clusterroles" } else { "clusterrole" },
            ),
            other => return Err(format!("unsupported role reference kind: {}", quote(other))),
        };
        let role = found.ok_or_else(|| format!("{resource}.rbac.authorization.k8s.io {} not found", quote(name)))?;
        Ok(role.get("rules").and_then(Value::as_array).map_or(&[][..], Vec::as_slice))
    }

    /// `RBACAuthorizer.Authorize`: allowed by the first rule that allows the request, with the binding
    /// that granted it as the reason; otherwise no opinion, with the resolution errors met on the way.
    pub(crate) fn authorize(&self, attrs: &Attributes) -> Decision {
        let namespace = attrs.resource.map_or("", |r| r.namespace);
        let mut allowed_by = None;
        let mut errors = Vec::new();
        self.visit(attrs.user, namespace, &mut |found| match found {
            Found::Rule(source, rule) if rule_allows(attrs, rule) => {
                allowed_by = Some(source.describe());
                false
            }
            Found::Rule(..) => true,
            Found::Error(error) => {
                errors.push(error);
                true
            }
        });
        match allowed_by {
            Some(source) => Decision::Allow { reason: format!("RBAC: allowed by {source}") },
            None if errors.is_empty() => Decision::NoOpinion { reason: String::new() },
            None => Decision::NoOpinion { reason: format!("RBAC: {}", aggregate_errors(&errors)) },
        }
    }

    /// `DefaultRuleResolver.RulesFor`: every rule the user holds in `namespace`, in visiting order, and
    /// the errors of resolving the roles (the list may then be incomplete, but what it holds is granted).
    pub(crate) fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<Value>, Vec<String>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        self.visit(user, namespace, &mut |found| {
            match found {
                Found::Rule(_, rule) => rules.push(rule.clone()),
                Found::Error(error) => errors.push(error),
            }
            true
        });
        (rules, errors)
    }
}

/// What visiting meets: a rule and the binding that grants it, or an error.
enum Found<'p> {
    Rule(Source<'p>, &'p Value),
    Error(String),
}

/// The binding and subject a rule is granted through (`clusterRoleBindingDescriber`,
/// `roleBindingDescriber`); `namespace` is the role binding's, `None` for a cluster role binding.
#[derive(Clone, Copy)]
struct Source<'p> {
    binding: &'p Value,
    subject: &'p Value,
    namespace: Option<&'p str>,
}

impl Source<'_> {
    /// The describer's `String()`: `ClusterRoleBinding "b" of ClusterRole "r" to User "u"`, or for a role
    /// binding `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`.
    fn describe(&self) -> String {
        let name = str_at(self.binding, "/metadata/name");
        let (kind, name, namespace) = match self.namespace {
            None => ("ClusterRoleBinding", name.to_string(), ""),
            Some(ns) => ("RoleBinding", format!("{name}/{ns}"), ns),
        };
        format!(
            "{kind} {} of {} {} to {}",
            quote(&name),
            str_at(self.binding, "/roleRef/kind"),
            quote(str_at(self.binding, "/roleRef/name")),
            describe_subject(self.subject, namespace),
        )
    }
}

/// `describeSubject`: a service account names its namespace, the binding's when it has none.
fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let kind = str_at(subject, "/kind");
    let name = str_at(subject, "/name");
    if kind == "ServiceAccount" {
        let namespace = match str_at(subject, "/namespace") {
            "" => binding_namespace,
            ns => ns,
        };
        return format!("{kind} {}", quote(&format!("{name}/{namespace}")));
    }
    format!("{kind} {}", quote(name))
}

/// `appliesTo`: the first subject of the binding that is the user.
fn applies_to<'p>(user: &UserInfo, binding: &'p Value, namespace: &str) -> Option<&'p Value> {
    let subjects = binding.get("subjects").and_then(Value::as_array)?;
    subjects.iter().find(|s| applies_to_user(user, s, namespace))
}

/// `appliesToUser`: a user by name, a group by membership, a service account by its username (in the
/// binding's namespace when the subject names none).
fn applies_to_user(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = str_at(subject, "/name");
    match str_at(subject, "/kind") {
        "User" => user.username == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let sa_namespace = match str_at(subject, "/namespace") {
                "" => namespace,
                ns => ns,
            };
            // `serviceaccount.MatchesUsername`.
            !sa_namespace.is_empty()
                && user
                    .username
                    .strip_prefix(SERVICE_ACCOUNT_PREFIX)
                    .and_then(|rest| rest.strip_prefix(sa_namespace))
                    .and_then(|rest| rest.strip_prefix(':'))
                    == Some(name)
        }
        _ => false,
    }
}

/// `RuleAllows`: a resource request by verb, API group, resource (with its subresource) and name; a
/// non-resource request by verb and path.
pub(crate) fn rule_allows(attrs: &Attributes, rule: &Value) -> bool {
    if !verb_matches(rule, attrs.verb) {
        return false;
    }
    match attrs.resource {
        Some(r) => {
            let combined = if r.subresource.is_empty() {
                r.resource.to_string()
            } else {
                format!("{}/{}", r.resource, r.subresource)
            };
            api_group_matches(rule, r.api_group)
                && resource_matches(rule, &combined, r.subresource)
                && resource_name_matches(rule, r.name)
        }
        None => non_resource_url_matches(rule, attrs.path),
    }
}

/// `VerbMatches`.
fn verb_matches(rule: &Value, verb: &str) -> bool {
    strings(rule, "verbs").any(|v| v == ALL || v == verb)
}

/// `APIGroupMatches`.
fn api_group_matches(rule: &Value, group: &str) -> bool {
    strings(rule, "apiGroups").any(|g| g == ALL || g == group)
}

/// `ResourceMatches`: `*`, the exact `resource[/subresource]`, or `*/subresource` for a subresource.
fn resource_matches(rule: &Value, combined: &str, subresource: &str) -> bool {
    strings(rule, "resources").any(|r| {
        r == ALL
            || r == combined
            || (!subresource.is_empty()
                && r.len() == subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(subresource))
    })
}

/// `ResourceNameMatches`: a rule without names allows every name.
fn resource_name_matches(rule: &Value, name: &str) -> bool {
    let mut names = strings(rule, "resourceNames").peekable();
    names.peek().is_none() || names.any(|n| n == name)
}

/// `NonResourceURLMatches`: `*`, the exact path, or a prefix ending in `*`.
fn non_resource_url_matches(rule: &Value, path: &str) -> bool {
    strings(rule, "nonResourceURLs")
        .any(|url| url == ALL || url == path || (url.ends_with('*') && path.starts_with(url.trim_end_matches('*'))))
}

/// `utilerrors.NewAggregate(errs).Error()`: one error as itself, several once each in brackets.
pub(crate) fn aggregate_errors(errors: &[String]) -> String {
    if errors.len() == 1 {
        return errors[0].clone();
    }
    let mut seen: Vec<&str> = Vec::new();
    for error in errors {
        if !seen.contains(&error.as_str()) {
            seen.push(error);
        }
    }
    match seen.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// The strings of the list `obj[key]`.
fn strings<'a>(obj: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    obj.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
}

/// The string at a JSON pointer, "" when absent.
fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `validation.Covers` (`staging/src/k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go`):
/// whether the `owner` rules allow everything the `servant` rules do, and the servant's rules broken down
/// to one verb, group, resource and name (or one verb and URL) that no owner rule covers, in order.
pub(crate) fn covers(owner: &[Value], servant: &[Value]) -> (bool, Vec<Value>) {
    let uncovered: Vec<Value> = servant
        .iter()
        .flat_map(breakdown_rule)
        .filter(|sub| !owner.iter().any(|rule| rule_covers(rule, sub)))
        .collect();
    (uncovered.is_empty(), uncovered)
}

/// `BreakdownRule`: one rule per group, resource, verb and resource name (in that nesting), then one per
/// non-resource URL and verb.
fn breakdown_rule(rule: &Value) -> Vec<Value> {
    let mut subrules = Vec::new();
    let names: Vec<&str> = strings(rule, "resourceNames").collect();
    for group in strings(rule, "apiGroups") {
        for resource in strings(rule, "resources") {
            for verb in strings(rule, "verbs") {
                if names.is_empty() {
                    subrules.push(json!({"apiGroups": [group], "resources": [resource], "verbs": [verb]}));
                }
                for name in &names {
                    subrules.push(json!({
                        "apiGroups": [group], "resources": [resource], "verbs": [verb], "resourceNames": [name],
                    }));
                }
            }
        }
    }
    for url in strings(rule, "nonResourceURLs") {
        for verb in strings(rule, "verbs") {
            subrules.push(json!({"nonResourceURLs": [url], "verbs": [verb]}));
        }
    }
    subrules
}

/// `ruleCovers`: whether one owner rule covers a broken-down rule. An owner rule with resource names
/// covers only sub-rules naming one of them; a `*` verb, group or resource covers any.
fn rule_covers(owner: &Value, sub: &Value) -> bool {
    let has_all = |key: &str| strings(sub, key).all(|s| strings(owner, key).any(|o| o == s));
    let verbs = strings(owner, "verbs").any(|v| v == ALL) || has_all("verbs");
    let groups = strings(owner, "apiGroups").any(|g| g == ALL) || has_all("apiGroups");
    let resources = resource_covers_all(owner, sub);
    let urls = strings(sub, "nonResourceURLs").all(|path| {
        strings(owner, "nonResourceURLs")
            .any(|o| o == path || (o.ends_with('*') && path.starts_with(o.trim_end_matches('*'))))
    });
    let owner_names = strings(owner, "resourceNames").next().is_some();
    let names = !owner_names || (strings(sub, "resourceNames").next().is_some() && has_all("resourceNames"));
    verbs && groups && resources && names && urls
}

/// `resourceCoversAll`: `*`, every resource named, or for a subresource `*/subresource`.
fn resource_covers_all(owner: &Value, sub: &Value) -> bool {
    let held = |r: &str| strings(owner, "resources").any(|o| o == r);
    if held(ALL) {
        return true;
    }
    strings(sub, "resources").all(|path| {
        held(path) || path.split_once('/').is_some_and(|(_, subresource)| held(&format!("*/{subresource}")))
    })
}
