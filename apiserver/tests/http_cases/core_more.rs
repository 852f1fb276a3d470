//! Core kinds beyond the first ones: replicationcontrollers (with `/status` and `/scale`), podtemplates
//! and persistentvolumes (cluster-scoped, with `/status`; a delete answers the object), over HTTP with
//! kube-apiserver 1.32's defaults, codes and texts. Volume names start with `core-more-`: they are shared
//! by every case of the server. Also the legacy `bindings` resource and `apps/v1` controllerrevisions.

use serde_json::json;

use super::{case, delete, get, post, put, Case};

const RCS: &str = "/api/v1/namespaces/{ns}/replicationcontrollers";
const PTS: &str = "/api/v1/namespaces/{ns}/podtemplates";
const PVS: &str = "/api/v1/persistentvolumes";

fn rc(name: &str, replicas: i64) -> String {
    format!(
        r#"{{"metadata":{{"name":"{name}"}},"spec":{{"replicas":{replicas},"template":{{"metadata":{{"labels":{{"app":"{name}"}}}},"spec":{{"containers":[{{"name":"c","image":"nginx:1.27"}}]}}}}}}}}"#
    )
}

fn pv(name: &str, source: &str) -> String {
    format!(
        r#"{{"metadata":{{"name":"{name}"}},"spec":{{"capacity":{{"storage":"1Gi"}},"accessModes":["ReadWriteOnce"],{source}}}}}"#
    )
}

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "a replication controller takes its selector and labels from the template, scales through /scale and is deleted with a Status",
            vec![
                post(RCS, &rc("web", 2))
                    .field("/spec/selector", json!({"app": "web"}))
                    .field("/metadata/labels", json!({"app": "web"}))
                    .field("/metadata/generation", json!(1))
                    .field("/status", json!({"replicas": 0}))
                    .field("/spec/template/spec/restartPolicy", json!("Always"))
                    .field("/spec/template/metadata/creationTimestamp", json!(null)),
                get(&format!("{RCS}/web")).field("/spec/replicas", json!(2)),
                get(RCS).field("/kind", json!("ReplicationControllerList")).field("/items/0/metadata/name", json!("web")),
                get(&format!("{RCS}/web/scale"))
                    .field("/kind", json!("Scale"))
                    .field("/apiVersion", json!("autoscaling/v1"))
                    .field("/spec/replicas", json!(2))
                    .field("/status", json!({"replicas": 0, "selector": "app=web"})),
                put(&format!("{RCS}/web/scale"), r#"{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","namespace":"{ns}"},"spec":{"replicas":4}}"#)
                    .field("/spec/replicas", json!(4)),
                get(&format!("{RCS}/web")).field("/spec/replicas", json!(4)).field("/metadata/generation", json!(2)),
                put(&format!("{RCS}/web/status"), r#"{"metadata":{"name":"web"},"spec":{"replicas":9,"selector":{"app":"web"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}},"status":{"replicas":4,"readyReplicas":3}}"#)
                    .field("/spec/replicas", json!(4))
                    .field("/status/readyReplicas", json!(3)),
                put(&format!("{RCS}/web/status"), r#"{"metadata":{"name":"web"},"status":{"replicas":1,"readyReplicas":3}}"#).status(
                    422,
                    "Invalid",
                    r#"ReplicationController "web" is invalid: status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas"#,
                ),
                put(&format!("{RCS}/web"), &rc("web", 1)).field("/spec/replicas", json!(1)).field("/status/readyReplicas", json!(3)),
                delete(&format!("{RCS}/web")).field("/kind", json!("Status")).field("/status", json!("Success")),
                get(&format!("{RCS}/web")).code(404),
            ],
        ),
        case(
            "a replication controller needs a selector matching its template",
            vec![
                post(RCS, r#"{"metadata":{"name":"bad"},"spec":{"selector":{"app":"db"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#).status(
                    422,
                    "Invalid",
                    r#"ReplicationController "bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`"#,
                ),
                post(RCS, r#"{"metadata":{"name":"bare"},"spec":{"replicas":1}}"#).status(
                    422,
                    "Invalid",
                    r#"ReplicationController "bare" is invalid: [spec.selector: Required value, spec.template: Required value]"#,
                ),
            ],
        ),
        case(
            "a pod template gets the pod defaults and a generation that follows its template",
            vec![
                post(PTS, r#"{"metadata":{"name":"tpl"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}}"#)
                    .field("/metadata/generation", json!(1))
                    .field("/template/spec/restartPolicy", json!("Always"))
                    .field("/template/spec/containers/0/imagePullPolicy", json!("IfNotPresent")),
                get(&format!("{PTS}/tpl")).field("/template/metadata/labels", json!({"app": "web"})),
                get(PTS).field("/kind", json!("PodTemplateList")),
                put(&format!("{PTS}/tpl"), r#"{"metadata":{"name":"tpl"},"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.37"}]}}}"#)
                    .field("/metadata/generation", json!(2)),
                post(PTS, r#"{"metadata":{"name":"empty"},"template":{"spec":{"containers":[]}}}"#).status(
                    422,
                    "Invalid",
                    r#"PodTemplate "empty" is invalid: template.spec.containers: Required value"#,
                ),
                delete(&format!("{PTS}/tpl")).field("/kind", json!("Status")),
            ],
        ),
        case(
            "a persistent volume is defaulted and Pending, keeps its source, has a status of its own, and a delete answers it",
            vec![
                post(PVS, &pv("core-more-pv-a", r#""hostPath":{"path":"/data"}"#))
                    .field("/spec/persistentVolumeReclaimPolicy", json!("Retain"))
                    .field("/spec/volumeMode", json!("Filesystem"))
                    .field("/spec/hostPath", json!({"path": "/data", "type": ""}))
                    .field("/status/phase", json!("Pending"))
                    .field("/metadata/finalizers", json!(null)),
                get(&format!("{PVS}/core-more-pv-a")).field("/metadata/namespace", json!(null)),
                get(PVS).field("/kind", json!("PersistentVolumeList")),
                put(&format!("{PVS}/core-more-pv-a"), &pv("core-more-pv-a", r#""hostPath":{"path":"/other"}"#)).status(
                    422,
                    "Invalid",
                    "PersistentVolume \"core-more-pv-a\" is invalid: spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n",
                ),
                put(&format!("{PVS}/core-more-pv-a/status"), r#"{"metadata":{"name":"core-more-pv-a"},"status":{"phase":"Available"}}"#)
                    .field("/status/phase", json!("Available"))
                    .field("/spec/hostPath/path", json!("/data")),
                delete(&format!("{PVS}/core-more-pv-a"))
                    .field("/kind", json!("PersistentVolume"))
                    .field("/metadata/name", json!("core-more-pv-a")),
                get(&format!("{PVS}/core-more-pv-a")).code(404),
            ],
        ),
        case(
            "a persistent volume needs one volume source",
            vec![
                post(PVS, &pv("core-more-pv-none", r#""storageClassName":"fast""#)).status(
                    422,
                    "Invalid",
                    r#"PersistentVolume "core-more-pv-none" is invalid: spec: Required value: must specify a volume type"#,
                ),
                post(PVS, &pv("core-more-pv-two", r#""hostPath":{"path":"/d"},"nfs":{"server":"s","path":"/e"}"#)).status(
                    422,
                    "Invalid",
                    r#"PersistentVolume "core-more-pv-two" is invalid: spec.nfs: Forbidden: may not specify more than 1 volume type"#,
                ),
            ],
        ),
        case(
            "a Binding posted to the namespace's bindings assigns the pod it names, once",
            vec![
                // The ServiceAccount admission plugin wants the namespace's `default` account (no controller makes it).
                post("/api/v1/namespaces/{ns}/serviceaccounts", r#"{"metadata":{"name":"default"}}"#),
                post("/api/v1/namespaces/{ns}/pods", r#"{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}"#).code(201),
                post("/api/v1/namespaces/{ns}/bindings", r#"{"metadata":{"name":"p"},"target":{"kind":"Node","name":"node-1"}}"#)
                    .code(201)
                    .field("/status", json!("Success")),
                get("/api/v1/namespaces/{ns}/pods/p").field("/spec/nodeName", json!("node-1")),
                post("/api/v1/namespaces/{ns}/bindings", r#"{"metadata":{"name":"p"},"target":{"kind":"Node","name":"node-2"}}"#)
                    .status(409, "Conflict", r#"Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1""#),
                post("/api/v1/namespaces/{ns}/bindings", r#"{"metadata":{"name":"p"},"target":{"kind":"Pod"}}"#).status(
                    422,
                    "Invalid",
                    r#"Binding "p" is invalid: [target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]"#,
                ),
                post("/api/v1/namespaces/{ns}/bindings", r#"{"metadata":{"name":"ghost"},"target":{"name":"node-1"}}"#)
                    .status(404, "NotFound", r#"pods "ghost" not found"#),
                get("/api/v1/namespaces/{ns}/bindings").code(405),
            ],
        ),
        case(
            "a controller revision keeps its data and prints its controller",
            vec![
                post(
                    "/apis/apps/v1/namespaces/{ns}/controllerrevisions",
                    r#"{"metadata":{"name":"web-1","ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u","controller":true}]},"data":{"spec":{}},"revision":1}"#,
                )
                .code(201),
                get("/apis/apps/v1/namespaces/{ns}/controllerrevisions/web-1")
                    .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
                    .field("/rows/0/cells/1", json!("statefulset.apps/web"))
                    .field("/rows/0/cells/2", json!(1)),
                put("/apis/apps/v1/namespaces/{ns}/controllerrevisions/web-1", r#"{"metadata":{"name":"web-1"},"data":{},"revision":1}"#).status(
                    422,
                    "Invalid",
                    r#"ControllerRevision.apps "web-1" is invalid: data: Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x7d}, Object:runtime.Object(nil)}: field is immutable"#,
                ),
                post("/apis/apps/v1/namespaces/{ns}/controllerrevisions", r#"{"metadata":{"name":"web-2"},"revision":-2}"#).status(
                    422,
                    "Invalid",
                    r#"ControllerRevision.apps "web-2" is invalid: [data: Required value: data is mandatory, revision: Invalid value: -2: must be greater than or equal to 0]"#,
                ),
                delete("/apis/apps/v1/namespaces/{ns}/controllerrevisions/web-1").field("/kind", json!("Status")),
            ],
        ),
        case(
            "componentstatuses are probed on every read, carry kube's deprecation warning and serve no writes",
            vec![
                get("/api/v1/componentstatuses/etcd-0")
                    .field("/conditions/0", json!({"type": "Healthy", "status": "True", "message": "ok"}))
                    .answer_header("Warning", r#"299 - "v1 ComponentStatus is deprecated in v1.19+""#),
                get("/api/v1/componentstatuses")
                    .field("/kind", json!("ComponentStatusList"))
                    .field("/metadata", json!({}))
                    .field("/items/0/metadata/name", json!("controller-manager"))
                    .field("/items/1/conditions/0/status", json!("False")),
                get("/api/v1/componentstatuses/nothing")
                    .status(404, "NotFound", r#"componentstatuses "nothing" not found"#)
                    .answer_header("Warning", r#"299 - "v1 ComponentStatus is deprecated in v1.19+""#),
                delete("/api/v1/componentstatuses/etcd-0").code(405),
                post("/api/v1/componentstatuses", r#"{"metadata":{"name":"x"}}"#).code(405),
            ],
        ),
    ]
}
