//! IngressClasses, `networking.k8s.io/v1` (`KK/pkg/registry/networking/ingressclass`,
//! `KK/pkg/apis/networking/validation`, `KK/pkg/apis/networking/v1/defaults.go`): cluster-scoped, names
//! are DNS subdomains. `spec.controller` is required, at most 250 bytes, a domain-prefixed path
//! (`example.com/ingress-controller`), and never changes; `spec.parameters` names a kind and an object
//! (path segment names, an optional DNS subdomain group) and its scope, `Cluster` by default, or
//! `Namespace` with a namespace. The generation follows the spec.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        namespaced: false,
        ..ResourceInfo::new(resource(), "ingressclass", Arc::new(IngressClasses), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "networking.k8s.io".into(),
        version: "v1".into(),
        kind: "IngressClass".into(),
        plural: "ingressclasses".into(),
        etcd_prefix: "ingressclasses".into(),
    }
}

/// The longest controller name.
const MAX_CONTROLLER_LENGTH: usize = 250;
/// The scopes of a parameters reference, sorted.
const SCOPES: &[&str] = &["Cluster", "Namespace"];

/// `SetDefaults_IngressClass`: a parameters reference without a scope is cluster-scoped.
fn default(obj: &mut Value) {
    if let Some(parameters) = obj.pointer_mut("/spec/parameters").and_then(Value::as_object_mut) {
        parameters.entry("scope").or_insert_with(|| json!("Cluster"));
    }
}

/// `IsDomainPrefixedPath`: a DNS subdomain, `/`, and HTTP path characters.
fn domain_prefixed_path(field: &str, value: &str) -> Vec<FieldError> {
    let Some((host, path)) = value.split_once('/').filter(|(h, p)| !h.is_empty() && !p.is_empty()) else {
        return vec![FieldError::invalid(field, value, "must be a domain-prefixed path (such as \"acme.io/foo\")")];
    };
    let mut errs: Vec<FieldError> =
        names::dns1123_subdomain(host).iter().map(|m| FieldError::invalid(field, host, m)).collect();
    let http_path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(http_path_char) {
        errs.push(FieldError::invalid(
            field,
            path,
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
        ));
    }
    errs
}

/// `validateIngressClassParametersReference`.
fn validate_parameters(parameters: &Value) -> Vec<FieldError> {
    const AT: &str = "spec.parameters";
    let mut errs = Vec::new();
    let text = |key: &str| parameters.get(key).and_then(Value::as_str);
    if let Some(group) = text("apiGroup") {
        for msg in names::dns1123_subdomain(group) {
            errs.push(FieldError::invalid(&format!("{AT}.apiGroup"), group, &msg));
        }
    }
    for field in ["kind", "name"] {
        let value = text(field).unwrap_or("");
        let at = format!("{AT}.{field}");
        if value.is_empty() {
            errs.push(FieldError::required(&at, ""));
        } else {
            errs.extend(names::path_segment_name(value, false).iter().map(|m| FieldError::invalid(&at, value, m)));
        }
    }
    let Some(scope) = text("scope") else {
        errs.push(FieldError::required(&format!("{AT}.scope"), ""));
        return errs;
    };
    let namespace = text("namespace");
    match scope {
        "Namespace" => match namespace {
            None => {
                errs.push(FieldError::required(&format!("{AT}.namespace"), "`parameters.scope` is set to 'Namespace'"))
            }
            Some(ns) => {
                for msg in names::name_is_dns_label(ns, false) {
                    errs.push(FieldError::invalid(&format!("{AT}.namespace"), ns, &msg));
                }
            }
        },
        "Cluster" => {
            if namespace.is_some() {
                errs.push(FieldError::forbidden(&format!("{AT}.namespace"), "`parameters.scope` is set to 'Cluster'"));
            }
        }
        other => errs.push(FieldError::not_supported(&format!("{AT}.scope"), other, SCOPES)),
    }
    errs
}

/// `ValidateIngressClass`.
fn validate_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    let controller = obj.pointer("/spec/controller").and_then(Value::as_str).unwrap_or("");
    if controller.is_empty() {
        errs.push(FieldError::required("spec.controller", ""));
    } else {
        if controller.len() > MAX_CONTROLLER_LENGTH {
            errs.push(FieldError::too_long("spec.controller", MAX_CONTROLLER_LENGTH));
        }
        errs.extend(domain_prefixed_path("spec.controller", controller));
    }
    if let Some(parameters) = obj.pointer("/spec/parameters").filter(|p| !p.is_null()) {
        errs.extend(validate_parameters(parameters));
    }
    errs
}

/// The IngressClass strategy.
struct IngressClasses;

impl Strategy for IngressClasses {
    fn namespace_scoped(&self) -> bool {
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
        validate_class(obj)
    }

    /// `ValidateIngressClassUpdate`: metadata, the controller unchanged, then the whole class again.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        let controller = |obj: &Value| Some(obj.pointer("/spec/controller").cloned().unwrap_or(json!("")));
        errs.extend(common::immutable(controller(new).as_ref(), controller(old).as_ref(), "spec.controller"));
        errs.extend(validate_class(new));
        errs
    }
}

impl DeleteStrategy for IngressClasses {}

/// `printIngressClass`: the controller and the parameters as `Kind[.group]/name`.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Controller", "string", "Controller that is responsible for handling this class", 0),
            column("Parameters", "string", "A reference to a resource with additional parameters", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let controller = obj.pointer("/spec/controller").and_then(Value::as_str).unwrap_or("");
            let parameters = match obj.pointer("/spec/parameters").filter(|p| p.is_object()) {
                None => "<none>".to_string(),
                Some(p) => {
                    let text = |key: &str| p.get(key).and_then(Value::as_str);
                    let mut shown = text("kind").unwrap_or("").to_string();
                    if let Some(group) = text("apiGroup") {
                        shown = format!("{shown}.{group}");
                    }
                    format!("{shown}/{}", text("name").unwrap_or(""))
                }
            };
            vec![name(obj), Value::from(controller), Value::from(parameters), age(obj, now)]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn class(spec: Value) -> Value {
        json!({"metadata": {"name": "nginx"}, "spec": spec})
    }

    #[test]
    fn classes_are_validated_as_upstream_validates_them() {
        let s = IngressClasses;
        let cases: Vec<(Value, Vec<String>)> = vec![
            (class(json!({"controller": "example.com/ingress"})), vec![]),
            (class(json!({})), vec!["spec.controller: Required value".into()]),
            (
                class(json!({"controller": "nginx"})),
                vec!["spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")".into()],
            ),
            (
                class(json!({"controller": "Example.com/a b"})),
                vec![
                    "spec.controller: Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
                    "spec.controller: Invalid value: \"a b\": Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')".into(),
                ],
            ),
            (
                class(json!({"controller": format!("example.com/{}", "a".repeat(250))})),
                vec!["spec.controller: Too long: may not be more than 250 bytes".into()],
            ),
            (
                class(json!({"controller": "example.com/c", "parameters": {"kind": "", "name": "a/b", "scope": "Namespace"}})),
                vec![
                    "spec.parameters.kind: Required value".into(),
                    "spec.parameters.name: Invalid value: \"a/b\": may not contain '/'".into(),
                    "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'".into(),
                ],
            ),
            (
                class(json!({"controller": "example.com/c", "parameters": {"kind": "K", "name": "n", "scope": "Cluster", "namespace": "ns"}})),
                vec!["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'".into()],
            ),
            (
                class(json!({"controller": "example.com/c", "parameters": {"kind": "K", "name": "n", "scope": "Global"}})),
                vec!["spec.parameters.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespace\"".into()],
            ),
            (
                class(json!({"controller": "example.com/c", "parameters": {"apiGroup": "k8s.example.com", "kind": "K", "name": "n", "scope": "Namespace", "namespace": "Bad"}})),
                vec!["spec.parameters.namespace: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".into()],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn scope_defaults_and_the_controller_never_changes() {
        let s = IngressClasses;
        let mut old = class(json!({"controller": "example.com/a", "parameters": {"kind": "K", "name": "n"}}));
        s.prepare_for_create(&mut old);
        assert_eq!(old["spec"]["parameters"]["scope"], "Cluster");
        assert_eq!(old["metadata"]["generation"], 1);
        assert_eq!(messages(s.validate(&old)), Vec::<String>::new());
        let mut new = old.clone();
        new["spec"]["controller"] = json!("example.com/b");
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(
            messages(s.validate_update(&new, &old)),
            ["spec.controller: Invalid value: \"example.com/b\": field is immutable"]
        );
    }

    #[test]
    fn the_printer_shows_controller_and_parameters() {
        let obj = class(
            json!({"controller": "example.com/a", "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"}}),
        );
        let cells = (printer().cells)(&obj, 0, &[]);
        assert_eq!(
            cells,
            vec![json!("nginx"), json!("example.com/a"), json!("Params.k8s.example.com/p"), json!("<unknown>")]
        );
        let bare = class(json!({"controller": "example.com/a"}));
        assert_eq!((printer().cells)(&bare, 0, &[])[2], json!("<none>"));
    }
}
