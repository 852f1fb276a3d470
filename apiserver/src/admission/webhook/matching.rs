//! Which requests a webhook or a policy applies to, sans IO: the rules (`predicates/rules/rules.go`), the
//! object selector (`predicates/object/matcher.go`), the namespace selector's decision of whether and where
//! to look (`predicates/namespace/matcher.go`), and the exemption of the admission configurations
//! themselves (`IsExemptAdmissionConfigurationResource`). Upstream's files are under
//! `staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/`.
//!
//! `matchPolicy: Equivalent` is treated as `Exact`: kubesim serves each resource at one version, so the
//! equivalent resources upstream would try (a Deployment in `extensions/v1beta1`) do not exist here.

use serde_json::{Map, Value};

use crate::registry::admission::{Attributes, Operation};
use crate::registry::strategies::workloads::selector_matches;

/// `exactOrWildcard`: `*` or the requested value itself.
fn exact_or_wildcard(items: &[Value], requested: &str) -> bool {
    items.iter().filter_map(Value::as_str).any(|i| i == "*" || i == requested)
}

fn array<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
}

/// Whether the request is for the `namespaces` resource of the core group.
pub(crate) fn is_namespace_resource(attrs: &Attributes<'_>) -> bool {
    attrs.resource.group.is_empty() && attrs.resource.version == "v1" && attrs.resource.plural == "namespaces"
}

/// `Matcher.Matches` of one `RuleWithOperations`: scope, operation, group, version and resource (with its
/// subresource forms `x/y`, `x/*`, `*/y`, `*`, `*/*`).
pub(crate) fn rule_matches(rule: &Value, attrs: &Attributes<'_>) -> bool {
    let scope = match rule.get("scope").and_then(Value::as_str) {
        None | Some("*") => true,
        Some("Namespaced") => !is_namespace_resource(attrs) && !attrs.namespace.is_empty(),
        Some("Cluster") => is_namespace_resource(attrs) || attrs.namespace.is_empty(),
        Some(_) => false,
    };
    let operation = array(rule, "operations")
        .iter()
        .filter_map(Value::as_str)
        .any(|op| op == "*" || op == attrs.operation.as_str());
    let resource = array(rule, "resources").iter().filter_map(Value::as_str).any(|res_sub| {
        let (res, sub) = res_sub.split_once('/').unwrap_or((res_sub, ""));
        (res == "*" || res == attrs.resource.plural) && (sub == "*" || sub == attrs.subresource)
    });
    scope
        && operation
        && exact_or_wildcard(array(rule, "apiGroups"), &attrs.resource.group)
        && exact_or_wildcard(array(rule, "apiVersions"), &attrs.resource.version)
        && resource
}

/// `matchesResourceRules` of a policy's `NamedRuleWithOperations`: a rule that matches, and names the
/// request's object among its `resourceNames` when it has any.
pub(crate) fn named_rules_match(rules: &[Value], attrs: &Attributes<'_>) -> bool {
    rules.iter().any(|rule| {
        let names = array(rule, "resourceNames");
        rule_matches(rule, attrs) && (names.is_empty() || names.iter().any(|n| n.as_str() == Some(attrs.name)))
    })
}

/// Whether a label selector selects everything (`{}`: no labels, no expressions), which upstream answers
/// without looking at any labels.
pub(crate) fn selects_everything(selector: &Value) -> bool {
    let labels = selector.get("matchLabels").and_then(Value::as_object).is_none_or(Map::is_empty);
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).is_none_or(Vec::is_empty);
    labels && expressions
}

/// The labels of an object (none when it has none, an empty map).
pub(crate) fn labels_of(obj: &Value) -> Map<String, Value> {
    obj.pointer("/metadata/labels").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// `MatchObjectSelector`: the new object or the old one has matching labels. An absent object (null: the
/// new object of a delete, the old one of a create) never matches.
pub(crate) fn object_selector_matches(selector: &Value, obj: &Value, old: &Value) -> bool {
    if selects_everything(selector) {
        return true;
    }
    let matches = |o: &Value| o.is_object() && selector_matches(selector, &labels_of(o));
    matches(obj) || matches(old)
}

/// Where the labels a namespace selector is matched against come from.
#[derive(Debug, PartialEq)]
pub(crate) enum NamespaceLabels {
    /// The selector is decided without labels: it selects everything, or the request is cluster-scoped.
    Matches,
    /// The labels of the namespace object being created or updated.
    Own(Map<String, Value>),
    /// The labels of the stored namespace of this name.
    Lookup(String),
}

/// `MatchNamespaceSelector` up to the point where it reads a namespace: whether it needs to, and which.
pub(crate) fn namespace_labels(selector: &Value, attrs: &Attributes<'_>, obj: &Value) -> NamespaceLabels {
    let namespace_request = attrs.resource.plural == "namespaces";
    if attrs.namespace.is_empty() && !namespace_request {
        return NamespaceLabels::Matches;
    }
    if selects_everything(selector) {
        return NamespaceLabels::Matches;
    }
    if namespace_request
        && attrs.subresource.is_empty()
        && matches!(attrs.operation, Operation::Create | Operation::Update)
    {
        return NamespaceLabels::Own(labels_of(obj));
    }
    // A request on a namespace names it by its name; kube's request info also sets it as the namespace.
    let name = if attrs.namespace.is_empty() { attrs.name } else { attrs.namespace };
    NamespaceLabels::Lookup(name.to_string())
}

/// `IsExemptAdmissionConfigurationResource`: webhooks are never called for the objects that configure
/// admission, so that a broken webhook cannot lock its own configuration.
pub(crate) fn is_exempt_configuration(attrs: &Attributes<'_>) -> bool {
    attrs.resource.group == "admissionregistration.k8s.io"
        && matches!(
            attrs.resource.kind.as_str(),
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}
