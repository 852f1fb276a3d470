//! Server-side apply and `metadata.managedFields` over HTTP: who owns what after each write, apply's
//! create, merge, conflicts and force, and what kube-apiserver answers to a bad apply (with upstream's
//! codes, reasons and texts). Nothing refused is half-applied: the object reads back unchanged.

use serde_json::json;

use super::{case, get, patch, post, put, Case};

const CMS: &str = "/api/v1/namespaces/{ns}/configmaps";
const APPLY: &str = "application/apply-patch+yaml";
const NOW: &str = "2023-11-14T22:13:20Z";

/// A ConfigMap named `name` with the YAML `data` lines, as an applier sends it.
fn applied(name: &str, data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n{data}\n")
}

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "managedFields: [{}] strips the field; an empty list keeps it",
            vec![
                post(&format!("{CMS}?fieldManager=maker"), r#"{"metadata":{"name":"a"},"data":{"k":"v"}}"#),
                patch(&format!("{CMS}/a"), "application/merge-patch+json", r#"{"metadata":{"managedFields":[]}}"#)
                    .field("/metadata/managedFields/0/manager", json!("maker")),
                patch(&format!("{CMS}/a"), "application/merge-patch+json", r#"{"metadata":{"managedFields":[{}]}}"#)
                    .field("/metadata/managedFields", json!(null)),
                get(&format!("{CMS}/a")).field("/metadata/managedFields", json!(null)).field("/data", json!({"k": "v"})),
                // The next write is tracked from nothing.
                patch(&format!("{CMS}/a?fieldManager=next"), "application/merge-patch+json", r#"{"data":{"n":"m"}}"#)
                    .field("/metadata/managedFields/0/manager", json!("next"))
                    .field("/metadata/managedFields/0/fieldsV1", json!({"f:data": {"f:n": {}}}))
                    .field("/metadata/managedFields/1", json!(null)),
            ],
        ),
        case(
            "an apply creates (201), then merges (200), and owns what it applied",
            vec![
                patch(&format!("{CMS}/a?fieldManager=alice"), APPLY, &applied("a", "  k: v"))
                    .code(201)
                    .field("/data", json!({"k": "v"}))
                    .field(
                        "/metadata/managedFields",
                        json!([{
                            "manager": "alice", "operation": "Apply", "apiVersion": "v1", "time": NOW,
                            "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}},
                        }]),
                    ),
                patch(&format!("{CMS}/a?fieldManager=bob"), APPLY, &applied("a", "  n: m"))
                    .code(200)
                    .field("/data", json!({"k": "v", "n": "m"}))
                    .field("/metadata/managedFields/0/manager", json!("alice"))
                    .field("/metadata/managedFields/1/manager", json!("bob"))
                    .field("/metadata/managedFields/1/fieldsV1", json!({"f:data": {"f:n": {}}})),
                // alice stops applying k: it goes, as no one else owns it.
                patch(&format!("{CMS}/a?fieldManager=alice"), APPLY, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
                    .code(200)
                    .field("/data", json!({"n": "m"})),
            ],
        ),
        case(
            "creates and updates record their manager, from fieldManager or the user agent",
            vec![
                post(&format!("{CMS}?fieldManager=maker"), r#"{"metadata":{"name":"a"},"data":{"k":"v"}}"#).field(
                    "/metadata/managedFields",
                    json!([{
                        "manager": "maker", "operation": "Update", "apiVersion": "v1", "time": NOW,
                        "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:k": {}}},
                    }]),
                ),
                put(&format!("{CMS}/a"), r#"{"metadata":{"name":"a"},"data":{"k":"w"}}"#)
                    .header("User-Agent", "curl/8.5.0")
                    .field("/metadata/managedFields/0/manager", json!("curl"))
                    .field("/metadata/managedFields/0/fieldsV1", json!({"f:data": {"f:k": {}}}))
                    .field("/metadata/managedFields/1/manager", json!("maker"))
                    .field("/metadata/managedFields/1/fieldsV1", json!({"f:data": {}})),
                patch(&format!("{CMS}/a?fieldManager=labeller"), "application/merge-patch+json", r#"{"metadata":{"labels":{"l":"1"}}}"#)
                    // Entries of the same operation and time sort by manager.
                    .field("/metadata/managedFields/1/manager", json!("labeller"))
                    .field("/metadata/managedFields/1/fieldsV1", json!({"f:metadata": {"f:labels": {".": {}, "f:l": {}}}}))
                    .field("/metadata/managedFields/2/manager", json!("maker")),
            ],
        ),
        case(
            "an apply that changes another manager's field is a 409 naming it; force takes the field",
            vec![
                post(&format!("{CMS}?fieldManager=bob"), r#"{"metadata":{"name":"a"},"data":{"k":"v","j":"1"}}"#),
                patch(&format!("{CMS}/a?fieldManager=alice"), APPLY, &applied("a", "  k: w\n  j: \"2\""))
                    .status(
                        409,
                        "Conflict",
                        "Apply failed with 2 conflicts: conflicts with \"bob\" using v1:\n- .data.j\n- .data.k",
                    )
                    .field(
                        "/details",
                        json!({"causes": [
                            {"reason": "FieldManagerConflict", "message": "conflict with \"bob\" using v1", "field": ".data.j"},
                            {"reason": "FieldManagerConflict", "message": "conflict with \"bob\" using v1", "field": ".data.k"},
                        ]}),
                    ),
                get(&format!("{CMS}/a")).field("/data", json!({"k": "v", "j": "1"})),
                // The same value is shared, not a conflict.
                patch(&format!("{CMS}/a?fieldManager=alice"), APPLY, &applied("a", "  k: v")).code(200),
                patch(&format!("{CMS}/a?fieldManager=alice&force=true"), APPLY, &applied("a", "  k: w\n  j: \"2\""))
                    .code(200)
                    .field("/data", json!({"k": "w", "j": "2"}))
                    .field("/metadata/managedFields/0/manager", json!("alice"))
                    .field("/metadata/managedFields/0/fieldsV1", json!({"f:data": {"f:j": {}, "f:k": {}}}))
                    .field("/metadata/managedFields/1/manager", json!("bob"))
                    .field("/metadata/managedFields/1/fieldsV1", json!({"f:data": {}})),
            ],
        ),
        case(
            "a status write is owned with its subresource; the main resource's apply owns no status",
            vec![
                patch(
                    "/apis/apps/v1/namespaces/{ns}/deployments/web?fieldManager=deployer",
                    APPLY,
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers: [{name: main, image: nginx}]\nstatus:\n  replicas: 9\n",
                )
                .code(201)
                .field("/status", json!({}))
                .field(
                    "/metadata/managedFields/0/fieldsV1/f:spec/f:template/f:spec/f:containers",
                    json!({"k:{\"name\":\"main\"}": {".": {}, "f:image": {}, "f:name": {}}}),
                )
                .field("/metadata/managedFields/0/fieldsV1/f:status", json!(null)),
                patch(
                    "/apis/apps/v1/namespaces/{ns}/deployments/web/status?fieldManager=controller",
                    "application/merge-patch+json",
                    r#"{"status":{"replicas":2,"readyReplicas":1}}"#,
                )
                .field("/status/replicas", json!(2))
                .field("/metadata/managedFields/1/manager", json!("controller"))
                .field("/metadata/managedFields/1/subresource", json!("status"))
                .field(
                    "/metadata/managedFields/1/fieldsV1",
                    json!({"f:status": {"f:readyReplicas": {}, "f:replicas": {}}}),
                ),
            ],
        ),
        case(
            "an apply of a Scale owns the replicas with the subresource scale, and conflicts as replicas would",
            vec![
                patch(
                    "/apis/apps/v1/namespaces/{ns}/deployments/web?fieldManager=deployer",
                    APPLY,
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers: [{name: main, image: nginx}]\n",
                )
                .code(201),
                patch(
                    "/apis/apps/v1/namespaces/{ns}/deployments/web/scale?fieldManager=hpa",
                    APPLY,
                    "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: web\nspec:\n  replicas: 4\n",
                )
                .status(409, "Conflict", "Apply failed with 1 conflict: conflict with \"deployer\": .spec.replicas"),
                patch(
                    "/apis/apps/v1/namespaces/{ns}/deployments/web/scale?fieldManager=hpa&force=true",
                    APPLY,
                    "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: web\nspec:\n  replicas: 4\n",
                )
                .field("/kind", json!("Scale"))
                .field("/spec/replicas", json!(4)),
                get("/apis/apps/v1/namespaces/{ns}/deployments/web")
                    .field("/spec/replicas", json!(4))
                    .field("/metadata/managedFields/1/manager", json!("hpa"))
                    .field("/metadata/managedFields/1/operation", json!("Apply"))
                    .field("/metadata/managedFields/1/subresource", json!("scale"))
                    .field("/metadata/managedFields/1/fieldsV1", json!({"f:spec": {"f:replicas": {}}})),
                patch(
                    "/apis/apps/v1/namespaces/{ns}/deployments/web/scale?fieldManager=hpa",
                    APPLY,
                    "apiVersion: apps/v1\nkind: Scale\nmetadata:\n  name: web\nspec:\n  replicas: 5\n",
                )
                .status(400, "BadRequest", "invalid object type: apps/v1, Kind=Scale"),
                patch(
                    "/apis/apps/v1/namespaces/{ns}/deployments/none/scale?fieldManager=hpa",
                    APPLY,
                    "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: none\nspec:\n  replicas: 1\n",
                )
                .code(404),
            ],
        ),
        case(
            "an applied service gets its cluster IP, and keeps it when applied again",
            vec![
                patch(
                    "/api/v1/namespaces/{ns}/services/web?fieldManager=m",
                    APPLY,
                    "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
                )
                .code(201)
                .contains(r#""clusterIP":"10.0.0."#)
                .field(
                    "/metadata/managedFields/0/fieldsV1",
                    json!({"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}}}}}),
                ),
                patch(
                    "/api/v1/namespaces/{ns}/services/web?fieldManager=m",
                    APPLY,
                    "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {a: b}\nspec:\n  ports:\n  - port: 80\n",
                )
                // The live cluster IP stays (no one applies it, and it may not change).
                .code(200)
                .contains(r#""clusterIP":"10.0.0."#)
                .field("/metadata/labels", json!({"a": "b"})),
            ],
        ),
        case(
            "a dry-run apply creates nothing",
            vec![
                patch(&format!("{CMS}/d?fieldManager=alice&dryRun=All"), APPLY, &applied("d", "  k: v")).code(201),
                get(&format!("{CMS}/d")).status(404, "NotFound", r#"configmaps "d" not found"#),
            ],
        ),
        case(
            "an apply without a field manager",
            vec![patch(&format!("{CMS}/a"), APPLY, &applied("a", "  k: v")).status(
                422,
                "Invalid",
                r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#,
            )],
        ),
        case(
            "an apply in another version or of another kind, or carrying managedFields",
            vec![
                // upstream's versionCheckManager, the outermost field manager, names the applied kind.
                patch(&format!("{CMS}/a?fieldManager=m"), APPLY, "apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: a\n")
                    .status(400, "BadRequest", "invalid object type: /v2, Kind=ConfigMap"),
                patch(&format!("{CMS}/a?fieldManager=m"), APPLY, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n")
                    .status(400, "BadRequest", "invalid object type: /v1, Kind=Secret"),
                patch(&format!("{CMS}/a?fieldManager=m"), APPLY, "metadata:\n  name: a\n")
                    .status(400, "BadRequest", "invalid object type: /, Kind="),
                patch(
                    &format!("{CMS}/a?fieldManager=m"),
                    APPLY,
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  managedFields: []\n",
                )
                .status(400, "BadRequest", "metadata.managedFields must be nil"),
                get(&format!("{CMS}/a")).status(404, "NotFound", r#"configmaps "a" not found"#),
            ],
        ),
        case(
            "an apply whose name is not the URL's",
            vec![patch(&format!("{CMS}/a?fieldManager=m"), APPLY, &applied("b", "  k: v")).status(
                400,
                "BadRequest",
                "the name of the object (b) does not match the name on the URL (a)",
            )],
        ),
        case(
            "an apply with a field the kind lacks",
            vec![patch(
                &format!("{CMS}/a?fieldManager=m"),
                APPLY,
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nspec:\n  x: 1\n",
            )
            // A plain error upstream: 500 with no reason.
            .code(500)
            .field("/reason", json!(null))
            .field(
                "/message",
                json!("failed to create typed patch object (/a; /v1, Kind=ConfigMap): .spec: field not declared in schema"),
            )],
        ),
        case(
            "an apply body that is not an object",
            vec![
                patch(&format!("{CMS}/a?fieldManager=m"), APPLY, "- 1\n- 2\n").status(
                    400,
                    "BadRequest",
                    "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}",
                ),
                patch(&format!("{CMS}/a?fieldManager=m"), APPLY, "a: [").code(400).contains("error decoding YAML: "),
            ],
        ),
    ]
}
