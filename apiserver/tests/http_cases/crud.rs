//! Writes and reads of single objects over HTTP: what each verb answers, with which code, and what the
//! server sets (uid, creationTimestamp, resourceVersion, kind and apiVersion defaulted from the URL).

use serde_json::json;

use super::{case, configmap, delete, get, patch, post, put, Case};

const CMS: &str = "/api/v1/namespaces/{ns}/configmaps";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "create answers 201 with the stored object",
            vec![post(CMS, r#"{"metadata":{"name":"a"},"data":{"k":"v"}}"#)
                .field("/kind", json!("ConfigMap"))
                .field("/apiVersion", json!("v1"))
                .field("/metadata/namespace", json!("{ns}"))
                .field("/metadata/creationTimestamp", json!("2023-11-14T22:13:20Z"))
                .field("/data/k", json!("v"))
                .answer_header("Content-Type", "application/json")],
        ),
        case(
            "a YAML body and a YAML answer",
            vec![post(CMS, "metadata:\n  name: y\ndata:\n  k: v\n")
                .header("Content-Type", "application/yaml")
                .header("Accept", "application/yaml")
                .answer_header("Content-Type", "application/yaml")
                .contains("name: y")],
        ),
        case(
            "get, update, get",
            vec![
                post(CMS, &configmap("a", r#"{"k":"v"}"#)),
                get(&format!("{CMS}/a")).field("/data/k", json!("v")),
                put(&format!("{CMS}/a"), &configmap("a", r#"{"k":"w"}"#)).field("/data/k", json!("w")),
                get(&format!("{CMS}/a")).field("/data/k", json!("w")),
            ],
        ),
        case(
            "merge and JSON patches",
            vec![
                post(CMS, &configmap("a", r#"{"k":"v"}"#)),
                patch(&format!("{CMS}/a"), "application/merge-patch+json", r#"{"data":{"k":null,"n":"1"}}"#)
                    .field("/data", json!({"n": "1"})),
                patch(
                    &format!("{CMS}/a"),
                    "application/json-patch+json",
                    r#"[{"op":"add","path":"/metadata/labels","value":{"l":"x"}},{"op":"replace","path":"/data/n","value":"2"}]"#,
                )
                .field("/metadata/labels/l", json!("x"))
                .field("/data/n", json!("2")),
            ],
        ),
        case(
            "dry-run create writes nothing",
            vec![
                post(&format!("{CMS}?dryRun=All"), &configmap("d", "{}")).field("/metadata/name", json!("d")),
                get(&format!("{CMS}/d")).status(404, "NotFound", r#"configmaps "d" not found"#),
            ],
        ),
        case(
            "generateName",
            vec![post(CMS, r#"{"metadata":{"generateName":"gen-"}}"#).field("/metadata/generateName", json!("gen-"))],
        ),
        case(
            "delete answers a Success status, then 404",
            vec![
                post(CMS, &configmap("a", "{}")),
                delete(&format!("{CMS}/a"))
                    .field("/kind", json!("Status"))
                    .field("/status", json!("Success"))
                    .field("/details/name", json!("a"))
                    .field("/details/kind", json!("configmaps")),
                delete(&format!("{CMS}/a")).status(404, "NotFound", r#"configmaps "a" not found"#),
            ],
        ),
        case(
            "a delete answers the object where upstream's store returns the deleted object",
            vec![
                post("/api/v1/namespaces/{ns}/serviceaccounts", r#"{"metadata":{"name":"sa"}}"#),
                delete("/api/v1/namespaces/{ns}/serviceaccounts/sa")
                    .field("/kind", json!("ServiceAccount"))
                    .field("/metadata/name", json!("sa")),
                post("/api/v1/namespaces/{ns}/resourcequotas", r#"{"metadata":{"name":"q"},"spec":{"hard":{"pods":"3"}}}"#),
                delete("/api/v1/namespaces/{ns}/resourcequotas/q").field("/kind", json!("ResourceQuota")),
                post(
                    "/api/v1/namespaces/{ns}/persistentvolumeclaims",
                    r#"{"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}"#,
                ),
                delete("/api/v1/namespaces/{ns}/persistentvolumeclaims/c").field("/kind", json!("PersistentVolumeClaim")),
                post("/api/v1/namespaces/{ns}/services", r#"{"metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}"#),
                delete("/api/v1/namespaces/{ns}/services/s").field("/kind", json!("Service")).field("/spec/ports/0/port", json!(80)),
            ],
        ),
        case(
            "delete with a stale precondition",
            vec![
                post(CMS, &configmap("a", "{}")),
                delete(&format!("{CMS}/a"))
                    .header("Content-Type", "application/json")
                    .body(r#"{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}"#)
                    .code(409)
                    .field("/reason", json!("Conflict"))
                    .field("/details", json!({"name": "a", "kind": "ConfigMap"})),
            ],
        ),
        case(
            "deletecollection by label",
            vec![
                post(CMS, r#"{"metadata":{"name":"a","labels":{"x":"1"}}}"#),
                post(CMS, r#"{"metadata":{"name":"b"}}"#),
                delete(&format!("{CMS}?labelSelector=x%3D1")).field("/kind", json!("ConfigMapList")).field("/items/0/metadata/name", json!("a")),
                get(CMS).field("/items/0/metadata/name", json!("b")).field("/items/1", serde_json::Value::Null),
            ],
        ),
        case(
            "delete with propagationPolicy Orphan waits for the orphan finalizer",
            vec![
                post(CMS, &configmap("a", "{}")),
                delete(&format!("{CMS}/a?propagationPolicy=Orphan"))
                    .field("/kind", json!("ConfigMap"))
                    .field("/metadata/finalizers", json!(["orphan"]))
                    .field("/metadata/deletionTimestamp", json!("2023-11-14T22:13:20Z"))
                    .field("/metadata/deletionGracePeriodSeconds", json!(0)),
                get(&format!("{CMS}/a")).field("/metadata/finalizers", json!(["orphan"])),
                patch(&format!("{CMS}/a"), "application/merge-patch+json", r#"{"metadata":{"finalizers":null}}"#),
                get(&format!("{CMS}/a")).status(404, "NotFound", r#"configmaps "a" not found"#),
            ],
        ),
        case(
            "delete with a Foreground body waits for foregroundDeletion",
            vec![
                post(CMS, &configmap("a", "{}")),
                delete(&format!("{CMS}/a"))
                    .header("Content-Type", "application/json")
                    .body(r#"{"propagationPolicy":"Foreground"}"#)
                    .field("/metadata/finalizers", json!(["foregroundDeletion"])),
            ],
        ),
        case(
            "delete with propagationPolicy Background goes at once",
            vec![
                post(CMS, &configmap("a", "{}")),
                delete(&format!("{CMS}/a"))
                    .header("Content-Type", "application/json")
                    .body(r#"{"propagationPolicy":"Background"}"#)
                    .field("/status", json!("Success")),
            ],
        ),
        case(
            "a namespace's status subresource",
            vec![get("/api/v1/namespaces/{ns}/status").field("/status/phase", json!("Active"))],
        ),
        case(
            "a HEAD answers headers only",
            vec![post(CMS, &configmap("a", "{}")), super::step("HEAD", &format!("{CMS}/a"))],
        ),
    ]
}
