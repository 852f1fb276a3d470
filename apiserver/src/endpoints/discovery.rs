//! Discovery: what kubectl and client libraries read to learn which resources exist, in both forms
//! kube-apiserver serves (k8s.io/apiserver `pkg/endpoints/discovery`).
//!
//! Legacy: `/api` (`APIVersions`), `/apis` (`APIGroupList`), `/api/v1` and `/apis/G/V`
//! (`APIResourceList`, subresources as `pods/status` entries), `/apis/G` (`APIGroup`). Aggregated: `/api`
//! and `/apis` answer one `APIGroupDiscoveryList` when `Accept` asks for `as=APIGroupDiscoveryList;
//! g=apidiscovery.k8s.io;v=v2` (or `v2beta1`), with an `ETag` and 304 on `If-None-Match`. Verbs are sorted,
//! as the installer sorts them; every main resource carries its `storageVersionHash`.

use base64::Engine;
use http::{HeaderMap, Response, StatusCode};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256, Sha512};

use crate::apis::{Catalog, ResourceInfo};
use crate::endpoints::negotiate::parse_accept;
use crate::endpoints::response::full;
use crate::endpoints::Body;

/// The aggregated discovery version a request asked for, if any.
fn aggregated_version(headers: &HeaderMap) -> Option<&'static str> {
    let accept = headers.get("accept").and_then(|v| v.to_str().ok())?;
    for clause in parse_accept(accept) {
        let param = |k: &str| clause.params.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let json_like = (clause.kind == "application" && (clause.sub == "json" || clause.sub == "*"))
            || (clause.kind == "*" && clause.sub == "*");
        if !json_like {
            continue;
        }
        match (param("as"), param("g"), param("v")) {
            (Some("APIGroupDiscoveryList"), Some("apidiscovery.k8s.io"), Some("v2")) => return Some("v2"),
            (Some("APIGroupDiscoveryList"), Some("apidiscovery.k8s.io"), Some("v2beta1")) => return Some("v2beta1"),
            (None, None, None) => return None,
            _ => {}
        }
    }
    None
}

/// `/api`: the core group's versions, or the aggregated document of the core group.
pub(crate) fn api(catalog: &Catalog, headers: &HeaderMap, address: &str) -> Response<Body> {
    if let Some(version) = aggregated_version(headers) {
        let item =
            json!({"metadata": {"creationTimestamp": null}, "versions": [group_version_discovery(catalog, "", "v1")]});
        return aggregated(version, vec![item], headers);
    }
    json_response(&json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }))
}

/// `/apis`: every named group, or their aggregated documents.
pub(crate) fn apis(catalog: &Catalog, headers: &HeaderMap) -> Response<Body> {
    if let Some(version) = aggregated_version(headers) {
        let items = catalog
            .groups()
            .into_iter()
            .map(|(group, versions)| {
                let versions: Vec<Value> =
                    versions.iter().map(|v| group_version_discovery(catalog, &group, v)).collect();
                json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": versions})
            })
            .collect();
        return aggregated(version, items, headers);
    }
    let groups: Vec<Value> = catalog.groups().into_iter().map(|(g, vs)| api_group(&g, &vs)).collect();
    json_response(&json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
}

/// `/apis/GROUP`, or `None` if the group is not served.
pub(crate) fn group(catalog: &Catalog, group: &str) -> Option<Response<Body>> {
    let (name, versions) = catalog.groups().into_iter().find(|(g, _)| g == group)?;
    let mut doc = api_group(&name, &versions);
    let map = doc.as_object_mut().expect("api_group returns an object");
    map.insert("kind".into(), Value::from("APIGroup"));
    map.insert("apiVersion".into(), Value::from("v1"));
    Some(json_response(&doc))
}

fn api_group(group: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    json!({
        "name": group,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

/// `/api/v1` and `/apis/GROUP/VERSION`, or `None` if nothing is served there.
pub(crate) fn resource_list(catalog: &Catalog, group: &str, version: &str) -> Option<Response<Body>> {
    if !catalog.serves_group_version(group, version) {
        return None;
    }
    let mut resources = Vec::new();
    for info in catalog.in_group_version(group, version) {
        resources.push(api_resource(info));
        for sub in &info.subresources {
            let mut entry = Map::new();
            entry.insert("name".into(), Value::from(format!("{}/{}", info.resource.plural, sub.name)));
            entry.insert("singularName".into(), Value::from(""));
            entry.insert("namespaced".into(), Value::from(info.namespaced));
            if let Some((g, v)) = sub.kind_group_version {
                entry.insert("group".into(), Value::from(g));
                entry.insert("version".into(), Value::from(v));
            }
            entry.insert("kind".into(), Value::from(sub.kind));
            entry.insert("verbs".into(), sorted_verbs(sub.verbs.iter().map(|v| v.as_str())));
            resources.push(Value::Object(entry));
        }
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    let mut doc = Map::new();
    doc.insert("kind".into(), Value::from("APIResourceList"));
    if !group.is_empty() {
        // The core group's list has no apiVersion; the named groups' have.
        doc.insert("apiVersion".into(), Value::from("v1"));
    }
    doc.insert("groupVersion".into(), Value::from(group_version));
    doc.insert("resources".into(), Value::Array(resources));
    Some(json_response(&Value::Object(doc)))
}

fn api_resource(info: &ResourceInfo) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), Value::from(info.resource.plural.clone()));
    entry.insert("singularName".into(), Value::from(info.singular));
    entry.insert("namespaced".into(), Value::from(info.namespaced));
    entry.insert("kind".into(), Value::from(info.resource.kind.clone()));
    entry.insert("verbs".into(), sorted_verbs(info.verbs.iter().map(|v| v.as_str())));
    if !info.short_names.is_empty() {
        entry.insert("shortNames".into(), json!(info.short_names));
    }
    if !info.categories.is_empty() {
        entry.insert("categories".into(), json!(info.categories));
    }
    entry.insert(
        "storageVersionHash".into(),
        Value::from(storage_version_hash(&info.resource.group, &info.resource.version, &info.resource.kind)),
    );
    Value::Object(entry)
}

fn sorted_verbs<'a>(verbs: impl Iterator<Item = &'a str>) -> Value {
    let mut verbs: Vec<&str> = verbs.collect();
    verbs.sort_unstable();
    json!(verbs)
}

/// `discovery.StorageVersionHash`: the first 8 bytes of SHA-256 of `group/version/kind`, base64.
pub(crate) fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// One group version of an aggregated document (`ConvertGroupVersionIntoToDiscovery`).
fn group_version_discovery(catalog: &Catalog, group: &str, version: &str) -> Value {
    let resources: Vec<Value> = catalog
        .in_group_version(group, version)
        .map(|info| {
            let mut entry = Map::new();
            entry.insert("resource".into(), Value::from(info.resource.plural.clone()));
            entry.insert("responseKind".into(), json!({"group": "", "version": "", "kind": info.resource.kind}));
            entry.insert("scope".into(), Value::from(if info.namespaced { "Namespaced" } else { "Cluster" }));
            entry.insert("singularResource".into(), Value::from(info.singular));
            entry.insert("verbs".into(), sorted_verbs(info.verbs.iter().map(|v| v.as_str())));
            if !info.short_names.is_empty() {
                entry.insert("shortNames".into(), json!(info.short_names));
            }
            if !info.categories.is_empty() {
                entry.insert("categories".into(), json!(info.categories));
            }
            if !info.subresources.is_empty() {
                let subs: Vec<Value> = info
                    .subresources
                    .iter()
                    .map(|sub| {
                        let (g, v) = sub.kind_group_version.unwrap_or(("", ""));
                        json!({
                            "subresource": sub.name,
                            "responseKind": {"group": g, "version": v, "kind": sub.kind},
                            "verbs": sorted_verbs(sub.verbs.iter().map(|v| v.as_str())),
                        })
                    })
                    .collect();
                entry.insert("subresources".into(), Value::Array(subs));
            }
            Value::Object(entry)
        })
        .collect();
    json!({"version": version, "resources": resources, "freshness": "Current"})
}

/// An aggregated document with its ETag; 304 when the client has it already.
fn aggregated(version: &str, items: Vec<Value>, headers: &HeaderMap) -> Response<Body> {
    let doc = json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    });
    let mut bytes = crate::go_json::to_vec(&doc);
    let etag = format!("\"{}\"", hex_upper(&Sha512::digest(&bytes)));
    let builder =
        Response::builder().header("ETag", etag.clone()).header("Vary", "Accept").header("Cache-Control", "public");
    if headers.get("if-none-match").and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return builder.status(StatusCode::NOT_MODIFIED).body(full(bytes::Bytes::new())).expect("valid headers");
    }
    bytes.push(b'\n');
    builder
        .status(StatusCode::OK)
        .header("Content-Type", format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"))
        .body(full(bytes.into()))
        .expect("valid headers")
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn json_response(doc: &Value) -> Response<Body> {
    let mut bytes = crate::go_json::to_vec(doc);
    bytes.push(b'\n');
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .body(full(bytes.into()))
        .expect("valid headers")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_version_hashes_are_kube_apiservers() {
        // The hashes kube-apiserver 1.32 reports for these kinds (`kubectl get --raw /api/v1`).
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
        assert_eq!(storage_version_hash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
    }

    #[test]
    fn aggregated_discovery_is_chosen_by_accept() {
        let mut headers = HeaderMap::new();
        assert_eq!(aggregated_version(&headers), None);
        headers.insert(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json".parse().unwrap(),
        );
        assert_eq!(aggregated_version(&headers), Some("v2"));
        headers.insert("accept", "application/json".parse().unwrap());
        assert_eq!(aggregated_version(&headers), None);
    }
}
