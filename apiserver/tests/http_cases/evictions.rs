//! `pods/eviction` over HTTP: a pending pod goes at once; a running pod goes only if the disruption
//! budget that selects it has been observed and has a disruption left, which the eviction spends; otherwise
//! a 429 (with `Retry-After` while the budget is unobserved). kubesim runs no disruption controller, so the
//! cases write the budget's status themselves, as that controller would.

use serde_json::json;

use super::{case, get, post, put, Case};

const PODS: &str = "/api/v1/namespaces/{ns}/pods";
const PDBS: &str = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets";

fn pod(name: &str) -> String {
    format!(
        r#"{{"metadata":{{"name":"{name}","labels":{{"app":"web"}}}},"spec":{{"containers":[{{"name":"c","image":"nginx"}}]}}}}"#
    )
}

/// The pod's status as a kubelet would write it: running and ready.
fn running(name: &str) -> String {
    format!(
        r#"{{"metadata":{{"name":"{name}","labels":{{"app":"web"}}}},"spec":{{"containers":[{{"name":"c","image":"nginx"}}]}},"status":{{"phase":"Running","conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
    )
}

fn eviction(name: &str) -> String {
    format!(r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{name}"}}}}"#)
}

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "an eviction honours the pod's disruption budget",
            vec![
                // The ServiceAccount admission plugin wants the namespace's `default` account.
                post("/api/v1/namespaces/{ns}/serviceaccounts", r#"{"metadata":{"name":"default"}}"#).code(201),
                post(PODS, &pod("pending")).code(201),
                post(&format!("{PODS}/pending/eviction"), &eviction("pending"))
                    .code(201)
                    .field("/status", json!("Success")),
                get(&format!("{PODS}/pending")).code(404),
                post(PODS, &pod("web-0")).code(201),
                put(&format!("{PODS}/web-0/status"), &running("web-0")).code(200),
                post(PODS, &pod("web-1")).code(201),
                put(&format!("{PODS}/web-1/status"), &running("web-1")).code(200),
                post(PDBS, r#"{"metadata":{"name":"web"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}"#).code(201),
                post(&format!("{PODS}/web-0/eviction"), &eviction("web-0"))
                    .status(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
                    .answer_header("Retry-After", "10")
                    .field("/details/causes/0", json!({"reason": "DisruptionBudget", "message": "The disruption budget web is still being processed by the server."})),
                put(
                    &format!("{PDBS}/web/status"),
                    r#"{"metadata":{"name":"web"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}}"#,
                )
                .code(200),
                post(&format!("{PODS}/web-0/eviction"), &eviction("other"))
                    .status(400, "BadRequest", "name in URL does not match name in Eviction object"),
                post(&format!("{PODS}/web-0/eviction"), &eviction("web-0")).code(201),
                get(&format!("{PODS}/web-0")).code(404),
                get(&format!("{PDBS}/web"))
                    .field("/status/disruptionsAllowed", json!(0))
                    .field("/status/conditions/0/reason", json!("InsufficientPods"))
                    .contains(r#""disruptedPods":{"web-0":"#),
                post(&format!("{PODS}/web-1/eviction"), &eviction("web-1"))
                    .status(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
                    .field("/details/causes/0/message", json!("The disruption budget web needs 1 healthy pods and has 2 currently")),
                get(&format!("{PODS}/web-1")).code(200),
                post(&format!("{PODS}/ghost/eviction"), &eviction("ghost")).status(404, "NotFound", r#"pods "ghost" not found"#),
            ],
        ),
    ]
}
