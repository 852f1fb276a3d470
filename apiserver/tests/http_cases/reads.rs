//! Lists over HTTP: list kinds and metadata, items without type fields, paging, selectors, and the Table
//! and metadata-only forms kubectl asks for.

use serde_json::json;

use super::{case, configmap, get, post, Case};

const CMS: &str = "/api/v1/namespaces/{ns}/configmaps";
const TABLE: &str =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "a list has its kind and no type fields on its items",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(CMS)
                    .field("/kind", json!("ConfigMapList"))
                    .field("/apiVersion", json!("v1"))
                    .field("/items/0/metadata/name", json!("a"))
                    .field("/items/0/kind", serde_json::Value::Null),
            ],
        ),
        case("an empty list has an empty items array", vec![get(CMS).field("/items", json!([]))]),
        case(
            "paging with limit and continue",
            vec![
                post(CMS, &configmap("a", "{}")),
                post(CMS, &configmap("b", "{}")),
                post(CMS, &configmap("c", "{}")),
                get(&format!("{CMS}?limit=2"))
                    .field("/items/1/metadata/name", json!("b"))
                    .field("/metadata/remainingItemCount", json!(1)),
            ],
        ),
        case(
            "label selectors",
            vec![
                post(CMS, r#"{"metadata":{"name":"a","labels":{"env":"dev"}}}"#),
                post(CMS, r#"{"metadata":{"name":"b","labels":{"env":"prod"}}}"#),
                get(&format!("{CMS}?labelSelector=env%3Dprod"))
                    .field("/items/0/metadata/name", json!("b"))
                    .field("/items/1", serde_json::Value::Null),
                get(&format!("{CMS}?labelSelector=env+in+%28dev%29")).field("/items/0/metadata/name", json!("a")),
            ],
        ),
        case(
            "field selectors",
            vec![
                post(CMS, &configmap("a", "{}")),
                post(CMS, &configmap("b", "{}")),
                get(&format!("{CMS}?fieldSelector=metadata.name%3Db"))
                    .field("/items/0/metadata/name", json!("b"))
                    .field("/items/1", serde_json::Value::Null),
            ],
        ),
        case(
            "a Table for kubectl get",
            vec![
                post(CMS, &configmap("a", r#"{"x":"1","y":"2"}"#)),
                get(CMS)
                    .header("Accept", TABLE)
                    .field("/kind", json!("Table"))
                    .field("/apiVersion", json!("meta.k8s.io/v1"))
                    .field("/columnDefinitions/1/name", json!("Data"))
                    .field("/rows/0/cells", json!(["a", 2, "0s"]))
                    .field("/rows/0/object/kind", json!("PartialObjectMetadata")),
            ],
        ),
        case(
            "a Table with whole objects keeps their type fields, for kubectl get --sort-by",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(&format!("{CMS}?includeObject=Object"))
                    .header("Accept", TABLE)
                    .field("/rows/0/object/kind", json!("ConfigMap"))
                    .field("/rows/0/object/apiVersion", json!("v1"))
                    .field("/rows/0/object/metadata/name", json!("a")),
            ],
        ),
        case(
            "label selectors as upstream's parser reads them",
            vec![
                post(CMS, r#"{"metadata":{"name":"a","labels":{"n":"3"}}}"#),
                post(CMS, r#"{"metadata":{"name":"b","labels":{"n":"12"}}}"#),
                get(&format!("{CMS}?labelSelector=n%3E5")).field("/items/0/metadata/name", json!("b")).field("/items/1", serde_json::Value::Null),
                get(&format!("{CMS}?labelSelector=a%3D%28b"))
                    .status(400, "BadRequest", "unable to parse requirement: found '(', expected: identifier"),
                get(&format!("{CMS}?labelSelector=a%3D-b")).code(400).contains(r#"values[0][a]: Invalid value: \"-b\": a valid label must be"#),
            ],
        ),
        case(
            "bodies in Go's key order",
            vec![
                post(CMS, &configmap("a", "{}")),
                post(CMS, &configmap("a", "{}")).code(409).contains(
                    r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"a\" already exists","reason":"AlreadyExists","details":{"name":"a","kind":"configmaps"},"code":409}"#,
                ),
                get(CMS).contains(r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"#).contains(r#""items":[{"metadata":{"name":"a","namespace":"#),
                get(&format!("{CMS}/a")).contains(r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"#),
            ],
        ),
        case(
            "a Table of one object",
            vec![
                post(CMS, &configmap("a", "{}")),
                get(&format!("{CMS}/a")).header("Accept", TABLE).field("/rows/0/cells/0", json!("a")),
            ],
        ),
        case(
            "metadata only",
            vec![
                post(CMS, &configmap("a", r#"{"x":"1"}"#)),
                get(CMS)
                    .header("Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
                    .field("/kind", json!("PartialObjectMetadataList"))
                    .field("/items/0/metadata/name", json!("a"))
                    .field("/items/0/data", serde_json::Value::Null),
            ],
        ),
        case(
            "a list across namespaces",
            vec![
                post(CMS, &configmap("across", "{}")),
                get("/api/v1/configmaps?fieldSelector=metadata.name%3Dacross")
                    .field("/items/0/metadata/namespace", json!("{ns}")),
            ],
        ),
        case(
            "a large answer is gzipped when asked",
            vec![
                post(CMS, &configmap("big", &format!(r#"{{"k":"{}"}}"#, "x".repeat(200_000)))),
                get(&format!("{CMS}/big")).header("Accept-Encoding", "gzip").answer_header("Content-Encoding", "gzip"),
            ],
        ),
    ]
}
