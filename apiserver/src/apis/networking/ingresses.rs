//! Ingresses, `networking.k8s.io/v1` (`KK/pkg/registry/networking/ingress`,
//! `KK/pkg/apis/networking/validation`): namespaced, names are DNS subdomains, short name `ing`, a `/status`
//! subresource. The spec needs rules or a default backend; a rule's host is a DNS name (a wildcard `*.`
//! prefix allowed), never an IP; each HTTP path has a `pathType` (Exact, Prefix, ImplementationSpecific)
//! and an absolute path; each backend is a service (name and port name or number) or a resource, exactly
//! one; TLS hosts are DNS names and secret names DNS subdomains; `ingressClassName` is a DNS subdomain and
//! agrees with the `kubernetes.io/ingress.class` annotation on create. The status belongs to `/status`
//! (load balancer IPs and host names are checked there); the generation follows the spec. An update
//! keeps accepting what the stored object already had: invalid secret names, invalid rules under
//! wildcard hosts.
//!
//! Also here, for the other kinds of the group and of `policy` and `discovery.k8s.io`: apimachinery's
//! port name and number checks, wildcard DNS subdomains, and Go's lenient IP parsing.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::printers::{age, age_column, column, name, name_column};
use crate::apis::{status, Printer, ResourceInfo};
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{bump_generation_on_spec_change, common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["ing"],
        subresources: vec![status("Ingress")],
        ..ResourceInfo::new(resource(), "ingress", Arc::new(Ingresses), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "networking.k8s.io".into(),
        version: "v1".into(),
        kind: "Ingress".into(),
        plural: "ingresses".into(),
        etcd_prefix: "ingress".into(),
    }
}

/// The annotation that named the class before `ingressClassName`.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
/// The path types, sorted as the message lists them.
const PATH_TYPES: &[&str] = &["Exact", "ImplementationSpecific", "Prefix"];
/// What an Exact or Prefix path may not contain, and may not end with.
const BAD_PATH_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F"];
const BAD_PATH_SUFFIXES: &[&str] = &["/..", "/."];

const WILDCARD_MESSAGE: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS \
subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric \
character (e.g. '*.example.com', regex used for validation is \
'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `IsWildcardDNS1123Subdomain`: `*.` and a DNS subdomain.
pub(crate) fn wildcard_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > names::DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(format!("must be no more than {} characters", names::DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let valid = value.strip_prefix("*.").is_some_and(|rest| {
        !rest.is_empty()
            && rest.split('.').all(|label| {
                let b = label.as_bytes();
                let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
                !b.is_empty() && alnum(b[0]) && alnum(b[b.len() - 1]) && b.iter().all(|&c| alnum(c) || c == b'-')
            })
    });
    if !valid {
        errs.push(WILDCARD_MESSAGE.to_string());
    }
    errs
}

/// `IsValidPortNum`.
pub(crate) fn port_number(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_string()]
    }
}

/// `IsValidPortName`: an IANA service name (at most 15 characters of `a-z`, `0-9` and single inner dashes,
/// at least one letter).
pub(crate) fn port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push("must be no more than 15 characters".to_string());
    }
    if port.is_empty() || !port.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-') {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string());
    }
    if !port.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

/// `netutils.ParseIPSloppy`: Go's IP parsing, which also takes IPv4 octets with leading zeros (as decimal).
pub(crate) fn parse_ip(text: &str) -> Option<IpAddr> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    let octets: Vec<&str> = text.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (byte, octet) in bytes.iter_mut().zip(&octets) {
        if octet.is_empty() || octet.len() > 3 || !octet.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *byte = octet.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(bytes)))
}

/// A field error whose value Go prints with `%#v` (`[]networking.IngressRule(nil)`).
pub(crate) fn invalid_go(field: &str, go_value: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: BadValue::GoSyntax(go_value),
        detail: detail.into(),
    }
}

fn str_at<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

fn items<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
}

/// What an update may keep of the stored object (`IngressValidationOptions`).
#[derive(Clone, Copy, Default)]
struct Options {
    allow_invalid_secret_name: bool,
    allow_invalid_wildcard_host_rule: bool,
}

/// A host: an IP is refused; `*.` makes it a wildcard.
fn validate_host(host: &str, path: &str, errs: &mut Vec<FieldError>) {
    if parse_ip(host).is_some() {
        errs.push(FieldError::invalid(path, host, "must be a DNS name, not an IP address"));
    }
    let msgs = if host.contains('*') { wildcard_subdomain(host) } else { names::dns1123_subdomain(host) };
    errs.extend(msgs.iter().map(|m| FieldError::invalid(path, host, m)));
}

/// `validateIngressRuleValue`: an HTTP rule needs paths, each with a type, a path and a backend.
fn validate_rule_value(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(http) = rule.get("http").filter(|h| !h.is_null()) else { return errs };
    let paths = items(http, "paths");
    if paths.is_empty() {
        errs.push(FieldError::required(&format!("{path}.http.paths"), ""));
    }
    for (i, p) in paths.iter().enumerate() {
        let at = format!("{path}.http.paths[{i}]");
        let Some(path_type) = str_at(p, "pathType") else {
            errs.push(FieldError::required(&format!("{at}.pathType"), "pathType must be specified"));
            continue;
        };
        let value = str_at(p, "path").unwrap_or("");
        let path_field = format!("{at}.path");
        match path_type {
            "Exact" | "Prefix" => {
                if !value.starts_with('/') {
                    errs.push(FieldError::invalid(&path_field, value, "must be an absolute path"));
                }
                for seq in BAD_PATH_SEQUENCES.iter().filter(|s| value.contains(**s)) {
                    errs.push(FieldError::invalid(&path_field, value, &format!("must not contain '{seq}'")));
                }
                for suffix in BAD_PATH_SUFFIXES.iter().filter(|s| value.ends_with(**s)) {
                    errs.push(FieldError::invalid(&path_field, value, &format!("cannot end with '{suffix}'")));
                }
            }
            "ImplementationSpecific" => {
                if !value.is_empty() && !value.starts_with('/') {
                    errs.push(FieldError::invalid(&path_field, value, "must be an absolute path"));
                }
            }
            other => errs.push(FieldError::not_supported(&format!("{at}.pathType"), other, PATH_TYPES)),
        }
        errs.extend(validate_backend(p.get("backend").unwrap_or(&Value::Null), &format!("{at}.backend")));
    }
    errs
}

/// `validateIngressBackend`: a service (name, and a port name or number) or a resource, exactly one.
fn validate_backend(backend: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let resource = backend.get("resource").filter(|r| !r.is_null());
    let service = backend.get("service").filter(|s| !s.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(path, "", "cannot set both resource and service backends")),
        (Some(r), None) => errs.extend(validate_typed_reference(r, &format!("{path}.resource"))),
        (None, Some(s)) => {
            let service_name = str_at(s, "name").unwrap_or("");
            let name_field = format!("{path}.service.name");
            if service_name.is_empty() {
                errs.push(FieldError::required(&name_field, ""));
            } else {
                for msg in names::name_is_dns1035_label(service_name, false) {
                    errs.push(FieldError::invalid(&name_field, service_name, &msg));
                }
            }
            let port = s.get("port").unwrap_or(&Value::Null);
            let port_name_value = str_at(port, "name").unwrap_or("");
            let number = port.get("number").and_then(Value::as_i64).unwrap_or(0);
            match (port_name_value.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(path, "", "cannot set both port name & port number")),
                (false, true) => {
                    for msg in port_name(port_name_value) {
                        errs.push(FieldError::invalid(&format!("{path}.service.port.name"), port_name_value, &msg));
                    }
                }
                (true, false) => {
                    for msg in port_number(number) {
                        errs.push(FieldError::invalid_int(&format!("{path}.service.port.number"), number, &msg));
                    }
                }
                (true, true) => errs.push(FieldError::required(path, "port name or number is required")),
            }
        }
        (None, None) => errs.push(FieldError::invalid(path, "", "resource or service backend is required")),
    }
    errs
}

/// `validateIngressTypedLocalObjectReference`: a resource backend's group, kind and name.
fn validate_typed_reference(reference: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(group) = str_at(reference, "apiGroup") {
        for msg in names::dns1123_subdomain(group) {
            errs.push(FieldError::invalid(&format!("{path}.apiGroup"), group, &msg));
        }
    }
    for field in ["kind", "name"] {
        let value = str_at(reference, field).unwrap_or("");
        let at = format!("{path}.{field}");
        if value.is_empty() {
            errs.push(FieldError::required(&at, ""));
        } else {
            errs.extend(names::path_segment_name(value, false).iter().map(|m| FieldError::invalid(&at, value, m)));
        }
    }
    errs
}

/// `ValidateIngressSpec`.
fn validate_spec(obj: &Value, opts: Options) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    let rules = items(spec, "rules");
    let default_backend = spec.get("defaultBackend").filter(|b| !b.is_null());
    if rules.is_empty() && default_backend.is_none() {
        let shown = if spec.get("rules").is_some_and(Value::is_array) {
            "[]networking.IngressRule{}"
        } else {
            "[]networking.IngressRule(nil)"
        };
        errs.push(invalid_go("spec", shown.into(), "either `defaultBackend` or `rules` must be specified"));
    }
    if let Some(backend) = default_backend {
        errs.extend(validate_backend(backend, "spec.defaultBackend"));
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        let host = str_at(rule, "host").unwrap_or("");
        if !host.is_empty() {
            validate_host(host, &format!("{at}.host"), &mut errs);
        }
        if !host.contains('*') || !opts.allow_invalid_wildcard_host_rule {
            errs.extend(validate_rule_value(rule, &at));
        }
    }
    for (i, tls) in items(spec, "tls").iter().enumerate() {
        for (j, host) in items(tls, "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or("");
            let at = format!("spec.tls[{i}].hosts[{j}]");
            let msgs = if host.contains('*') { wildcard_subdomain(host) } else { names::dns1123_subdomain(host) };
            errs.extend(msgs.iter().map(|m| FieldError::invalid(&at, host, m)));
        }
        let secret = str_at(tls, "secretName").unwrap_or("");
        if !opts.allow_invalid_secret_name && !secret.is_empty() {
            for msg in names::name_is_dns_subdomain(secret, false) {
                errs.push(FieldError::invalid(&format!("spec.tls[{i}].secretName"), secret, &msg));
            }
        }
    }
    if let Some(class) = str_at(spec, "ingressClassName") {
        for msg in names::name_is_dns_subdomain(class, false) {
            errs.push(FieldError::invalid("spec.ingressClassName", class, &msg));
        }
    }
    errs
}

/// The options of an update of `old`: what it already had stays acceptable.
fn update_options(old: &Value) -> Options {
    let empty = json!({});
    let spec = old.get("spec").unwrap_or(&empty);
    let allow_invalid_secret_name = items(spec, "tls").iter().any(|tls| {
        let secret = str_at(tls, "secretName").unwrap_or("");
        !secret.is_empty() && !names::name_is_dns_subdomain(secret, false).is_empty()
    });
    let allow_invalid_wildcard_host_rule = items(spec, "rules")
        .iter()
        .any(|rule| str_at(rule, "host").unwrap_or("").contains('*') && !validate_rule_value(rule, "").is_empty());
    Options { allow_invalid_secret_name, allow_invalid_wildcard_host_rule }
}

/// `ValidateIngressLoadBalancerStatus`: each point an IP, or a host name that is no IP.
fn validate_status(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let points = obj.pointer("/status/loadBalancer/ingress").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, point) in points.iter().enumerate() {
        let at = format!("status.loadBalancer.ingress[{i}]");
        let ip = str_at(point, "ip").unwrap_or("");
        if !ip.is_empty() && parse_ip(ip).is_none() {
            errs.push(FieldError::invalid(&format!("{at}.ip"), ip, "must be a valid IP address"));
        }
        let hostname = str_at(point, "hostname").unwrap_or("");
        if !hostname.is_empty() {
            for msg in names::dns1123_subdomain(hostname) {
                errs.push(FieldError::invalid(&format!("{at}.hostname"), hostname, &msg));
            }
            if parse_ip(hostname).is_some() {
                errs.push(FieldError::invalid(
                    &format!("{at}.hostname"),
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// The Ingress strategy.
struct Ingresses;

impl Strategy for Ingresses {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"loadBalancer": {}});
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        common::keep_status(new, old);
        bump_generation_on_spec_change(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj, Options::default()));
        let annotation = meta::get(obj, "annotations").and_then(|a| a.get(CLASS_ANNOTATION)).and_then(Value::as_str);
        let class = obj.pointer("/spec/ingressClassName").and_then(Value::as_str);
        if let (Some(annotation), Some(class)) = (annotation, class) {
            if annotation != class {
                errs.push(FieldError::invalid(
                    &format!("annotations.{CLASS_ANNOTATION}"),
                    annotation,
                    "must match `ingressClassName` when both are specified",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new, update_options(old)));
        errs
    }

    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_status(new));
        errs
    }
}

impl DeleteStrategy for Ingresses {}

/// `formatHosts`: the first three hosts, `+ N more...` for the other rules, `*` for none.
fn hosts(obj: &Value) -> String {
    const MAX: usize = 3;
    let rules = obj.pointer("/spec/rules").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        let host = str_at(rule, "host").unwrap_or("");
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", rules.len() - MAX)
    } else {
        joined
    }
}

/// `ingressLoadBalancerStatusStringer` as the server calls it (wide): the IPs or else host names, sorted.
fn address(obj: &Value) -> String {
    let points = obj.pointer("/status/loadBalancer/ingress").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let mut all: Vec<&str> = points
        .iter()
        .filter_map(|p| {
            let ip = str_at(p, "ip").unwrap_or("");
            let hostname = str_at(p, "hostname").unwrap_or("");
            (!ip.is_empty()).then_some(ip).or((!hostname.is_empty()).then_some(hostname))
        })
        .collect();
    all.sort_unstable();
    all.dedup();
    all.join(",")
}

/// `printIngress`: class, hosts, address, ports (80, and 443 with TLS), age.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column(
                "Class",
                "string",
                "The name of the IngressClass resource that should be used for additional configuration",
                0,
            ),
            column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule", 0),
            column("Address", "string", "Address is a list containing ingress points for the load-balancer", 0),
            column("Ports", "string", "Ports of TLS configurations that open", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let class = obj.pointer("/spec/ingressClassName").and_then(Value::as_str).unwrap_or("<none>");
            let tls = obj.pointer("/spec/tls").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
            let ports = if tls { "80, 443" } else { "80" };
            vec![
                name(obj),
                Value::from(class),
                Value::from(hosts(obj)),
                Value::from(address(obj)),
                Value::from(ports),
                age(obj, now),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn ing(spec: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns"}, "spec": spec})
    }

    fn backend() -> Value {
        json!({"service": {"name": "web", "port": {"number": 80}}})
    }

    fn rule(host: &str, path: Value) -> Value {
        json!({"host": host, "http": {"paths": [path]}})
    }

    #[test]
    fn ingresses_are_validated_as_upstream_validates_them() {
        let s = Ingresses;
        let ok_path = json!({"path": "/", "pathType": "Prefix", "backend": backend()});
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (ing(json!({"rules": [rule("foo.example.com", ok_path.clone())]})), vec![]),
            (ing(json!({"defaultBackend": backend()})), vec![]),
            (ing(json!({"rules": [rule("*.example.com", ok_path.clone())]})), vec![]),
            (ing(json!({})), vec!["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"]),
            (ing(json!({"rules": []})), vec!["spec: Invalid value: []networking.IngressRule{}: either `defaultBackend` or `rules` must be specified"]),
            (
                ing(json!({"rules": [rule("1.2.3.4", ok_path.clone())]})),
                vec!["spec.rules[0].host: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address"],
            ),
            (
                ing(json!({"rules": [rule("*.*.example.com", ok_path.clone())]})),
                vec!["spec.rules[0].host: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
            ),
            (
                ing(json!({"rules": [rule("Foo", ok_path.clone())]})),
                vec!["spec.rules[0].host: Invalid value: \"Foo\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
            ),
            (
                ing(json!({"rules": [{"host": "a.com", "http": {"paths": []}}]})),
                vec!["spec.rules[0].http.paths: Required value"],
            ),
            (
                ing(json!({"rules": [rule("a.com", json!({"path": "/", "backend": backend()}))]})),
                vec!["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"],
            ),
            (
                ing(json!({"rules": [rule("a.com", json!({"path": "/", "pathType": "Regex", "backend": backend()}))]})),
                vec!["spec.rules[0].http.paths[0].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""],
            ),
            (
                ing(json!({"rules": [rule("a.com", json!({"path": "foo", "pathType": "Exact", "backend": backend()}))]})),
                vec!["spec.rules[0].http.paths[0].path: Invalid value: \"foo\": must be an absolute path"],
            ),
            (
                ing(json!({"rules": [rule("a.com", json!({"path": "/a//b/..", "pathType": "Prefix", "backend": backend()}))]})),
                vec![
                    "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b/..\": must not contain '//'",
                    "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b/..\": cannot end with '/..'",
                ],
            ),
            (
                ing(json!({"rules": [rule("a.com", json!({"path": "x", "pathType": "ImplementationSpecific", "backend": backend()}))]})),
                vec!["spec.rules[0].http.paths[0].path: Invalid value: \"x\": must be an absolute path"],
            ),
            (
                ing(json!({"rules": [rule("a.com", json!({"pathType": "ImplementationSpecific", "backend": backend()}))]})),
                vec![],
            ),
            (
                ing(json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}, "resource": {"kind": "K", "name": "n"}}})),
                vec!["spec.defaultBackend: Invalid value: \"\": cannot set both resource and service backends"],
            ),
            (ing(json!({"defaultBackend": {}})), vec!["spec.defaultBackend: Invalid value: \"\": resource or service backend is required"]),
            (
                ing(json!({"defaultBackend": {"service": {"name": "web", "port": {}}}})),
                vec!["spec.defaultBackend: Required value: port name or number is required"],
            ),
            (
                ing(json!({"defaultBackend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}})),
                vec!["spec.defaultBackend: Invalid value: \"\": cannot set both port name & port number"],
            ),
            (
                ing(json!({"defaultBackend": {"service": {"name": "1web", "port": {"number": 70000}}}})),
                vec![
                    "spec.defaultBackend.service.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                    "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
                ],
            ),
            (
                ing(json!({"defaultBackend": {"service": {"port": {"name": "HTTP"}}}})),
                vec![
                    "spec.defaultBackend.service.name: Required value",
                    "spec.defaultBackend.service.port.name: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                    "spec.defaultBackend.service.port.name: Invalid value: \"HTTP\": must contain at least one letter (a-z)",
                ],
            ),
            (
                ing(json!({"defaultBackend": {"resource": {"apiGroup": "Ex", "kind": "", "name": "a/b"}}})),
                vec![
                    "spec.defaultBackend.resource.apiGroup: Invalid value: \"Ex\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    "spec.defaultBackend.resource.kind: Required value",
                    "spec.defaultBackend.resource.name: Invalid value: \"a/b\": may not contain '/'",
                ],
            ),
            (
                ing(json!({"defaultBackend": backend(), "tls": [{"hosts": ["*.a.com", "B.com"], "secretName": "S"}]})),
                vec![
                    "spec.tls[0].hosts[1]: Invalid value: \"B.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    "spec.tls[0].secretName: Invalid value: \"S\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                ],
            ),
            (
                ing(json!({"defaultBackend": backend(), "ingressClassName": "Nginx"})),
                vec!["spec.ingressClassName: Invalid value: \"Nginx\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
            ),
            (
                json!({"metadata": {"name": "web", "namespace": "ns", "annotations": {"kubernetes.io/ingress.class": "a"}},
                    "spec": {"defaultBackend": backend(), "ingressClassName": "b"}}),
                vec!["annotations.kubernetes.io/ingress.class: Invalid value: \"a\": must match `ingressClassName` when both are specified"],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn status_is_reset_and_kept_and_generation_follows_the_spec() {
        let s = Ingresses;
        let mut old = ing(json!({"defaultBackend": backend()}));
        old["status"] = json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}});
        s.prepare_for_create(&mut old);
        assert_eq!(old["status"], json!({"loadBalancer": {}}));
        assert_eq!(old["metadata"]["generation"], 1);
        let mut new = old.clone();
        new["spec"]["ingressClassName"] = json!("nginx");
        new["status"] = json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}});
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"loadBalancer": {}}));
        assert_eq!(new["metadata"]["generation"], 2);
        let mut via_status = old.clone();
        via_status["spec"] = json!({"defaultBackend": {"service": {"name": "other", "port": {"number": 1}}}});
        via_status["status"] = json!({"loadBalancer": {"ingress": [{"ip": "nope"}, {"hostname": "10.0.0.1"}]}});
        s.prepare_for_subresource_update(Subresource::Status, &mut via_status, &old);
        assert_eq!(via_status["spec"], old["spec"]);
        assert_eq!(
            messages(s.validate_subresource_update(Subresource::Status, &via_status, &old)),
            [
                "status.loadBalancer.ingress[0].ip: Invalid value: \"nope\": must be a valid IP address",
                "status.loadBalancer.ingress[1].hostname: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
            ]
        );
    }

    #[test]
    fn updates_keep_accepting_what_was_stored() {
        let s = Ingresses;
        let old = ing(json!({"defaultBackend": backend(), "tls": [{"secretName": "Bad_Name"}]}));
        let new = old.clone();
        assert_eq!(messages(s.validate_update(&new, &old)), Vec::<String>::new());
        assert_eq!(s.validate(&new).len(), 1);
    }

    #[test]
    fn the_printer_shows_class_hosts_address_and_ports() {
        let mut obj =
            ing(json!({"rules": [{"host": "a.com"}, {"host": "b.com"}, {}, {"host": "c.com"}, {"host": "d.com"}],
            "tls": [{"hosts": ["a.com"]}]}));
        obj["status"] = json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}, {"ip": "10.0.0.1"}]}});
        let cells = (printer().cells)(&obj, 0, &[]);
        assert_eq!(
            cells,
            vec![
                json!("web"),
                json!("<none>"),
                json!("a.com,b.com,c.com + 2 more..."),
                json!("10.0.0.1,10.0.0.2,lb.example.com"),
                json!("80, 443"),
                json!("<unknown>")
            ]
        );
        let plain = ing(json!({"ingressClassName": "nginx", "defaultBackend": backend()}));
        let cells = (printer().cells)(&plain, 0, &[]);
        assert_eq!(cells[1..5], [json!("nginx"), json!("*"), json!(""), json!("80")]);
    }

    #[test]
    fn helpers_match_apimachinery() {
        assert!(port_name("http").is_empty());
        assert_eq!(port_name("a--b-"), ["must not contain consecutive hyphens", "must not begin or end with a hyphen"]);
        assert_eq!(port_name("abcdefghijklmnop"), ["must be no more than 15 characters"]);
        assert_eq!(parse_ip("010.001.0.1"), Some("10.1.0.1".parse().unwrap()));
        assert!(parse_ip("10.0.0").is_none());
        assert!(wildcard_subdomain("*.a.b").is_empty());
        assert_eq!(wildcard_subdomain("a.b").len(), 1);
    }
}
