//! One EndpointSlice endpoint, and the slices' other building blocks (1.32,
//! `staging/src/k8s.io/endpointslice/utils.go` `podToEndpoint`, `getEndpointPorts`,
//! `getEndpointAddresses`, `newEndpointSlice`, `setEndpointSliceLabels`, `ownedBy`,
//! `getAddressTypesForService`; `util/endpointset.go` `hashEndpoint`; `util/controller_utils.go`
//! `EndpointsEqualBeyondHash`, `NewPortMapKey`). Sans-IO.
//!
//! An endpoint is identified by its addresses, hostname and target pod, so that a change of its
//! conditions, node or zone updates it in place. Its conditions: `serving` is the pod's readiness,
//! `terminating` whether it is being deleted, and `ready` serving and not terminating (or always, when the
//! Service publishes not-ready addresses).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use serde_json::{json, Map, Value};

use super::util::TargetRef;
use super::util::{
    find_port, is_pod_ready, is_service_ip_set, is_terminating, meta, pod_ips, should_set_hostname,
    IS_HEADLESS_SERVICE, LABEL_TOPOLOGY_ZONE,
};

/// `discovery.LabelServiceName`.
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";
/// `discovery.LabelManagedBy`.
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
/// `controllerQualifiedName`: this controller's value of [`LABEL_MANAGED_BY`].
pub const MANAGED_BY: &str = "endpointslice-controller.k8s.io";

/// `discovery.Endpoint`, as far as this controller writes or compares it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoint {
    pub addresses: Vec<String>,
    pub ready: Option<bool>,
    pub serving: Option<bool>,
    pub terminating: Option<bool>,
    pub hostname: Option<String>,
    pub node_name: Option<String>,
    pub zone: Option<String>,
    pub target: Option<TargetRef>,
}

/// `hashEndpoint`'s identity: sorted addresses, hostname, and the target's namespace and name.
pub type EndpointKey = (Vec<String>, String, String, String);

impl Endpoint {
    pub fn key(&self) -> EndpointKey {
        let mut addresses = self.addresses.clone();
        addresses.sort();
        let (ns, name) = self.target.as_ref().map(|t| (t.namespace.clone(), t.name.clone())).unwrap_or_default();
        (addresses, self.hostname.clone().unwrap_or_default(), ns, name)
    }

    /// `EndpointsEqualBeyondHash`: node, zone, conditions and target (its resourceVersion aside).
    pub fn equal_beyond_hash(&self, other: &Endpoint) -> bool {
        self.node_name == other.node_name
            && self.zone == other.zone
            && (self.ready, self.serving, self.terminating) == (other.ready, other.serving, other.terminating)
            && self.target == other.target
    }

    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("addresses".into(), json!(self.addresses));
        let mut conditions = Map::new();
        for (name, value) in [("ready", self.ready), ("serving", self.serving), ("terminating", self.terminating)] {
            if let Some(v) = value {
                conditions.insert(name.into(), json!(v));
            }
        }
        out.insert("conditions".into(), Value::Object(conditions));
        if let Some(h) = &self.hostname {
            out.insert("hostname".into(), json!(h));
        }
        if let Some(t) = &self.target {
            out.insert(
                "targetRef".into(),
                json!({"kind": t.kind, "namespace": t.namespace, "name": t.name, "uid": t.uid}),
            );
        }
        if let Some(n) = &self.node_name {
            out.insert("nodeName".into(), json!(n));
        }
        if let Some(z) = &self.zone {
            out.insert("zone".into(), json!(z));
        }
        Value::Object(out)
    }

    pub fn from_json(v: &Value) -> Endpoint {
        let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
        let b = |p: &str| v.pointer(p).and_then(Value::as_bool);
        Endpoint {
            addresses: v
                .get("addresses")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
            ready: b("/conditions/ready"),
            serving: b("/conditions/serving"),
            terminating: b("/conditions/terminating"),
            hostname: s("/hostname"),
            node_name: s("/nodeName"),
            zone: s("/zone"),
            target: v.get("targetRef").filter(|t| t.is_object()).map(|_| TargetRef {
                kind: s("/targetRef/kind").unwrap_or_default(),
                namespace: s("/targetRef/namespace").unwrap_or_default(),
                name: s("/targetRef/name").unwrap_or_default(),
                uid: s("/targetRef/uid").unwrap_or_default(),
            }),
        }
    }
}

/// The endpoints of a slice as read.
pub fn endpoints_of(slice: &Value) -> Vec<Endpoint> {
    slice
        .get("endpoints")
        .and_then(Value::as_array)
        .map(|e| e.iter().map(Endpoint::from_json).collect())
        .unwrap_or_default()
}

/// `getEndpointAddresses`: the pod's IPs of `address_type` (`IPv4` or `IPv6`), in canonical form.
pub fn endpoint_addresses(pod: &Value, address_type: &str) -> Vec<String> {
    pod_ips(pod)
        .into_iter()
        .filter_map(|ip| match ip.parse::<IpAddr>() {
            Ok(parsed @ IpAddr::V6(_)) if address_type == "IPv6" => Some(parsed.to_string()),
            Ok(parsed @ IpAddr::V4(_)) if address_type == "IPv4" => Some(parsed.to_string()),
            _ => None,
        })
        .collect()
}

/// `podToEndpoint`: the pod's endpoint, with the zone of its `node` (when known).
pub fn pod_to_endpoint(pod: &Value, node: Option<&Value>, service: &Value, address_type: &str) -> Endpoint {
    let serving = is_pod_ready(pod);
    let terminating = is_terminating(pod);
    let publish = service.pointer("/spec/publishNotReadyAddresses").and_then(Value::as_bool) == Some(true);
    let node_name = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("");
    let zone = node
        .and_then(|n| n.pointer("/metadata/labels").and_then(|l| l.get(LABEL_TOPOLOGY_ZONE)))
        .and_then(Value::as_str)
        .filter(|z| !z.is_empty());
    Endpoint {
        addresses: endpoint_addresses(pod, address_type),
        // A terminating pod is never ready, unless the Service publishes every address.
        ready: Some(publish || (serving && !terminating)),
        serving: Some(serving),
        terminating: Some(terminating),
        hostname: should_set_hostname(pod, service)
            .then(|| pod.pointer("/spec/hostname").and_then(Value::as_str).unwrap_or("").to_string()),
        node_name: (!node_name.is_empty()).then(|| node_name.to_string()),
        zone: zone.map(str::to_string),
        target: Some(TargetRef {
            kind: "Pod".into(),
            namespace: meta(pod, "namespace").into(),
            name: meta(pod, "name").into(),
            uid: meta(pod, "uid").into(),
        }),
    }
}

/// A port's sort and identity key: name (absent apart from empty), number, protocol, appProtocol.
fn port_key(port: &Value) -> (Option<String>, i64, String, Option<String>) {
    let s = |f: &str| port.get(f).and_then(Value::as_str).map(str::to_string);
    (
        s("name"),
        port.get("port").and_then(Value::as_i64).unwrap_or(0),
        s("protocol").unwrap_or_default(),
        s("appProtocol"),
    )
}

/// `NewPortMapKey`: one string per set of ports, whatever their order.
pub fn port_map_key(ports: &[Value]) -> String {
    let keys: BTreeSet<_> = ports.iter().map(port_key).collect();
    format!("{keys:?}")
}

/// Ports sorted as [`port_map_key`] sees them (upstream sorts them in place while hashing).
pub fn sorted_ports(mut ports: Vec<Value>) -> Vec<Value> {
    ports.sort_by_key(port_key);
    ports
}

/// `getEndpointPorts`: the Service's ports as the pod resolves them (ports it lacks are left out).
pub fn endpoint_ports(service: &Value, pod: &Value) -> Vec<Value> {
    let ports = service.pointer("/spec/ports").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut out = Vec::new();
    for service_port in &ports {
        let Ok(number) = find_port(pod, service_port) else { continue };
        let mut port = json!({
            "name": service_port.get("name").and_then(Value::as_str).unwrap_or(""),
            "port": number,
            "protocol": service_port.get("protocol").and_then(Value::as_str).unwrap_or(""),
        });
        if let Some(app) = service_port.get("appProtocol").filter(|a| a.is_string()) {
            port["appProtocol"] = app.clone();
        }
        out.push(port);
    }
    sorted_ports(out)
}

/// `getAddressTypesForService`: the Service's IP families; without them (an old apiserver), its cluster
/// IP's family, or both for a headless Service.
pub fn address_types(service: &Value) -> BTreeSet<String> {
    let families: BTreeSet<String> = service
        .pointer("/spec/ipFamilies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|f| matches!(*f, "IPv4" | "IPv6"))
        .map(str::to_string)
        .collect();
    if !families.is_empty() {
        return families;
    }
    if is_service_ip_set(service) {
        let ip = service.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or("");
        let family = if super::util::is_ipv6(ip) { "IPv6" } else { "IPv4" };
        return BTreeSet::from([family.to_string()]);
    }
    BTreeSet::from(["IPv4".to_string(), "IPv6".to_string()])
}

fn is_reserved_label(key: &str) -> bool {
    matches!(key, LABEL_SERVICE_NAME | LABEL_MANAGED_BY | IS_HEADLESS_SERVICE)
}

/// `setEndpointSliceLabels`: the slice's labels (the Service's, the headless marker, the Service name
/// and manager), and whether the copied Service labels differ from the slice's.
pub fn slice_labels(slice: &Value, service: &Value) -> (Map<String, Value>, bool) {
    let copy = |obj: &Value| -> BTreeMap<String, Value> {
        obj.pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter(|(k, _)| !is_reserved_label(k)).map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let slice_own = copy(slice);
    let service_own = copy(service);
    let changed = slice_own != service_own;
    let mut labels: Map<String, Value> = service_own.into_iter().collect();
    if !is_service_ip_set(service) {
        labels.insert(IS_HEADLESS_SERVICE.into(), json!(""));
    }
    labels.insert(LABEL_SERVICE_NAME.into(), json!(meta(service, "name")));
    labels.insert(LABEL_MANAGED_BY.into(), json!(MANAGED_BY));
    (labels, changed)
}

/// `newEndpointSlice`: an empty slice of the Service, named by `generateName`, owned by the Service.
pub fn new_slice(service: &Value, ports: &[Value], address_type: &str) -> Value {
    let mut slice = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "generateName": format!("{}-", meta(service, "name")),
            "namespace": meta(service, "namespace"),
            "ownerReferences": [{
                "apiVersion": "v1", "kind": "Service", "name": meta(service, "name"), "uid": meta(service, "uid"),
                "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "addressType": address_type,
        "endpoints": [],
        "ports": ports,
    });
    let (labels, _) = slice_labels(&slice, service);
    slice["metadata"]["labels"] = Value::Object(labels);
    slice
}

/// `ownedBy`: the slice names the Service (by UID) among its owners.
pub fn owned_by(slice: &Value, service: &Value) -> bool {
    slice.pointer("/metadata/ownerReferences").and_then(Value::as_array).into_iter().flatten().any(|o| {
        o.get("uid").and_then(Value::as_str) == Some(meta(service, "uid"))
            && o.get("kind").and_then(Value::as_str) == Some("Service")
            && o.get("apiVersion").and_then(Value::as_str) == Some("v1")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(spec: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns", "uid": "svc-uid", "labels": {"app": "web", LABEL_MANAGED_BY: "me"}},
               "spec": spec})
    }

    fn pod(ready: bool, terminating: bool) -> Value {
        let mut p = json!({"metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"},
               "spec": {"nodeName": "n1", "hostname": "h", "subdomain": "web",
                        "containers": [{"ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
               "status": {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00:0:0::1"}],
                          "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}});
        if terminating {
            p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        }
        p
    }

    #[test]
    fn conditions_follow_readiness_termination_and_publishing() {
        let node = json!({"metadata": {"name": "n1", "labels": {LABEL_TOPOLOGY_ZONE: "zone-a"}}});
        // (ready, terminating, publishNotReadyAddresses) -> (ready, serving, terminating)
        let cases = [
            ((true, false, false), (true, true, false)),
            ((false, false, false), (false, false, false)),
            ((true, true, false), (false, true, true)),
            ((false, true, false), (false, false, true)),
            ((false, false, true), (true, false, false)),
            ((true, true, true), (true, true, true)),
        ];
        for ((ready, terminating, publish), want) in cases {
            let svc = service(json!({"publishNotReadyAddresses": publish}));
            let ep = pod_to_endpoint(&pod(ready, terminating), Some(&node), &svc, "IPv4");
            assert_eq!(
                (ep.ready, ep.serving, ep.terminating),
                (Some(want.0), Some(want.1), Some(want.2)),
                "{ready} {terminating} {publish}"
            );
        }
        let ep = pod_to_endpoint(&pod(true, false), Some(&node), &service(json!({})), "IPv6");
        assert_eq!(
            ep.to_json(),
            json!({"addresses": ["fd00::1"], "conditions": {"ready": true, "serving": true, "terminating": false},
                   "hostname": "h", "nodeName": "n1", "zone": "zone-a",
                   "targetRef": {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "pod-uid"}})
        );
        assert_eq!(Endpoint::from_json(&ep.to_json()), ep);
        assert_eq!(pod_to_endpoint(&pod(true, false), None, &service(json!({})), "IPv4").zone, None);
    }

    #[test]
    fn identity_and_in_place_changes() {
        let svc = service(json!({}));
        let a = pod_to_endpoint(&pod(true, false), None, &svc, "IPv4");
        let mut b = pod_to_endpoint(&pod(false, false), None, &svc, "IPv4");
        assert_eq!(a.key(), b.key(), "readiness is not identity");
        assert!(!a.equal_beyond_hash(&b));
        b.ready = a.ready;
        b.serving = a.serving;
        assert!(a.equal_beyond_hash(&b));
        b.hostname = None;
        assert_ne!(a.key(), b.key(), "the hostname is identity");
    }

    #[test]
    fn address_types_ports_and_labels() {
        let cases = [
            (json!({"ipFamilies": ["IPv6", "IPv4"]}), vec!["IPv4", "IPv6"]),
            (json!({"clusterIP": "fd00::1"}), vec!["IPv6"]),
            (json!({"clusterIP": "10.0.0.1"}), vec!["IPv4"]),
            (json!({"clusterIP": "None"}), vec!["IPv4", "IPv6"]),
        ];
        for (spec, want) in cases {
            let got: Vec<String> = address_types(&service(spec.clone())).into_iter().collect();
            assert_eq!(got, want, "{spec}");
        }
        let svc = service(json!({"clusterIP": "None", "ports": [
            {"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP", "appProtocol": "http"},
            {"name": "admin", "port": 81, "targetPort": 9000, "protocol": "TCP"},
            {"name": "missing", "port": 82, "targetPort": "grpc", "protocol": "TCP"}]}));
        let ports = endpoint_ports(&svc, &pod(true, false));
        assert_eq!(
            ports,
            vec![
                json!({"name": "admin", "port": 9000, "protocol": "TCP"}),
                json!({"name": "web", "port": 8080, "protocol": "TCP", "appProtocol": "http"})
            ]
        );
        let reversed: Vec<Value> = ports.iter().rev().cloned().collect();
        assert_eq!(port_map_key(&ports), port_map_key(&reversed));
        let slice = new_slice(&svc, &ports, "IPv4");
        assert_eq!(slice["metadata"]["generateName"], "web-");
        assert_eq!(
            slice["metadata"]["labels"],
            json!({"app": "web", IS_HEADLESS_SERVICE: "", LABEL_SERVICE_NAME: "web", LABEL_MANAGED_BY: MANAGED_BY})
        );
        assert_eq!(
            slice["metadata"]["ownerReferences"][0],
            json!({"apiVersion": "v1", "kind": "Service", "name": "web", "uid": "svc-uid", "controller": true, "blockOwnerDeletion": true})
        );
        assert!(owned_by(&slice, &svc));
        assert!(!slice_labels(&slice, &svc).1, "fresh labels are current");
        let mut relabelled = svc.clone();
        relabelled["metadata"]["labels"]["tier"] = json!("front");
        assert!(slice_labels(&slice, &relabelled).1);
    }
}
