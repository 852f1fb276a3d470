//! `authentication.k8s.io/v1` and `authorization.k8s.io/v1` over HTTP: the review kinds (answered, never
//! stored: only `create` is routed), `serviceaccounts/token`, and their refusals. The round trip of a
//! token (issued, reviewed, used as a bearer token, invalidated with its account) is a test of its own in
//! `tests/http.rs`, because its steps carry the token from one to the next.

use serde_json::json;

use super::{case, delete, get, post, Case};

const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const SELF_REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const SARS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const SSARS: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
const SSRRS: &str = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "the review kinds answer a create with their status and serve no other verb",
            vec![
                post(SELF_REVIEWS, r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#)
                    .code(201)
                    .field("/status/userInfo", json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})),
                post(TOKEN_REVIEWS, r#"{"spec":{"token":"kubesim"}}"#)
                    .code(201)
                    .field("/metadata", json!({"creationTimestamp": null}))
                    .field("/status", json!({"user": {}, "error": "invalid bearer token"})),
                post(SARS, r#"{"spec":{"user":"alice","resourceAttributes":{"namespace":"{ns}","verb":"get","resource":"pods"}}}"#)
                    .code(201)
                    .field("/kind", json!("SubjectAccessReview"))
                    .field("/status", json!({"allowed": true})),
                post(SSARS, r#"{"spec":{"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#)
                    .code(201)
                    .field("/status", json!({"allowed": true})),
                post(SSRRS, r#"{"spec":{"namespace":"{ns}"}}"#)
                    .code(201)
                    .field("/status/resourceRules/0", json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}))
                    .field("/status/nonResourceRules/0", json!({"verbs": ["*"], "nonResourceURLs": ["*"]}))
                    .field("/status/incomplete", json!(false)),
                post(
                    "/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews",
                    r#"{"metadata":{"namespace":"{ns}"},"spec":{"user":"bob","resourceAttributes":{"namespace":"{ns}","verb":"list","resource":"secrets"}}}"#,
                )
                .code(201)
                .field("/status", json!({"allowed": true})),
                get(SARS).code(405),
                get(&format!("{SARS}/x")).code(405),
                delete(&format!("{TOKEN_REVIEWS}/x")).code(405),
                get("/apis/authorization.k8s.io/v1")
                    .field("/resources/0/name", json!("localsubjectaccessreviews"))
                    .field("/resources/0/namespaced", json!(true))
                    .field("/resources/0/verbs", json!(["create"])),
            ],
        ),
        case(
            "reviews refuse what upstream refuses",
            vec![
                post(TOKEN_REVIEWS, r#"{"spec":{}}"#).status(
                    400,
                    "BadRequest",
                    "token is required for TokenReview in authentication",
                ),
                post(SARS, r#"{"spec":{}}"#).status(
                    422,
                    "Invalid",
                    r#"SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]"#,
                ),
                post(SSRRS, r#"{"spec":{}}"#).status(400, "BadRequest", "no namespace on request"),
                post(
                    "/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews",
                    r#"{"metadata":{"namespace":"other"},"spec":{"user":"bob","resourceAttributes":{"namespace":"other"}}}"#,
                )
                .status(400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"),
            ],
        ),
        case(
            "serviceaccounts/token answers a token for an account that exists, for an hour by default",
            vec![
                post("/api/v1/namespaces/{ns}/serviceaccounts", r#"{"metadata":{"name":"robot"}}"#).code(201),
                post("/api/v1/namespaces/{ns}/serviceaccounts/robot/token", r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}"#)
                    .code(201)
                    .field("/kind", json!("TokenRequest"))
                    .field("/metadata/name", json!("robot"))
                    .field("/metadata/namespace", json!("{ns}"))
                    .field("/spec", json!({"audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": 3600, "boundObjectRef": null})),
                post("/api/v1/namespaces/{ns}/serviceaccounts/robot/token", r#"{"spec":{"expirationSeconds":60}}"#).status(
                    422,
                    "Invalid",
                    r#"TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"#,
                ),
                post("/api/v1/namespaces/{ns}/serviceaccounts/robot/token", r#"{"metadata":{"name":"other"},"spec":{}}"#).status(
                    422,
                    "Invalid",
                    r#"TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified"#,
                ),
                post("/api/v1/namespaces/{ns}/serviceaccounts/ghost/token", r#"{"spec":{}}"#).status(
                    404,
                    "NotFound",
                    r#"serviceaccounts "ghost" not found"#,
                ),
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts/robot/token",
                    r#"{"spec":{"boundObjectRef":{"apiVersion":"v1","kind":"Secret","name":"missing"}}}"#,
                )
                .status(404, "NotFound", r#"secrets "missing" not found"#),
                post(
                    "/api/v1/namespaces/{ns}/serviceaccounts/robot/token",
                    r#"{"spec":{"boundObjectRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"}}}"#,
                )
                .status(400, "BadRequest", "cannot bind token to object of type apps/v1, Kind=Deployment"),
                get("/api/v1/namespaces/{ns}/serviceaccounts/robot/token").code(405),
            ],
        ),
    ]
}
