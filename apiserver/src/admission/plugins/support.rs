//! What the built-in plugins share: the 403 every one of them refuses with (`admission.NewForbidden`), the
//! request tests they open with, and reads of other objects, from the watch cache as upstream's plugins read
//! their informers, or from storage where upstream falls back to a live lookup.

use serde_json::{Map, Value};

use crate::admission::webhook;
use crate::admission::Request;
use crate::registry::admission::Operation;
use crate::registry::error::RegistryError;
use crate::registry::rest::Registry;

/// `admission.NewForbidden`: `<resource> "<name>" is forbidden: <why>`, named by the object's name, else its
/// `generateName` (a create is admitted before a name is generated), else `Unknown` (a delete, which has no
/// new object) (`KK/staging/src/k8s.io/apiserver/pkg/admission/errors.go`).
pub(crate) fn forbidden(req: &Request<'_>, obj: &Value, why: impl Into<String>) -> RegistryError {
    let meta = |k: &str| obj.pointer(&format!("/metadata/{k}")).and_then(Value::as_str).unwrap_or("");
    let name = match (meta("name"), meta("generateName")) {
        ("", "") => "Unknown",
        ("", generate) => generate,
        (name, _) => name,
    };
    RegistryError::Forbidden {
        resource: req.attrs.resource.group_resource(),
        name: name.to_string(),
        reason: why.into(),
    }
}

/// Whether the request writes `group`/`plural` itself (not a subresource).
pub(crate) fn is_main(req: &Request<'_>, group: &str, plural: &str) -> bool {
    let r = req.attrs.resource;
    r.group == group && r.plural == plural && req.attrs.subresource.is_empty()
}

/// Whether the request creates or updates a pod (not a subresource of one).
pub(crate) fn is_pod_write(req: &Request<'_>) -> bool {
    is_main(req, "", "pods") && matches!(req.attrs.operation, Operation::Create | Operation::Update)
}

/// A string field of `obj` at a JSON pointer, "" when absent.
pub(crate) fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The object's labels or annotations (`field` is `labels` or `annotations`), empty when it has none.
pub(crate) fn meta_map<'a>(obj: &'a Value, field: &str) -> &'a Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_object)
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

/// The items of an array field, none when absent.
pub(crate) fn items<'a>(obj: &'a Value, pointer: &str) -> &'a [Value] {
    obj.pointer(pointer).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// One object from the watch cache; `None` when it does not exist or its resource is not served.
pub(crate) async fn read_cached(
    registry: &Registry,
    gvr: (&str, &str, &str),
    ns: &str,
    name: &str,
) -> Result<Option<Value>, RegistryError> {
    webhook::read(registry, gvr, ns, name).await
}

/// One object from storage itself, as a plugin's live lookup after its informer missed it.
pub(crate) async fn read_live(
    registry: &Registry,
    gvr: (&str, &str, &str),
    ns: &str,
    name: &str,
) -> Result<Option<Value>, RegistryError> {
    webhook::read_at(registry, gvr, ns, name, "").await
}

/// Every object of a resource in `ns` ("" for all), from the watch cache.
pub(crate) async fn list_cached(
    registry: &Registry,
    gvr: (&str, &str, &str),
    ns: &str,
) -> Result<Vec<Value>, RegistryError> {
    webhook::list(registry, gvr, ns).await
}

/// Every object of a resource in `ns` ("" for all), from storage itself (a quorum read).
pub(crate) async fn list_live(
    registry: &Registry,
    (group, version, plural): (&str, &str, &str),
    ns: &str,
) -> Result<Vec<Value>, RegistryError> {
    let Some(rest) = registry.get(&(group.to_string(), version.to_string(), plural.to_string())) else {
        return Ok(Vec::new());
    };
    let list = rest.list(ns, &crate::registry::store::ListRequest::default()).await?;
    Ok(list.items.iter().map(|o| o.value().clone()).collect())
}

/// The served version of a group's resource (the registry holds one per group and plural).
pub(crate) fn served_version(registry: &Registry, group: &str, plural: &str) -> Option<String> {
    registry.keys().find(|(g, _, p)| g == group && p == plural).map(|(_, v, _)| v.clone())
}

/// The random part of a generated name: `n` characters of `names.SimpleNameGenerator`'s alphabet
/// (`utilrand.String`), drawn from a hash of `seed` rather than a global generator, so that a simulation
/// replays the same names.
pub(crate) fn name_suffix(seed: &str, n: usize) -> String {
    use sha2::{Digest, Sha256};
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let digest = Sha256::digest(seed.as_bytes());
    digest.iter().take(n).map(|b| ALPHANUMS[*b as usize % ALPHANUMS.len()] as char).collect()
}

/// Go's `utilerrors.NewAggregate(errs).Error()`: one message as is, several (duplicates dropped) in
/// brackets, joined by `, `.
pub(crate) fn aggregate(messages: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in messages {
        if !seen.contains(&m.as_str()) {
            seen.push(m);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen[0].to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}
