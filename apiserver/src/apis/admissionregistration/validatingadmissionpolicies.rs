//! ValidatingAdmissionPolicies, `admissionregistration.k8s.io/v1`
//! (`KK/pkg/registry/admissionregistration/validatingadmissionpolicy`,
//! `KK/pkg/apis/admissionregistration/validation`, `KK/pkg/apis/admissionregistration/v1/defaults.go`):
//! cluster-scoped, category `api-extensions`, names are DNS subdomains, with a `/status` subresource.
//! `failurePolicy` defaults to `Fail` (or `Ignore`); `matchConstraints` is required, with at least one resource
//! rule, and defaults as [`super::rules`] describes; `paramKind` names an API version and a kind; there is at
//! least one validation or audit annotation, each expression present, messages without line breaks,
//! reasons `Forbidden`, `Invalid` or `RequestEntityTooLarge`; audit annotation keys are unique and qualified
//! names once prefixed with the policy's name, at most 20 of them; variables have CEL identifiers as names.
//! The status is reset on create and kept by the main endpoint; `/status` writes only the status (its
//! expression warnings need a warning and a field reference; its conditions are metav1 conditions). The
//! generation follows the spec; an update must name the resourceVersion it replaces.
//!
//! Stored and served only, never enforced: kube-apiserver would evaluate these policies on every matching
//! request; that is issue 27's work. Not done: compiling and type-checking the CEL expressions (kubesim's
//! `cel` crate has no type checker and no admission environment), upstream's type-checking controller that
//! writes `status.typeChecking` (kubesim runs none, so the status stays as clients write it), the check that
//! the author may read the `paramKind` (strategies do not see the requesting user), the JSONPath parse of a
//! warning's `fieldRef`, and the limit of 64 match conditions.

use std::sync::Arc;

use serde_json::{json, Value};

use super::rules::{
    default_match_resources, duplicate, items, opt_str, validate_match_conditions, validate_match_resources,
    FAILURE_POLICIES,
};
use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{status, Printer, ResourceInfo};
use crate::go_text::quote;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        categories: &["api-extensions"],
        namespaced: false,
        subresources: vec![status("ValidatingAdmissionPolicy")],
        ..ResourceInfo::new(resource(), "validatingadmissionpolicy", Arc::new(Policies), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        kind: "ValidatingAdmissionPolicy".into(),
        plural: "validatingadmissionpolicies".into(),
        etcd_prefix: "validatingadmissionpolicies".into(),
    }
}

/// `maxAuditAnnotations`.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// `maxAuditAnnotationValueExpressionLength`.
const MAX_VALUE_EXPRESSION_LENGTH: usize = 5 * 1024;
/// `supportedValidationPolicyReason`, sorted.
const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
/// What CEL reserves and so no variable may be named (`celReserved`).
const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The ValidatingAdmissionPolicy strategy.
struct Policies;

/// `SetDefaults_ValidatingAdmissionPolicySpec` and the match constraints' defaults.
fn default(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        if obj.is_object() && obj.get("spec").is_none_or(Value::is_null) {
            obj["spec"] = json!({"failurePolicy": "Fail"});
        }
        return;
    };
    if let Some(map) = spec.as_object_mut() {
        super::rules::default_field(map, "failurePolicy", json!("Fail"));
    }
    default_match_resources(spec, "matchConstraints");
}

/// `validateParamKind`.
fn validate_param_kind(kind: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let api_version = kind.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let at = format!("{path}.apiVersion");
    if api_version.is_empty() {
        errs.push(FieldError::required(&at, ""));
    } else if api_version.matches('/').count() > 1 {
        errs.push(FieldError::invalid(&at, api_version, &format!("unexpected GroupVersion string: {api_version}")));
    } else {
        let (group, version) = match api_version {
            "/" => ("", ""),
            _ => api_version.split_once('/').unwrap_or(("", api_version)),
        };
        if !group.is_empty() {
            let msgs = names::dns1123_subdomain(group);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(&at, group, &msgs.join(",")));
            }
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(&at, api_version, "version must be specified"));
        } else {
            let msgs = names::dns1035_label(version);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(&at, version, &msgs.join(",")));
            }
        }
    }
    let kind_name = kind.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind_name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.kind"), ""));
    } else {
        let msgs = names::dns1035_label(&kind_name.to_lowercase());
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{path}.kind"),
                kind_name,
                &format!("may have mixed case, but should otherwise match: {}", msgs.join(",")),
            ));
        }
    }
    errs
}

/// `isCELIdentifier`.
fn is_cel_identifier(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        && !CEL_RESERVED.contains(&name)
}

/// `validateVariable`, without compiling the expression.
fn validate_variable(variable: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = variable.get("name").and_then(Value::as_str).unwrap_or("");
    if name.trim().is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), "name is not specified"));
    } else if !is_cel_identifier(name) {
        errs.push(FieldError::invalid(&format!("{path}.name"), name, "name is not a valid CEL identifier"));
    }
    let expression = variable.get("expression").and_then(Value::as_str).unwrap_or("");
    if expression.trim().is_empty() {
        errs.push(FieldError::required(&format!("{path}.expression"), "expression is not specified"));
    }
    errs
}

/// `validateValidation`, without compiling the expressions.
fn validate_validation(validation: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let expression = validation.get("expression").and_then(Value::as_str).unwrap_or("");
    if expression.trim().is_empty() {
        errs.push(FieldError::required(&format!("{path}.expression"), "expression is not specified"));
    }
    let message_expression = validation.get("messageExpression").and_then(Value::as_str).unwrap_or("");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errs.push(FieldError::invalid(
            &format!("{path}.messageExpression"),
            message_expression,
            "must be non-empty if specified",
        ));
    }
    let message = validation.get("message").and_then(Value::as_str).unwrap_or("");
    let trimmed = message.trim();
    if !message.is_empty() && trimmed.is_empty() {
        errs.push(FieldError::invalid(&format!("{path}.message"), message, "message must be non-empty if specified"));
    } else if trimmed.contains(['\n', '\r']) {
        errs.push(FieldError::invalid(&format!("{path}.message"), message, "message must not contain line breaks"));
    }
    if let Some(reason) = opt_str(validation, "reason") {
        if !REASONS.contains(&reason) {
            errs.push(FieldError::not_supported(&format!("{path}.reason"), reason, REASONS));
        }
    }
    errs
}

/// `validateAuditAnnotation`, without compiling the value expression.
fn validate_audit_annotation(policy_name: &str, annotation: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let key = annotation.get("key").and_then(Value::as_str).unwrap_or("");
    if policy_name.is_empty() {
        errs.push(FieldError::invalid(&format!("{path}.key"), key, "requires metadata.name be non-empty"));
    } else {
        let qualified = format!("{policy_name}/{key}");
        for msg in names::qualified_name(&qualified) {
            errs.push(FieldError::invalid(&format!("{path}.key"), &qualified, &msg));
        }
    }
    let value = annotation.get("valueExpression").and_then(Value::as_str).unwrap_or("");
    let trimmed = value.trim();
    if trimmed.is_empty() {
        errs.push(FieldError::required(&format!("{path}.valueExpression"), "valueExpression is not specified"));
    } else if trimmed.len() > MAX_VALUE_EXPRESSION_LENGTH {
        errs.push(FieldError::required(
            &format!("{path}.valueExpression"),
            &format!("must not exceed {MAX_VALUE_EXPRESSION_LENGTH} bytes in length"),
        ));
    }
    errs
}

/// Go's `%#v` of a `[]admissionregistration.AuditAnnotation`.
fn go_audit_annotations(annotations: &[Value]) -> String {
    let shown: Vec<String> = annotations
        .iter()
        .map(|a| {
            let key = a.get("key").and_then(Value::as_str).unwrap_or("");
            let value = a.get("valueExpression").and_then(Value::as_str).unwrap_or("");
            format!("admissionregistration.AuditAnnotation{{Key:{}, ValueExpression:{}}}", quote(key), quote(value))
        })
        .collect();
    format!("[]admissionregistration.AuditAnnotation{{{}}}", shown.join(", "))
}

/// `validateValidatingAdmissionPolicySpec`; match conditions are left out on an update that keeps them and
/// the param kind (`ignoreValidatingAdmissionPolicyMatchConditions`).
fn validate_spec(obj: &Value, ignore_match_conditions: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    match opt_str(spec, "failurePolicy") {
        None => errs.push(FieldError::required("spec.failurePolicy", "")),
        Some(policy) if !FAILURE_POLICIES.contains(&policy) => {
            errs.push(FieldError::not_supported("spec.failurePolicy", policy, FAILURE_POLICIES))
        }
        Some(_) => {}
    }
    if let Some(kind) = spec.get("paramKind").filter(|k| !k.is_null()) {
        errs.extend(validate_param_kind(kind, "spec.paramKind"));
    }
    match spec.get("matchConstraints").filter(|m| !m.is_null()) {
        None => errs.push(FieldError::required("spec.matchConstraints", "")),
        Some(mc) => {
            errs.extend(validate_match_resources(Some(mc), "spec.matchConstraints"));
            if items(mc, "resourceRules").is_empty() {
                errs.push(FieldError::required("spec.matchConstraints.resourceRules", ""));
            }
        }
    }
    if !ignore_match_conditions {
        errs.extend(validate_match_conditions(items(spec, "matchConditions"), "spec.matchConditions"));
    }
    for (i, variable) in items(spec, "variables").iter().enumerate() {
        errs.extend(validate_variable(variable, &format!("spec.variables[{i}]")));
    }
    let (validations, annotations) = (items(spec, "validations"), items(spec, "auditAnnotations"));
    if validations.is_empty() && annotations.is_empty() {
        const DETAIL: &str = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required("spec.validations", DETAIL));
        errs.push(FieldError::required("spec.auditAnnotations", DETAIL));
        return errs;
    }
    for (i, validation) in validations.iter().enumerate() {
        errs.extend(validate_validation(validation, &format!("spec.validations[{i}]")));
    }
    if annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errs.push(super::rules::invalid_go(
            "spec.auditAnnotations",
            go_audit_annotations(annotations),
            &format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        ));
    }
    let policy_name = meta::get_str(obj, "name");
    let mut keys: Vec<&str> = Vec::new();
    for (i, annotation) in annotations.iter().enumerate() {
        let path = format!("spec.auditAnnotations[{i}]");
        errs.extend(validate_audit_annotation(policy_name, annotation, &path));
        let key = annotation.get("key").and_then(Value::as_str).unwrap_or("");
        if keys.contains(&key) {
            errs.push(duplicate(&format!("{path}.key"), key));
        }
        keys.push(key);
    }
    errs
}

/// `metav1validation.ValidateConditions` of the conditions at `path`.
fn validate_conditions(conditions: &[Value], path: &str) -> Vec<FieldError> {
    const REASON_MESSAGE: &str = "a condition reason must start with alphabetic character, optionally followed by a \
string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or \
'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is \
'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";
    const STATUSES: &[&str] = &["False", "True", "Unknown"];
    let mut errs = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let ty = condition.get("type").and_then(Value::as_str).unwrap_or("");
        if types.contains(&ty) {
            errs.push(duplicate(&format!("{at}.type"), ty));
        } else {
            types.push(ty);
        }
        for msg in names::qualified_name(ty) {
            errs.push(FieldError::invalid(&format!("{at}.type"), ty, &msg));
        }
        let status = condition.get("status").and_then(Value::as_str).unwrap_or("");
        if !STATUSES.contains(&status) {
            errs.push(FieldError::not_supported(&format!("{at}.status"), status, STATUSES));
        }
        let observed = condition.get("observedGeneration").and_then(Value::as_i64).unwrap_or(0);
        if observed < 0 {
            errs.push(FieldError::invalid_int(
                &format!("{at}.observedGeneration"),
                observed,
                "must be greater than or equal to zero",
            ));
        }
        if condition.get("lastTransitionTime").and_then(Value::as_str).unwrap_or("").is_empty() {
            errs.push(FieldError::required(&format!("{at}.lastTransitionTime"), "must be set"));
        }
        let reason = condition.get("reason").and_then(Value::as_str).unwrap_or("");
        if reason.is_empty() {
            errs.push(FieldError::required(&format!("{at}.reason"), "must be set"));
        } else {
            let b = reason.as_bytes();
            let ok = b[0].is_ascii_alphabetic()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
                && (b[b.len() - 1].is_ascii_alphanumeric() || b[b.len() - 1] == b'_');
            if !ok {
                errs.push(FieldError::invalid(&format!("{at}.reason"), reason, REASON_MESSAGE));
            }
            if reason.len() > 1024 {
                errs.push(FieldError::too_long(&format!("{at}.reason"), 1024));
            }
        }
        let message = condition.get("message").and_then(Value::as_str).unwrap_or("");
        if message.len() > 32 * 1024 {
            errs.push(FieldError::too_long(&format!("{at}.message"), 32 * 1024));
        }
    }
    errs
}

/// `validateValidatingAdmissionPolicyStatus`: expression warnings and conditions.
fn validate_status(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = json!({});
    let status = obj.get("status").filter(|s| s.is_object()).unwrap_or(&empty);
    if let Some(checking) = status.get("typeChecking").filter(|t| !t.is_null()) {
        for (i, warning) in items(checking, "expressionWarnings").iter().enumerate() {
            let at = format!("status.typeChecking.expressionWarnings[{i}]");
            if warning.get("warning").and_then(Value::as_str).unwrap_or("").is_empty() {
                errs.push(FieldError::required(&format!("{at}.warning"), ""));
            }
            if warning.get("fieldRef").and_then(Value::as_str).unwrap_or("").trim().is_empty() {
                errs.push(FieldError::required(&format!("{at}.fieldRef"), ""));
            }
        }
    }
    errs.extend(validate_conditions(items(status, "conditions"), "status.conditions"));
    errs
}

/// Whether an update keeps the param kind and the match conditions, so that stored match conditions are not
/// checked again.
fn keeps_match_conditions(new: &Value, old: &Value) -> bool {
    let field = |obj: &Value, key: &str| obj.pointer(&format!("/spec/{key}")).filter(|v| !v.is_null()).cloned();
    field(new, "paramKind") == field(old, "paramKind") && field(new, "matchConditions") == field(old, "matchConditions")
}

impl Strategy for Policies {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default(obj);
        obj["status"] = json!({});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        default(new);
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj, false));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new, keeps_match_conditions(new, old)));
        errs
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_status(new));
        errs
    }
}

impl DeleteStrategy for Policies {}

/// `printValidatingAdmissionPolicy`: the number of validations and the param kind.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column(
                "Validations",
                "integer",
                "Validations indicates the number of validation rules defined in this configuration",
                0,
            ),
            column(
                "ParamKind",
                "string",
                "ParamKind specifies the kind of resources used to parameterize this policy",
                0,
            ),
            age_column(),
        ],
        cells: |obj, now, _| {
            let spec = obj.get("spec").unwrap_or(&Value::Null);
            let validations = items(spec, "validations").len();
            let param_kind = match spec.get("paramKind").filter(|k| !k.is_null()) {
                Some(k) => format!(
                    "{}/{}",
                    k.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                    k.get("kind").and_then(Value::as_str).unwrap_or("")
                ),
                None => "<unset>".to_string(),
            };
            vec![name(obj), Value::from(validations), Value::from(param_kind), age(obj, now)]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn policy(spec: Value) -> Value {
        let mut obj = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "adm-policy"},
            "spec": {"matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]},
                "validations": [{"expression": "object.spec.replicas <= 5"}]}});
        for (k, v) in spec.as_object().unwrap() {
            if v.is_null() {
                obj["spec"].as_object_mut().unwrap().remove(k);
            } else {
                obj["spec"][k] = v.clone();
            }
        }
        Policies.prepare_for_create(&mut obj);
        obj
    }

    fn errors(spec: Value) -> Vec<String> {
        messages(Policies.validate(&policy(spec)))
    }

    #[test]
    fn a_policy_is_defaulted_and_its_status_reset() {
        let mut obj = policy(json!({}));
        assert_eq!(obj["spec"]["failurePolicy"], "Fail");
        assert_eq!(obj["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
        assert_eq!(obj["spec"]["matchConstraints"]["namespaceSelector"], json!({}));
        assert_eq!(obj["spec"]["matchConstraints"]["objectSelector"], json!({}));
        assert_eq!(obj["spec"]["matchConstraints"]["resourceRules"][0]["scope"], "*");
        assert_eq!(obj["status"], json!({}));
        assert_eq!(obj["metadata"]["generation"], 1);
        obj["status"] = json!({"observedGeneration": 3});
        Policies.prepare_for_create(&mut obj);
        assert_eq!(obj["status"], json!({}));
    }

    #[test]
    fn policies_are_validated_as_upstream_validates_them() {
        let long = "x".repeat(5121);
        let cases: Vec<(Value, Vec<String>)> = vec![
            (json!({}), vec![]),
            (json!({"failurePolicy": "Sometimes"}), vec!["spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\"".into()]),
            (json!({"matchConstraints": null}), vec!["spec.matchConstraints: Required value".into()]),
            (json!({"matchConstraints": {}}), vec!["spec.matchConstraints.resourceRules: Required value".into()]),
            (json!({"validations": null}), vec![
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item".into(),
                "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item".into(),
            ]),
            (json!({"validations": [{"expression": " ", "messageExpression": " ", "message": " ", "reason": "Teapot"}, {"expression": "true", "message": "a\nb"}]}), vec![
                "spec.validations[0].expression: Required value: expression is not specified".into(),
                "spec.validations[0].messageExpression: Invalid value: \" \": must be non-empty if specified".into(),
                "spec.validations[0].message: Invalid value: \" \": message must be non-empty if specified".into(),
                "spec.validations[0].reason: Unsupported value: \"Teapot\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\"".into(),
                "spec.validations[1].message: Invalid value: \"a\\nb\": message must not contain line breaks".into(),
            ]),
            (json!({"validations": null, "auditAnnotations": [{"key": "k", "valueExpression": "'v'"}, {"key": "k", "valueExpression": " "}, {"key": "-", "valueExpression": long}]}), vec![
                "spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified".into(),
                "spec.auditAnnotations[1].key: Duplicate value: \"k\"".into(),
                "spec.auditAnnotations[2].key: Invalid value: \"adm-policy/-\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into(),
                "spec.auditAnnotations[2].valueExpression: Required value: must not exceed 5120 bytes in length".into(),
            ]),
            (json!({"paramKind": {"apiVersion": "example.com/v1", "kind": "Limits"}}), vec![]),
            (json!({"paramKind": {}}), vec!["spec.paramKind.apiVersion: Required value".into(), "spec.paramKind.kind: Required value".into()]),
            (json!({"paramKind": {"apiVersion": "a/b/c", "kind": "My_Kind"}}), vec![
                "spec.paramKind.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c".into(),
                "spec.paramKind.kind: Invalid value: \"My_Kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into(),
            ]),
            (json!({"paramKind": {"apiVersion": "Example.com/", "kind": "K"}}), vec![
                "spec.paramKind.apiVersion: Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
                "spec.paramKind.apiVersion: Invalid value: \"Example.com/\": version must be specified".into(),
            ]),
            (json!({"paramKind": {"apiVersion": "1", "kind": "K"}}), vec![
                "spec.paramKind.apiVersion: Invalid value: \"1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into(),
            ]),
            (json!({"variables": [{"name": "in", "expression": "1"}, {"name": " ", "expression": ""}]}), vec![
                "spec.variables[0].name: Invalid value: \"in\": name is not a valid CEL identifier".into(),
                "spec.variables[1].name: Required value: name is not specified".into(),
                "spec.variables[1].expression: Required value: expression is not specified".into(),
            ]),
            (json!({"matchConditions": [{"name": "c", "expression": ""}]}), vec!["spec.matchConditions[0].expression: Required value".into()]),
        ];
        for (spec, want) in cases {
            assert_eq!(errors(spec.clone()), want, "{spec}");
        }
        let many: Vec<Value> = (0..21).map(|i| json!({"key": format!("k{i}"), "valueExpression": "'v'"})).collect();
        let errs = errors(json!({"auditAnnotations": many}));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("spec.auditAnnotations: Invalid value: []admissionregistration.AuditAnnotation{admissionregistration.AuditAnnotation{Key:\"k0\", ValueExpression:\"'v'\"}, "));
        assert!(errs[0].ends_with("}: must not have more than 20 auditAnnotations"));
    }

    #[test]
    fn the_status_is_kept_by_the_main_endpoint_and_written_by_status() {
        let s = Policies;
        let mut old = policy(json!({}));
        old["metadata"]["resourceVersion"] = json!("5");
        old["status"] = json!({"observedGeneration": 1});
        let mut new = old.clone();
        new["status"] = json!({"observedGeneration": 7});
        new["spec"]["failurePolicy"] = json!("Ignore");
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"observedGeneration": 1}));
        assert_eq!(new["metadata"]["generation"], 2);
        let mut status = old.clone();
        status["spec"]["failurePolicy"] = json!("Ignore");
        status["status"] = json!({"typeChecking": {"expressionWarnings": [{"fieldRef": "spec.validations[0].expression", "warning": "w"}]}});
        s.prepare_for_subresource_update(Subresource::Status, &mut status, &old);
        assert_eq!(status["spec"]["failurePolicy"], "Fail");
        assert_eq!(status["metadata"]["generation"], 1);
        assert_eq!(messages(s.validate_subresource_update(Subresource::Status, &status, &old)), Vec::<String>::new());
        status["status"] = json!({"typeChecking": {"expressionWarnings": [{}]},
            "conditions": [{"type": "Ready", "status": "Maybe", "reason": "1x", "lastTransitionTime": "2024-01-01T00:00:00Z"}, {"type": "Ready", "status": "True", "observedGeneration": -1}]});
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &status, &old)),
            [
                "status.typeChecking.expressionWarnings[0].warning: Required value",
                "status.typeChecking.expressionWarnings[0].fieldRef: Required value",
                "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "status.conditions[0].reason: Invalid value: \"1x\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
                "status.conditions[1].type: Duplicate value: \"Ready\"",
                "status.conditions[1].observedGeneration: Invalid value: -1: must be greater than or equal to zero",
                "status.conditions[1].lastTransitionTime: Required value: must be set",
                "status.conditions[1].reason: Required value: must be set",
            ]
        );
    }

    #[test]
    fn an_update_keeps_stored_match_conditions() {
        let s = Policies;
        let mut old = policy(json!({}));
        old["spec"]["matchConditions"] = json!([{"name": "c", "expression": ""}]);
        let mut new = old.clone();
        new["spec"]["failurePolicy"] = json!("Ignore");
        assert_eq!(messages(s.validate_update(&new, &old)), Vec::<String>::new());
        new["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
        assert_eq!(messages(s.validate_update(&new, &old)), ["spec.matchConditions[0].expression: Required value"]);
    }

    #[test]
    fn the_printer_shows_validations_and_param_kind() {
        let obj = policy(json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}));
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![json!("adm-policy"), json!(1), json!("v1/ConfigMap"), json!("<unknown>")]
        );
        let obj = policy(json!({}));
        assert_eq!((printer().cells)(&obj, 0, &[])[2], json!("<unset>"));
    }
}
