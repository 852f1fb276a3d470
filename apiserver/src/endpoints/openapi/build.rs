//! Builds every OpenAPI document of a catalog at once: one per served group version (its paths, and the
//! schemas those paths reach), each serialized once with its hash, and the `/openapi/v3` index linking
//! them by hash. Maps are ordered, so the same catalog gives the same bytes on every run.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha512};

use super::paths::group_version_paths;
use super::schemas::{self, collect_refs};
use crate::apis::Catalog;

/// The documents of one catalog, serialized.
#[derive(Debug)]
pub(crate) struct Documents {
    /// The body of `/openapi/v3`.
    pub index: Bytes,
    /// Each group version's document by its path under `/openapi/v3/` (`api/v1`, `apis/apps/v1`).
    pub docs: BTreeMap<String, Document>,
}

/// One group version's document.
#[derive(Debug)]
pub(crate) struct Document {
    pub bytes: Bytes,
    /// The hex SHA-512 of the bytes, upper case (kube-openapi's `computeETag`): the document's ETag and
    /// the `hash` the index links it with.
    pub hash: String,
}

/// The path of a group version's document under `/openapi/v3/` (`api/v1`, `apis/apps/v1`).
pub(crate) fn doc_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Builds the documents of `catalog`. An error names a fact of the extensions table that no longer fits
/// the k8s-openapi types.
pub(crate) fn build(catalog: &Catalog) -> Result<Documents, String> {
    let defs = schemas::generate(catalog)?;
    let mut group_versions: Vec<(String, String)> =
        catalog.all().map(|i| (i.resource.group.clone(), i.resource.version.clone())).collect();
    group_versions.sort();
    group_versions.dedup();

    let mut docs = BTreeMap::new();
    let mut index = Map::new();
    for (group, version) in group_versions {
        let paths = group_version_paths(catalog, &defs, &group, &version);
        let mut roots = Vec::new();
        for item in paths.values() {
            collect_refs(item, &mut roots);
        }
        let schemas: Map<String, Value> = defs
            .closure(roots)
            .into_iter()
            .filter_map(|name| Some((name.clone(), defs.schemas.get(&name)?.clone())))
            .collect();
        let doc = json!({
            "components": {
                "schemas": schemas,
                "securitySchemes": {
                    "BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"},
                },
            },
            "info": {"title": "Kubernetes", "version": "unversioned"},
            "openapi": "3.0.0",
            "paths": paths,
        });
        let bytes = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
        let hash = hex_sha512(&bytes);
        let path = doc_path(&group, &version);
        index.insert(path.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}));
        docs.insert(path, Document { bytes: Bytes::from(bytes), hash });
    }
    let index = serde_json::to_vec(&json!({ "paths": index })).map_err(|e| e.to_string())?;
    Ok(Documents { index: Bytes::from(index), docs })
}

fn hex_sha512(bytes: &[u8]) -> String {
    Sha512::digest(bytes).iter().map(|b| format!("{b:02X}")).collect()
}
