//! What the Endpoints and EndpointSlice controllers share about pods and Services (1.32,
//! `staging/src/k8s.io/endpointslice/util/controller_utils.go` and `trigger_time_tracker.go`,
//! `staging/src/k8s.io/endpointslice/utils.go` `FindPort`, `pkg/api/v1/pod/util.go` `IsPodReady`). Sans-IO:
//! objects in, decisions out.
//!
//! A pod is an endpoint candidate when it is not terminal and has an IP; terminating pods count only where
//! the caller says so. Service membership is the Service's `spec.selector` as a set selector; a Service
//! without a selector selects nothing (its endpoints are written by hand), an empty one everything.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use serde_json::Value;

use crate::kcm::replicaset::selector::Selector;
use crate::runtime::time::parse_time_us;

/// The pod an address or endpoint points at (`ObjectReference`, without the resourceVersion the comparison ignores).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct TargetRef {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// `v1.IsHeadlessService`: the label marking the endpoints of a Service without a cluster IP.
pub const IS_HEADLESS_SERVICE: &str = "service.kubernetes.io/headless";
/// `v1.EndpointsLastChangeTriggerTime`.
pub const LAST_CHANGE_TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";
/// `v1.LabelTopologyZone`.
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `metadata.namespace`, `metadata.name` and the like.
pub fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    text(obj, &format!("/metadata/{field}"))
}

/// `IsPodReady`: the pod's `Ready` condition is `True`.
pub fn is_pod_ready(pod: &Value) -> bool {
    ready_condition(pod).is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"))
}

fn ready_condition(pod: &Value) -> Option<&Value> {
    pod.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
}

/// `isPodTerminal`: the pod succeeded or failed.
pub fn is_pod_terminal(pod: &Value) -> bool {
    matches!(text(pod, "/status/phase"), "Succeeded" | "Failed")
}

/// Whether the pod is being deleted (`metadata.deletionTimestamp` is set).
pub fn is_terminating(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp").is_some_and(|v| !v.is_null())
}

/// The pod's IPs: `status.podIPs`, or `status.podIP` alone when the list is empty (the v1 conversion fills
/// one from the other, so that a client sees both).
pub fn pod_ips(pod: &Value) -> Vec<String> {
    let listed: Vec<String> = pod
        .pointer("/status/podIPs")
        .and_then(Value::as_array)
        .map(|ips| ips.iter().filter_map(|ip| ip.get("ip").and_then(Value::as_str)).map(str::to_string).collect())
        .unwrap_or_default();
    if !listed.is_empty() {
        return listed;
    }
    match text(pod, "/status/podIP") {
        "" => Vec::new(),
        ip => vec![ip.to_string()],
    }
}

/// Whether `ip` is an IPv6 address (`utilnet.IsIPv6String`).
pub fn is_ipv6(ip: &str) -> bool {
    matches!(ip.parse::<IpAddr>(), Ok(IpAddr::V6(_)))
}

/// `ShouldPodBeInEndpoints`: not terminal, with an IP, and not terminating unless `include_terminating`.
pub fn should_pod_be_in_endpoints(pod: &Value, include_terminating: bool) -> bool {
    if is_pod_terminal(pod) || pod_ips(pod).is_empty() {
        return false;
    }
    include_terminating || !is_terminating(pod)
}

/// `ShouldSetHostname`: the pod names a hostname and the Service (in its namespace) as its subdomain.
pub fn should_set_hostname(pod: &Value, service: &Value) -> bool {
    !text(pod, "/spec/hostname").is_empty()
        && text(pod, "/spec/subdomain") == meta(service, "name")
        && meta(service, "namespace") == meta(pod, "namespace")
}

/// `helper.IsServiceIPSet`: the Service has a cluster IP (it is not headless).
pub fn is_service_ip_set(service: &Value) -> bool {
    !matches!(text(service, "/spec/clusterIP"), "" | "None")
}

/// The Service's selector, or `None` for a Service without one (which selects nothing).
pub fn service_selector(service: &Value) -> Option<Selector> {
    service.pointer("/spec/selector").filter(|s| !s.is_null()).map(|s| Selector::from_set(Some(s)))
}

/// Whether the controllers leave the Service alone: an `ExternalName` Service, or one without a selector.
pub fn receives_no_endpoints(service: &Value) -> bool {
    text(service, "/spec/type") == "ExternalName" || service_selector(service).is_none()
}

/// `FindPort`: the container port a Service port targets. A number is taken as is; a name is looked up
/// among the ports (of the same protocol) of the pod's containers, then of its sidecars (init containers
/// that restart always).
pub fn find_port(pod: &Value, service_port: &Value) -> Result<i64, String> {
    let protocol = service_port.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
    match service_port.get("targetPort") {
        Some(Value::Number(n)) => return Ok(n.as_i64().unwrap_or(0)),
        Some(Value::String(name)) => {
            // A numeric string is an `IntOrString` holding a number only in the int form; as upstream's
            // `intstr.String`, it is looked up as a name.
            let containers = pod.pointer("/spec/containers").and_then(Value::as_array).into_iter().flatten();
            let sidecars = pod
                .pointer("/spec/initContainers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"));
            for container in containers.chain(sidecars) {
                for port in container.get("ports").and_then(Value::as_array).into_iter().flatten() {
                    let port_protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
                    if port.get("name").and_then(Value::as_str) == Some(name.as_str()) && port_protocol == protocol {
                        return Ok(port.get("containerPort").and_then(Value::as_i64).unwrap_or(0));
                    }
                }
            }
        }
        _ => {}
    }
    Err(format!("no suitable port for manifest: {}", meta(pod, "uid")))
}

/// `GetPodServiceMemberships`: the keys of the Services (of the pod's namespace, from `services`) whose
/// selectors select the pod.
pub fn pod_service_memberships(services: &[Value], pod: &Value) -> BTreeSet<String> {
    services_selecting(services, meta(pod, "namespace"), pod.pointer("/metadata/labels"))
}

fn services_selecting(services: &[Value], namespace: &str, labels: Option<&Value>) -> BTreeSet<String> {
    services
        .iter()
        .filter(|svc| meta(svc, "namespace") == namespace)
        .filter(|svc| service_selector(svc).is_some_and(|s| s.matches(labels)))
        .map(|svc| format!("{}/{}", meta(svc, "namespace"), meta(svc, "name")))
        .collect()
}

/// `podEndpointsChanged`: whether the change may alter the pod's endpoints, and whether it may alter
/// which Services select it (its labels, hostname or subdomain).
pub fn pod_endpoints_changed(old: &Value, new: &Value) -> (bool, bool) {
    let labels_changed = old.pointer("/metadata/labels") != new.pointer("/metadata/labels")
        || text(old, "/spec/hostname") != text(new, "/spec/hostname")
        || text(old, "/spec/subdomain") != text(new, "/spec/subdomain");
    // Upstream compares the two deletion timestamps as pointers, which differ whenever either is set.
    let pod_changed = is_terminating(old)
        || is_terminating(new)
        || is_pod_ready(old) != is_pod_ready(new)
        || pod_ips(old) != pod_ips(new);
    (pod_changed, labels_changed)
}

/// `GetServicesToUpdateOnPodChange`: the Services to resync after a pod changed from `old` to `new`.
pub fn services_to_update_on_pod_change(services: &[Value], old: &Value, new: &Value) -> BTreeSet<String> {
    if meta(old, "resourceVersion") == meta(new, "resourceVersion") {
        return BTreeSet::new();
    }
    let (pod_changed, labels_changed) = pod_endpoints_changed(old, new);
    if !pod_changed && !labels_changed {
        return BTreeSet::new();
    }
    let current = pod_service_memberships(services, new);
    if !labels_changed {
        return current;
    }
    let previous = pod_service_memberships(services, old);
    if pod_changed {
        // Everything the pod was or is in.
        current.union(&previous).cloned().collect()
    } else {
        // Only the Services it joined or left.
        current.symmetric_difference(&previous).cloned().collect()
    }
}

/// Go's `time.RFC3339Nano` of unix microseconds: fractional digits only as needed.
pub fn format_rfc3339_nano(unix_us: i64) -> String {
    let seconds = apiserver::registry::system::rfc3339(unix_us.div_euclid(1_000_000));
    let micros = unix_us.rem_euclid(1_000_000);
    if micros == 0 {
        return seconds;
    }
    let fraction = format!("{micros:06}");
    format!("{}.{}Z", seconds.trim_end_matches('Z'), fraction.trim_end_matches('0'))
}

/// What the tracker remembers of a Service from its last sync.
#[derive(Clone, Debug, Default)]
struct ServiceState {
    service_trigger_us: Option<i64>,
    pod_trigger_us: BTreeMap<String, i64>,
}

/// `TriggerTimeTracker`: the `last-change-trigger-time` to write, from what changed since the last sync
/// of each Service (a pod's `Ready` transition, the Service's creation).
#[derive(Debug, Default)]
pub struct TriggerTimeTracker {
    states: BTreeMap<(String, String), ServiceState>,
}

impl TriggerTimeTracker {
    /// `ComputeEndpointLastChangeTriggerTime`: unix microseconds, or `None` when nothing that carries a
    /// time changed (the annotation is then dropped). A Service seen for the first time gets its
    /// creation time.
    pub fn compute(&mut self, namespace: &str, service: &Value, pods: &[&Value]) -> Option<i64> {
        let key = (namespace.to_string(), meta(service, "name").to_string());
        let known = self.states.get(&key).cloned();
        let state = known.clone().unwrap_or_default();
        let mut min_changed: Option<i64> = None;
        let mut pod_times = BTreeMap::new();
        for pod in pods {
            let Some(at) = ready_condition(pod).and_then(|c| c.get("lastTransitionTime")).and_then(Value::as_str)
            else {
                continue;
            };
            let Some(at) = parse_time_us(at) else { continue };
            let name = meta(pod, "name").to_string();
            if state.pod_trigger_us.get(&name).is_none_or(|before| at > *before) {
                min_changed = Some(min_changed.map_or(at, |m| m.min(at)));
            }
            pod_times.insert(name, at);
        }
        let created = parse_time_us(meta(service, "creationTimestamp"));
        if let Some(at) = created {
            if state.service_trigger_us.is_none_or(|before| at > before) {
                min_changed = Some(min_changed.map_or(at, |m| m.min(at)));
            }
        }
        self.states.insert(key, ServiceState { service_trigger_us: created, pod_trigger_us: pod_times });
        if known.is_none() {
            return created;
        }
        min_changed
    }

    /// `DeleteService`: forgets a deleted Service.
    pub fn delete_service(&mut self, namespace: &str, name: &str) {
        self.states.remove(&(namespace.to_string(), name.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, labels: Value, status: Value) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"), "labels": labels,
               "resourceVersion": "1"},
               "spec": {"containers": [{"name": "c", "ports": [
                   {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                   {"name": "dns", "containerPort": 5353, "protocol": "UDP"}]}],
                        "initContainers": [{"name": "side", "restartPolicy": "Always",
                                            "ports": [{"name": "metrics", "containerPort": 9090}]},
                                           {"name": "init", "ports": [{"name": "setup", "containerPort": 7070}]}]},
               "status": status})
    }

    #[test]
    fn which_pods_are_endpoints() {
        let ready =
            json!({"phase": "Running", "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]});
        let cases = [
            ("ready with an IP", ready.clone(), false, false, true),
            ("no IP", json!({"phase": "Running"}), false, false, false),
            ("IP list only", json!({"phase": "Pending", "podIPs": [{"ip": "fd00::1"}]}), false, false, true),
            ("succeeded", json!({"phase": "Succeeded", "podIP": "10.0.0.1"}), false, true, false),
            ("failed", json!({"phase": "Failed", "podIP": "10.0.0.1"}), false, true, false),
            ("terminating, excluded", ready.clone(), true, false, false),
            ("terminating, included", ready, true, true, true),
        ];
        for (what, status, terminating, include, want) in cases {
            let mut p = pod("p", json!({}), status);
            if terminating {
                p["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
            }
            assert_eq!(should_pod_be_in_endpoints(&p, include), want, "{what}");
        }
    }

    #[test]
    fn ports_are_found_by_number_or_by_name_and_protocol() {
        let p = pod("p", json!({}), json!({}));
        let cases = [
            (json!({"port": 80, "targetPort": 8081}), Ok(8081)),
            (json!({"port": 80, "targetPort": "http", "protocol": "TCP"}), Ok(8080)),
            (json!({"port": 80, "targetPort": "http"}), Ok(8080)),
            (json!({"port": 53, "targetPort": "dns", "protocol": "UDP"}), Ok(5353)),
            (json!({"port": 53, "targetPort": "dns", "protocol": "TCP"}), Err(())),
            (json!({"port": 90, "targetPort": "metrics"}), Ok(9090)),
            (json!({"port": 70, "targetPort": "setup"}), Err(())),
            (json!({"port": 70, "targetPort": "nope"}), Err(())),
        ];
        for (port, want) in cases {
            let got = find_port(&p, &port);
            assert_eq!(got.clone().map_err(|_| ()), want, "{port}");
            if let Err(err) = got {
                assert_eq!(err, "no suitable port for manifest: uid-p");
            }
        }
    }

    #[test]
    fn services_to_resync_after_a_pod_change() {
        let svc = |name: &str, selector: Value| json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"selector": selector}});
        let services = vec![
            svc("a", json!({"app": "a"})),
            svc("b", json!({"app": "b"})),
            svc("all", json!({})),
            json!({"metadata": {"name": "manual", "namespace": "ns"}, "spec": {}}),
            json!({"metadata": {"name": "other", "namespace": "elsewhere"}, "spec": {"selector": {}}}),
        ];
        let base = pod("p", json!({"app": "a"}), json!({"podIP": "10.0.0.1"}));
        let set = |keys: &[&str]| keys.iter().map(|k| format!("ns/{k}")).collect::<BTreeSet<_>>();
        assert_eq!(pod_service_memberships(&services, &base), set(&["a", "all"]));

        let mut relabelled = base.clone();
        relabelled["metadata"]["labels"] = json!({"app": "b"});
        relabelled["metadata"]["resourceVersion"] = json!("2");
        let mut relabelled_and_ready = relabelled.clone();
        relabelled_and_ready["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        let mut annotated = base.clone();
        annotated["metadata"]["annotations"] = json!({"x": "y"});
        annotated["metadata"]["resourceVersion"] = json!("2");
        let mut readied = base.clone();
        readied["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        readied["metadata"]["resourceVersion"] = json!("2");
        let mut resync = readied.clone();
        resync["metadata"]["resourceVersion"] = json!("1");
        let cases = [
            ("a resync (same resourceVersion)", base.clone(), resync, set(&[])),
            ("labels only: what it left and joined", base.clone(), relabelled, set(&["a", "b"])),
            ("labels and readiness: everything", base.clone(), relabelled_and_ready, set(&["a", "b", "all"])),
            ("an annotation: nothing", base.clone(), annotated, set(&[])),
            ("readiness: its Services", base, readied, set(&["a", "all"])),
        ];
        for (what, old, new, want) in cases {
            assert_eq!(services_to_update_on_pod_change(&services, &old, &new), want, "{what}");
        }
    }

    #[test]
    fn trigger_times_follow_what_changed() {
        let svc = json!({"metadata": {"name": "s", "namespace": "ns", "creationTimestamp": "2023-11-14T22:00:00Z"}});
        let ready_at = |name: &str, at: &str| {
            pod(name, json!({}), json!({"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": at}]}))
        };
        let (p1, p2) = (ready_at("p1", "2023-11-14T22:10:00Z"), ready_at("p2", "2023-11-14T22:05:00Z"));
        let mut tracker = TriggerTimeTracker::default();
        let first = tracker.compute("ns", &svc, &[&p1]).map(format_rfc3339_nano);
        assert_eq!(first.as_deref(), Some("2023-11-14T22:00:00Z"), "a new Service: its creation");
        assert_eq!(tracker.compute("ns", &svc, &[&p1]), None, "nothing changed");
        let second = tracker.compute("ns", &svc, &[&p1, &p2]).map(format_rfc3339_nano);
        assert_eq!(second.as_deref(), Some("2023-11-14T22:05:00Z"), "the new pod's transition");
        tracker.delete_service("ns", "s");
        assert!(tracker.compute("ns", &svc, &[]).is_some(), "forgotten: new again");
        assert_eq!(format_rfc3339_nano(1_700_000_000_120_000), "2023-11-14T22:13:20.12Z");
    }

    #[test]
    fn hostnames_and_headless_services() {
        let svc = json!({"metadata": {"name": "db", "namespace": "ns"}, "spec": {"clusterIP": "None"}});
        let mut p = pod("p", json!({}), json!({}));
        assert!(!should_set_hostname(&p, &svc));
        p["spec"]["hostname"] = json!("db-0");
        p["spec"]["subdomain"] = json!("db");
        assert!(should_set_hostname(&p, &svc));
        p["metadata"]["namespace"] = json!("other");
        assert!(!should_set_hostname(&p, &svc));
        assert!(!is_service_ip_set(&svc));
        assert!(is_service_ip_set(&json!({"spec": {"clusterIP": "10.96.0.5"}})));
        assert!(receives_no_endpoints(&json!({"spec": {"type": "ExternalName", "selector": {"a": "b"}}})));
        assert!(receives_no_endpoints(&json!({"spec": {"selector": null}})));
        assert!(!receives_no_endpoints(&json!({"spec": {"selector": {}}})));
    }
}
