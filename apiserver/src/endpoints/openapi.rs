//! `/openapi/v3`: the index of group versions and one OpenAPI 3 document per group version, which kubectl
//! reads before `create -f`, `apply`, `replace` and `edit` (to validate on the client, and to learn that the
//! server validates fields itself: an operation with a `fieldValidation` parameter).
//!
//! Each document lists the resource's paths with their operations, each tagged with
//! `x-kubernetes-group-version-kind` and `x-kubernetes-action` as kube-apiserver tags them. The index
//! links every document with a `hash` that changes when the document does.

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha512};

use crate::apis::{Catalog, ResourceInfo};
use crate::endpoints::response::full;
use crate::endpoints::Body;

/// The path of a group version's document, relative to `/openapi/v3/` (`api/v1`, `apis/apps/v1`).
fn doc_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Every served group version.
fn group_versions(catalog: &Catalog) -> Vec<(String, String)> {
    let mut gvs: Vec<(String, String)> =
        catalog.all().map(|i| (i.resource.group.clone(), i.resource.version.clone())).collect();
    gvs.dedup();
    gvs.sort();
    gvs.dedup();
    gvs
}

/// `/openapi/v3`.
pub fn index(catalog: &Catalog) -> Response<Body> {
    let mut paths = Map::new();
    for (group, version) in group_versions(catalog) {
        let path = doc_path(&group, &version);
        let hash = hash(&document(catalog, &group, &version));
        paths.insert(path.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}));
    }
    json_response(&json!({"paths": paths}))
}

/// `/openapi/v3/<path>`, or `None` for a path that names no group version.
pub fn group_version(catalog: &Catalog, path: &str) -> Option<Response<Body>> {
    let (group, version) =
        group_versions(catalog).into_iter().find(|(g, v)| doc_path(g, v) == path.trim_matches('/'))?;
    Some(json_response(&document(catalog, &group, &version)))
}

fn hash(doc: &Value) -> String {
    let digest = Sha512::digest(serde_json::to_vec(doc).expect("documents serialize"));
    digest.iter().map(|b| format!("{b:02X}")).collect()
}

/// The OpenAPI document of one group version.
pub fn document(catalog: &Catalog, group: &str, version: &str) -> Value {
    let mut paths = Map::new();
    for info in catalog.in_group_version(group, version) {
        resource_paths(info, &mut paths);
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.4-kubesim"},
        "paths": paths,
        "components": {"schemas": {}},
    })
}

fn resource_paths(info: &ResourceInfo, paths: &mut Map<String, Value>) {
    let r = &info.resource;
    let prefix =
        if r.group.is_empty() { format!("/api/{}", r.version) } else { format!("/apis/{}/{}", r.group, r.version) };
    let base = if info.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", r.plural)
    } else {
        format!("{prefix}/{}", r.plural)
    };
    let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
    let op = |action: &str, id: &str| {
        json!({
            "operationId": id,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "parameters": [
                {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            ],
            "responses": {"200": {"description": "OK"}},
        })
    };
    let kind = &r.kind;
    paths.insert(
        base.clone(),
        json!({
            "get": op("list", &format!("list{kind}")),
            "post": op("post", &format!("create{kind}")),
        }),
    );
    paths.insert(
        format!("{base}/{{name}}"),
        json!({
            "get": op("get", &format!("read{kind}")),
            "put": op("put", &format!("replace{kind}")),
            "patch": op("patch", &format!("patch{kind}")),
            "delete": op("delete", &format!("delete{kind}")),
        }),
    );
    for sub in &info.subresources {
        paths.insert(
            format!("{base}/{{name}}/{}", sub.name),
            json!({
                "get": op("get", &format!("read{kind}{}", sub.name)),
                "put": op("put", &format!("replace{kind}{}", sub.name)),
                "patch": op("patch", &format!("patch{kind}{}", sub.name)),
            }),
        );
    }
}

fn json_response(doc: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(doc).expect("documents serialize");
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .body(full(Bytes::from(bytes)))
        .expect("valid headers")
}
