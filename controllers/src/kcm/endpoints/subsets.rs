//! An Endpoints object's `subsets`: their canonical packing, comparison and truncation (1.32,
//! `pkg/api/v1/endpoints/util.go` `RepackSubsets` and `SortSubsets`; `pkg/controller/endpoint/
//! endpoints_controller.go` `truncateEndpoints`, `capacityAnnotationSetCorrectly`,
//! `endpointSubsetsEqualIgnoreResourceVersion`). Sans-IO.
//!
//! Repacking groups every address (one per IP and target UID) by the exact set of ports it serves, so that
//! addresses serving the same ports share one subset; an address that is not ready on some port is not
//! ready on it however else it appears. Within a subset addresses are ordered by IP (bytewise) then target
//! UID, as upstream's. Addresses without ports (a headless Service without ports) are grouped alike under
//! a sentinel port that the result does not name. Upstream orders ports and subsets by the MD5 of a `spew` dump of each, which has no
//! meaning beyond being stable; here ports are ordered by (name, port, protocol, appProtocol) and subsets
//! by their ports then addresses, which is stable too. Only the order of subsets and ports differs from a
//! real controller's output; the content is the same.

pub use crate::kcm::endpointslice::util::TargetRef;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// `maxCapacity`: the most addresses an Endpoints object carries.
pub const MAX_CAPACITY: usize = 1000;
/// `v1.EndpointsOverCapacity`.
pub const OVER_CAPACITY: &str = "endpoints.kubernetes.io/over-capacity";
/// The annotation's value once addresses were dropped.
pub const TRUNCATED: &str = "truncated";

/// `EndpointAddress`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Address {
    pub ip: String,
    pub hostname: String,
    pub node_name: Option<String>,
    pub target: Option<TargetRef>,
}

/// `EndpointPort`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Port {
    pub name: String,
    pub port: i64,
    pub protocol: String,
    pub app_protocol: Option<String>,
}

/// `EndpointSubset`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subset {
    pub addresses: Vec<Address>,
    pub not_ready_addresses: Vec<Address>,
    pub ports: Vec<Port>,
}

impl Address {
    /// Upstream's identity of an address: its IP and its target's UID.
    fn key(&self) -> (String, String) {
        (self.ip.clone(), self.target.as_ref().map(|t| t.uid.clone()).unwrap_or_default())
    }

    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("ip".into(), json!(self.ip));
        if !self.hostname.is_empty() {
            out.insert("hostname".into(), json!(self.hostname));
        }
        if let Some(node) = &self.node_name {
            out.insert("nodeName".into(), json!(node));
        }
        if let Some(t) = &self.target {
            out.insert(
                "targetRef".into(),
                json!({"kind": t.kind, "namespace": t.namespace, "name": t.name, "uid": t.uid}),
            );
        }
        Value::Object(out)
    }

    pub fn from_json(v: &Value) -> Address {
        let s = |p: &str| v.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
        Address {
            ip: s("/ip"),
            hostname: s("/hostname"),
            node_name: v.get("nodeName").and_then(Value::as_str).map(str::to_string),
            target: v.get("targetRef").filter(|t| t.is_object()).map(|_| TargetRef {
                kind: s("/targetRef/kind"),
                namespace: s("/targetRef/namespace"),
                name: s("/targetRef/name"),
                uid: s("/targetRef/uid"),
            }),
        }
    }
}

impl Port {
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        if !self.name.is_empty() {
            out.insert("name".into(), json!(self.name));
        }
        out.insert("port".into(), json!(self.port));
        out.insert("protocol".into(), json!(self.protocol));
        if let Some(app) = &self.app_protocol {
            out.insert("appProtocol".into(), json!(app));
        }
        Value::Object(out)
    }

    pub fn from_json(v: &Value) -> Port {
        Port {
            name: v.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
            port: v.get("port").and_then(Value::as_i64).unwrap_or(0),
            protocol: v.get("protocol").and_then(Value::as_str).unwrap_or("").to_string(),
            app_protocol: v.get("appProtocol").and_then(Value::as_str).map(str::to_string),
        }
    }
}

impl Subset {
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        let list = |addrs: &[Address]| Value::Array(addrs.iter().map(Address::to_json).collect());
        if !self.addresses.is_empty() {
            out.insert("addresses".into(), list(&self.addresses));
        }
        if !self.not_ready_addresses.is_empty() {
            out.insert("notReadyAddresses".into(), list(&self.not_ready_addresses));
        }
        if !self.ports.is_empty() {
            out.insert("ports".into(), Value::Array(self.ports.iter().map(Port::to_json).collect()));
        }
        Value::Object(out)
    }

    pub fn from_json(v: &Value) -> Subset {
        let list = |field: &str| -> Vec<Value> { v.get(field).and_then(Value::as_array).cloned().unwrap_or_default() };
        Subset {
            addresses: list("addresses").iter().map(Address::from_json).collect(),
            not_ready_addresses: list("notReadyAddresses").iter().map(Address::from_json).collect(),
            ports: list("ports").iter().map(Port::from_json).collect(),
        }
    }

    fn len(&self) -> usize {
        self.addresses.len() + self.not_ready_addresses.len()
    }
}

/// An Endpoints object's subsets as read (absent meaning none).
pub fn subsets_of(endpoints: &Value) -> Vec<Subset> {
    endpoints
        .get("subsets")
        .and_then(Value::as_array)
        .map(|s| s.iter().map(Subset::from_json).collect())
        .unwrap_or_default()
}

/// Subsets as an Endpoints object carries them.
pub fn subsets_json(subsets: &[Subset]) -> Value {
    Value::Array(subsets.iter().map(Subset::to_json).collect())
}

/// `LessEndpointAddress`: by IP bytewise, then target UID (an address without a target first).
fn address_order(a: &Address, b: &Address) -> std::cmp::Ordering {
    a.ip.as_bytes().cmp(b.ip.as_bytes()).then_with(|| match (&a.target, &b.target) {
        (_, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(x), Some(y)) => x.uid.cmp(&y.uid),
    })
}

/// `RepackSubsets`: the canonical layout of `subsets` (see the module doc).
pub fn repack(subsets: &[Subset]) -> Vec<Subset> {
    // Each address once (the first occurrence keeps its details), and each port's addresses with their
    // readiness, where not ready on any occurrence wins.
    let mut all: BTreeMap<(String, String), Address> = BTreeMap::new();
    let mut by_port: BTreeMap<Port, BTreeMap<(String, String), bool>> = BTreeMap::new();
    // A subset without ports keeps its addresses under a sentinel port (-1), which names no port later.
    let sentinel = [Port { port: -1, ..Port::default() }];
    for subset in subsets {
        let ports = if subset.ports.is_empty() { &sentinel[..] } else { &subset.ports[..] };
        for port in ports {
            let readiness = [(&subset.addresses, true), (&subset.not_ready_addresses, false)];
            for (addresses, ready) in readiness {
                for addr in addresses.iter() {
                    let key = addr.key();
                    all.entry(key.clone()).or_insert_with(|| addr.clone());
                    let entry = by_port.entry(port.clone()).or_default().entry(key).or_insert(ready);
                    *entry = *entry && ready;
                }
            }
        }
    }
    // The ports that share one exact set of addresses (with readiness) go together.
    let mut by_addresses: BTreeMap<Vec<((String, String), bool)>, Vec<Port>> = BTreeMap::new();
    for (port, addrs) in by_port {
        let ports = by_addresses.entry(addrs.into_iter().collect()).or_default();
        if port.port > 0 {
            ports.push(port);
        }
    }
    let mut out: Vec<Subset> = by_addresses
        .into_iter()
        .map(|(addrs, ports)| {
            let mut subset = Subset { ports, ..Subset::default() };
            for (key, ready) in addrs {
                let addr = all[&key].clone();
                if ready {
                    subset.addresses.push(addr);
                } else {
                    subset.not_ready_addresses.push(addr);
                }
            }
            subset
        })
        .collect();
    sort(&mut out);
    out
}

/// `SortSubsets`: addresses by IP and UID, ports and subsets in a stable order.
pub fn sort(subsets: &mut [Subset]) {
    for subset in subsets.iter_mut() {
        subset.addresses.sort_by(address_order);
        subset.not_ready_addresses.sort_by(address_order);
        subset.ports.sort();
    }
    subsets.sort_by(|a, b| a.ports.cmp(&b.ports).then_with(|| a.cmp(b)));
}

/// `capacityAnnotationSetCorrectly`: false when the subsets are over capacity (they must be truncated),
/// else whether the over-capacity annotation is absent.
pub fn capacity_annotation_set_correctly(annotations: Option<&Value>, subsets: &[Subset]) -> bool {
    if subsets.iter().map(Subset::len).sum::<usize>() > MAX_CAPACITY {
        return false;
    }
    annotations.and_then(|a| a.get(OVER_CAPACITY)).is_none()
}

/// `truncateEndpoints`: cuts the subsets down to [`MAX_CAPACITY`] addresses, keeping ready ones first and
/// sharing the cut among subsets in proportion to their size (rounded up, so the last may get fewer).
/// Returns whether anything was cut.
pub fn truncate(subsets: &mut [Subset]) -> bool {
    let total_ready: usize = subsets.iter().map(|s| s.addresses.len()).sum();
    let total_not_ready: usize = subsets.iter().map(|s| s.not_ready_addresses.len()).sum();
    if total_ready + total_not_ready <= MAX_CAPACITY {
        return false;
    }
    let truncate_ready = total_ready > MAX_CAPACITY;
    let (max, total) =
        if truncate_ready { (MAX_CAPACITY, total_ready) } else { (MAX_CAPACITY - total_ready, total_not_ready) };
    let mut can_be_added = max;
    for subset in subsets.iter_mut() {
        let in_subset = if truncate_ready { subset.addresses.len() } else { subset.not_ready_addresses.len() };
        // `math.Ceil(float64(n) / float64(total) * float64(max))`, in the same floating point.
        let share = ((in_subset as f64 / total as f64) * max as f64).ceil() as usize;
        let to_be_added = share.min(can_be_added);
        if truncate_ready {
            subset.addresses.truncate(to_be_added);
            subset.not_ready_addresses.clear();
            can_be_added -= subset.addresses.len();
        } else {
            subset.not_ready_addresses.truncate(to_be_added);
            can_be_added -= subset.not_ready_addresses.len();
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(ip: &str, uid: &str) -> Address {
        Address {
            ip: ip.into(),
            node_name: Some("n1".into()),
            target: Some(TargetRef { kind: "Pod".into(), namespace: "ns".into(), name: uid.into(), uid: uid.into() }),
            ..Address::default()
        }
    }

    fn port(name: &str, number: i64) -> Port {
        Port { name: name.into(), port: number, protocol: "TCP".into(), app_protocol: None }
    }

    fn subset(addresses: Vec<Address>, not_ready_addresses: Vec<Address>, ports: Vec<Port>) -> Subset {
        Subset { addresses, not_ready_addresses, ports }
    }

    #[test]
    fn repacking_groups_addresses_by_the_ports_they_serve() {
        let (a, b, c) = (addr("10.0.0.2", "a"), addr("10.0.0.10", "b"), addr("10.0.0.3", "c"));
        let (http, dns) = (port("http", 80), port("dns", 53));
        let cases: Vec<(&str, Vec<Subset>, Vec<Subset>)> = vec![
            ("nothing", vec![], vec![]),
            (
                "portless subsets merge into one portless subset",
                vec![subset(vec![a.clone()], vec![], vec![]), subset(vec![], vec![c.clone()], vec![])],
                vec![subset(vec![a.clone()], vec![c.clone()], vec![])],
            ),
            (
                "one address per port merges, sorted bytewise by IP",
                vec![
                    subset(vec![a.clone()], vec![], vec![http.clone()]),
                    subset(vec![b.clone()], vec![], vec![http.clone()]),
                    subset(vec![], vec![c.clone()], vec![http.clone()]),
                ],
                vec![subset(vec![b.clone(), a.clone()], vec![c.clone()], vec![http.clone()])],
            ),
            (
                "the same addresses on two ports share a subset",
                vec![
                    subset(vec![a.clone()], vec![], vec![http.clone()]),
                    subset(vec![a.clone()], vec![], vec![dns.clone()]),
                ],
                vec![subset(vec![a.clone()], vec![], vec![dns.clone(), http.clone()])],
            ),
            (
                "different address sets make different subsets",
                vec![
                    subset(vec![a.clone()], vec![], vec![http.clone()]),
                    subset(vec![a.clone()], vec![], vec![dns.clone()]),
                    subset(vec![b.clone()], vec![], vec![dns.clone()]),
                ],
                vec![
                    subset(vec![b.clone(), a.clone()], vec![], vec![dns.clone()]),
                    subset(vec![a.clone()], vec![], vec![http.clone()]),
                ],
            ),
            (
                "not ready wins over ready for the same address and port",
                vec![
                    subset(vec![a.clone()], vec![], vec![http.clone()]),
                    subset(vec![], vec![a.clone()], vec![http.clone()]),
                ],
                vec![subset(vec![], vec![a.clone()], vec![http.clone()])],
            ),
        ];
        for (what, input, want) in cases {
            assert_eq!(repack(&input), want, "{what}");
        }
        // The same IP with two targets is two addresses (attribution survives).
        let twins = repack(&[subset(vec![addr("10.0.0.1", "x"), addr("10.0.0.1", "y")], vec![], vec![http])]);
        assert_eq!(twins[0].addresses.len(), 2);
    }

    #[test]
    fn json_round_trips_and_ignores_the_target_resource_version() {
        let v = json!({"addresses": [{"ip": "10.0.0.1", "nodeName": "n1", "hostname": "h",
                        "targetRef": {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "u", "resourceVersion": "7"}}],
                       "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]});
        let parsed = Subset::from_json(&v);
        let mut back = parsed.to_json();
        assert_eq!(Subset::from_json(&back), parsed);
        back["addresses"][0]["targetRef"]["resourceVersion"] = json!("7");
        assert_eq!(back, v);
        let unnamed = Port::from_json(&json!({"port": 80, "protocol": "UDP"})).to_json();
        assert_eq!(unnamed, json!({"port": 80, "protocol": "UDP"}));
    }

    fn many(prefix: &str, n: usize) -> Vec<Address> {
        (0..n).map(|i| addr(&format!("{prefix}.{}.{}", i / 256, i % 256), &format!("{prefix}{i}"))).collect()
    }

    #[test]
    fn truncation_keeps_ready_addresses_first_in_proportion() {
        let p = [port("http", 80)];
        // (ready, not ready) per subset -> kept (ready, not ready) per subset.
        let cases: Vec<(Vec<(usize, usize)>, bool, Vec<(usize, usize)>)> = vec![
            (vec![(600, 400)], false, vec![(600, 400)]),
            (vec![(600, 500)], true, vec![(600, 400)]),
            (vec![(300, 300), (300, 100)], false, vec![(300, 300), (300, 100)]),
            (vec![(300, 400), (300, 200)], true, vec![(300, 267), (300, 133)]),
            (vec![(1200, 10)], true, vec![(1000, 0)]),
            (vec![(700, 0), (600, 50)], true, vec![(539, 0), (461, 0)]),
        ];
        for (shape, cut, want) in cases {
            let mut subsets: Vec<Subset> = shape
                .iter()
                .enumerate()
                .map(|(i, (r, n))| subset(many(&format!("10.{i}"), *r), many(&format!("11.{i}"), *n), p.to_vec()))
                .collect();
            let over = !capacity_annotation_set_correctly(None, &subsets);
            assert_eq!(truncate(&mut subsets), cut, "{shape:?}");
            assert_eq!(over, cut, "{shape:?}: over capacity means the annotation is wrong");
            let got: Vec<(usize, usize)> =
                subsets.iter().map(|s| (s.addresses.len(), s.not_ready_addresses.len())).collect();
            assert_eq!(got, want, "{shape:?}");
            assert!(got.iter().map(|(r, n)| r + n).sum::<usize>() <= MAX_CAPACITY);
        }
        let annotated = json!({OVER_CAPACITY: TRUNCATED});
        assert!(!capacity_annotation_set_correctly(Some(&annotated), &[]), "a stale annotation must go");
        assert!(capacity_annotation_set_correctly(Some(&json!({})), &[]));
    }
}
