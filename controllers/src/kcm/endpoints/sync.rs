//! One sync of one Service's Endpoints (1.32, `pkg/controller/endpoint/endpoints_controller.go`
//! `syncService`, `podToEndpointAddressForService`, `addEndpointSubset`, `endpointPortFromServicePort`;
//! `endpoints_tracker.go`).
//!
//! A Service that is gone loses its Endpoints (the object of the same name). An `ExternalName` Service or
//! one without a selector is left alone. Otherwise every selected pod with an IP of the Service's first IP
//! family becomes an address on each Service port its containers resolve (a headless Service without
//! ports gets portless addresses): ready if the pod is ready or the Service publishes not-ready
//! addresses, else not ready; terminating pods only when not-ready addresses are published. The subsets
//! are repacked, then written only if they, the labels (the Service's, plus the headless marker) or the
//! capacity annotation differ from what the informer holds, with the trigger-time annotation and the
//! truncation to 1000 addresses. An Endpoints object the informer still shows at a resourceVersion this
//! controller already replaced is stale: the sync fails, to be retried once the informer caught up.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use super::subsets::{self, Address, Port, Subset, TargetRef, OVER_CAPACITY, TRUNCATED};
use crate::client::resource::builtin;
use crate::client::{Client, ClientError};
use crate::kcm::endpointslice::util::{
    self, format_rfc3339_nano, is_pod_ready, is_service_ip_set, meta, pod_ips, receives_no_endpoints,
    should_pod_be_in_endpoints, should_set_hostname, TriggerTimeTracker, IS_HEADLESS_SERVICE, LAST_CHANGE_TRIGGER_TIME,
};
use crate::kcm::replicaset::sync::error_text;
use crate::kcm::serviceaccount::{has_cause, NAMESPACE_TERMINATING_CAUSE};
use crate::runtime::events::{EventType, Recorder};
use crate::runtime::informer::Informer;
use crate::runtime::worker::Outcome;

/// The IP family whose address a pod contributes: the Service's first, else its cluster IP's, else (a
/// headless Service on an old apiserver) the pod's own.
fn service_ip_family_is_v6(service: &Value, pod: &Value) -> bool {
    if let Some(first) = service.pointer("/spec/ipFamilies/0").and_then(Value::as_str) {
        return first == "IPv6";
    }
    if is_service_ip_set(service) {
        return util::is_ipv6(service.pointer("/spec/clusterIP").and_then(Value::as_str).unwrap_or(""));
    }
    util::is_ipv6(pod.pointer("/status/podIP").and_then(Value::as_str).unwrap_or(""))
}

/// `podToEndpointAddressForService`: the pod's address of the Service's family, or `None` when it has
/// none (a single-stack pod behind a Service of the other family).
pub fn pod_address(service: &Value, pod: &Value) -> Option<Address> {
    let v6 = service_ip_family_is_v6(service, pod);
    let ip = pod_ips(pod).into_iter().find(|ip| util::is_ipv6(ip) == v6)?;
    let node = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("");
    Some(Address {
        ip,
        hostname: if should_set_hostname(pod, service) { meta_str(pod, "/spec/hostname") } else { String::new() },
        // Upstream always points at the pod's node name; an empty one (never seen on a pod with an IP)
        // would not validate, so it is left out.
        node_name: (!node.is_empty()).then(|| node.to_string()),
        target: Some(TargetRef {
            kind: "Pod".into(),
            namespace: meta(pod, "namespace").into(),
            name: meta(pod, "name").into(),
            uid: meta(pod, "uid").into(),
        }),
    })
}

fn meta_str(obj: &Value, pointer: &str) -> String {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("").to_string()
}

/// The repacked subsets of `service` over `pods` (the pods its selector selects).
pub fn desired_subsets(service: &Value, pods: &[&Value]) -> Vec<Subset> {
    let publish_not_ready = service.pointer("/spec/publishNotReadyAddresses").and_then(Value::as_bool) == Some(true);
    let ports = service.pointer("/spec/ports").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut out = Vec::new();
    for pod in pods {
        if !should_pod_be_in_endpoints(pod, publish_not_ready) {
            continue;
        }
        let Some(address) = pod_address(service, pod) else {
            tracing::debug!(
                pod = meta(pod, "name"),
                service = meta(service, "name"),
                "no address of the service's family"
            );
            continue;
        };
        let ready = publish_not_ready || is_pod_ready(pod);
        let subset_of = |ports: Vec<Port>| {
            if ready {
                Subset { addresses: vec![address.clone()], ports, ..Subset::default() }
            } else {
                Subset { not_ready_addresses: vec![address.clone()], ports, ..Subset::default() }
            }
        };
        if ports.is_empty() {
            // A headless Service may have no ports; its addresses then carry none.
            if service.pointer("/spec/clusterIP").and_then(Value::as_str) == Some("None") {
                out.push(subset_of(Vec::new()));
            }
            continue;
        }
        for service_port in &ports {
            match util::find_port(pod, service_port) {
                Ok(number) => out.push(subset_of(vec![Port {
                    name: meta_str(service_port, "/name"),
                    port: number,
                    protocol: meta_str(service_port, "/protocol"),
                    app_protocol: service_port.get("appProtocol").and_then(Value::as_str).map(str::to_string),
                }])),
                Err(err) => tracing::debug!(service = meta(service, "name"), "failed to find port for service: {err}"),
            }
        }
    }
    subsets::repack(&out)
}

fn labels_map(v: Option<&Value>) -> Map<String, Value> {
    v.and_then(Value::as_object).cloned().unwrap_or_default()
}

/// What the sync decided about the Endpoints object.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// It is already as desired.
    None,
    Create(Value),
    Update(Value),
}

/// The Endpoints object to write for `service`, given the one the informer holds (`current`), the
/// desired subsets, and the trigger time; [`Write::None`] when nothing differs.
pub fn plan(service: &Value, current: Option<&Value>, subsets: Vec<Subset>, trigger_us: Option<i64>) -> Write {
    let service_labels = labels_map(service.pointer("/metadata/labels"));
    let creating = current.is_none_or(|c| meta(c, "resourceVersion").is_empty());
    if let Some(current) = current.filter(|_| !creating) {
        let mut compare = labels_map(current.pointer("/metadata/labels"));
        compare.remove(IS_HEADLESS_SERVICE);
        if subsets::subsets_of(current) == subsets
            && compare == service_labels
            && subsets::capacity_annotation_set_correctly(
                current.pointer("/metadata/annotations"),
                &subsets::subsets_of(current),
            )
        {
            return Write::None;
        }
    }
    let mut object = match current.filter(|_| !creating) {
        Some(current) => current.clone(),
        None => json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": meta(service, "name")}}),
    };
    let mut subsets = subsets;
    let mut annotations = labels_map(object.pointer("/metadata/annotations"));
    match trigger_us {
        Some(at) => annotations.insert(LAST_CHANGE_TRIGGER_TIME.into(), json!(format_rfc3339_nano(at))),
        None => annotations.remove(LAST_CHANGE_TRIGGER_TIME),
    };
    if subsets::truncate(&mut subsets) {
        annotations.insert(OVER_CAPACITY.into(), json!(TRUNCATED));
    } else {
        annotations.remove(OVER_CAPACITY);
    }
    let mut labels = service_labels;
    if is_service_ip_set(service) {
        labels.remove(IS_HEADLESS_SERVICE);
    } else {
        labels.insert(IS_HEADLESS_SERVICE.into(), json!(""));
    }
    object["metadata"]["labels"] = Value::Object(labels);
    object["metadata"]["annotations"] = Value::Object(annotations);
    object["subsets"] = subsets::subsets_json(&subsets);
    if creating {
        Write::Create(object)
    } else {
        Write::Update(object)
    }
}

/// `staleEndpointsTracker`: the resourceVersions this controller replaced, per Endpoints key, so that a
/// sync that still sees one knows the informer lags.
#[derive(Debug, Default)]
pub struct StaleTracker {
    replaced: BTreeMap<String, String>,
}

impl StaleTracker {
    pub fn stale(&mut self, key: &str, resource_version: &str) {
        self.replaced.insert(key.to_string(), resource_version.to_string());
    }

    pub fn is_stale(&self, key: &str, resource_version: &str) -> bool {
        self.replaced.get(key).is_some_and(|rv| rv == resource_version)
    }

    pub fn delete(&mut self, key: &str) {
        self.replaced.remove(key);
    }
}

/// The controller's state, shared by its handlers and workers.
pub struct Controller {
    pub client: Arc<Client>,
    pub services: Informer,
    pub pods: Informer,
    pub endpoints: Informer,
    pub events: Recorder,
    pub trigger_times: Mutex<TriggerTimeTracker>,
    pub stale: Mutex<StaleTracker>,
}

impl Controller {
    /// `syncService` for `key` (`namespace/name`).
    pub async fn sync(&self, key: String) -> Result<Outcome, String> {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key.as_str()));
        let Some(service) = self.services.get(&key) else {
            // The Service is gone: so are its Endpoints.
            let path = builtin::endpoints().object_path(Some(namespace), name);
            match self.client.delete(&path, None).await {
                Err(err) if !err.is_not_found() => return Err(error_text(&err)),
                _ => {}
            }
            self.trigger_times.lock().expect("never poisoned").delete_service(namespace, name);
            self.stale.lock().expect("never poisoned").delete(&key);
            return Ok(Outcome::Done);
        };
        if receives_no_endpoints(&service) {
            return Ok(Outcome::Done);
        }
        let selector = util::service_selector(&service).expect("a Service with endpoints has a selector");
        let candidates = self.pods.list_namespace(namespace);
        let pods: Vec<&Value> = candidates.iter().filter(|p| selector.matches(p.pointer("/metadata/labels"))).collect();
        // Computed even if nothing is written, so that the tracker's memory stays current.
        let trigger = self.trigger_times.lock().expect("never poisoned").compute(namespace, &service, &pods);
        let subsets = desired_subsets(&service, &pods);
        let current = self.endpoints.get(&key);
        if let Some(current) = &current {
            if self.stale.lock().expect("never poisoned").is_stale(&key, meta(current, "resourceVersion")) {
                return Err(format!(
                    "endpoints informer cache is out of date, resource version {} already processed for endpoints {key}",
                    meta(current, "resourceVersion")
                ));
            }
        }
        let write = plan(&service, current.as_ref(), subsets, trigger);
        let (object, creating) = match write {
            Write::None => return Ok(Outcome::Done),
            Write::Create(object) => (object, true),
            Write::Update(object) => (object, false),
        };
        let result = if creating {
            self.client.create(&builtin::endpoints().collection_path(Some(namespace)), &object).await
        } else {
            self.client.update(&builtin::endpoints().object_path(Some(namespace), name), &object).await
        };
        match result {
            Ok(updated) => {
                let old_rv = current.as_ref().map(|c| meta(c, "resourceVersion")).unwrap_or("");
                if !creating && meta(&updated, "resourceVersion") != old_rv {
                    self.stale.lock().expect("never poisoned").stale(&key, old_rv);
                }
                Ok(Outcome::Done)
            }
            // Nothing can be created in a namespace being deleted: drop the key.
            Err(err) if creating && has_cause(&err, NAMESPACE_TERMINATING_CAUSE) => Ok(Outcome::Done),
            Err(err) => Err(self.record_failure(&object, &service, creating, &err).await),
        }
    }

    /// The warning event of a failed write, and the error to retry with.
    async fn record_failure(&self, object: &Value, service: &Value, creating: bool, err: &ClientError) -> String {
        let (ns, name) = (meta(service, "namespace"), meta(service, "name"));
        let mut involved = object.clone();
        involved["metadata"]["namespace"] = json!(ns);
        let text = error_text(err);
        let (reason, message) = if creating {
            ("FailedToCreateEndpoint", format!("Failed to create endpoint for service {ns}/{name}: {text}"))
        } else {
            ("FailedToUpdateEndpoint", format!("Failed to update endpoint {ns}/{name}: {text}"))
        };
        self.events.record(&involved, EventType::Warning, reason, &message).await;
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(spec: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"},
                            "creationTimestamp": "2023-11-14T22:00:00Z"},
               "spec": spec})
    }

    fn pod(name: &str, ip: &str, ready: bool) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"), "labels": {"app": "web"}},
               "spec": {"nodeName": "n1", "containers": [{"name": "c", "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
               "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                          "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
    }

    fn shape(subsets: &[Subset]) -> Vec<(Vec<String>, Vec<String>, Vec<i64>)> {
        let ips = |a: &[Address]| a.iter().map(|a| a.ip.clone()).collect();
        subsets
            .iter()
            .map(|s| (ips(&s.addresses), ips(&s.not_ready_addresses), s.ports.iter().map(|p| p.port).collect()))
            .collect()
    }

    #[test]
    fn readiness_ports_and_families() {
        let http = json!([{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]);
        let (a, b, c) = (pod("a", "10.0.0.1", true), pod("b", "10.0.0.2", true), pod("c", "10.0.0.3", false));
        let mut gone = pod("d", "10.0.0.4", true);
        gone["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
        let v6 = pod("e", "fd00::5", true);
        let all = [&a, &b, &c, &gone, &v6];
        let s = |ready: &[&str], not_ready: &[&str], ports: &[i64]| {
            (
                ready.iter().map(|s| s.to_string()).collect(),
                not_ready.iter().map(|s| s.to_string()).collect(),
                ports.to_vec(),
            )
        };
        let cases = [
            (
                "ready and not ready",
                json!({"clusterIP": "10.96.0.1", "ipFamilies": ["IPv4"], "ports": http}),
                vec![s(&["10.0.0.1", "10.0.0.2"], &["10.0.0.3"], &[8080])],
            ),
            (
                "publishNotReadyAddresses: all ready, terminating too",
                json!({"clusterIP": "10.96.0.1", "ipFamilies": ["IPv4"], "ports": http, "publishNotReadyAddresses": true}),
                vec![s(&["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"], &[], &[8080])],
            ),
            (
                "IPv6 service takes the v6 pod only",
                json!({"clusterIP": "fd00::a", "ipFamilies": ["IPv6"], "ports": http}),
                vec![s(&["fd00::5"], &[], &[8080])],
            ),
            (
                "no families: the cluster IP's",
                json!({"clusterIP": "fd00::a", "ports": http}),
                vec![s(&["fd00::5"], &[], &[8080])],
            ),
            (
                "a port no pod has: nothing",
                json!({"clusterIP": "10.96.0.1", "ports": [{"port": 80, "targetPort": "grpc", "protocol": "TCP"}]}),
                vec![],
            ),
            (
                "headless without ports: bare addresses",
                json!({"clusterIP": "None", "ipFamilies": ["IPv4"]}),
                vec![s(&["10.0.0.1", "10.0.0.2"], &["10.0.0.3"], &[])],
            ),
            ("not headless without ports: nothing", json!({"clusterIP": "10.96.0.1", "ipFamilies": ["IPv4"]}), vec![]),
        ];
        for (what, spec, want) in cases {
            assert_eq!(shape(&desired_subsets(&service(spec), &all)), want, "{what}");
        }
    }

    #[test]
    fn hostnames_for_the_service_named_as_subdomain() {
        let svc = service(
            json!({"clusterIP": "None", "ipFamilies": ["IPv4"], "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]}),
        );
        let mut p = pod("db-0", "10.0.0.9", true);
        p["spec"]["hostname"] = json!("db-0");
        p["spec"]["subdomain"] = json!("web");
        let got = desired_subsets(&svc, &[&p]);
        assert_eq!(
            got[0].addresses[0].to_json(),
            json!({"ip": "10.0.0.9", "hostname": "db-0", "nodeName": "n1",
                   "targetRef": {"kind": "Pod", "namespace": "ns", "name": "db-0", "uid": "uid-db-0"}})
        );
    }

    #[test]
    fn writes_only_what_changed() {
        let svc = service(
            json!({"clusterIP": "10.96.0.1", "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}),
        );
        let a = pod("a", "10.0.0.1", true);
        let subsets = desired_subsets(&svc, &[&a]);
        let Write::Create(created) = plan(&svc, None, subsets.clone(), Some(1_700_000_000_000_000)) else {
            panic!("a create")
        };
        assert_eq!(created["metadata"]["name"], "web");
        assert_eq!(created["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(created["metadata"]["annotations"], json!({LAST_CHANGE_TRIGGER_TIME: "2023-11-14T22:13:20Z"}));
        assert_eq!(created["subsets"][0]["ports"], json!([{"name": "http", "port": 8080, "protocol": "TCP"}]));
        let mut stored = created.clone();
        stored["metadata"]["resourceVersion"] = json!("5");
        stored["subsets"][0]["addresses"][0]["targetRef"]["resourceVersion"] = json!("3");
        assert_eq!(plan(&svc, Some(&stored), subsets.clone(), None), Write::None, "a pod's resourceVersion is ignored");
        let mut headless = svc.clone();
        headless["spec"]["clusterIP"] = json!("None");
        // The headless marker alone (a cluster IP never changes) does not make a write; it comes with one.
        assert_eq!(plan(&headless, Some(&stored), subsets.clone(), None), Write::None);
        let Write::Update(updated) = plan(&headless, Some(&stored), Vec::new(), None) else { panic!("an update") };
        assert_eq!(updated["subsets"], json!([]));
        assert_eq!(updated["metadata"]["labels"], json!({"app": "web", IS_HEADLESS_SERVICE: ""}));
        assert_eq!(updated["metadata"]["annotations"], json!({}), "no trigger time: the annotation goes");
        let mut relabelled = svc.clone();
        relabelled["metadata"]["labels"] = json!({"app": "web", "tier": "front"});
        assert!(matches!(plan(&relabelled, Some(&stored), subsets, None), Write::Update(_)));
        let mut over = stored.clone();
        over["metadata"]["annotations"][OVER_CAPACITY] = json!(TRUNCATED);
        assert!(matches!(plan(&svc, Some(&over), desired_subsets(&svc, &[&a]), None), Write::Update(_)));
    }

    #[test]
    fn stale_tracker_remembers_replaced_versions() {
        let mut t = StaleTracker::default();
        assert!(!t.is_stale("ns/web", "5"));
        t.stale("ns/web", "5");
        assert!(t.is_stale("ns/web", "5"));
        assert!(!t.is_stale("ns/web", "6"));
        t.delete("ns/web");
        assert!(!t.is_stale("ns/web", "5"));
    }
}
