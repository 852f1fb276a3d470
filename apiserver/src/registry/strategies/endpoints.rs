//! Endpoints (`KK/pkg/registry/core/endpoint/strategy.go`): namespaced, names are DNS subdomains, every
//! address is an IP and every port a valid port number with a known protocol (`ValidateEndpoints`).

use std::net::IpAddr;

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::Strategy;

/// The descriptor of `endpoints`.
pub(crate) fn resource() -> Resource {
    Resource { etcd_prefix: "services/endpoints".into(), ..Resource::core("Endpoints", "endpoints") }
}

/// The Endpoints strategy.
pub(crate) struct Endpoints;

/// `field.Invalid`'s detail for a value that is not an IP (`validation.IsValidIP`).
pub(crate) const IP_DETAIL: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// The protocols a port may name.
pub(crate) const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// `validatePortNumber` for a port at `path`.
pub(crate) fn validate_port(port: &Value, path: &str) -> Vec<FieldError> {
    let number = port.as_i64().unwrap_or(0);
    if (1..=65535).contains(&number) {
        return Vec::new();
    }
    vec![FieldError::invalid_int(path, number, "must be between 1 and 65535, inclusive")]
}

fn validate_subsets(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let subsets = obj.get("subsets").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, subset) in subsets.iter().enumerate() {
        for section in ["addresses", "notReadyAddresses"] {
            let addresses = subset.get(section).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            for (j, address) in addresses.iter().enumerate() {
                let ip = address.get("ip").and_then(Value::as_str).unwrap_or("");
                if ip.parse::<IpAddr>().is_err() {
                    errs.push(FieldError::invalid(&format!("subsets[{i}].{section}[{j}].ip"), ip, IP_DETAIL));
                }
            }
        }
        let ports = subset.get("ports").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for (j, port) in ports.iter().enumerate() {
            let path = format!("subsets[{i}].ports[{j}]");
            errs.extend(validate_port(port.get("port").unwrap_or(&Value::Null), &format!("{path}.port")));
            match port.get("protocol").and_then(Value::as_str) {
                None | Some("") => errs.push(FieldError::required(&format!("{path}.protocol"), "")),
                Some(p) if !PROTOCOLS.contains(&p) => {
                    errs.push(FieldError::not_supported(&format!("{path}.protocol"), p, PROTOCOLS))
                }
                Some(_) => {}
            }
        }
    }
    errs
}

/// Sets each port's protocol to TCP when it names none (`SetDefaults_EndpointPort`).
fn default_protocols(obj: &mut Value) {
    let Some(subsets) = obj.get_mut("subsets").and_then(Value::as_array_mut) else { return };
    for subset in subsets {
        let Some(ports) = subset.get_mut("ports").and_then(Value::as_array_mut) else { continue };
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert_with(|| Value::from("TCP"));
        }
    }
}

impl Strategy for Endpoints {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        default_protocols(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        default_protocols(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
        errs.extend(validate_subsets(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
        errs.extend(validate_subsets(new));
        errs
    }
}

impl crate::registry::strategy::DeleteStrategy for Endpoints {}
