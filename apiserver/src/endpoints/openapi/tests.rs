//! Tests of `/openapi/v3`: the documents of the built-in catalog (every group version indexed, every
//! served kind's schema tagged with its GVK, every `$ref` resolving, facts kubectl relies on), their
//! determinism, and the HTTP answers (caching headers, hash redirects, 304, 404, 406), one table each.

use std::collections::BTreeSet;
use std::sync::Arc;

use http::{HeaderMap, Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};

use super::build::{build, doc_path, Documents};
use super::*;
use crate::apis::Catalog;
use crate::endpoints::query::Query;
use crate::registry::{extensions, kinds, FixedClock, SystemFields};
use crate::server::ServerOptions;

fn documents() -> Documents {
    build(&Catalog::builtin()).expect("the built-in catalog's documents build")
}

fn document(docs: &Documents, path: &str) -> Value {
    serde_json::from_slice(&docs.docs[path].bytes).expect("documents are JSON")
}

#[test]
fn the_index_links_every_group_version_by_hash() {
    let docs = documents();
    let index: Value = serde_json::from_slice(&docs.index).unwrap();
    let catalog = Catalog::builtin();
    let served: BTreeSet<String> = catalog.all().map(|i| doc_path(&i.resource.group, &i.resource.version)).collect();
    let listed: BTreeSet<String> = index["paths"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(listed, served);
    for (path, doc) in &docs.docs {
        assert_eq!(index["paths"][path]["serverRelativeURL"], json!(format!("/openapi/v3/{path}?hash={}", doc.hash)),);
        assert_eq!(doc.hash.len(), 128, "a hex SHA-512");
    }
}

#[test]
fn every_served_kind_has_its_schema_tagged_with_its_gvk() {
    let docs = documents();
    for info in Catalog::builtin().all() {
        let r = &info.resource;
        // A built-in resource's kinds must be in the kinds table (else it would get a custom resource's
        // schema): add a kind there when the catalog gains one.
        assert!(kinds::find(&r.group, &r.version, &r.kind).is_some(), "{} is not in kinds.rs", r.kind);
        for sub in &info.subresources {
            let (group, version) = sub.kind_group_version.unwrap_or((&r.group, &r.version));
            assert!(kinds::find(group, version, sub.kind).is_some(), "{} is not in kinds.rs", sub.kind);
        }
        let doc = document(&docs, &doc_path(&r.group, &r.version));
        // The review kinds are only created: they have no list type.
        let listed = info.serves(crate::apis::Verb::List);
        let kinds = if listed { vec![r.kind.clone(), info.list_kind()] } else { vec![r.kind.clone()] };
        for kind in kinds {
            let gvk = json!({"group": r.group, "kind": kind, "version": r.version});
            let tagged: Vec<&String> = doc["components"]["schemas"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, s)| s["x-kubernetes-group-version-kind"].as_array().is_some_and(|a| a.contains(&gvk)))
                .map(|(name, _)| name)
                .collect();
            assert_eq!(tagged.len(), 1, "{kind}: {tagged:?}");
        }
    }
}

#[test]
fn every_ref_resolves_within_its_document() {
    let docs = documents();
    for path in docs.docs.keys() {
        let doc = document(&docs, path);
        let mut refs = Vec::new();
        schemas::collect_refs(&doc, &mut refs);
        assert!(!refs.is_empty());
        for name in refs {
            assert!(doc["components"]["schemas"].get(&name).is_some(), "{path}: {name} does not resolve");
        }
    }
}

/// Facts of the core/v1 document, each a JSON pointer and the value upstream's document has there.
#[test]
fn known_facts_hold() {
    let docs = documents();
    let doc = document(&docs, "api/v1");
    let schemas = "/components/schemas";
    let cases: &[(&str, Value)] = &[
        // ConfigMap.data is a map of strings; binaryData a map of base64 bytes.
        ("io.k8s.api.core.v1.ConfigMap/properties/data/type", json!("object")),
        ("io.k8s.api.core.v1.ConfigMap/properties/data/additionalProperties", json!({"type": "string"})),
        ("io.k8s.api.core.v1.ConfigMap/properties/binaryData/additionalProperties/format", json!("byte")),
        (
            "io.k8s.api.core.v1.ConfigMap/x-kubernetes-group-version-kind",
            json!([{"group": "", "kind": "ConfigMap", "version": "v1"}]),
        ),
        // Pod.spec.containers merges by name.
        ("io.k8s.api.core.v1.PodSpec/properties/containers/x-kubernetes-patch-merge-key", json!("name")),
        ("io.k8s.api.core.v1.PodSpec/properties/containers/x-kubernetes-patch-strategy", json!("merge")),
        ("io.k8s.api.core.v1.PodSpec/properties/containers/x-kubernetes-list-type", json!("map")),
        ("io.k8s.api.core.v1.PodSpec/properties/containers/x-kubernetes-list-map-keys", json!(["name"])),
        ("io.k8s.api.core.v1.PodSpec/properties/volumes/x-kubernetes-patch-strategy", json!("merge,retainKeys")),
        ("io.k8s.api.core.v1.PodSpec/properties/nodeSelector/x-kubernetes-map-type", json!("atomic")),
        ("io.k8s.api.core.v1.PodSpec/required", json!(["containers"])),
        (
            "io.k8s.api.core.v1.Container/properties/ports/x-kubernetes-list-map-keys",
            json!(["containerPort", "protocol"]),
        ),
        ("io.k8s.api.core.v1.LocalObjectReference/x-kubernetes-map-type", json!("atomic")),
        // Timestamps are date-time strings; counters carry their width.
        ("io.k8s.apimachinery.pkg.apis.meta.v1.Time/type", json!("string")),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.Time/format", json!("date-time")),
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta/properties/creationTimestamp/allOf",
            json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]),
        ),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta/properties/generation/format", json!("int64")),
        ("io.k8s.api.core.v1.ContainerPort/properties/containerPort/format", json!("int32")),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta/properties/finalizers/x-kubernetes-list-type", json!("set")),
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta/properties/ownerReferences/x-kubernetes-patch-merge-key",
            json!("uid"),
        ),
        // The types with their own JSON shape.
        ("io.k8s.apimachinery.pkg.util.intstr.IntOrString/x-kubernetes-int-or-string", json!(true)),
        ("io.k8s.apimachinery.pkg.util.intstr.IntOrString/format", json!("int-or-string")),
        ("io.k8s.apimachinery.pkg.api.resource.Quantity/oneOf", json!([{"type": "string"}, {"type": "number"}])),
        ("io.k8s.apimachinery.pkg.runtime.RawExtension/x-kubernetes-preserve-unknown-fields", json!(true)),
        // Kinds do not require metadata (k8s-openapi's types would), lists require items.
        ("io.k8s.api.core.v1.ConfigMapList/required", json!(["items"])),
        (
            "io.k8s.api.core.v1.ConfigMapList/properties/items/items",
            json!({"$ref": "#/components/schemas/io.k8s.api.core.v1.ConfigMap"}),
        ),
    ];
    for (pointer, want) in cases {
        let got = doc.pointer(&format!("{schemas}/{pointer}"));
        assert_eq!(got, Some(want), "{pointer}");
    }
    for absent in ["io.k8s.api.core.v1.ConfigMap/required", "io.k8s.api.core.v1.LocalObjectReference/required"] {
        assert_eq!(doc.pointer(&format!("{schemas}/{absent}")), None, "{absent}");
    }
}

/// The operations kubectl reads: each served verb's, with kube's ids, actions, parameters and bodies.
#[test]
fn operations_are_kubes() {
    let docs = documents();
    let doc = document(&docs, "api/v1");
    let op = |path: &str, method: &str| doc["paths"][path][method].clone();
    let cm = "/api/v1/namespaces/{namespace}/configmaps";
    let cases: &[(&str, &str, &str, &str)] = &[
        (cm, "get", "listCoreV1NamespacedConfigMap", "list"),
        (cm, "post", "createCoreV1NamespacedConfigMap", "post"),
        (cm, "delete", "deleteCoreV1CollectionNamespacedConfigMap", "deletecollection"),
        ("/api/v1/namespaces/{namespace}/configmaps/{name}", "get", "readCoreV1NamespacedConfigMap", "get"),
        ("/api/v1/namespaces/{namespace}/configmaps/{name}", "put", "replaceCoreV1NamespacedConfigMap", "put"),
        ("/api/v1/namespaces/{namespace}/configmaps/{name}", "patch", "patchCoreV1NamespacedConfigMap", "patch"),
        ("/api/v1/namespaces/{namespace}/configmaps/{name}", "delete", "deleteCoreV1NamespacedConfigMap", "delete"),
        ("/api/v1/configmaps", "get", "listCoreV1ConfigMapForAllNamespaces", "list"),
        ("/api/v1/watch/configmaps", "get", "watchCoreV1ConfigMapListForAllNamespaces", "watchlist"),
        ("/api/v1/watch/namespaces/{namespace}/configmaps", "get", "watchCoreV1NamespacedConfigMapList", "watchlist"),
        ("/api/v1/watch/namespaces/{namespace}/configmaps/{name}", "get", "watchCoreV1NamespacedConfigMap", "watch"),
        ("/api/v1/namespaces/{namespace}/pods/{name}/status", "get", "readCoreV1NamespacedPodStatus", "get"),
        ("/api/v1/namespaces/{namespace}/pods/{name}/status", "patch", "patchCoreV1NamespacedPodStatus", "patch"),
        ("/api/v1/namespaces/{name}/finalize", "put", "replaceCoreV1NamespaceFinalize", "put"),
        ("/api/v1/namespaces", "get", "listCoreV1Namespace", "list"),
        ("/api/v1/watch/namespaces/{name}", "get", "watchCoreV1Namespace", "watch"),
    ];
    for (path, method, id, action) in cases {
        let op = op(path, method);
        assert_eq!(op["operationId"], json!(id), "{method} {path}");
        assert_eq!(op["x-kubernetes-action"], json!(action), "{method} {path}");
        assert_eq!(op["tags"], json!(["core_v1"]), "{method} {path}");
        assert!(op["x-kubernetes-group-version-kind"].is_object(), "{method} {path}");
    }
    // Namespaces serve no deletecollection, so their collection has no DELETE.
    assert_eq!(op("/api/v1/namespaces", "delete"), Value::Null);

    let names = |op: &Value| -> Vec<String> {
        op["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect()
    };
    let patch = op("/api/v1/namespaces/{namespace}/configmaps/{name}", "patch");
    assert_eq!(names(&patch), ["dryRun", "fieldManager", "fieldValidation", "force"]);
    let types: Vec<&String> = patch["requestBody"]["content"].as_object().unwrap().keys().collect();
    assert_eq!(
        types,
        [
            "application/apply-patch+yaml",
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json"
        ]
    );
    let create = op(cm, "post");
    assert_eq!(names(&create), ["dryRun", "fieldManager", "fieldValidation"]);
    assert_eq!(
        create["requestBody"]["content"]["*/*"]["schema"],
        json!({"$ref": "#/components/schemas/io.k8s.api.core.v1.ConfigMap"})
    );
    assert_eq!(
        op(cm, "get")["responses"]["200"]["content"]["application/json;stream=watch"]["schema"],
        json!({"$ref": "#/components/schemas/io.k8s.api.core.v1.ConfigMapList"})
    );
    assert_eq!(
        names(&doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]),
        ["name", "namespace", "pretty"]
    );
    // A namespace's delete answers with the namespace (ReturnDeletedObject), a configmap's with a Status.
    let answer = |path: &str| op(path, "delete")["responses"]["200"]["content"]["application/json"]["schema"].clone();
    assert_eq!(
        answer("/api/v1/namespaces/{name}"),
        json!({"$ref": "#/components/schemas/io.k8s.api.core.v1.Namespace"})
    );
    assert_eq!(
        answer("/api/v1/namespaces/{namespace}/configmaps/{name}"),
        json!({"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status"})
    );
}

/// A catalog serving every kind of the kinds table (with configmaps' behaviour; only the documents are
/// looked at), and a custom resource.
fn every_kind_catalog() -> Catalog {
    use crate::registry::Resource;
    let mut catalog = Catalog::builtin();
    let template = catalog.get("", "v1", "configmaps").expect("configmaps are built in").clone();
    let mut add = |group: &str, version: &str, kind: &str, custom: bool| {
        let plural = format!("{}s", kind.to_lowercase());
        let resource = Resource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.clone(),
            etcd_prefix: plural,
        };
        catalog.add(crate::apis::ResourceInfo { resource, custom, ..template.clone() });
    };
    for k in kinds::all() {
        add(k.group, k.version, k.kind, false);
    }
    add("stable.example.com", "v1", "CronTab", true);
    catalog
}

/// Every kind of the table generates, every line of the extensions table lands on a definition those
/// kinds reach (a line that no longer does is stale), and every `$ref` resolves.
#[test]
fn every_kind_and_every_extension_line_fit_the_types() {
    let catalog = every_kind_catalog();
    let defs = schemas::generate(&catalog).expect("every kind's definitions generate");
    for line in extensions::table() {
        let schema = defs.schemas.get(line.definition).unwrap_or_else(|| panic!("stale line: {}", line.definition));
        for (name, value) in &line.facts {
            let at = match line.property {
                None => schema.clone(),
                Some(property) => schema["properties"][property].clone(),
            };
            match *name {
                "required" => {
                    let property = line.property.unwrap();
                    let listed = schema["required"].as_array().is_some_and(|r| r.contains(&json!(property)));
                    assert_eq!(listed, value == "true", "{}.{property} required", line.definition);
                }
                _ => assert_eq!(&at[format!("x-kubernetes-{name}")], value, "{}.{:?}", line.definition, line.property),
            }
        }
    }
    let docs = build(&catalog).expect("every kind's documents build");
    for path in docs.docs.keys() {
        let doc = document(&docs, path);
        let mut refs = Vec::new();
        schemas::collect_refs(&doc, &mut refs);
        for name in refs {
            assert!(doc["components"]["schemas"].get(&name).is_some(), "{path}: {name} does not resolve");
        }
    }
}

/// A custom resource (a kind the table does not know) keeps every field, is named as kube names CRD
/// schemas, and takes no strategic merge patch.
#[test]
fn custom_resources_keep_every_field() {
    let docs = build(&every_kind_catalog()).unwrap();
    let doc = document(&docs, "apis/stable.example.com/v1");
    let schema = &doc["components"]["schemas"]["com.example.stable.v1.CronTab"];
    assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], json!(true));
    assert_eq!(
        schema["x-kubernetes-group-version-kind"],
        json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
    );
    let list = &doc["components"]["schemas"]["com.example.stable.v1.CronTabList"];
    assert_eq!(
        list["properties"]["items"]["items"],
        json!({"$ref": "#/components/schemas/com.example.stable.v1.CronTab"})
    );
    let patch = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]["patch"];
    assert_eq!(patch["operationId"], json!("patchStableExampleComV1NamespacedCronTab"));
    assert_eq!(patch["tags"], json!(["stableExampleCom_v1"]));
    let types: Vec<&String> = patch["requestBody"]["content"].as_object().unwrap().keys().collect();
    assert_eq!(types, ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"]);
    let get = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]["get"];
    let answers: Vec<&String> = get["responses"]["200"]["content"].as_object().unwrap().keys().collect();
    assert_eq!(answers, ["application/json", "application/yaml"]);
}

#[test]
fn documents_are_deterministic() {
    let (a, b) = (documents(), documents());
    assert_eq!(a.index, b.index);
    for (path, doc) in &a.docs {
        assert_eq!(doc.bytes, b.docs[path].bytes, "{path}");
    }
}

#[test]
fn http_dates_are_gos() {
    assert_eq!(http_date(0, "GMT"), "Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(http_date(1_700_000_000, "UTC"), "Tue, 14 Nov 2023 22:13:20 UTC");
    // AddDate(1, 0, 0) from 29 February lands on 1 March.
    assert_eq!(rfc3339(one_year_later(951_782_400)), "2001-03-01T00:00:00Z");
    assert_eq!(rfc3339(one_year_later(1_700_000_000)), "2024-11-14T22:13:20Z");
}

/// A server over the built-in catalog whose etcd is never dialled (OpenAPI requests do not reach it).
fn server() -> Arc<ApiServer> {
    let client = crate::storage::etcd3::EtcdClient::new(&["http://127.0.0.1:1".to_string()], 0).expect("a valid URL");
    let options = ServerOptions { watch_cache: false, ..ServerOptions::default() };
    let clock = Arc::new(FixedClock(1_700_000_000));
    let system = SystemFields::new(Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(0)), clock.clone());
    crate::server::build(Catalog::builtin(), client, options, system, clock)
}

use rand::SeedableRng;

/// One request and what the answer must have.
struct Case {
    name: &'static str,
    path: &'static str,
    /// `{hash}` is replaced by the document's current hash.
    query: &'static str,
    headers: &'static [(&'static str, &'static str)],
    status: StatusCode,
    /// Headers the answer must carry (`{etag}` and `{hash}` replaced), and `None` for ones it must not.
    want: &'static [(&'static str, Option<&'static str>)],
    body: bool,
}

#[tokio::test]
async fn http_answers_are_kubes() {
    let server = server();
    let hash = server.openapi.get(&server).unwrap().docs.docs["api/v1"].hash.clone();
    let etag = format!("\"{hash}\"");
    let cases = [
        Case {
            name: "the index",
            path: "/openapi/v3",
            query: "",
            headers: &[],
            status: StatusCode::OK,
            want: &[
                ("content-type", Some("text/plain; charset=utf-8")),
                ("cache-control", Some("no-cache, private")),
                ("last-modified", Some("Tue, 14 Nov 2023 22:13:20 GMT")),
                ("etag", None),
            ],
            body: true,
        },
        Case {
            name: "a document without a hash",
            path: "/openapi/v3/api/v1",
            query: "",
            headers: &[("accept", "application/json")],
            status: StatusCode::OK,
            want: &[
                ("content-type", Some("application/json")),
                ("etag", Some("{etag}")),
                ("cache-control", Some("no-cache, private")),
                ("vary", Some("Accept")),
                ("expires", None),
            ],
            body: true,
        },
        Case {
            name: "a document with its hash is immutable",
            path: "/openapi/v3/api/v1",
            query: "hash={hash}",
            headers: &[],
            status: StatusCode::OK,
            want: &[
                ("cache-control", Some("public, immutable")),
                ("expires", Some("Thu, 14 Nov 2024 22:13:20 UTC")),
                ("etag", Some("{etag}")),
            ],
            body: true,
        },
        Case {
            name: "a stale hash is redirected to the current one",
            path: "/openapi/v3/api/v1",
            query: "hash=0123",
            headers: &[],
            status: StatusCode::MOVED_PERMANENTLY,
            want: &[("location", Some("/openapi/v3/api/v1?hash={hash}")), ("cache-control", Some("no-cache, private"))],
            body: false,
        },
        Case {
            name: "If-None-Match with the ETag",
            path: "/openapi/v3/api/v1",
            query: "hash={hash}",
            headers: &[("if-none-match", "{etag}")],
            status: StatusCode::NOT_MODIFIED,
            want: &[("etag", Some("{etag}")), ("content-length", None)],
            body: false,
        },
        Case {
            name: "protobuf only is not acceptable",
            path: "/openapi/v3/api/v1",
            query: "",
            headers: &[("accept", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf")],
            status: StatusCode::NOT_ACCEPTABLE,
            want: &[("vary", Some("Accept"))],
            body: false,
        },
        Case {
            name: "an unserved group version",
            path: "/openapi/v3/apis/apps/v2",
            query: "",
            headers: &[],
            status: StatusCode::NOT_FOUND,
            want: &[("etag", None)],
            body: false,
        },
        Case {
            name: "openapi v2 is not served",
            path: "/openapi/v2",
            query: "",
            headers: &[],
            status: StatusCode::NOT_FOUND,
            want: &[],
            body: true,
        },
    ];
    let fill = |s: &str| s.replace("{etag}", &etag).replace("{hash}", &hash);
    for case in cases {
        let uri =
            if case.query.is_empty() { case.path.to_string() } else { format!("{}?{}", case.path, fill(case.query)) };
        let mut request = http::Request::builder().method(Method::GET).uri(uri);
        for (name, value) in case.headers {
            request = request.header(*name, fill(value));
        }
        let answer = server.clone().handle(request.body(http_body_util::Empty::<bytes::Bytes>::new()).unwrap()).await;
        assert_eq!(answer.status(), case.status, "{}", case.name);
        for (name, want) in case.want {
            let got = answer.headers().get(*name).map(|v| v.to_str().unwrap().to_string());
            assert_eq!(got, want.map(fill), "{}: {name}", case.name);
        }
        let body = answer.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(!body.is_empty(), case.body, "{}: body", case.name);
    }
}

#[test]
fn headers_helpers() {
    let mut headers = HeaderMap::new();
    assert!(accepts_json(&headers));
    headers.insert("accept", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf, */*;q=0.5".parse().unwrap());
    assert!(accepts_json(&headers));
    let q = Query::parse(Some("hash=abc"));
    assert_eq!(q.first("hash"), Some("abc"));
}
