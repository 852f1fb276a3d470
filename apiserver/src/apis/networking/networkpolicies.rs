//! NetworkPolicies, `networking.k8s.io/v1` (`KK/pkg/registry/networking/networkpolicy`,
//! `KK/pkg/apis/networking/validation`, `KK/pkg/apis/networking/v1/defaults.go`): namespaced, names are
//! DNS subdomains, short name `netpol`. `policyTypes` defaults to `Ingress`, plus `Egress` when there are
//! egress rules, and holds at most those two; a port's protocol defaults to TCP (TCP, UDP or SCTP), a
//! numeric port is 1-65535 with an optional `endPort` at or above it, a named port an IANA name; a peer is
//! an `ipBlock` (a CIDR and strict sub-CIDRs as exceptions) or pod and namespace selectors, never both.
//! Label selectors are checked as apimachinery's `ValidateLabelSelector` does; an update may keep a pod
//! selector whose label values were already invalid. The generation follows the spec.
//!
//! Also here, for `policy`: the label selector and label map checks.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::{json, Value};

use super::ingresses::{invalid_go, parse_ip, port_name, port_number};
use crate::apis::printers::{age, age_column, doc_column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::go_text::quote;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::workloads::format_label_selector;
use crate::registry::strategies::{bump_generation_on_spec_change, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["netpol"],
        ..ResourceInfo::new(resource(), "networkpolicy", Arc::new(NetworkPolicies), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "networking.k8s.io".into(),
        version: "v1".into(),
        kind: "NetworkPolicy".into(),
        plural: "networkpolicies".into(),
        etcd_prefix: "networkpolicies".into(),
    }
}

const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];
const POLICY_TYPES: &[&str] = &["Ingress", "Egress"];
const CIDR_DETAIL: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// `ValidateLabels` of a `map[string]string` at `path`: qualified-name keys, label values.
pub(crate) fn validate_label_map(map: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in map.and_then(Value::as_object).into_iter().flatten() {
        errs.extend(names::qualified_name(key).iter().map(|m| FieldError::invalid(path, key, m)));
        let value = value.as_str().unwrap_or("");
        errs.extend(names::label_value(value).iter().map(|m| FieldError::invalid(path, value, m)));
    }
    errs
}

/// `ValidateLabelSelector` of the selector at `path` (nothing when there is none); label values inside
/// expressions are not checked when `allow_invalid_values`.
pub(crate) fn validate_label_selector(
    selector: Option<&Value>,
    path: &str,
    allow_invalid_values: bool,
) -> Vec<FieldError> {
    let Some(selector) = selector.filter(|s| s.is_object()) else { return Vec::new() };
    let mut errs = validate_label_map(selector.get("matchLabels"), &format!("{path}.matchLabels"));
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, e) in expressions.iter().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = e.get("values").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        &format!("{at}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        &format!("{at}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errs.push(FieldError::invalid(&format!("{at}.operator"), other, "not a valid selector operator")),
        }
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        errs.extend(names::qualified_name(key).iter().map(|m| FieldError::invalid(&format!("{at}.key"), key, m)));
        if !allow_invalid_values {
            for (j, value) in values.iter().enumerate() {
                let value = value.as_str().unwrap_or("");
                for msg in names::label_value(value) {
                    errs.push(FieldError::invalid(&format!("{at}.values[{j}]"), value, &msg));
                }
            }
        }
    }
    errs
}

/// `netutils.ParseCIDRSloppy`: an IP, `/`, and a prefix length within the family's bits; the network.
fn parse_cidr(text: &str) -> Option<(IpAddr, u32)> {
    let (ip, bits) = text.split_once('/')?;
    let ip = parse_ip(ip)?;
    if bits.is_empty() || !bits.bytes().all(|c| c.is_ascii_digit()) || bits.len() > 3 {
        return None;
    }
    let bits: u32 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((ip, bits))
}

/// The address as a 128-bit number, IPv4 in the low bits, with its family's width.
fn as_bits(ip: IpAddr) -> (u128, u32) {
    match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

/// Whether the network `outer` contains the address `ip` (same family only, as Go's `IPNet.Contains`
/// for these).
fn contains(outer: (IpAddr, u32), ip: IpAddr) -> bool {
    let ((net, width), (addr, addr_width)) = (as_bits(outer.0), as_bits(ip));
    if width != addr_width {
        return false;
    }
    let shift = width - outer.1;
    shift >= width || (net >> shift) == (addr >> shift)
}

/// `ValidateIPBlock`.
fn validate_ip_block(block: &Value, path: &str) -> Vec<FieldError> {
    let cidr = block.get("cidr").and_then(Value::as_str).unwrap_or("");
    if cidr.is_empty() {
        return vec![FieldError::required(&format!("{path}.cidr"), "")];
    }
    let Some(outer) = parse_cidr(cidr) else {
        return vec![FieldError::invalid(&format!("{path}.cidr"), cidr, CIDR_DETAIL)];
    };
    let mut errs = Vec::new();
    let excepts = block.get("except").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, except) in excepts.iter().enumerate() {
        let text = except.as_str().unwrap_or("");
        let at = format!("{path}.except[{i}]");
        let Some(inner) = parse_cidr(text) else {
            errs.push(FieldError::invalid(&at, text, CIDR_DETAIL));
            continue;
        };
        if !contains(outer, inner.0) || outer.1 >= inner.1 {
            errs.push(FieldError::invalid(&at, text, "must be a strict subset of `cidr`"));
        }
    }
    errs
}

/// `ValidateNetworkPolicyPort`.
fn validate_port(port: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str) {
        if !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(&format!("{path}.protocol"), protocol, PROTOCOLS));
        }
    }
    let end_port = port.get("endPort").and_then(Value::as_i64);
    let end_field = format!("{path}.endPort");
    match port.get("port") {
        Some(Value::Number(n)) => {
            let number = n.as_i64().unwrap_or(0);
            errs.extend(
                port_number(number).iter().map(|m| FieldError::invalid_int(&format!("{path}.port"), number, m)),
            );
            if let Some(end) = end_port {
                if end < number {
                    errs.push(FieldError::invalid_int(&end_field, end, "must be greater than or equal to `port`"));
                }
                errs.extend(port_number(end).iter().map(|m| FieldError::invalid_int(&end_field, end, m)));
            }
        }
        Some(Value::String(text)) => {
            if let Some(end) = end_port {
                errs.push(FieldError::invalid_int(&end_field, end, "may not be specified when `port` is non-numeric"));
            }
            errs.extend(port_name(text).iter().map(|m| FieldError::invalid(&format!("{path}.port"), text, m)));
        }
        _ => {
            if let Some(end) = end_port {
                errs.push(FieldError::invalid_int(
                    &end_field,
                    end,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`: selectors, or an IP block alone.
fn validate_peer(peer: &Value, path: &str, allow_invalid_values: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut count = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(selector) = peer.get(key).filter(|s| !s.is_null()) {
            count += 1;
            errs.extend(validate_label_selector(Some(selector), &format!("{path}.{key}"), allow_invalid_values));
        }
    }
    let block = peer.get("ipBlock").filter(|b| !b.is_null());
    if let Some(block) = block {
        count += 1;
        errs.extend(validate_ip_block(block, &format!("{path}.ipBlock")));
    }
    if count == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if count > 1 && block.is_some() {
        errs.push(FieldError::forbidden(path, "may not specify both ipBlock and another peer"));
    }
    errs
}

/// `ValidateNetworkPolicySpec`.
fn validate_spec(obj: &Value, allow_invalid_values: bool) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    let mut errs = validate_label_selector(spec.get("podSelector"), "spec.podSelector", allow_invalid_values);
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        let rules = spec.get(direction).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for (i, rule) in rules.iter().enumerate() {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in rule.get("ports").and_then(Value::as_array).into_iter().flatten().enumerate() {
                errs.extend(validate_port(port, &format!("{at}.ports[{j}]")));
            }
            for (j, peer) in rule.get(peers).and_then(Value::as_array).into_iter().flatten().enumerate() {
                errs.extend(validate_peer(peer, &format!("{at}.{peers}[{j}]"), allow_invalid_values));
            }
        }
    }
    let types = spec.get("policyTypes").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if types.len() > POLICY_TYPES.len() {
        let shown: Vec<String> = types.iter().map(|t| quote(t.as_str().unwrap_or(""))).collect();
        errs.push(invalid_go(
            "spec.policyTypes",
            format!("[]networking.PolicyType{{{}}}", shown.join(", ")),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if !POLICY_TYPES.contains(&t) {
            errs.push(FieldError::not_supported(&format!("spec.policyTypes[{i}]"), t, POLICY_TYPES));
        }
    }
    errs
}

/// `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`.
fn default(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else { return };
    for direction in ["ingress", "egress"] {
        for rule in spec.get_mut(direction).and_then(Value::as_array_mut).into_iter().flatten() {
            for port in rule.get_mut("ports").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(port) = port.as_object_mut() {
                    port.entry("protocol").or_insert_with(|| json!("TCP"));
                }
            }
        }
    }
    if spec.get("policyTypes").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        let egress = spec.get("egress").and_then(Value::as_array).is_some_and(|e| !e.is_empty());
        let types = if egress { json!(["Ingress", "Egress"]) } else { json!(["Ingress"]) };
        spec.insert("policyTypes".into(), types);
    }
}

/// The NetworkPolicy strategy.
struct NetworkPolicies;

impl Strategy for NetworkPolicies {
    fn namespace_scoped(&self) -> bool {
        true
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
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(obj, false));
        errs
    }

    /// `ValidationOptionsForNetworking`: a stored pod selector that fails the checks lets label values
    /// through.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let allow = !validate_label_selector(old.pointer("/spec/podSelector"), "", false).is_empty();
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new, allow));
        errs
    }
}

impl DeleteStrategy for NetworkPolicies {}

/// `printNetworkPolicy`: the pod selector.
fn printer() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            doc_column("Pod-Selector", "string", "io.k8s.api.networking.v1.NetworkPolicySpec", "podSelector", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let selector = obj.pointer("/spec/podSelector").cloned().unwrap_or(json!({}));
            vec![name(obj), Value::from(format_label_selector(Some(&selector))), age(obj, now)]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn np(spec: Value) -> Value {
        json!({"metadata": {"name": "deny", "namespace": "ns"}, "spec": spec})
    }

    #[test]
    fn policy_types_and_protocols_default() {
        let s = NetworkPolicies;
        let mut a = np(json!({"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}));
        s.prepare_for_create(&mut a);
        assert_eq!(a["spec"]["policyTypes"], json!(["Ingress"]));
        assert_eq!(a["spec"]["ingress"][0]["ports"][0], json!({"port": 80, "protocol": "TCP"}));
        assert_eq!(a["metadata"]["generation"], 1);
        let mut b = np(json!({"podSelector": {}, "egress": [{}]}));
        s.prepare_for_create(&mut b);
        assert_eq!(b["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        let mut c = np(json!({"podSelector": {}, "egress": [{}], "policyTypes": ["Egress"]}));
        s.prepare_for_create(&mut c);
        assert_eq!(c["spec"]["policyTypes"], json!(["Egress"]));
    }

    #[test]
    fn policies_are_validated_as_upstream_validates_them() {
        let s = NetworkPolicies;
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                np(json!({"podSelector": {"matchLabels": {"app": "web"}}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}], "ports": [{"port": "http"}, {"port": 80, "endPort": 90}]}]})),
                vec![],
            ),
            (
                np(json!({"podSelector": {"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "b", "operator": "Exists", "values": ["x"]}, {"key": "c/d/e", "operator": "Near"}]}})),
                vec![
                    "spec.podSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                    "spec.podSelector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    "spec.podSelector.matchExpressions[2].operator: Invalid value: \"Near\": not a valid selector operator",
                    "spec.podSelector.matchExpressions[2].key: Invalid value: \"c/d/e\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                ],
            ),
            (
                np(json!({"podSelector": {"matchLabels": {"app": "-x"}}})),
                vec!["spec.podSelector.matchLabels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
            ),
            (
                np(json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "ICMP", "port": 0}, {"port": 100, "endPort": 90}, {"port": "web", "endPort": 90}, {"endPort": 90}]}]})),
                vec![
                    "spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
                    "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                    "spec.ingress[0].ports[1].endPort: Invalid value: 90: must be greater than or equal to `port`",
                    "spec.ingress[0].ports[2].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
                    "spec.ingress[0].ports[3].endPort: Invalid value: 90: may not be specified when `port` is not specified",
                ],
            ),
            (
                np(json!({"podSelector": {}, "egress": [{"to": [{}, {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}, {"ipBlock": {}}]}]})),
                vec![
                    "spec.egress[0].to[0]: Required value: must specify a peer",
                    "spec.egress[0].to[1]: Forbidden: may not specify both ipBlock and another peer",
                    "spec.egress[0].to[2].ipBlock.cidr: Required value",
                ],
            ),
            (
                np(json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.0.0/8", "192.168.0.0/24", "10.0.1.0/24", "x"]}}]}]})),
                vec![
                    "spec.ingress[0].from[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                    "spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`",
                    "spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: \"192.168.0.0/24\": must be a strict subset of `cidr`",
                    "spec.ingress[0].from[1].ipBlock.except[3]: Invalid value: \"x\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                ],
            ),
            (
                np(json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress", "Ingress"]})),
                vec!["spec.policyTypes: Invalid value: []networking.PolicyType{\"Ingress\", \"Egress\", \"Ingress\"}: may not specify more than two policyTypes"],
            ),
            (
                np(json!({"podSelector": {}, "policyTypes": ["Sideways"]})),
                vec!["spec.policyTypes[0]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\""],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn an_update_keeps_a_stored_selector_with_bad_values() {
        let s = NetworkPolicies;
        let old = np(
            json!({"podSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-bad"]}]}, "policyTypes": ["Ingress"]}),
        );
        assert_eq!(s.validate(&old).len(), 1);
        let mut new = old.clone();
        new["spec"]["policyTypes"] = json!(["Ingress", "Egress"]);
        assert_eq!(messages(s.validate_update(&new, &old)), Vec::<String>::new());
    }

    #[test]
    fn the_printer_shows_the_pod_selector() {
        let obj = np(json!({"podSelector": {"matchLabels": {"app": "web"}}}));
        assert_eq!((printer().cells)(&obj, 0, &[]), vec![json!("deny"), json!("app=web"), json!("<unknown>")]);
        let all = np(json!({"podSelector": {}}));
        assert_eq!((printer().cells)(&all, 0, &[])[1], json!("<none>"));
    }
}
