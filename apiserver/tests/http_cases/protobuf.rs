//! Kubernetes protobuf over HTTP: the body kubectl 1.32's `create configmap` sends (byte for byte), objects,
//! lists and `Status` errors written as protobuf documents when asked, watch streams of length-prefixed
//! frames, `DeleteOptions` bodies, and the cases where JSON wins (a Table, which has no protobuf form).

use serde_json::{json, Value};

use super::{case, configmap, delete, get, post, Case, Step};

const CMS: &str = "/api/v1/namespaces/{ns}/configmaps";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What client-go's typed clients send since v0.32 (`gentype.PrefersProtobuf`).
const PREFERS_PROTOBUF: &str = "application/vnd.kubernetes.protobuf,application/json";

/// `kubectl create configmap x --from-literal=a=b` (kubectl 1.32.4), as it crossed the wire.
const KUBECTL_CREATE_CONFIGMAP: [u8; 54] = [
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, 0x43, 0x6f, 0x6e, 0x66, 0x69, 0x67, 0x4d,
    0x61, 0x70, 0x12, 0x1b, 0x0a, 0x11, 0x0a, 0x01, 0x78, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00,
    0x38, 0x00, 0x42, 0x00, 0x12, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x1a, 0x00, 0x22, 0x00,
];

/// A protobuf document of `obj` (which names its apiVersion and kind).
fn document(obj: Value) -> Vec<u8> {
    apiserver::endpoints::protobuf::encode(&obj).expect("the object has a protobuf form").to_vec()
}

/// A step sending a protobuf body and preferring a protobuf answer, as kubectl's typed commands do.
fn protobuf_step(step: Step, body: Vec<u8>) -> Step {
    step.header("Content-Type", PROTOBUF).header("Accept", PREFERS_PROTOBUF).raw_body(body)
}

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "kubectl's protobuf create configmap body creates the object and gets a protobuf answer",
            vec![
                protobuf_step(
                    step_post(&format!("{CMS}?fieldManager=kubectl-create&fieldValidation=Strict")),
                    KUBECTL_CREATE_CONFIGMAP.to_vec(),
                )
                .code(201)
                .answer_header("Content-Type", PROTOBUF)
                .field("/kind", json!("ConfigMap"))
                .field("/metadata/name", json!("x"))
                .field("/metadata/namespace", json!("{ns}"))
                .field("/data/a", json!("b"))
                // Go's encoder leaves empty strings out of metadata; so does the decoded document.
                .field("/metadata/generateName", Value::Null),
                get(&format!("{CMS}/x")).field("/data/a", json!("b")),
            ],
        ),
        case(
            "objects, lists and errors are protobuf documents when asked",
            vec![
                post(CMS, &configmap("a", r#"{"k":"v"}"#)),
                get(&format!("{CMS}/a"))
                    .header("Accept", PREFERS_PROTOBUF)
                    .answer_header("Content-Type", PROTOBUF)
                    .field("/apiVersion", json!("v1"))
                    .field("/data/k", json!("v")),
                get(CMS)
                    .header("Accept", PROTOBUF)
                    .answer_header("Content-Type", PROTOBUF)
                    .field("/kind", json!("ConfigMapList"))
                    .field("/items/0/metadata/name", json!("a"))
                    .field("/items/1", Value::Null),
                get(&format!("{CMS}/nope"))
                    .header("Accept", PREFERS_PROTOBUF)
                    .status(404, "NotFound", r#"configmaps "nope" not found"#)
                    .answer_header("Content-Type", PROTOBUF)
                    .field("/details/name", json!("nope")),
            ],
        ),
        case(
            "a protobuf update carries the resourceVersion precondition",
            vec![
                post(CMS, &configmap("a", r#"{"k":"1"}"#)),
                protobuf_step(
                    super::put(&format!("{CMS}/a"), ""),
                    document(json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "a", "resourceVersion": "1"}, "data": {"k": "2"}})),
                )
                .status(
                    409,
                    "Conflict",
                    r#"Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again"#,
                ),
            ],
        ),
        case(
            "a protobuf DeleteOptions body is read",
            vec![
                post(CMS, &configmap("a", "{}")),
                protobuf_step(
                    delete(&format!("{CMS}/a")),
                    document(json!({"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "not-its-uid"}})),
                )
                .code(409)
                .field("/reason", json!("Conflict")),
            ],
        ),
        case(
            "bodies that are not protobuf are refused in kube's words",
            vec![
                protobuf_step(step_post(CMS), configmap("a", "{}").into_bytes()).status(
                    400,
                    "BadRequest",
                    "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({\"apiVersion\":\"v1\",\"kind\":\"Con ...)",
                ),
                protobuf_step(step_post(CMS), document(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}})))
                    .status(
                        400,
                        "BadRequest",
                        r#"Pod in version "v1" cannot be handled as a ConfigMap: converting (v1.Pod) to (core.ConfigMap): unknown conversion"#,
                    ),
            ],
        ),
        case(
            "a protobuf watch is a stream of length-prefixed frames",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(&format!("{CMS}?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1"))
                    .header("Accept", PREFERS_PROTOBUF)
                    .answer_header("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
                    .contains(r#""type":"ADDED""#)
                    .contains(r#""name":"a""#),
            ],
        ),
        case(
            "a Table is JSON even when protobuf is preferred",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(CMS)
                    .header(
                        "Accept",
                        "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
                    )
                    .answer_header("Content-Type", "application/json")
                    .field("/kind", json!("Table"))
                    .field("/rows/0/cells/0", json!("a")),
            ],
        ),
    ]
}

fn step_post(path: &str) -> Step {
    super::step("POST", path)
}
