//! The ValidatingAdmissionPolicy plugin: the stored `ValidatingAdmissionPolicy` objects, applied through
//! their `ValidatingAdmissionPolicyBinding`s, their CEL `validations` evaluated against each request they
//! match, as kube-apiserver 1.32 does (`staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/`:
//! `validating/dispatcher.go`, `validating/validator.go`, `generic/policy_dispatcher.go` (`CollectParams`),
//! `generic/policy_matcher.go`, `matching/matching.go`).
//!
//! The sans-IO core is [`Policy::validate`] (match conditions and validations over bound variables, to
//! decisions), [`resource_rules_match`], [`collect_params`]' checks and [`denial`] (the request's answer);
//! [`ValidatingAdmissionPolicy`] reads policies, bindings, namespaces and params from the registry.
//!
//! What differs from upstream: `validationActions` `Warn` and `Audit` are accepted and do nothing (the
//! plugin interface carries no warnings or audit annotations), nor do `auditAnnotations`; `matchPolicy:
//! Equivalent` matches as `Exact`; a `paramKind` is resolved to its resource by upstream's
//! `UnsafeGuessKindToResource` (lower-case plural) rather than discovery; `variables` are evaluated
//! eagerly in order and one that fails is left unbound; the `authorizer` variable is not bound. Policies
//! are applied in name order and bindings in name order, so the first denial is deterministic.

#[cfg(test)]
mod tests;

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause};
use serde_json::Value;

use crate::admission::webhook::cel::{self, ConditionsResult, Expression, Variables};
use crate::admission::webhook::{forbidden_status, list, matching, namespace_matches, read};
use crate::admission::{Plugin, Request};
use crate::registry::admission::Attributes;
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;
use crate::registry::strategies::workloads::selector_matches;

/// Upstream's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// The resources no policy sees (kube-apiserver's `ExcludedAdmissionResources`): reviews that are never
/// stored.
const EXCLUDED: &[(&str, &str)] = &[
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
];

/// One `validations` entry, compiled.
#[derive(Debug)]
pub(crate) struct Validation {
    expression: Expression,
    message: String,
    reason: Option<String>,
    message_expression: Option<Expression>,
}

/// A policy, compiled.
#[derive(Debug)]
pub(crate) struct Policy {
    pub(crate) name: String,
    /// `failurePolicy` (`Fail` when unset).
    pub(crate) failure_policy: String,
    /// `paramKind` as `(apiVersion, kind)`.
    pub(crate) param_kind: Option<(String, String)>,
    pub(crate) match_constraints: Option<Value>,
    conditions: Vec<(String, Expression)>,
    variables: Vec<(String, Expression)>,
    validations: Vec<Validation>,
}

impl Policy {
    pub(crate) fn parse(obj: &Value) -> Policy {
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let items = |k: &str| spec.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let param_kind = spec
            .get("paramKind")
            .filter(|p| p.is_object())
            .map(|p| (text(p, "apiVersion").unwrap_or_default(), text(p, "kind").unwrap_or_default()));
        Policy {
            name: obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string(),
            failure_policy: text(&spec, "failurePolicy").unwrap_or_else(|| "Fail".into()),
            param_kind,
            match_constraints: spec.get("matchConstraints").filter(|m| m.is_object()).cloned(),
            conditions: cel::compile_conditions(&items("matchConditions")),
            variables: cel::compile_conditions(&items("variables")),
            validations: items("validations")
                .iter()
                .map(|v| Validation {
                    expression: Expression::compile(v.get("expression").and_then(Value::as_str).unwrap_or("")),
                    message: text(v, "message").unwrap_or_default(),
                    reason: text(v, "reason").filter(|r| !r.is_empty()),
                    message_expression: text(v, "messageExpression")
                        .filter(|m| !m.is_empty())
                        .map(|m| Expression::compile(&m)),
                })
                .collect(),
        }
    }

    fn ignores_failures(&self) -> bool {
        self.failure_policy == "Ignore"
    }

    /// `validator.Validate`: the decisions of the policy's validations for one param (`vars` binds
    /// `object`, `oldObject`, `request`, `params` and `namespaceObject`). Only refusals are returned.
    pub(crate) fn validate(&self, vars: &Variables) -> Vec<Decision> {
        // An evaluation error under `failurePolicy: Ignore` admits.
        let error = |message: String| if self.ignores_failures() { None } else { Some(Decision::error(message)) };
        let mut vars = vars.clone();
        if !self.conditions.is_empty() {
            match cel::eval_conditions(&self.conditions, &vars) {
                ConditionsResult::Match => {}
                ConditionsResult::NoMatch(_) => return Vec::new(),
                ConditionsResult::Error(e) => return error(e).into_iter().collect(),
            }
        }
        let mut bound = std::collections::HashMap::new();
        for (name, expr) in &self.variables {
            if let Ok(value) = expr.eval(&vars) {
                bound.insert(name.clone(), value);
                vars.set_value("variables", ::cel::Value::from(bound.clone()));
            }
        }
        let mut decisions = Vec::new();
        for v in &self.validations {
            match v.expression.eval(&vars) {
                Ok(::cel::Value::Bool(true)) => {}
                Ok(_) => decisions.push(Decision {
                    message: v.failure_message(&vars),
                    reason: v.reason.clone().unwrap_or_else(|| "Invalid".into()),
                }),
                Err(e) => decisions.extend(error(e)),
            }
        }
        decisions
    }
}

impl Validation {
    /// The message of a failed validation: its messageExpression's (trimmed, one line, at most 5 KiB), else
    /// its message, else `failed expression: <expression>`.
    fn failure_message(&self, vars: &Variables) -> String {
        if let Some(Ok(::cel::Value::String(m))) = self.message_expression.as_ref().map(|e| e.eval(vars)) {
            let m = m.trim();
            if !m.is_empty() && m.len() <= MAX_MESSAGE_BYTES && !m.contains('\n') {
                return m.to_string();
            }
        }
        let message = self.message.trim();
        if !message.is_empty() {
            return message.to_string();
        }
        format!("failed expression: {}", self.expression.source.trim())
    }
}

/// A refusal: a failed validation, an evaluation error or a configuration error under `Fail`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Decision {
    pub(crate) message: String,
    /// The status reason (`Invalid` unless the validation names one).
    pub(crate) reason: String,
}

impl Decision {
    fn error(message: String) -> Decision {
        Decision { message, reason: "Invalid".into() }
    }
}

/// A binding of a policy.
#[derive(Debug)]
pub(crate) struct Binding {
    pub(crate) name: String,
    pub(crate) policy_name: String,
    pub(crate) param_ref: Option<Value>,
    pub(crate) match_resources: Option<Value>,
    /// `validationActions` holds `Deny`.
    pub(crate) deny: bool,
}

impl Binding {
    pub(crate) fn parse(obj: &Value) -> Binding {
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let actions = spec.get("validationActions").and_then(Value::as_array).cloned().unwrap_or_default();
        Binding {
            name: obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string(),
            policy_name: spec.get("policyName").and_then(Value::as_str).unwrap_or("").to_string(),
            param_ref: spec.get("paramRef").filter(|p| p.is_object()).cloned(),
            match_resources: spec.get("matchResources").filter(|m| m.is_object()).cloned(),
            deny: actions.iter().any(|a| a.as_str() == Some("Deny")),
        }
    }
}

/// The resource rules of `matchResources`: not excluded, and included (no `resourceRules` includes all).
pub(crate) fn resource_rules_match(match_resources: &Value, attrs: &Attributes<'_>) -> bool {
    let rules = |k: &str| match_resources.get(k).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if matching::named_rules_match(rules("excludeResourceRules"), attrs) {
        return false;
    }
    let include = rules("resourceRules");
    include.is_empty() || matching::named_rules_match(include, attrs)
}

/// `UnsafeGuessKindToResource`: the plural of a kind (`ConfigMap` → `configmaps`, `Policy` → `policies`).
pub(crate) fn guess_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else if lower.is_empty() {
        lower
    } else {
        format!("{lower}s")
    }
}

/// Where a binding's params are read from, as `CollectParams` decides before reading.
#[derive(Debug, PartialEq)]
pub(crate) enum ParamSource {
    /// The policy takes no params, or the binding names none: one evaluation without params.
    None,
    /// The object of this name in this namespace ("" for a cluster-scoped kind).
    Named { namespace: String, name: String },
    /// The objects of this namespace ("" for all) that the selector selects.
    Selected { namespace: String, selector: Value },
}

/// `CollectParams` up to the read: which params, or the binding's configuration error.
pub(crate) fn param_source(
    has_param_kind: bool,
    namespaced: bool,
    param_ref: Option<&Value>,
    request_ns: &str,
) -> Result<ParamSource, String> {
    let Some(param_ref) = param_ref.filter(|_| has_param_kind) else { return Ok(ParamSource::None) };
    let text = |k: &str| param_ref.get(k).and_then(Value::as_str).unwrap_or("");
    let mut namespace = String::new();
    if namespaced {
        namespace = if text("namespace").is_empty() { request_ns.to_string() } else { text("namespace").to_string() };
        if namespace.is_empty() {
            return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
        }
    } else if !text("namespace").is_empty() {
        return Err("paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into());
    }
    let selector = param_ref.get("selector").filter(|s| !s.is_null());
    match (text("name"), selector) {
        ("", None) => Err("one of name or selector must be provided".into()),
        ("", Some(selector)) => Ok(ParamSource::Selected { namespace, selector: selector.clone() }),
        (_, Some(_)) => Err("paramRef.name and paramRef.selector are mutually exclusive".into()),
        (name, None) => Ok(ParamSource::Named { namespace, name: name.to_string() }),
    }
}

/// A binding's params turned out empty: refused under `parameterNotFoundAction: Deny`.
fn no_params(param_ref: Option<&Value>) -> Result<(), String> {
    match param_ref.and_then(|p| p.get("parameterNotFoundAction")).and_then(Value::as_str) {
        Some("Deny") => Err("no params found for policy binding with `Deny` parameterNotFoundAction".into()),
        _ => Ok(()),
    }
}

/// The request's answer to the first refusal (`dispatcher.Dispatch`): `NewForbidden` of the request with
/// the policy's message, the decision's reason and its code (`reasonToCode`), and the message as a cause.
pub(crate) fn denial(
    attrs: &Attributes<'_>,
    obj: &Value,
    policy: &str,
    binding: Option<&str>,
    decision: &Decision,
) -> Status {
    let message = match binding {
        Some(b) => {
            format!("ValidatingAdmissionPolicy '{policy}' with binding '{b}' denied request: {}", decision.message)
        }
        None => format!("ValidatingAdmissionPolicy '{policy}' denied request: {}", decision.message),
    };
    // `extractResourceName`: the request's name, else the object's name or generateName, else "Unknown".
    let meta = |k: &str| obj.pointer(&format!("/metadata/{k}")).and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = Some(attrs.name).filter(|n| !n.is_empty()).or_else(|| meta("name")).or_else(|| meta("generateName"));
    let mut status = forbidden_status(attrs, name.unwrap_or("Unknown"), &message);
    status.code = Some(match decision.reason.as_str() {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    });
    status.reason = Some(decision.reason.clone());
    if let Some(details) = status.details.as_mut() {
        details
            .causes
            .get_or_insert_with(Vec::new)
            .push(StatusCause { message: Some(message), ..StatusCause::default() });
    }
    status
}

/// The ValidatingAdmissionPolicy plugin.
pub(crate) struct ValidatingAdmissionPolicy;

/// The plugin's constructor.
pub(crate) fn make() -> Arc<dyn Plugin> {
    Arc::new(ValidatingAdmissionPolicy)
}

/// The first refusal so far: policy, binding, decision.
type Denied = Option<(String, Option<String>, Decision)>;

const GROUP: &str = "admissionregistration.k8s.io";

impl ValidatingAdmissionPolicy {
    /// Whether `match_resources` matches the request: selectors (the namespace one read from the registry)
    /// and resource rules, in upstream's order (a namespace error counts only if the rest matches).
    async fn matches(req: &Request<'_>, mr: &Value, obj: &Value, old: &Value) -> Result<bool, RegistryError> {
        let empty = Value::Object(Default::default());
        let object_selector = mr.get("objectSelector").unwrap_or(&empty);
        if !matching::object_selector_matches(object_selector, obj, old) || !resource_rules_match(mr, &req.attrs) {
            return Ok(false);
        }
        namespace_matches(req, mr.get("namespaceSelector").unwrap_or(&empty), obj).await
    }

    /// The params of a binding: read as `source` says.
    async fn params(
        req: &Request<'_>,
        resource: (&str, &str, &str),
        source: ParamSource,
    ) -> Result<Vec<Value>, RegistryError> {
        match source {
            ParamSource::None => Ok(vec![Value::Null]),
            ParamSource::Named { namespace, name } => {
                Ok(read(req.registry, resource, &namespace, &name).await?.into_iter().collect())
            }
            ParamSource::Selected { namespace, selector } => Ok(list(req.registry, resource, &namespace)
                .await?
                .into_iter()
                .filter(|p| selector_matches(&selector, &matching::labels_of(p)))
                .collect()),
        }
    }

    async fn validate_all(&self, req: &Request<'_>, obj: &Value, old: &Value) -> Result<(), RegistryError> {
        let attrs = &req.attrs;
        let policies = list(req.registry, (GROUP, "v1", "validatingadmissionpolicies"), "").await?;
        let bindings = list(req.registry, (GROUP, "v1", "validatingadmissionpolicybindings"), "").await?;
        if bindings.is_empty() {
            return Ok(());
        }
        let mut policies: Vec<Policy> = policies.iter().map(Policy::parse).collect();
        policies.sort_by(|a, b| a.name.cmp(&b.name));
        let mut bindings: Vec<Binding> = bindings.iter().map(Binding::parse).collect();
        bindings.sort_by(|a, b| a.name.cmp(&b.name));
        let request = crate::admission::webhook::cel_request(attrs, req.user);
        let mut denied: Denied = None;
        for policy in &policies {
            let own: Vec<&Binding> = bindings.iter().filter(|b| b.policy_name == policy.name).collect();
            if own.is_empty() {
                continue;
            }
            // `addConfigError`: a configuration error refuses under `Fail` only.
            let config_error = |binding: Option<&str>, err: String, denied: &mut Denied| {
                let what = if binding.is_some() { "binding" } else { "policy" };
                let message = match policy.failure_policy.as_str() {
                    "Ignore" => return,
                    "Fail" => format!("failed to configure {what}: {err}"),
                    other => format!("unrecognized failure policy: '{other}'"),
                };
                if denied.is_none() {
                    *denied = Some((policy.name.clone(), binding.map(str::to_string), Decision::error(message)));
                }
            };
            let Some(constraints) = &policy.match_constraints else {
                config_error(None, "policy contained no match constraints, a required field".into(), &mut denied);
                continue;
            };
            match Self::matches(req, constraints, obj, old).await {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    config_error(None, e.to_string(), &mut denied);
                    continue;
                }
            }
            // The param kind's resource and scope, when the policy takes params.
            let mut param_resource = None;
            if let Some((api_version, kind)) = &policy.param_kind {
                let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
                let key = (group.to_string(), version.to_string(), guess_plural(kind));
                match req.registry.get(&key) {
                    Some(rest) => param_resource = Some((key.clone(), rest.strategy().namespace_scoped())),
                    None => {
                        let gvk = format!("{group}/{version}, Kind={kind}");
                        config_error(
                            None,
                            format!("failed to find resource referenced by paramKind: '{gvk}'"),
                            &mut denied,
                        );
                        continue;
                    }
                }
            }
            let namespace_object = if attrs.namespace.is_empty() || matching::is_namespace_resource(attrs) {
                Value::Null
            } else {
                namespace_object(read(req.registry, ("", "v1", "namespaces"), "", attrs.namespace).await?)
            };
            for binding in own {
                if let Some(mr) = &binding.match_resources {
                    match Self::matches(req, mr, obj, old).await {
                        Ok(true) => {}
                        Ok(false) => continue,
                        Err(e) => {
                            config_error(Some(&binding.name), e.to_string(), &mut denied);
                            continue;
                        }
                    }
                }
                let namespaced = param_resource.as_ref().is_some_and(|(_, ns)| *ns);
                let source =
                    param_source(param_resource.is_some(), namespaced, binding.param_ref.as_ref(), attrs.namespace);
                let params = match source {
                    Err(e) => Err(e),
                    Ok(source) => {
                        let key = param_resource.as_ref().map(|(k, _)| k.clone()).unwrap_or_default();
                        let params = Self::params(req, (&key.0, &key.1, &key.2), source).await?;
                        match params.is_empty() {
                            true => no_params(binding.param_ref.as_ref()).map(|()| params),
                            false => Ok(params),
                        }
                    }
                };
                let params = match params {
                    Ok(p) => p,
                    Err(e) => {
                        config_error(Some(&binding.name), e, &mut denied);
                        continue;
                    }
                };
                for param in &params {
                    let mut vars = Variables::new(obj, old, &request);
                    vars.set("params", param);
                    vars.set("namespaceObject", &namespace_object);
                    let decision = policy.validate(&vars).into_iter().next();
                    if let Some(decision) = decision.filter(|_| binding.deny) {
                        if denied.is_none() {
                            denied = Some((policy.name.clone(), Some(binding.name.clone()), decision));
                        }
                    }
                }
            }
        }
        match denied {
            None => Ok(()),
            Some((policy, binding, decision)) => {
                Err(RegistryError::Admission(Box::new(denial(attrs, obj, &policy, binding.as_deref(), &decision))))
            }
        }
    }
}

/// `CreateNamespaceObject`: the namespace as `namespaceObject` sees it (no managed fields).
fn namespace_object(ns: Option<Value>) -> Value {
    let Some(mut ns) = ns else { return Value::Null };
    if let Some(meta) = ns.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    ns
}

impl Plugin for ValidatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    fn validate<'a>(
        &'a self,
        req: &'a Request<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            let r = req.attrs.resource;
            if EXCLUDED.iter().any(|(g, p)| *g == r.group && *p == r.plural) {
                return Ok(());
            }
            self.validate_all(req, obj, old).await
        })
    }
}
