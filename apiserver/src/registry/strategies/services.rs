//! Services (`KK/pkg/registry/core/service/strategy.go`, `KK/pkg/apis/core/v1/defaults.go`,
//! `ValidateService`): namespaced, names are DNS-1035 labels (a service name becomes a DNS name and an
//! environment variable prefix), v1's defaults (type `ClusterIP`, session affinity `None`, protocol `TCP`,
//! target port = port, the traffic policies, a single IPv4 stack), a status that only `/status` changes,
//! and the validation of types, ports, node ports and cluster IPs with upstream's field paths and texts.
//!
//! Cluster IPs and node ports are handed out by the service REST ([`crate::registry::services`]) before
//! this strategy runs; an update keeps what was allocated when the body leaves it out
//! (`PatchAllocatedValues`), and an allocated cluster IP never changes.

use serde_json::{json, Value};

use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common::{self, SelectableFields};
use crate::registry::strategy::{Strategy, Subresource};

/// The descriptor of `services`, stored where kube stores them (`/registry/services/specs/`).
pub(crate) fn resource() -> Resource {
    Resource { etcd_prefix: "services/specs".into(), ..Resource::core("Service", "services") }
}

/// The Service strategy.
pub(crate) struct Services;

/// The service types, in the order upstream's `Unsupported value` lists them.
pub(crate) const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const AFFINITIES: &[&str] = &["ClientIP", "None"];
const FIELDS: SelectableFields = &[("spec.clusterIP", "/spec/clusterIP", ""), ("spec.type", "/spec/type", "")];

/// The `spec.type` of a service, defaulted.
pub(crate) fn service_type(svc: &Value) -> &str {
    match svc.pointer("/spec/type").and_then(Value::as_str) {
        None | Some("") => "ClusterIP",
        Some(t) => t,
    }
}

/// Whether the service's ports get node ports.
pub(crate) fn wants_node_ports(svc: &Value) -> bool {
    match service_type(svc) {
        "NodePort" => true,
        "LoadBalancer" => svc.pointer("/spec/allocateLoadBalancerNodePorts").and_then(Value::as_bool) != Some(false),
        _ => false,
    }
}

/// Whether the service gets a cluster IP: not an ExternalName, not headless.
pub(crate) fn wants_cluster_ip(svc: &Value) -> bool {
    service_type(svc) != "ExternalName" && svc.pointer("/spec/clusterIP").and_then(Value::as_str) != Some("None")
}

/// `SetDefaults_Service` and the REST's IP family defaults, for a single-stack IPv4 cluster.
fn set_defaults(svc: &mut Value) {
    let Some(obj) = svc.as_object_mut() else { return };
    let spec = obj.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else { return };
    let empty = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").is_empty();
    if empty(spec.get("type")) {
        spec.insert("type".into(), Value::from("ClusterIP"));
    }
    if empty(spec.get("sessionAffinity")) {
        spec.insert("sessionAffinity".into(), Value::from("None"));
    }
    let kind = spec["type"].as_str().unwrap_or("").to_string();
    if spec.get("sessionAffinity").and_then(Value::as_str) == Some("ClientIP")
        && spec.get("sessionAffinityConfig").is_none()
    {
        spec.insert("sessionAffinityConfig".into(), json!({"clientIP": {"timeoutSeconds": 10800}}));
    }
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            if empty(port.get("protocol")) {
                port.insert("protocol".into(), Value::from("TCP"));
            }
            let unset = match port.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::Number(n)) => n.as_i64() == Some(0),
                Some(Value::String(s)) => s.is_empty(),
                _ => false,
            };
            if unset {
                if let Some(p) = port.get("port").cloned() {
                    port.insert("targetPort".into(), p);
                }
            }
        }
    }
    if (kind == "NodePort" || kind == "LoadBalancer") && empty(spec.get("externalTrafficPolicy")) {
        spec.insert("externalTrafficPolicy".into(), Value::from("Cluster"));
    }
    if kind != "ExternalName" && empty(spec.get("internalTrafficPolicy")) {
        spec.insert("internalTrafficPolicy".into(), Value::from("Cluster"));
    }
    if kind == "LoadBalancer" && spec.get("allocateLoadBalancerNodePorts").is_none() {
        spec.insert("allocateLoadBalancerNodePorts".into(), Value::from(true));
    }
    if kind != "ExternalName" {
        if spec.get("ipFamilies").is_none() {
            spec.insert("ipFamilies".into(), json!(["IPv4"]));
        }
        if empty(spec.get("ipFamilyPolicy")) {
            spec.insert("ipFamilyPolicy".into(), Value::from("SingleStack"));
        }
    }
    // `clusterIPs` mirrors `clusterIP` (the REST keeps the two in sync before anything else uses them).
    let ip = spec.get("clusterIP").and_then(Value::as_str).unwrap_or("").to_string();
    if !ip.is_empty() && spec.get("clusterIPs").is_none() {
        spec.insert("clusterIPs".into(), json!([ip]));
    }
}

/// `PatchAllocatedValues`: an update that leaves out the cluster IP or a port's node port keeps the old
/// one, when the service still wants it.
pub(crate) fn keep_allocated(new: &mut Value, old: &Value) {
    if wants_cluster_ip(new) && new.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("").is_empty() {
        for field in ["clusterIP", "clusterIPs"] {
            if let Some(v) = old.pointer(&format!("/spec/{field}")) {
                new["spec"][field] = v.clone();
            }
        }
    }
    if !wants_node_ports(new) {
        return;
    }
    let old_ports: Vec<(i64, &str, i64)> = old
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(|ports| {
            ports
                .iter()
                .filter_map(|p| {
                    let node_port = p.get("nodePort").and_then(Value::as_i64)?;
                    let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
                    Some((port, p.get("protocol").and_then(Value::as_str).unwrap_or("TCP"), node_port))
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Array(ports)) = new.pointer_mut("/spec/ports") {
        for port in ports.iter_mut() {
            if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                continue;
            }
            let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
            let protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            if let Some((_, _, node_port)) = old_ports.iter().find(|(p, proto, _)| *p == number && *proto == protocol) {
                port["nodePort"] = Value::from(*node_port);
            }
        }
    }
}

fn validate_spec(svc: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = svc.pointer("/spec/type").and_then(Value::as_str).unwrap_or("");
    if !TYPES.contains(&kind) {
        errs.push(FieldError::not_supported("spec.type", kind, TYPES));
    }
    let affinity = svc.pointer("/spec/sessionAffinity").and_then(Value::as_str).unwrap_or("");
    if !AFFINITIES.contains(&affinity) {
        errs.push(FieldError::not_supported("spec.sessionAffinity", affinity, AFFINITIES));
    }
    let cluster_ip = svc.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("");
    let ports = svc.pointer("/spec/ports").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if kind == "ExternalName" {
        let name = svc.pointer("/spec/externalName").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required("spec.externalName", ""));
        }
        if !cluster_ip.is_empty() {
            errs.push(FieldError::forbidden("spec.clusterIPs", "may not be set for ExternalName services"));
        }
    } else if cluster_ip != "None" && ports.is_empty() {
        errs.push(FieldError::required("spec.ports", ""));
    }
    if !cluster_ip.is_empty() && cluster_ip != "None" && cluster_ip.parse::<std::net::IpAddr>().is_err() {
        errs.push(FieldError::invalid(
            "spec.clusterIPs[0]",
            cluster_ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = port.get("name").and_then(Value::as_str).unwrap_or("");
        if ports.len() > 1 && name.is_empty() {
            errs.push(FieldError::required(&format!("{path}.name"), ""));
        } else if !name.is_empty() {
            for msg in names::dns1123_label(name) {
                errs.push(FieldError::invalid(&format!("{path}.name"), name, &msg));
            }
            if names.contains(&name) {
                errs.push(FieldError {
                    kind: FieldErrorType::Duplicate,
                    field: format!("{path}.name"),
                    value: BadValue::Str(name.into()),
                    detail: String::new(),
                });
            }
            names.push(name);
        }
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&number) {
            errs.push(FieldError::invalid_int(
                &format!("{path}.port"),
                number,
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("");
        if !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(&format!("{path}.protocol"), protocol, PROTOCOLS));
        }
        let node_port = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        if node_port != 0 && kind == "ClusterIP" {
            errs.push(FieldError::forbidden(&format!("{path}.nodePort"), "may not be used when `type` is 'ClusterIP'"));
        }
    }
    errs
}

fn validate_update_spec(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let old_ip = old.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("");
    let new_ip = new.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("");
    // Only a change to ExternalName may drop an allocated IP; any other change of it is refused.
    let to_external_name = service_type(new) == "ExternalName";
    if !old_ip.is_empty() && old_ip != new_ip && !to_external_name {
        errs.push(FieldError::invalid("spec.clusterIPs[0]", new_ip, "may not change once set"));
    }
    errs
}

impl Strategy for Services {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        obj["status"] = json!({"loadBalancer": {}});
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new);
        common::keep_status(new, old);
    }

    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns1035_label);
        errs.extend(validate_spec(obj));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns1035_label);
        errs.extend(validate_spec(new));
        errs.extend(validate_update_spec(new, old));
        errs
    }

    fn selectable_field(&self, obj: &Value, key: &str) -> Option<String> {
        common::selectable(FIELDS, obj, key)
    }

    fn supports_field(&self, key: &str) -> bool {
        common::supports(FIELDS, key)
    }

    fn unsupported_field_message(&self, key: &str) -> String {
        format!("field label not supported: {key}")
    }
}

/// The services store answers a delete with the deleted object (`ReturnDeletedObject`).
impl crate::registry::strategy::DeleteStrategy for Services {
    fn return_deleted_object(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_v1s() {
        let mut svc = json!({"metadata": {"name": "web", "namespace": "d"}, "spec": {"ports": [{"port": 80}]}});
        Services.prepare_for_create(&mut svc);
        assert_eq!(svc["spec"]["type"], "ClusterIP");
        assert_eq!(svc["spec"]["sessionAffinity"], "None");
        assert_eq!(svc["spec"]["ports"][0], json!({"port": 80, "protocol": "TCP", "targetPort": 80}));
        assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(svc["status"], json!({"loadBalancer": {}}));
        assert!(Services.validate(&svc).is_empty());
    }

    #[test]
    fn validation_uses_upstreams_paths() {
        let mut svc = json!({"metadata": {"name": "1web", "namespace": "d"}, "spec": {"type": "Foo", "ports": [{"port": 0}, {"port": 1, "name": "a"}]}});
        Services.prepare_for_create(&mut svc);
        let errs: Vec<String> = Services.validate(&svc).iter().map(FieldError::to_string).collect();
        assert!(errs[0].starts_with("metadata.name: Invalid value: \"1web\": a DNS-1035 label"), "{errs:?}");
        assert!(errs.contains(&"spec.type: Unsupported value: \"Foo\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"".to_string()), "{errs:?}");
        assert!(errs.contains(&"spec.ports[0].name: Required value".to_string()), "{errs:?}");
        assert!(
            errs.contains(&"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive".to_string()),
            "{errs:?}"
        );
    }

    #[test]
    fn an_update_keeps_what_was_allocated() {
        let old = json!({"spec": {"type": "NodePort", "clusterIP": "10.0.0.7", "clusterIPs": ["10.0.0.7"], "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30001}]}});
        let mut new = json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "protocol": "TCP"}]}});
        keep_allocated(&mut new, &old);
        assert_eq!(new["spec"]["clusterIP"], "10.0.0.7");
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30001);
        let mut moved = json!({"spec": {"clusterIP": "10.0.0.8", "ports": [{"port": 80}]}});
        Services.prepare_for_update(&mut moved, &old);
        let errs: Vec<String> = validate_update_spec(&moved, &old).iter().map(FieldError::to_string).collect();
        assert_eq!(errs, ["spec.clusterIPs[0]: Invalid value: \"10.0.0.8\": may not change once set"]);
    }
}
