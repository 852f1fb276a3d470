//! Discovery, version, health, OpenAPI and metrics over HTTP.

use serde_json::json;

use super::{case, get, Case};

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

pub fn cases() -> Vec<Case> {
    vec![
        case("version reports 1.32", vec![get("/version").field("/major", json!("1")).field("/minor", json!("32"))]),
        case(
            "legacy discovery",
            vec![
                get("/api").field("/kind", json!("APIVersions")).field("/versions", json!(["v1"])),
                get("/apis").field("/kind", json!("APIGroupList")),
                get("/api/v1")
                    .field("/kind", json!("APIResourceList"))
                    .field("/groupVersion", json!("v1"))
                    .contains(r#""name":"configmaps""#)
                    .contains(r#""shortNames":["cm"]"#)
                    .contains(r#""name":"pods/status""#),
            ],
        ),
        case(
            "aggregated discovery",
            vec![get("/api")
                .header("Accept", AGGREGATED)
                .answer_header("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
                .field("/kind", json!("APIGroupDiscoveryList"))
                .field("/items/0/versions/0/version", json!("v1"))],
        ),
        case(
            "health",
            vec![
                get("/readyz").contains("ok"),
                get("/livez?verbose").contains("[+]etcd ok").contains("livez check passed"),
                get("/healthz/etcd").contains("ok"),
                get("/readyz/nonsense").code(404),
            ],
        ),
        case("openapi index", vec![get("/openapi/v3").contains(r#""api/v1""#)]),
        case("metrics", vec![get("/metrics").contains("apiserver_request_total")]),
        case("an unknown path", vec![get("/nonsense").code(404).contains("404 page not found")]),
    ]
}
