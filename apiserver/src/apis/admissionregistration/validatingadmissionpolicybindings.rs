//! ValidatingAdmissionPolicyBindings, `admissionregistration.k8s.io/v1`
//! (`KK/pkg/registry/admissionregistration/validatingadmissionpolicybinding`,
//! `KK/pkg/apis/admissionregistration/validation`, `KK/pkg/apis/admissionregistration/v1/defaults.go`):
//! cluster-scoped, category `api-extensions`, names are DNS subdomains. `policyName` is required (a DNS
//! subdomain); `validationActions` is required, each of `Deny`, `Warn`, `Audit` at most once, never both
//! `Deny` and `Warn`; a `paramRef` has a name (a path segment) or a selector, not both, and a
//! `parameterNotFoundAction` (`Deny` or `Allow`); `matchResources`, when present, defaults and is checked as
//! [`super::rules`] describes (upstream reports its errors under the misspelt path `spec.matchResouces`,
//! kept here). The generation follows the spec; an update must name the resourceVersion it replaces.
//!
//! Stored and served only, never enforced: kube-apiserver would evaluate the bound policy on every matching
//! request; that is issue 27's work. Not done: the check that the author may read the referenced params
//! (strategies do not see the requesting user).

use std::sync::Arc;

use serde_json::{json, Value};

use super::rules::{
    default_match_resources, duplicate, go_slice, invalid_go, opt_str, strings, validate_match_resources,
};
use crate::apis::networking::networkpolicies::validate_label_selector;
use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        categories: &["api-extensions"],
        namespaced: false,
        ..ResourceInfo::new(resource(), "validatingadmissionpolicybinding", Arc::new(Bindings), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        kind: "ValidatingAdmissionPolicyBinding".into(),
        plural: "validatingadmissionpolicybindings".into(),
        etcd_prefix: "validatingadmissionpolicybindings".into(),
    }
}

/// `validValidationActions`, sorted.
const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
/// What `parameterNotFoundAction` may be, in upstream's order.
const NOT_FOUND_ACTIONS: &[&str] = &["Deny", "Allow"];
const EXCLUSIVE: &str = "name and selector are mutually exclusive";

/// The ValidatingAdmissionPolicyBinding strategy.
struct Bindings;

fn default(obj: &mut Value) {
    if let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) {
        default_match_resources(spec, "matchResources");
    }
}

/// `validateParamRef` (nothing when there is none).
fn validate_param_ref(param_ref: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(pr) = param_ref.filter(|p| !p.is_null()) else { return Vec::new() };
    let mut errs = Vec::new();
    let name = pr.get("name").and_then(Value::as_str).unwrap_or("");
    let selector = pr.get("selector").filter(|s| !s.is_null());
    if !name.is_empty() {
        for msg in names::path_segment_name(name, false) {
            errs.push(FieldError::invalid(&format!("{path}.name"), name, &msg));
        }
        if selector.is_some() {
            errs.push(FieldError::forbidden(&format!("{path}.name"), EXCLUSIVE));
        }
    }
    if let Some(selector) = selector {
        errs.extend(validate_label_selector(Some(selector), &format!("{path}.selector"), false));
        if !name.is_empty() {
            errs.push(FieldError::forbidden(&format!("{path}.selector"), EXCLUSIVE));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required(path, "one of name or selector must be specified"));
    }
    match opt_str(pr, "parameterNotFoundAction") {
        None | Some("") => errs.push(FieldError::required(&format!("{path}.parameterNotFoundAction"), "")),
        Some(action) if !NOT_FOUND_ACTIONS.contains(&action) => {
            errs.push(FieldError::not_supported(&format!("{path}.parameterNotFoundAction"), action, NOT_FOUND_ACTIONS))
        }
        Some(_) => {}
    }
    errs
}

/// `validateValidationActions`.
fn validate_actions(actions: &[&str], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if !ACTIONS.contains(action) {
            errs.push(FieldError::not_supported(&at, action, ACTIONS));
        }
        if seen.contains(action) {
            errs.push(duplicate(&at, action));
        }
        seen.push(action);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(invalid_go(
            path,
            go_slice("admissionregistration.ValidationAction", actions),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(path, "at least one validation action is required"));
    }
    errs
}

/// `validateValidatingAdmissionPolicyBinding`: the metadata, then the spec.
fn validate_binding(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    let policy = spec.get("policyName").and_then(Value::as_str).unwrap_or("");
    if policy.is_empty() {
        errs.push(FieldError::required("spec.policyName", ""));
    } else {
        for msg in names::name_is_dns_subdomain(policy, false) {
            errs.push(FieldError::invalid("spec.policyName", policy, &msg));
        }
    }
    errs.extend(validate_param_ref(spec.get("paramRef"), "spec.paramRef"));
    errs.extend(validate_match_resources(spec.get("matchResources"), "spec.matchResouces"));
    errs.extend(validate_actions(&strings(spec, "validationActions"), "spec.validationActions"));
    errs
}

impl Strategy for Bindings {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default(obj);
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        default(new);
        bump_generation_on_spec_change(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
        errs.extend(validate_binding(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_binding(new));
        errs
    }
}

impl DeleteStrategy for Bindings {}

/// The generated `String()` of a `LabelSelectorRequirement`, without its leading `&`.
fn requirement_string(e: &Value) -> String {
    format!(
        "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}}",
        e.get("key").and_then(Value::as_str).unwrap_or(""),
        e.get("operator").and_then(Value::as_str).unwrap_or(""),
        strings(e, "values").join(" ")
    )
}

/// The generated `String()` of a `*metav1.LabelSelector`, which upstream's printer shows for a selected param.
fn selector_string(selector: &Value) -> String {
    let labels = selector.get("matchLabels").and_then(Value::as_object);
    let mut keys: Vec<&String> = labels.map(|m| m.keys().collect()).unwrap_or_default();
    keys.sort();
    let labels: String =
        keys.iter().map(|k| format!("{k}: {},", labels.and_then(|m| m[k.as_str()].as_str()).unwrap_or(""))).collect();
    let expressions: String = super::rules::items(selector, "matchExpressions")
        .iter()
        .map(|e| format!("{},", requirement_string(e)))
        .collect();
    format!("&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")
}

/// `printValidatingAdmissionPolicyBinding`: the policy's name and which params it binds.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column(
                "PolicyName",
                "string",
                "PolicyName indicates the policy definition which the policy binding binded to",
                0,
            ),
            column("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let spec = obj.get("spec").unwrap_or(&Value::Null);
            let policy = spec.get("policyName").and_then(Value::as_str).unwrap_or("");
            let param = match spec.get("paramRef").filter(|p| !p.is_null()) {
                None => "<unset>".to_string(),
                Some(pr) => {
                    let name = pr.get("name").and_then(Value::as_str).unwrap_or("");
                    let namespace = pr.get("namespace").and_then(Value::as_str).unwrap_or("");
                    match (name, pr.get("selector").filter(|s| !s.is_null())) {
                        ("", Some(selector)) => selector_string(selector),
                        ("", None) => "<unset>".to_string(),
                        (name, _) if namespace.is_empty() => format!("*/{name}"),
                        (name, _) => format!("{namespace}/{name}"),
                    }
                }
            };
            vec![name(obj), Value::from(policy), Value::from(param), age(obj, now)]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn binding(spec: Value) -> Value {
        let mut obj = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "adm-binding"},
            "spec": {"policyName": "adm-policy", "validationActions": ["Deny"]}});
        for (k, v) in spec.as_object().unwrap() {
            if v.is_null() {
                obj["spec"].as_object_mut().unwrap().remove(k);
            } else {
                obj["spec"][k] = v.clone();
            }
        }
        Bindings.prepare_for_create(&mut obj);
        obj
    }

    fn errors(spec: Value) -> Vec<String> {
        messages(Bindings.validate(&binding(spec)))
    }

    #[test]
    fn bindings_are_validated_as_upstream_validates_them() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!({}), vec![]),
            (json!({"policyName": null}), vec!["spec.policyName: Required value"]),
            (json!({"policyName": "Bad"}), vec!["spec.policyName: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
            (json!({"validationActions": null}), vec!["spec.validationActions: Required value: at least one validation action is required"]),
            (json!({"validationActions": ["Deny", "Warn", "Deny", "Block"]}), vec![
                "spec.validationActions[2]: Duplicate value: \"Deny\"",
                "spec.validationActions[3]: Unsupported value: \"Block\": supported values: \"Audit\", \"Deny\", \"Warn\"",
                "spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\", \"Deny\", \"Block\"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
            ]),
            (json!({"paramRef": {"name": "p", "parameterNotFoundAction": "Allow"}}), vec![]),
            (json!({"paramRef": {}}), vec![
                "spec.paramRef: Required value: one of name or selector must be specified",
                "spec.paramRef.parameterNotFoundAction: Required value",
            ]),
            (json!({"paramRef": {"name": "a/b", "selector": {}, "parameterNotFoundAction": "Ignore"}}), vec![
                "spec.paramRef.name: Invalid value: \"a/b\": may not contain '/'",
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.parameterNotFoundAction: Unsupported value: \"Ignore\": supported values: \"Deny\", \"Allow\"",
            ]),
            (json!({"matchResources": {"matchPolicy": "Fuzzy"}}), vec!["spec.matchResouces.matchPolicy: Unsupported value: \"Fuzzy\": supported values: \"Equivalent\", \"Exact\""]),
        ];
        for (spec, want) in cases {
            assert_eq!(errors(spec.clone()), want, "{spec}");
        }
    }

    #[test]
    fn match_resources_default_and_the_generation_follows_the_spec() {
        let old = binding(
            json!({"matchResources": {"excludeResourceRules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}}),
        );
        assert_eq!(old["spec"]["matchResources"]["matchPolicy"], "Equivalent");
        assert_eq!(old["spec"]["matchResources"]["objectSelector"], json!({}));
        assert_eq!(old["spec"]["matchResources"]["excludeResourceRules"][0]["scope"], "*");
        assert_eq!(old["metadata"]["generation"], 1);
        let mut new = old.clone();
        new["spec"]["validationActions"] = json!(["Warn", "Audit"]);
        Bindings.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert!(!Bindings.allow_unconditional_update());
    }

    #[test]
    fn the_printer_shows_the_policy_and_the_params() {
        let cells = |spec: Value| (printer().cells)(&binding(spec), 0, &[]);
        assert_eq!(
            cells(json!({})),
            vec![json!("adm-binding"), json!("adm-policy"), json!("<unset>"), json!("<unknown>")]
        );
        assert_eq!(cells(json!({"paramRef": {"name": "p"}}))[2], json!("*/p"));
        assert_eq!(cells(json!({"paramRef": {"name": "p", "namespace": "ns"}}))[2], json!("ns/p"));
        assert_eq!(
            cells(json!({"paramRef": {"selector": {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]}}}))[2],
            json!("&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}")
        );
    }
}
