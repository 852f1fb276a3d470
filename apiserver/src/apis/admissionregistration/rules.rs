//! What the four `admissionregistration.k8s.io/v1` kinds share (`KK/pkg/apis/admissionregistration/validation`,
//! `KK/pkg/apis/admissionregistration/v1/defaults.go`): the rules that say which requests a webhook or a policy
//! matches (operations, API groups and versions, resources with their subresource forms, scope, resource
//! names), the `matchResources` of policies and bindings, the `matchConditions` of webhooks and policies, and
//! their defaults (a rule's scope `*`; `matchPolicy: Equivalent` and empty selectors in `matchResources`).
//!
//! Nothing here decides whether a request matches: kube-apiserver would, on every request, to call webhooks
//! and evaluate policies; that is issue 27's work. A match condition's CEL expression is only required, not
//! compiled (upstream compiles it in the admission CEL environment; kubesim's `cel` crate has no type checker
//! and no such environment, so compile errors are not reported).

use serde_json::{Map, Value};

use crate::apis::networking::networkpolicies::validate_label_selector;
use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::names;

/// `Fail`, `Ignore` (`supportedFailurePolicies`, sorted).
pub(crate) const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
/// `Equivalent`, `Exact` (`supportedMatchPolicies`, sorted).
pub(crate) const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
/// The operations a rule may name (`supportedOperations`, sorted).
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
/// The scopes a rule may name (`validScopes`, sorted).
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];

/// Sets `key` of `map` to `value` when it is absent or null (a Go pointer left nil).
pub(crate) fn default_field(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

/// `SetDefaults_Rule` on every rule of the array at `key` of `parent`.
pub(crate) fn default_rules(parent: &mut Value, key: &str) {
    if let Some(rules) = parent.get_mut(key).and_then(Value::as_array_mut) {
        for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
            default_field(rule, "scope", Value::from("*"));
        }
    }
}

/// `SetDefaults_MatchResources` (and the rules inside) on the `matchResources` at `key` of `spec`, if any.
pub(crate) fn default_match_resources(spec: &mut Value, key: &str) {
    let Some(mr) = spec.get_mut(key).filter(|v| v.is_object()) else { return };
    if let Some(map) = mr.as_object_mut() {
        default_field(map, "matchPolicy", Value::from("Equivalent"));
        default_field(map, "namespaceSelector", Value::Object(Map::new()));
        default_field(map, "objectSelector", Value::Object(Map::new()));
    }
    default_rules(mr, "resourceRules");
    default_rules(mr, "excludeResourceRules");
}

/// The strings of the array at `key` of `obj` (non-strings as empty strings, as Go would refuse them earlier).
pub(crate) fn strings<'a>(obj: &'a Value, key: &str) -> Vec<&'a str> {
    obj.get(key)
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| a.iter().map(|v| v.as_str().unwrap_or("")).collect())
}

/// The elements of the array at `key` of `obj`.
pub(crate) fn items<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
}

/// The string at `key` of `obj`, when it is set (a nil pointer is `None`).
pub(crate) fn opt_str<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get(key).filter(|v| !v.is_null()).map(|v| v.as_str().unwrap_or(""))
}

/// Go's `%#v` of a slice of a string type: `[]string{"a", "b"}`, `[]admissionregistration.OperationType{...}`.
pub(crate) fn go_slice(type_name: &str, values: &[&str]) -> String {
    let shown: Vec<String> = values.iter().map(|v| quote(v)).collect();
    format!("[]{type_name}{{{}}}", shown.join(", "))
}

/// `field.Invalid` of a value Go prints with `%#v`.
pub(crate) fn invalid_go(field: &str, go_value: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: BadValue::GoSyntax(go_value),
        detail: detail.into(),
    }
}

/// `field.Duplicate` of a string.
pub(crate) fn duplicate(field: &str, value: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Duplicate,
        field: field.into(),
        value: BadValue::Str(value.into()),
        detail: String::new(),
    }
}

/// `validateResources`: resources with their subresource forms (`x`, `x/y`, `x/*`, `*/y`, `*`, `*/*`).
fn validate_resources(resources: &[&str], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let mut with_wildcard_sub: Vec<&str> = Vec::new();
    let mut sub_with_wildcard_res: Vec<&str> = Vec::new();
    let (mut double_wildcard, mut single_wildcard, mut without_sub) = (false, false, false);
    for (i, res_sub) in resources.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if res_sub.is_empty() {
            errs.push(FieldError::required(&at, ""));
            continue;
        }
        double_wildcard |= *res_sub == "*/*";
        single_wildcard |= *res_sub == "*";
        let Some((res, sub)) = res_sub.split_once('/') else {
            // Upstream keeps only the last resource without a subresource's answer.
            without_sub = *res_sub != "*";
            continue;
        };
        if with_wildcard_sub.contains(&res) {
            errs.push(FieldError::invalid(
                &at,
                res_sub,
                &format!("if '{res}/*' is present, must not specify {res_sub}"),
            ));
        }
        if sub_with_wildcard_res.contains(&sub) {
            errs.push(FieldError::invalid(
                &at,
                res_sub,
                &format!("if '*/{sub}' is present, must not specify {res_sub}"),
            ));
        }
        if sub == "*" {
            with_wildcard_sub.push(res);
        }
        if res == "*" {
            sub_with_wildcard_res.push(sub);
        }
    }
    if resources.len() > 1 && double_wildcard {
        errs.push(invalid_go(
            path,
            go_slice("string", resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single_wildcard && without_sub {
        errs.push(invalid_go(
            path,
            go_slice("string", resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// `validateRule` with subresources allowed: groups, versions, resources, scope.
fn validate_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let groups = strings(rule, "apiGroups");
    if groups.is_empty() {
        errs.push(FieldError::required(&format!("{path}.apiGroups"), ""));
    }
    if groups.len() > 1 && groups.contains(&"*") {
        errs.push(invalid_go(
            &format!("{path}.apiGroups"),
            go_slice("string", &groups),
            "if '*' is present, must not specify other API groups",
        ));
    }
    let versions = strings(rule, "apiVersions");
    if versions.is_empty() {
        errs.push(FieldError::required(&format!("{path}.apiVersions"), ""));
    }
    if versions.len() > 1 && versions.contains(&"*") {
        errs.push(invalid_go(
            &format!("{path}.apiVersions"),
            go_slice("string", &versions),
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, version) in versions.iter().enumerate() {
        if version.is_empty() {
            errs.push(FieldError::required(&format!("{path}.apiVersions[{i}]"), ""));
        }
    }
    errs.extend(validate_resources(&strings(rule, "resources"), &format!("{path}.resources")));
    if let Some(scope) = opt_str(rule, "scope") {
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::not_supported(&format!("{path}.scope"), scope, SCOPES));
        }
    }
    errs
}

/// `validateRuleWithOperations`: the operations, then the rule.
pub(crate) fn validate_rule_with_operations(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let operations = strings(rule, "operations");
    if operations.is_empty() {
        errs.push(FieldError::required(&format!("{path}.operations"), ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        errs.push(invalid_go(
            &format!("{path}.operations"),
            go_slice("admissionregistration.OperationType", &operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, operation) in operations.iter().enumerate() {
        if !OPERATIONS.contains(operation) {
            errs.push(FieldError::not_supported(&format!("{path}.operations[{i}]"), operation, OPERATIONS));
        }
    }
    errs.extend(validate_rule(rule, path));
    errs
}

/// `validateNamedRuleWithOperations`: resource names are path segments, each once; then the rule.
fn validate_named_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, name) in strings(rule, "resourceNames").into_iter().enumerate() {
        let at = format!("{path}.resourceNames[{i}]");
        for msg in names::path_segment_name(name, false) {
            errs.push(FieldError::invalid(&at, name, &msg));
        }
        if seen.contains(&name) {
            errs.push(duplicate(&at, name));
        } else {
            seen.push(name);
        }
    }
    errs.extend(validate_rule_with_operations(rule, path));
    errs
}

/// `validateMatchResources` of a policy's `matchConstraints` or a binding's `matchResources` (nothing when
/// absent); its selectors are checked strictly.
pub(crate) fn validate_match_resources(mr: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(mr) = mr.filter(|v| !v.is_null()) else { return Vec::new() };
    let mut errs = Vec::new();
    match opt_str(mr, "matchPolicy") {
        None => errs.push(FieldError::required(&format!("{path}.matchPolicy"), "")),
        Some(policy) if !MATCH_POLICIES.contains(&policy) => {
            errs.push(FieldError::not_supported(&format!("{path}.matchPolicy"), policy, MATCH_POLICIES))
        }
        Some(_) => {}
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        let at = format!("{path}.{selector}");
        match mr.get(selector).filter(|v| !v.is_null()) {
            None => errs.push(FieldError::required(&at, "")),
            Some(s) => errs.extend(validate_label_selector(Some(s), &at, false)),
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in items(mr, key).iter().enumerate() {
            errs.extend(validate_named_rule(rule, &format!("{path}.{key}[{i}]")));
        }
    }
    errs
}

/// `validateMatchConditions`: each has a name (a qualified name, once) and an expression.
pub(crate) fn validate_match_conditions(conditions: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let expression = condition.get("expression").and_then(Value::as_str).unwrap_or("");
        if expression.trim().is_empty() {
            errs.push(FieldError::required(&format!("{at}.expression"), ""));
        }
        let name = condition.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{at}.name"), ""));
        } else {
            for msg in names::qualified_name(name) {
                errs.push(FieldError::invalid(&format!("{at}.name"), name, &msg));
            }
        }
        if !name.is_empty() {
            if seen.contains(&name) {
                errs.push(duplicate(&format!("{at}.name"), name));
            } else {
                seen.push(name);
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;
    use serde_json::json;

    fn rule(ops: &[&str], groups: &[&str], versions: &[&str], resources: &[&str]) -> Value {
        json!({"operations": ops, "apiGroups": groups, "apiVersions": versions, "resources": resources})
    }

    #[test]
    fn rules_are_validated_as_upstream_validates_them() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (rule(&["CREATE"], &[""], &["v1"], &["pods", "pods/status"]), vec![]),
            (rule(&["*"], &["*"], &["*"], &["*/*"]), vec![]),
            (
                json!({}),
                vec![
                    "r.operations: Required value",
                    "r.apiGroups: Required value",
                    "r.apiVersions: Required value",
                    "r.resources: Required value",
                ],
            ),
            (
                rule(&["*", "CREATE", "PATCH"], &["*", "apps"], &["*", ""], &["pods"]),
                vec![
                    "r.operations: Invalid value: []admissionregistration.OperationType{\"*\", \"CREATE\", \"PATCH\"}: if '*' is present, must not specify other operations",
                    "r.operations[2]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
                    "r.apiGroups: Invalid value: []string{\"*\", \"apps\"}: if '*' is present, must not specify other API groups",
                    "r.apiVersions: Invalid value: []string{\"*\", \"\"}: if '*' is present, must not specify other API versions",
                    "r.apiVersions[1]: Required value",
                ],
            ),
            (
                rule(&["CREATE"], &[""], &["v1"], &["pods/*", "pods/log", "*/status", "nodes/status", ""]),
                vec![
                    "r.resources[1]: Invalid value: \"pods/log\": if 'pods/*' is present, must not specify pods/log",
                    "r.resources[3]: Invalid value: \"nodes/status\": if '*/status' is present, must not specify nodes/status",
                    "r.resources[4]: Required value",
                ],
            ),
            (
                rule(&["CREATE"], &[""], &["v1"], &["*/*", "pods"]),
                vec!["r.resources: Invalid value: []string{\"*/*\", \"pods\"}: if '*/*' is present, must not specify other resources"],
            ),
            (
                rule(&["CREATE"], &[""], &["v1"], &["*", "pods"]),
                vec!["r.resources: Invalid value: []string{\"*\", \"pods\"}: if '*' is present, must not specify other resources without subresources"],
            ),
            (
                json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "Global"}),
                vec!["r.scope: Unsupported value: \"Global\": supported values: \"*\", \"Cluster\", \"Namespaced\""],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(validate_rule_with_operations(&obj, "r")), want, "{obj}");
        }
    }

    #[test]
    fn match_resources_and_conditions() {
        let mut mr = json!({"m": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "resourceNames": ["a", "a", "b/c"]}]}});
        default_match_resources(&mut mr, "m");
        assert_eq!(mr["m"]["matchPolicy"], "Equivalent");
        assert_eq!(mr["m"]["namespaceSelector"], json!({}));
        assert_eq!(mr["m"]["resourceRules"][0]["scope"], "*");
        assert_eq!(
            messages(validate_match_resources(mr.get("m"), "spec.m")),
            [
                "spec.m.resourceRules[0].resourceNames[1]: Duplicate value: \"a\"",
                "spec.m.resourceRules[0].resourceNames[2]: Invalid value: \"b/c\": may not contain '/'",
            ]
        );
        assert_eq!(
            messages(validate_match_resources(Some(&json!({"matchPolicy": "Some"})), "m")),
            [
                "m.matchPolicy: Unsupported value: \"Some\": supported values: \"Equivalent\", \"Exact\"",
                "m.namespaceSelector: Required value",
                "m.objectSelector: Required value",
            ]
        );
        let conditions = json!([
            {"name": "ok", "expression": "true"},
            {"name": "ok", "expression": "  "},
            {"name": "-bad", "expression": "true"},
            {"expression": "true"}
        ]);
        assert_eq!(
            messages(validate_match_conditions(conditions.as_array().unwrap(), "mc")),
            [
                "mc[1].expression: Required value",
                "mc[1].name: Duplicate value: \"ok\"",
                "mc[2].name: Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "mc[3].name: Required value",
            ]
        );
    }
}
