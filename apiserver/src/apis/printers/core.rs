//! The printers of core/v1 resources (`printConfigMap`, `printNamespace`, `printPod`, ...).

use serde_json::Value;

use super::*;

/// `printConfigMap`: the number of keys in `data` and `binaryData`.
pub fn configmaps() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            column("Data", "string", "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.", 0),
            age_column(),
        ],
        cells: |obj, now| {
            let count = |f: &str| obj.get(f).and_then(Value::as_object).map_or(0, |m| m.len());
            vec![name(obj), Value::from(count("data") + count("binaryData")), age(obj, now)]
        },
    }
}

/// `printNamespace`: the phase.
pub fn namespaces() -> Printer {
    Printer {
        columns: vec![name_column(), column("Status", "string", "The status of the namespace", 0), age_column()],
        cells: |obj, now| {
            let phase = obj.pointer("/status/phase").and_then(Value::as_str).unwrap_or("");
            vec![name(obj), Value::from(phase), age(obj, now)]
        },
    }
}

/// `printPod`: readiness, the reason kubectl shows as status, restarts, age; IP and node with `-o wide`.
pub fn pods() -> Printer {
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
        cells: pod_cells,
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
        assert_eq!((configmaps().cells)(&cm, now), vec![json!("a"), json!(2), json!("5m")]);
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
        let cells = (pods().cells)(&pod, now);
        assert_eq!(
            cells[..6],
            [json!("p"), json!("1/1"), json!("Running"), json!("0"), json!("60m"), json!("10.0.0.1")]
        );
        let pending =
            json!({"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}});
        assert_eq!((pods().cells)(&pending, now)[..4], [json!("q"), json!("0/1"), json!("Pending"), json!("0")]);
    }
}
