//! RBAC's escalation prevention: a user may write a Role or ClusterRole only with rules they hold
//! themselves, and a RoleBinding or ClusterRoleBinding only to a role whose rules they hold, unless they
//! may `escalate` the role or `bind` the role referred to, or are in `system:masters`.
//!
//! Upstream this is not an admission plugin but the RBAC REST storage wrapping each store
//! (`KK/pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go`, with
//! `KK/pkg/registry/rbac/escalation_check.go`, `helpers.go` and `validation/rule.go` `ConfirmNoEscalation`).
//! Here it is one step of the admission chain, which carries the writer's identity to the registry; it is
//! on whenever `--authorization-mode` includes RBAC, whatever the admission flags, and it runs in the
//! mutating phase after every plugin, which is where upstream's storage sees a write: after mutating
//! admission, before the strategy's validation and validating admission.
//!
//! The sans-IO core is [`confirm_no_escalation`] (the rules check and upstream's message), with
//! [`compact_rules`], [`compact_string`] and [`only_gc_fields_change`]; [`RbacEscalation`] reads the
//! RBAC objects from storage and asks the authorizer about `escalate` and `bind`.
//!
//! What differs from upstream: a RoleBinding's namespace is the request's, which the registry always has,
//! so upstream's 400 "namespace is required" never arises; the managed fields are ignored, with the
//! finalizers and owner references, when deciding that an update changes only what the garbage collector
//! changes (the field manager rewrites them on every write).

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};
use serde_json::{json, Map, Value};

use crate::admission::{Plugin, Request};
use crate::apis::rbac::authorizer::rules::{aggregate_errors, covers};
use crate::apis::rbac::authorizer::{authorize, read_policy, PolicySource};
use crate::apis::rbac::GROUP;
use crate::go_text::quote;
use crate::registry::admission::Operation;
use crate::registry::authorizer::{Attributes, Modes, ResourceAttributes};
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;
use crate::registry::user::UserInfo;
use crate::storage::status::GroupResource;

/// The step's name, as [`crate::admission::Plugins::names`] lists it (no flag names it).
const NAME: &str = "RBACEscalationPrevention";

/// `user.SystemPrivilegedGroup`: `EscalationAllowed` lets its members write anything.
const SYSTEM_PRIVILEGED_GROUP: &str = "system:masters";

/// The ClusterRole storage's refusal of an `aggregationRule` to someone without `*` on everything.
const AGGREGATION_NEEDS_CLUSTER_ADMIN: &str = "must have cluster-admin privileges to use the aggregationRule";

/// The escalation check of a server whose authorization `modes` include RBAC; none otherwise (without RBAC
/// no stored role grants anything, so nothing is refused).
pub(crate) fn make(modes: &Modes) -> Option<Arc<dyn Plugin>> {
    modes.rbac().then(|| Arc::new(RbacEscalation { modes: modes.clone() }) as Arc<dyn Plugin>)
}

/// The check, with the chain of authorizers it asks about `escalate` and `bind`.
pub(crate) struct RbacEscalation {
    modes: Modes,
}

impl Plugin for RbacEscalation {
    fn name(&self) -> &'static str {
        NAME
    }

    fn admit<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move { self.check(req, obj, old).await })
    }
}

impl RbacEscalation {
    /// Creates and updates of the four RBAC kinds by anyone outside `system:masters`.
    async fn check(&self, req: &Request<'_>, obj: &Value, old: &Value) -> Result<(), RegistryError> {
        let attrs = &req.attrs;
        let update = match attrs.operation {
            Operation::Create => false,
            Operation::Update => true,
            Operation::Delete | Operation::Connect => return Ok(()),
        };
        if attrs.resource.group != GROUP || !attrs.subresource.is_empty() || escalation_allowed(req.user) {
            return Ok(());
        }
        match attrs.resource.plural.as_str() {
            plural @ ("roles" | "clusterroles") => self.check_role(req, plural, obj, update.then_some(old)).await,
            plural @ ("rolebindings" | "clusterrolebindings") => {
                self.check_binding(req, plural, obj, update.then_some(old)).await
            }
            _ => Ok(()),
        }
    }

    /// The Role and ClusterRole storages' `Create` and `Update` (`old` is the current object on update).
    async fn check_role(
        &self,
        req: &Request<'_>,
        plural: &str,
        obj: &Value,
        old: Option<&Value>,
    ) -> Result<(), RegistryError> {
        let namespace = req.attrs.namespace;
        // `RoleEscalationAuthorized` asks about the request's own name, which a create's URL has not.
        let request_name = if old.is_some() { req.attrs.name } else { "" };
        let role = ResourceAttributes {
            namespace,
            api_group: GROUP,
            api_version: "*",
            resource: plural,
            subresource: "",
            name: request_name,
        };
        if self.allowed(req, "escalate", role).await {
            return Ok(());
        }
        if old.is_some_and(|old| only_gc_fields_change(obj, old)) {
            return Ok(());
        }
        let name = str_at(obj, "/metadata/name");
        let (owner, errors) =
            read_policy(req.registry, namespace, PolicySource::Storage).await.rules_for(req.user, namespace);
        confirm_no_escalation(req.user, &owner, &errors, rules_of(obj)).map_err(|why| forbidden(plural, name, why))?;
        // An aggregation rule can gather any rule, so setting, changing or dropping one needs everything.
        let aggregates = has_aggregation_rule(obj) || old.is_some_and(has_aggregation_rule);
        if plural == "clusterroles"
            && aggregates
            && confirm_no_escalation(req.user, &owner, &errors, &full_authority()).is_err()
        {
            return Err(forbidden(plural, name, AGGREGATION_NEEDS_CLUSTER_ADMIN.into()));
        }
        Ok(())
    }

    /// The RoleBinding and ClusterRoleBinding storages' `Create` and `Update`.
    async fn check_binding(
        &self,
        req: &Request<'_>,
        plural: &str,
        obj: &Value,
        old: Option<&Value>,
    ) -> Result<(), RegistryError> {
        // The binding's namespace, "" for a cluster role binding (`metav1.NamespaceAll`).
        let namespace = req.attrs.namespace;
        if old.is_some_and(|old| only_gc_fields_change(obj, old)) {
            return Ok(());
        }
        let role_ref = obj.get("roleRef").unwrap_or(&Value::Null);
        let role_resource = match str_at(role_ref, "/kind") {
            "ClusterRole" => Some("clusterroles"),
            "Role" => Some("roles"),
            _ => None,
        };
        if let Some(resource) = role_resource {
            // `BindingAuthorized`: `bind` on the role referred to, in the binding's namespace.
            let role = ResourceAttributes {
                namespace,
                api_group: str_at(role_ref, "/apiGroup"),
                api_version: "",
                resource,
                subresource: "",
                name: str_at(role_ref, "/name"),
            };
            if self.allowed(req, "bind", role).await {
                return Ok(());
            }
        }
        let policy = read_policy(req.registry, namespace, PolicySource::Storage).await;
        // `GetRoleReferenceRules` through the stores: a missing role is the store's 404, an unknown kind an
        // error that is no `Status` (upstream answers it as a 500; validation would refuse it later).
        let rules = policy.role_ref_rules(role_ref, namespace).map_err(|why| match role_resource {
            Some(resource) => RegistryError::NotFound {
                resource: GroupResource::new(GROUP, resource),
                name: str_at(role_ref, "/name").to_string(),
            },
            None => RegistryError::Unconverted(why),
        })?;
        let (owner, errors) = policy.rules_for(req.user, namespace);
        confirm_no_escalation(req.user, &owner, &errors, rules)
            .map_err(|why| forbidden(plural, str_at(obj, "/metadata/name"), why))
    }

    /// Whether the authorizer chain allows `verb` on `resource` to the request's user.
    async fn allowed(&self, req: &Request<'_>, verb: &str, resource: ResourceAttributes<'_>) -> bool {
        let attrs = Attributes { user: req.user, verb, resource: Some(resource), path: "" };
        authorize(&self.modes, req.registry, &attrs).await.allowed()
    }
}

/// `EscalationAllowed`: members of `system:masters` write any role and binding.
fn escalation_allowed(user: &UserInfo) -> bool {
    user.groups.iter().any(|g| g == SYSTEM_PRIVILEGED_GROUP)
}

/// `ConfirmNoEscalation`: `Ok` when the `owner` rules (those the user holds, resolved with `errors`) cover
/// `rules`; otherwise the refusal's reason, each missing rule once in byte order, and the resolution
/// errors after them, since a rule that failed to resolve may be the one missing.
pub(crate) fn confirm_no_escalation(
    user: &UserInfo,
    owner: &[Value],
    errors: &[String],
    rules: &[Value],
) -> Result<(), String> {
    let (covered, missing) = covers(owner, rules);
    if covered {
        return Ok(());
    }
    let described: BTreeSet<String> = compact_rules(missing).iter().map(compact_string).collect();
    let mut reason = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        quote(&user.username),
        quote_list(user.groups.iter().map(String::as_str)),
        described.into_iter().collect::<Vec<_>>().join("\n"),
    );
    if !errors.is_empty() {
        // `%v` of a one-element `[]error` holding the resolver's aggregate.
        reason.push_str(&format!("; resolution errors: [{}]", aggregate_errors(errors)));
    }
    Err(reason)
}

/// `CompactRules` (`KK/pkg/registry/rbac/validation/policy_compact.go`): the rules naming only verbs, one
/// API group and one resource merged per group and resource, their verbs in order; the others as they are,
/// before them. (Upstream's merged rules follow in map order, which the sorted message hides.)
pub(crate) fn compact_rules(rules: Vec<Value>) -> Vec<Value> {
    let mut compacted = Vec::new();
    let mut simple: Vec<((String, String), Value)> = Vec::new();
    for rule in rules {
        let Some(key) = simple_resource(&rule) else {
            compacted.push(rule);
            continue;
        };
        match simple.iter_mut().find(|(k, _)| *k == key) {
            Some((_, existing)) => {
                let verbs: Vec<Value> = strings(&rule, "verbs").map(|v| json!(v)).collect();
                if let Some(list) = existing.get_mut("verbs").and_then(Value::as_array_mut) {
                    list.extend(verbs);
                } else if let Some(map) = existing.as_object_mut() {
                    map.insert("verbs".into(), Value::Array(verbs));
                }
            }
            None => simple.push((key, rule)),
        }
    }
    compacted.extend(simple.into_iter().map(|(_, rule)| rule));
    compacted
}

/// `isSimpleResourceRule`: the group and resource of a rule with one of each, verbs, and nothing else.
fn simple_resource(rule: &Value) -> Option<(String, String)> {
    let map = rule.as_object()?;
    let only_simple_fields =
        map.iter().all(|(key, value)| matches!(key.as_str(), "apiGroups" | "resources" | "verbs") || is_empty(value));
    let groups: Vec<&str> = strings(rule, "apiGroups").collect();
    let resources: Vec<&str> = strings(rule, "resources").collect();
    match (only_simple_fields, groups.as_slice(), resources.as_slice()) {
        (true, [group], [resource]) => Some((group.to_string(), resource.to_string())),
        _ => None,
    }
}

/// `CompactString` (`KK/pkg/apis/rbac/v1/evaluation_helpers.go`):
/// `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`, each non-empty list in that fixed order.
pub(crate) fn compact_string(rule: &Value) -> String {
    let fields = [
        ("APIGroups", "apiGroups"),
        ("Resources", "resources"),
        ("NonResourceURLs", "nonResourceURLs"),
        ("ResourceNames", "resourceNames"),
        ("Verbs", "verbs"),
    ];
    let parts: Vec<String> = fields
        .iter()
        .filter(|(_, key)| strings(rule, key).next().is_some())
        .map(|(label, key)| format!("{label}:{}", quote_list(strings(rule, key))))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn quote_list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    format!("[{}]", items.map(quote).collect::<Vec<_>>().join(" "))
}

/// `IsOnlyMutatingGCFields` (`KK/pkg/registry/rbac/helpers.go`): whether the update changes nothing but
/// what the garbage collector changes (owner references and finalizers), compared as upstream's semantic
/// equality does, where an empty list or string is the same as none.
pub(crate) fn only_gc_fields_change(obj: &Value, old: &Value) -> bool {
    if !old.is_object() {
        return false;
    }
    let mut copied = obj.clone();
    let old_meta = old.get("metadata");
    if let Some(meta) = copied.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in ["ownerReferences", "finalizers", "selfLink", "managedFields"] {
            match old_meta.and_then(|m| m.get(field)) {
                Some(value) => meta.insert(field.to_string(), value.clone()),
                None => meta.remove(field),
            };
        }
    }
    semantic(&copied) == semantic(old)
}

/// A value with every null, empty string, empty list and empty object dropped (a Go zero value and an
/// absent field decode alike).
fn semantic(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), semantic(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// `hasAggregationRule`: an `aggregationRule` with at least one selector.
fn has_aggregation_rule(role: &Value) -> bool {
    role.pointer("/aggregationRule/clusterRoleSelectors").and_then(Value::as_array).is_some_and(|s| !s.is_empty())
}

/// The ClusterRole storage's `fullAuthority`: `*` on every resource and every non-resource URL.
fn full_authority() -> Vec<Value> {
    vec![
        json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
        json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
    ]
}

/// A role's `rules`, none when absent.
fn rules_of(role: &Value) -> &[Value] {
    role.get("rules").and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
}

/// `errors.NewForbidden(rbac.Resource(plural), name, err)`: without a name (a create by `generateName`)
/// the message names only the resource, and the details no name.
fn forbidden(plural: &str, name: &str, reason: String) -> RegistryError {
    let resource = GroupResource::new(GROUP, plural);
    if !name.is_empty() {
        return RegistryError::Forbidden { resource, name: name.to_string(), reason };
    }
    RegistryError::Admission(Box::new(Status {
        code: Some(403),
        details: Some(StatusDetails {
            group: Some(GROUP.to_string()),
            kind: Some(plural.to_string()),
            ..StatusDetails::default()
        }),
        message: Some(format!("{} is forbidden: {reason}", resource.qualified())),
        metadata: ListMeta::default(),
        reason: Some("Forbidden".to_string()),
        status: Some("Failure".to_string()),
    }))
}

/// The strings of the list `obj[key]`.
fn strings<'a>(obj: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    obj.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
}

/// The string at a JSON pointer, "" when absent.
fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}
