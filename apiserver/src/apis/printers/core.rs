//! The printers of core/v1 resources (`printConfigMap`, `printNamespace`, `printPod`, ...).

use serde_json::Value;

use super::*;

/// `printConfigMap`: the number of keys in `data` and `binaryData`.
pub(crate) fn configmaps() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Data", "string", "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let count = |f: &str| obj.get(f).and_then(Value::as_object).map_or(0, |m| m.len());
            vec![name(obj), Value::from(count("data") + count("binaryData")), age(obj, now)]
        },
    }
}

/// `printNamespace`: the phase.
pub(crate) fn namespaces() -> Printer {
    Printer {
        columns: vec![name_column(), column("Status", "string", "The status of the namespace", 0), age_column()],
        cells: |obj, now, _| {
            let phase = obj.pointer("/status/phase").and_then(Value::as_str).unwrap_or("");
            vec![name(obj), Value::from(phase), age(obj, now)]
        },
    }
}

/// `printPod`: readiness, the reason kubectl shows as status, restarts, age; IP and node with `-o wide`.
pub(crate) fn pods() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic.", 0),
            column("Status", "string", "The aggregate status of the containers in this pod.", 0),
            column("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", 0),
            age_column(),
            column("IP", "string", "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", 1),
            column("Node", "string", "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.", 1),
            column("Nominated Node", "string", "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.", 1),
            column("Readiness Gates", "string", "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates", 1),
        ],
        cells: |obj, now, _| pod_cells(obj, now),
    }
}

fn pod_cells(pod: &Value, now: i64) -> Vec<Value> {
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array).map_or(0, Vec::len);
    let statuses: &[Value] =
        pod.pointer("/status/containerStatuses").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let mut reason = pod.pointer("/status/reason").and_then(Value::as_str).unwrap_or("").to_string();
    if reason.is_empty() {
        reason = pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("").to_string();
    }
    let (mut ready, mut restarts, mut last_restart) = (0, 0i64, None::<i64>);
    for status in statuses.iter().rev() {
        restarts += status.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
        if let Some(at) =
            status.pointer("/lastState/terminated/finishedAt").and_then(Value::as_str).and_then(parse_rfc3339)
        {
            last_restart = Some(last_restart.map_or(at, |l| l.max(at)));
        }
        let waiting = status.pointer("/state/waiting/reason").and_then(Value::as_str).unwrap_or("");
        let terminated = status.pointer("/state/terminated");
        if !waiting.is_empty() {
            reason = waiting.to_string();
        } else if let Some(t) = terminated {
            reason = match t.get("reason").and_then(Value::as_str).unwrap_or("") {
                "" => match t.get("signal").and_then(Value::as_i64).unwrap_or(0) {
                    0 => format!("ExitCode:{}", t.get("exitCode").and_then(Value::as_i64).unwrap_or(0)),
                    signal => format!("Signal:{signal}"),
                },
                r => r.to_string(),
            };
        } else if status.get("ready").and_then(Value::as_bool) == Some(true)
            && status.pointer("/state/running").is_some()
        {
            ready += 1;
        }
    }
    if !meta_str(pod, "deletionTimestamp").is_empty() {
        reason = if pod.pointer("/status/reason").and_then(Value::as_str) == Some("NodeLost") {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    let restarts = match last_restart {
        Some(at) if restarts > 0 => format!("{restarts} ({} ago)", human_duration(now - at)),
        _ => restarts.to_string(),
    };
    let or_none = |v: Option<&str>| Value::from(v.filter(|s| !s.is_empty()).unwrap_or("<none>"));
    let gates = pod.pointer("/spec/readinessGates").and_then(Value::as_array).map_or(0, Vec::len);
    vec![
        name(pod),
        Value::from(format!("{ready}/{containers}")),
        Value::from(reason),
        Value::from(restarts),
        age(pod, now),
        or_none(pod.pointer("/status/podIP").and_then(Value::as_str)),
        or_none(pod.pointer("/spec/nodeName").and_then(Value::as_str)),
        or_none(pod.pointer("/status/nominatedNodeName").and_then(Value::as_str)),
        if gates == 0 { Value::from("<none>") } else { Value::from(format!("0/{gates}")) },
    ]
}

const CORE: &str = "io.k8s.api.core.v1";

fn def(name: &str) -> String {
    format!("{CORE}.{name}")
}

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn array_at<'a>(obj: &'a Value, pointer: &str) -> &'a [Value] {
    obj.pointer(pointer).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// `printSecret`: the type and the number of keys.
pub(crate) fn secrets() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            doc_column("Type", "string", &def("Secret"), "type", 0),
            doc_column("Data", "string", &def("Secret"), "data", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let keys = obj.get("data").and_then(Value::as_object).map_or(0, |m| m.len());
            vec![name(obj), Value::from(str_at(obj, "/type")), Value::from(keys), age(obj, now)]
        },
    }
}

/// `printServiceAccount`: the number of token secrets.
pub(crate) fn serviceaccounts() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            doc_column("Secrets", "string", &def("ServiceAccount"), "secrets", 0),
            age_column(),
        ],
        cells: |obj, now, _| vec![name(obj), Value::from(array_at(obj, "/secrets").len()), age(obj, now)],
    }
}

/// `printService`: type, cluster IP, external IPs, ports; the selector with `-o wide`.
pub(crate) fn services() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            doc_column("Type", "string", &def("ServiceSpec"), "type", 0),
            doc_column("Cluster-IP", "string", &def("ServiceSpec"), "clusterIP", 0),
            doc_column("External-IP", "string", &def("ServiceSpec"), "externalIPs", 0),
            doc_column("Port(s)", "string", &def("ServiceSpec"), "ports", 0),
            age_column(),
            doc_column("Selector", "string", &def("ServiceSpec"), "selector", 1),
        ],
        cells: |obj, now, _| service_cells(obj, now),
    }
}

fn service_cells(svc: &Value, now: i64) -> Vec<Value> {
    let kind = str_at(svc, "/spec/type");
    let cluster_ip = match str_at(svc, "/spec/clusterIP") {
        "" => "<none>",
        ip => ip,
    };
    Vec::from([
        name(svc),
        Value::from(kind),
        Value::from(cluster_ip),
        Value::from(external_ips(svc, kind)),
        Value::from(service_ports(svc)),
        age(svc, now),
        Value::from(selector_text(svc.pointer("/spec/selector"))),
    ])
}

/// `getServiceExternalIP`.
fn external_ips(svc: &Value, kind: &str) -> String {
    let external: Vec<&str> = array_at(svc, "/spec/externalIPs").iter().filter_map(Value::as_str).collect();
    match kind {
        "ExternalName" => str_at(svc, "/spec/externalName").to_string(),
        "LoadBalancer" => {
            let mut ips: Vec<String> = array_at(svc, "/status/loadBalancer/ingress")
                .iter()
                .map(|i| {
                    let ip = str_at(i, "/ip");
                    if ip.is_empty() {
                        str_at(i, "/hostname").to_string()
                    } else {
                        ip.to_string()
                    }
                })
                .collect();
            ips.extend(external.iter().map(|s| s.to_string()));
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        _ if external.is_empty() => "<none>".into(),
        _ => external.join(","),
    }
}

/// `makePortString`: `80/TCP`, `80:30080/TCP` for node ports, comma separated; `<none>` without ports.
fn service_ports(svc: &Value) -> String {
    let ports: Vec<String> = array_at(svc, "/spec/ports")
        .iter()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            match p.get("nodePort").and_then(Value::as_i64).filter(|n| *n != 0) {
                Some(node_port) => format!("{port}:{node_port}/{protocol}"),
                None => format!("{port}/{protocol}"),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

/// A map selector as `labels.FormatLabels` writes it: `a=b,c=d` in key order, `<none>` when empty.
pub(crate) fn selector_text(selector: Option<&Value>) -> String {
    let pairs: Vec<String> = selector
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect())
        .unwrap_or_default();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// `printEndpoints`: up to three `ip:port` pairs, then `+ N more...`.
pub(crate) fn endpoints() -> Printer {
    Printer {
        columns: vec![name_column(), doc_column("Endpoints", "string", &def("Endpoints"), "subsets", 0), age_column()],
        cells: |obj, now, _| vec![name(obj), Value::from(format_endpoints(obj)), age(obj, now)],
    }
}

/// `formatEndpoints` with no port filter.
fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let mut shown = Vec::new();
    let mut count = 0;
    for subset in array_at(obj, "/subsets") {
        let addresses = array_at(subset, "/addresses");
        let ports = array_at(subset, "/ports");
        for address in addresses {
            let ip = str_at(address, "/ip");
            if ports.is_empty() {
                count += 1;
                if shown.len() < MAX {
                    shown.push(ip.to_string());
                }
            }
            for port in ports {
                count += 1;
                if shown.len() < MAX {
                    let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
                    shown.push(format!("{ip}:{number}"));
                }
            }
        }
    }
    let mut text = shown.join(",");
    if count > shown.len() {
        text.push_str(&format!(" + {} more...", count - shown.len()));
    }
    if text.is_empty() {
        "<none>".into()
    } else {
        text
    }
}

/// `printNode`: readiness (and `SchedulingDisabled`), roles, age, kubelet version; addresses and system
/// info with `-o wide`.
pub(crate) fn nodes() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Status", "string", "The status of the node", 0),
            column("Roles", "string", "The roles of the node", 0),
            age_column(),
            doc_column("Version", "string", &def("NodeSystemInfo"), "kubeletVersion", 0),
            doc_column("Internal-IP", "string", &def("NodeStatus"), "addresses", 1),
            doc_column("External-IP", "string", &def("NodeStatus"), "addresses", 1),
            doc_column("OS-Image", "string", &def("NodeSystemInfo"), "osImage", 1),
            doc_column("Kernel-Version", "string", &def("NodeSystemInfo"), "kernelVersion", 1),
            doc_column("Container-Runtime", "string", &def("NodeSystemInfo"), "containerRuntimeVersion", 1),
        ],
        cells: |obj, now, _| node_cells(obj, now),
    }
}

fn node_cells(node: &Value, now: i64) -> Vec<Value> {
    let ready = array_at(node, "/status/conditions").iter().find(|c| str_at(c, "/type") == "Ready");
    let mut status = match ready.map(|c| str_at(c, "/status")) {
        Some("True") => "Ready".to_string(),
        Some("False") => "NotReady".to_string(),
        _ => "Unknown".to_string(),
    };
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = Vec::new();
    for (key, value) in crate::registry::meta::labels(node) {
        if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.push(role.to_string());
            }
        } else if key == "kubernetes.io/role" && !value.is_empty() {
            roles.push(value.to_string());
        }
    }
    roles.sort();
    roles.dedup();
    let roles = if roles.is_empty() { "<none>".to_string() } else { roles.join(",") };
    let address = |kind: &str| {
        array_at(node, "/status/addresses")
            .iter()
            .find(|a| str_at(a, "/type") == kind)
            .map_or("<none>".to_string(), |a| str_at(a, "/address").to_string())
    };
    let info = |field: &str| match str_at(node, &format!("/status/nodeInfo/{field}")) {
        "" => "<unknown>".to_string(),
        v => v.to_string(),
    };
    vec![
        name(node),
        Value::from(status),
        Value::from(roles),
        age(node, now),
        Value::from(str_at(node, "/status/nodeInfo/kubeletVersion")),
        Value::from(address("InternalIP")),
        Value::from(address("ExternalIP")),
        Value::from(info("osImage")),
        Value::from(info("kernelVersion")),
        Value::from(info("containerRuntimeVersion")),
    ]
}

/// `printPersistentVolumeClaim`: phase, volume, capacity, access modes, class; the volume mode with
/// `-o wide`.
pub(crate) fn persistentvolumeclaims() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            doc_column("Status", "string", &def("PersistentVolumeClaimStatus"), "phase", 0),
            doc_column("Volume", "string", &def("PersistentVolumeClaimSpec"), "volumeName", 0),
            doc_column("Capacity", "string", &def("PersistentVolumeClaimStatus"), "capacity", 0),
            doc_column("Access Modes", "string", &def("PersistentVolumeClaimStatus"), "accessModes", 0),
            doc_column("StorageClass", "string", &def("PersistentVolumeClaimSpec"), "storageClassName", 0),
            doc_column(
                "VolumeAttributesClass",
                "string",
                &def("PersistentVolumeClaimSpec"),
                "volumeAttributesClassName",
                0,
            ),
            age_column(),
            doc_column("VolumeMode", "string", &def("PersistentVolumeClaimSpec"), "volumeMode", 1),
        ],
        cells: |obj, now, _| pvc_cells(obj, now),
    }
}

fn pvc_cells(pvc: &Value, now: i64) -> Vec<Value> {
    let phase = str_at(pvc, "/status/phase");
    let bound = phase == "Bound";
    let modes: Vec<&str> = array_at(pvc, "/status/accessModes")
        .iter()
        .filter_map(Value::as_str)
        .map(|m| match m {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect();
    let class = match str_at(pvc, "/spec/storageClassName") {
        "" => crate::registry::meta::get(pvc, "annotations")
            .and_then(|a| a.get("volume.beta.kubernetes.io/storage-class"))
            .and_then(Value::as_str)
            .unwrap_or(""),
        class => class,
    };
    let attributes_class = match str_at(pvc, "/spec/volumeAttributesClassName") {
        "" => "<unset>",
        c => c,
    };
    let mode = match str_at(pvc, "/spec/volumeMode") {
        "" => "<unset>",
        m => m,
    };
    vec![
        name(pvc),
        Value::from(phase),
        Value::from(str_at(pvc, "/spec/volumeName")),
        Value::from(if bound { str_at(pvc, "/status/capacity/storage") } else { "" }),
        Value::from(if bound { modes.join(",") } else { String::new() }),
        Value::from(class),
        Value::from(attributes_class),
        age(pvc, now),
        Value::from(mode),
    ]
}

/// `printEvent`: when last seen, type, reason, the object, the message; subobject, source, first seen,
/// count and name with `-o wide`.
pub(crate) fn events() -> Printer {
    let mut name_col = name_column();
    name_col.priority = 1;
    Printer {
        columns: vec![
            doc_column("Last Seen", "string", &def("Event"), "lastTimestamp", 0),
            doc_column("Type", "string", &def("Event"), "type", 0),
            doc_column("Reason", "string", &def("Event"), "reason", 0),
            doc_column("Object", "string", &def("Event"), "involvedObject", 0),
            doc_column("Subobject", "string", &def("ObjectReference"), "fieldPath", 1),
            doc_column("Source", "string", &def("Event"), "source", 1),
            doc_column("Message", "string", &def("Event"), "message", 0),
            doc_column("First Seen", "string", &def("Event"), "firstTimestamp", 1),
            doc_column("Count", "string", &def("Event"), "count", 1),
            name_col,
        ],
        cells: |obj, now, _| event_cells(obj, now),
    }
}

pub(crate) fn event_cells(event: &Value, now: i64) -> Vec<Value> {
    // The first and last times: the event's own, or its series', or its event time.
    let event_time = str_at(event, "/eventTime");
    let first = match str_at(event, "/firstTimestamp") {
        "" => event_time,
        t => t,
    };
    let last = match (str_at(event, "/series/lastObservedTime"), str_at(event, "/lastTimestamp")) {
        (series, _) if !series.is_empty() => series,
        (_, "") => first,
        (_, t) => t,
    };
    let count = event.pointer("/series/count").or_else(|| event.get("count")).and_then(Value::as_i64).unwrap_or(1);
    let last_seen = if count > 1 && first != last {
        format!("{} (x{count} over {})", since(last, now), since(first, now))
    } else {
        since(last, now)
    };
    let object =
        format!("{}/{}", str_at(event, "/involvedObject/kind").to_lowercase(), str_at(event, "/involvedObject/name"));
    let mut source = str_at(event, "/source/component").to_string();
    if source.is_empty() {
        source = str_at(event, "/reportingComponent").to_string();
    }
    let host = str_at(event, "/source/host");
    if !host.is_empty() {
        source = format!("{source}, {host}");
    }
    vec![
        Value::from(last_seen),
        Value::from(str_at(event, "/type")),
        Value::from(str_at(event, "/reason")),
        Value::from(object),
        Value::from(str_at(event, "/involvedObject/fieldPath")),
        Value::from(source),
        Value::from(str_at(event, "/message").trim()),
        Value::from(since(first, now)),
        Value::from(count),
        name(event),
    ]
}

/// `printLimitRange`: the creation time.
pub(crate) fn limitranges() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            doc_column("Created At", "date", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "creationTimestamp", 0),
        ],
        cells: |obj, _, _| vec![name(obj), Value::from(meta_str(obj, "creationTimestamp"))],
    }
}

/// `printResourceQuota`: age, then what is used of each hard request and limit (`requests.cpu: 0/1`).
pub(crate) fn resourcequotas() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            age_column(),
            column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume.", 0),
            column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", 0),
        ],
        cells: |obj, now, _| {
            let hard = obj.pointer("/status/hard").or_else(|| obj.pointer("/spec/hard")).and_then(Value::as_object);
            let used = obj.pointer("/status/used").and_then(Value::as_object);
            let (mut requests, mut limits) = (Vec::new(), Vec::new());
            for (resource, quantity) in hard.into_iter().flatten() {
                let used = used.and_then(|u| u.get(resource)).and_then(Value::as_str).unwrap_or("0");
                let text = format!("{resource}: {used}/{}", quantity.as_str().unwrap_or(""));
                if resource.starts_with("limits") {
                    limits.push(text);
                } else {
                    requests.push(text);
                }
            }
            vec![name(obj), age(obj, now), Value::from(requests.join(", ")), Value::from(limits.join(", "))]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_kubectl_prints_them() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (8 * 86400, "8d"),
            (2 * 365 * 86400, "2y"),
            (2 * 365 * 86400 + 86400, "2y1d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
    }

    #[test]
    fn a_configmap_prints_its_key_count() {
        let cm = json!({"metadata": {"name": "a", "creationTimestamp": "2024-01-01T00:00:00Z"}, "data": {"x": "1", "y": "2"}});
        let now = parse_rfc3339("2024-01-01T00:05:00Z").unwrap();
        assert_eq!((configmaps().cells)(&cm, now, &[]), vec![json!("a"), json!(2), json!("5m")]);
    }

    #[test]
    fn a_pod_prints_its_state() {
        let pod = json!({
            "metadata": {"name": "p", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "c"}], "nodeName": "n1"},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "containerStatuses": [
                {"ready": true, "restartCount": 0, "state": {"running": {}}}
            ]}
        });
        let now = parse_rfc3339("2024-01-01T01:00:00Z").unwrap();
        let cells = (pods().cells)(&pod, now, &[]);
        assert_eq!(
            cells[..6],
            [json!("p"), json!("1/1"), json!("Running"), json!("0"), json!("60m"), json!("10.0.0.1")]
        );
        let pending =
            json!({"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}});
        assert_eq!((pods().cells)(&pending, now, &[])[..4], [json!("q"), json!("0/1"), json!("Pending"), json!("0")]);
    }
}
