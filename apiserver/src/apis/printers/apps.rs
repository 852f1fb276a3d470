//! The printers of `apps` resources (`printDeployment`, `printReplicaSet`, `printStatefulSet`,
//! `printDaemonSet`), and the template columns the workloads share (`layoutContainerCells`).

use serde_json::Value;

use super::*;
use crate::registry::strategies::workloads::format_label_selector;

const APPS: &str = "io.k8s.api.apps.v1";

fn def(name: &str) -> String {
    format!("{APPS}.{name}")
}

fn int_at(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The `-o wide` columns of a pod template: container names and images.
pub(crate) fn template_columns() -> [Column; 2] {
    [
        column("Containers", "string", "Names of each container in the template.", 1),
        column("Images", "string", "Images referenced by each container in the template.", 1),
    ]
}

/// `layoutContainerCells`: the template's container names and images, comma-separated.
pub(crate) fn template_cells(obj: &Value) -> [Value; 2] {
    let containers =
        obj.pointer("/spec/template/spec/containers").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let field = |f: &str| {
        containers.iter().map(|c| c.get(f).and_then(Value::as_str).unwrap_or("")).collect::<Vec<_>>().join(",")
    };
    [Value::from(field("name")), Value::from(field("image"))]
}

/// `printDeployment`: ready of desired, up to date, available.
pub(crate) fn deployments() -> Printer {
    let [containers, images] = template_columns();
    Printer {
        columns: vec![
            name_column(),
            column("Ready", "string", "Number of the pod with ready state", 0),
            doc_column("Up-to-date", "string", &def("DeploymentStatus"), "updatedReplicas", 0),
            doc_column("Available", "string", &def("DeploymentStatus"), "availableReplicas", 0),
            age_column(),
            containers,
            images,
            doc_column("Selector", "string", &def("DeploymentSpec"), "selector", 1),
        ],
        cells: |obj, now, _| {
            let [containers, images] = template_cells(obj);
            vec![
                name(obj),
                Value::from(format!("{}/{}", int_at(obj, "/status/readyReplicas"), int_at(obj, "/spec/replicas"))),
                Value::from(int_at(obj, "/status/updatedReplicas")),
                Value::from(int_at(obj, "/status/availableReplicas")),
                age(obj, now),
                containers,
                images,
                Value::from(format_label_selector(obj.pointer("/spec/selector"))),
            ]
        },
    }
}

/// `printReplicaSet`: desired, current, ready.
pub(crate) fn replicasets() -> Printer {
    let [containers, images] = template_columns();
    Printer {
        columns: vec![
            name_column(),
            doc_column("Desired", "integer", &def("ReplicaSetSpec"), "replicas", 0),
            doc_column("Current", "integer", &def("ReplicaSetStatus"), "replicas", 0),
            doc_column("Ready", "integer", &def("ReplicaSetStatus"), "readyReplicas", 0),
            age_column(),
            containers,
            images,
            doc_column("Selector", "string", &def("ReplicaSetSpec"), "selector", 1),
        ],
        cells: |obj, now, _| {
            let [containers, images] = template_cells(obj);
            vec![
                name(obj),
                Value::from(int_at(obj, "/spec/replicas")),
                Value::from(int_at(obj, "/status/replicas")),
                Value::from(int_at(obj, "/status/readyReplicas")),
                age(obj, now),
                containers,
                images,
                Value::from(format_label_selector(obj.pointer("/spec/selector"))),
            ]
        },
    }
}

/// `printStatefulSet`: ready of desired.
pub(crate) fn statefulsets() -> Printer {
    let [containers, images] = template_columns();
    Printer {
        columns: vec![
            name_column(),
            column("Ready", "string", "Number of the pod with ready state", 0),
            age_column(),
            containers,
            images,
        ],
        cells: |obj, now, _| {
            let [containers, images] = template_cells(obj);
            vec![
                name(obj),
                Value::from(format!("{}/{}", int_at(obj, "/status/readyReplicas"), int_at(obj, "/spec/replicas"))),
                age(obj, now),
                containers,
                images,
            ]
        },
    }
}

/// `printDaemonSet`: desired, current, ready, up to date, available, node selector.
pub(crate) fn daemonsets() -> Printer {
    let [containers, images] = template_columns();
    Printer {
        columns: vec![
            name_column(),
            doc_column("Desired", "integer", &def("DaemonSetStatus"), "desiredNumberScheduled", 0),
            doc_column("Current", "integer", &def("DaemonSetStatus"), "currentNumberScheduled", 0),
            doc_column("Ready", "integer", &def("DaemonSetStatus"), "numberReady", 0),
            doc_column("Up-to-date", "integer", &def("DaemonSetStatus"), "updatedNumberScheduled", 0),
            doc_column("Available", "integer", &def("DaemonSetStatus"), "numberAvailable", 0),
            doc_column("Node Selector", "string", "io.k8s.api.core.v1.PodSpec", "nodeSelector", 0),
            age_column(),
            containers,
            images,
            doc_column("Selector", "string", &def("DaemonSetSpec"), "selector", 1),
        ],
        cells: |obj, now, _| {
            let [containers, images] = template_cells(obj);
            let node_selector = super::core::selector_text(obj.pointer("/spec/template/spec/nodeSelector"));
            vec![
                name(obj),
                Value::from(int_at(obj, "/status/desiredNumberScheduled")),
                Value::from(int_at(obj, "/status/currentNumberScheduled")),
                Value::from(int_at(obj, "/status/numberReady")),
                Value::from(int_at(obj, "/status/updatedNumberScheduled")),
                Value::from(int_at(obj, "/status/numberAvailable")),
                Value::from(node_selector),
                age(obj, now),
                containers,
                images,
                Value::from(format_label_selector(obj.pointer("/spec/selector"))),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_new_deployment_prints_as_kubectl_shows_it() {
        let obj = json!({"metadata": {"name": "web", "creationTimestamp": "2023-11-14T22:13:20Z"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}, {"name": "side", "image": "busybox"}]}}}, "status": {}});
        let cells = (deployments().cells)(&obj, 1_700_000_060, &[]);
        assert_eq!(
            cells,
            [
                json!("web"),
                json!("0/3"),
                json!(0),
                json!(0),
                json!("60s"),
                json!("nginx,side"),
                json!("nginx:1.27,busybox"),
                json!("app=web")
            ]
        );
    }
}
