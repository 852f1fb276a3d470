//! EndpointSlices, `discovery.k8s.io/v1` (`KK/pkg/registry/discovery/endpointslice`,
//! `KK/pkg/apis/discovery/validation`, `KK/pkg/apis/discovery/v1/defaults.go`): namespaced, names are DNS
//! subdomains. `addressType` is required, one of IPv4, IPv6 and FQDN (an update may keep the deprecated
//! `IP`), and never changes; each endpoint has at least one address, valid for the type (an IP of the
//! family that is not unspecified, loopback or link-local, or a fully qualified domain name), and an
//! optional DNS label hostname; ports have unique DNS label names (empty by default), a protocol (TCP by
//! default, UDP, SCTP) and a qualified-name `appProtocol`. The `kubernetes.io/service-name` label is just
//! a label. The generation moves when anything but the metadata changes, or the labels do.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::apis::networking::ingresses::parse_ip;
use crate::apis::printers::{age, age_column, doc_column, name, name_column};
use crate::apis::{Printer, ResourceInfo};
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo::new(resource(), "endpointslice", Arc::new(EndpointSlices), printer())
}

fn resource() -> Resource {
    Resource {
        group: "discovery.k8s.io".into(),
        version: "v1".into(),
        kind: "EndpointSlice".into(),
        plural: "endpointslices".into(),
        etcd_prefix: "endpointslices".into(),
    }
}

/// The address types a new slice may have, sorted; an update may also keep `IP`.
const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
const UPDATE_ADDRESS_TYPES: &[&str] = &["FQDN", "IP", "IPv4", "IPv6"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const IP_DETAIL: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// `SetDefaults_EndpointPort`: an empty name and TCP.
fn default(obj: &mut Value) {
    for port in obj.get_mut("ports").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(port) = port.as_object_mut() {
            port.entry("name").or_insert_with(|| json!(""));
            port.entry("protocol").or_insert_with(|| json!("TCP"));
        }
    }
}

/// The IPv4 form of an address, as Go's `To4` sees it (IPv4-mapped IPv6 included).
fn to4(ip: IpAddr) -> Option<std::net::Ipv4Addr> {
    match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
    }
}

/// `ValidateNonSpecialIP`: no unspecified, loopback or link-local address.
fn non_special_ip(address: &str, path: &str) -> Vec<FieldError> {
    let Some(ip) = parse_ip(address) else {
        return vec![FieldError::invalid(path, address, "must be a valid IP address")];
    };
    let mut errs = Vec::new();
    let (unspecified, loopback, link_local, link_local_multicast) = match (to4(ip), ip) {
        (Some(v4), _) => {
            let o = v4.octets();
            (v4.is_unspecified(), o[0] == 127, o[0] == 169 && o[1] == 254, o[0] == 224 && o[1] == 0 && o[2] == 0)
        }
        (None, IpAddr::V6(v6)) => {
            let s = v6.segments();
            (v6.is_unspecified(), v6.is_loopback(), s[0] & 0xffc0 == 0xfe80, s[0] & 0xff0f == 0xff02)
        }
        (None, IpAddr::V4(_)) => unreachable!("an IPv4 address always has an IPv4 form"),
    };
    if unspecified {
        errs.push(FieldError::invalid(path, address, &format!("may not be unspecified ({address})")));
    }
    if loopback {
        errs.push(FieldError::invalid(path, address, "may not be in the loopback range (127.0.0.0/8, ::1/128)"));
    }
    if link_local {
        errs.push(FieldError::invalid(path, address, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"));
    }
    if link_local_multicast {
        errs.push(FieldError::invalid(
            path,
            address,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs
}

/// `IsFullyQualifiedDomainName`: a DNS subdomain of at least two labels, a trailing dot allowed.
fn fully_qualified(name: &str, path: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let errs = names::dns1123_subdomain(name);
    if !errs.is_empty() {
        return vec![FieldError::invalid(path, name, &errs.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let errs = names::dns1123_label(label);
        if !errs.is_empty() {
            return vec![FieldError::invalid(path, label, &errs.join(","))];
        }
    }
    Vec::new()
}

/// One address, checked for the slice's type (unknown types are not checked).
fn validate_address(address: &str, address_type: &str, path: &str) -> Vec<FieldError> {
    match address_type {
        "IP" => {
            if parse_ip(address).is_none() {
                return vec![FieldError::invalid(path, address, IP_DETAIL)];
            }
            Vec::new()
        }
        "IPv4" | "IPv6" => {
            let ip = parse_ip(address);
            let v4 = ip.and_then(to4).is_some();
            let mut errs = Vec::new();
            if address_type == "IPv4" && !v4 {
                errs.push(FieldError::invalid(path, address, "must be a valid IPv4 address"));
            }
            if address_type == "IPv6" && (ip.is_none() || v4) {
                errs.push(FieldError::invalid(path, address, "must be a valid IPv6 address"));
            }
            errs.extend(non_special_ip(address, path));
            errs
        }
        "FQDN" => fully_qualified(address, path),
        _ => Vec::new(),
    }
}

/// `ValidateEndpointSlice`, with the address types allowed.
fn validate_slice(obj: &Value, address_types: &[&str]) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
    let address_type = obj.get("addressType").and_then(Value::as_str).unwrap_or("");
    if address_type.is_empty() {
        errs.push(FieldError::required("addressType", ""));
    } else if !address_types.contains(&address_type) {
        errs.push(FieldError::not_supported("addressType", address_type, address_types));
    }
    for (i, endpoint) in obj.get("endpoints").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let at = format!("endpoints[{i}]");
        let addresses = endpoint.get("addresses").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        if addresses.is_empty() {
            errs.push(FieldError::required(&format!("{at}.addresses"), "must contain at least 1 address"));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or("");
            errs.extend(validate_address(address, address_type, &format!("{at}.addresses[{j}]")));
        }
        if let Some(hostname) = endpoint.get("hostname").and_then(Value::as_str) {
            for msg in names::dns1123_label(hostname) {
                errs.push(FieldError::invalid(&format!("{at}.hostname"), hostname, &msg));
            }
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, port) in obj.get("ports").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let at = format!("ports[{i}]");
        let port_name = port.get("name").and_then(Value::as_str).unwrap_or("");
        if !port_name.is_empty() {
            for msg in names::dns1123_label(port_name) {
                errs.push(FieldError::invalid(&format!("{at}.name"), port_name, &msg));
            }
        }
        if seen.contains(&port_name) {
            errs.push(FieldError {
                kind: FieldErrorType::Duplicate,
                field: format!("{at}.name"),
                value: BadValue::Str(port_name.into()),
                detail: String::new(),
            });
        } else {
            seen.push(port_name);
        }
        match port.get("protocol").and_then(Value::as_str) {
            None => errs.push(FieldError::required(&format!("{at}.protocol"), "")),
            Some(p) if !PROTOCOLS.contains(&p) => {
                errs.push(FieldError::not_supported(&format!("{at}.protocol"), p, PROTOCOLS))
            }
            Some(_) => {}
        }
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            for msg in names::qualified_name(app) {
                errs.push(FieldError::invalid(&format!("{at}.appProtocol"), app, &msg));
            }
        }
    }
    errs
}

/// Everything but the metadata (and the type fields), to see whether the slice itself changed.
fn body(obj: &Value) -> Value {
    let mut body = obj.clone();
    if let Some(map) = body.as_object_mut() {
        for key in ["metadata", "kind", "apiVersion"] {
            map.remove(key);
        }
    }
    body
}

/// The EndpointSlice strategy.
struct EndpointSlices;

impl Strategy for EndpointSlices {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default(obj);
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        default(new);
        if body(new) != body(old) || meta::get(new, "labels") != meta::get(old, "labels") {
            let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
            meta::set(new, "generation", Some(Value::from(generation + 1)));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_slice(obj, ADDRESS_TYPES)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_slice(new, UPDATE_ADDRESS_TYPES));
        let address_type = |obj: &Value| Some(obj.get("addressType").cloned().unwrap_or(json!("")));
        errs.extend(common::immutable(address_type(new).as_ref(), address_type(old).as_ref(), "addressType"));
        errs
    }
}

impl DeleteStrategy for EndpointSlices {}

/// `listWithMoreString`: the first three, `+ N more...` for the rest, `<unset>` for none.
fn first_three(list: Vec<String>, count: usize) -> String {
    const MAX: usize = 3;
    let joined = list.join(",");
    if count > MAX {
        format!("{joined} + {} more...", count - MAX)
    } else if joined.is_empty() {
        "<unset>".into()
    } else {
        joined
    }
}

/// `formatDiscoveryPorts`: each port's number, else its name, else `*`.
fn ports(obj: &Value) -> String {
    let all = obj.get("ports").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let shown = all
        .iter()
        .take(3)
        .map(|p| match (p.get("port").and_then(Value::as_i64), p.get("name").and_then(Value::as_str)) {
            (Some(n), _) => n.to_string(),
            (None, Some(name)) => name.to_string(),
            (None, None) => "*".to_string(),
        })
        .collect();
    first_three(shown, all.len())
}

/// `formatDiscoveryEndpoints`: every endpoint's addresses in order.
fn endpoints(obj: &Value) -> String {
    let addresses: Vec<String> = obj
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|e| e.get("addresses").and_then(Value::as_array).into_iter().flatten())
        .map(|a| a.as_str().unwrap_or("").to_string())
        .collect();
    let count = addresses.len();
    first_three(addresses.into_iter().take(3).collect(), count)
}

/// `printEndpointSlice`: the address type, ports and endpoints.
fn printer() -> Printer {
    const DEFINITION: &str = "io.k8s.api.discovery.v1.EndpointSlice";
    Printer {
        columns: vec![
            name_column(),
            doc_column("AddressType", "string", DEFINITION, "addressType", 0),
            doc_column("Ports", "string", DEFINITION, "ports", 0),
            doc_column("Endpoints", "string", DEFINITION, "endpoints", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let address_type = obj.get("addressType").and_then(Value::as_str).unwrap_or("");
            vec![
                name(obj),
                Value::from(address_type),
                Value::from(ports(obj)),
                Value::from(endpoints(obj)),
                age(obj, now),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn slice(address_type: &str, endpoints: Value, ports: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "web-abc", "namespace": "ns", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": address_type, "endpoints": endpoints, "ports": ports});
        default(&mut obj);
        obj
    }

    #[test]
    fn slices_are_validated_as_upstream_validates_them() {
        let s = EndpointSlices;
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (slice("IPv4", json!([{"addresses": ["10.0.0.1"], "hostname": "a"}]), json!([{"name": "http", "port": 80}])), vec![]),
            (slice("IPv6", json!([{"addresses": ["2001:db8::1"]}]), json!([])), vec![]),
            (slice("FQDN", json!([{"addresses": ["web.example.com."]}]), json!([])), vec![]),
            (json!({"metadata": {"name": "s", "namespace": "ns"}}), vec!["addressType: Required value"]),
            (
                slice("IP", json!([]), json!([])),
                vec!["addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""],
            ),
            (
                slice("IPv4", json!([{"addresses": []}, {"addresses": ["2001:db8::1", "x", "127.0.0.1", "0.0.0.0", "169.254.1.1", "224.0.0.5"]}]), json!([])),
                vec![
                    "endpoints[0].addresses: Required value: must contain at least 1 address",
                    "endpoints[1].addresses[0]: Invalid value: \"2001:db8::1\": must be a valid IPv4 address",
                    "endpoints[1].addresses[1]: Invalid value: \"x\": must be a valid IPv4 address",
                    "endpoints[1].addresses[1]: Invalid value: \"x\": must be a valid IP address",
                    "endpoints[1].addresses[2]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                    "endpoints[1].addresses[3]: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
                    "endpoints[1].addresses[4]: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                    "endpoints[1].addresses[5]: Invalid value: \"224.0.0.5\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
                ],
            ),
            (
                slice("IPv6", json!([{"addresses": ["10.0.0.1", "fe80::1"]}]), json!([])),
                vec![
                    "endpoints[0].addresses[0]: Invalid value: \"10.0.0.1\": must be a valid IPv6 address",
                    "endpoints[0].addresses[1]: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                ],
            ),
            (
                slice("FQDN", json!([{"addresses": ["web", "Web.example.com"], "hostname": "A"}]), json!([])),
                vec![
                    "endpoints[0].addresses[0]: Invalid value: \"web\": should be a domain with at least two segments separated by dots",
                    "endpoints[0].addresses[1]: Invalid value: \"Web.example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    "endpoints[0].hostname: Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                ],
            ),
            (
                slice("IPv4", json!([]), json!([{"name": "Http", "port": 80}, {"port": 81}, {"port": 82, "protocol": "ICMP"}, {"port": 83, "appProtocol": "a/b/c", "name": "x"}, {"name": "x"}])),
                vec![
                    "ports[0].name: Invalid value: \"Http\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                    "ports[2].name: Duplicate value: \"\"",
                    "ports[2].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                    "ports[3].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                    "ports[4].name: Duplicate value: \"x\"",
                ],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn ports_default_and_the_type_never_changes() {
        let s = EndpointSlices;
        let mut old =
            json!({"metadata": {"name": "a", "namespace": "ns"}, "addressType": "IPv4", "ports": [{"port": 80}]});
        s.prepare_for_create(&mut old);
        assert_eq!(old["ports"][0], json!({"name": "", "port": 80, "protocol": "TCP"}));
        assert_eq!(old["metadata"]["generation"], 1);
        let mut same = old.clone();
        s.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        s.prepare_for_update(&mut relabelled, &old);
        assert_eq!(relabelled["metadata"]["generation"], 2);
        let mut new = old.clone();
        new["addressType"] = json!("FQDN");
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(
            messages(s.validate_update(&new, &old)),
            ["addressType: Invalid value: \"FQDN\": field is immutable"]
        );
        let mut legacy = old.clone();
        legacy["addressType"] = json!("IP");
        assert_eq!(messages(s.validate_update(&legacy, &legacy)), Vec::<String>::new());
    }

    #[test]
    fn the_printer_shows_the_first_ports_and_addresses() {
        let obj = slice(
            "IPv4",
            json!([{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3", "10.0.0.4", "10.0.0.5"]}]),
            json!([{"port": 80}, {"name": "dns"}, {"port": 443}, {"port": 8080}]),
        );
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![
                json!("web-abc"),
                json!("IPv4"),
                json!("80,dns,443 + 1 more..."),
                json!("10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."),
                json!("<unknown>")
            ]
        );
        let empty = json!({"metadata": {"name": "e"}, "addressType": "IPv4", "ports": [{"port": 80, "name": "p"}]});
        assert_eq!((printer().cells)(&empty, 0, &[])[2..4], [json!("80"), json!("<unset>")]);
        let unnamed = json!({"metadata": {"name": "e"}, "addressType": "IPv4", "ports": [{"protocol": "TCP"}]});
        assert_eq!((printer().cells)(&unnamed, 0, &[])[2], json!("*"));
    }
}
