//! Pruning: dropping the fields a structural schema does not declare, as upstream's
//! `pkg/apiserver/schema/pruning/algorithm.go` does, with the paths of what was dropped (for warnings).
//!
//! apiVersion, kind and metadata survive at a resource root and at embedded resources (their content is
//! ObjectMeta's to check, not the schema's); below `x-kubernetes-preserve-unknown-fields` unknown fields
//! survive too, while declared properties below it are still pruned by their own schemas.

use serde_json::Value;

use super::Structural;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Prunes `obj`; `resource_root` treats the node as a resource (upstream's `isResourceRoot`). Returns the
/// dropped paths, sorted.
pub(super) fn prune(obj: &mut Value, s: &Structural, resource_root: bool) -> Vec<String> {
    let mut dropped = Vec::new();
    if resource_root && !s.embedded_resource {
        // Upstream clones the schema with x-kubernetes-embedded-resource set; a flag does the same here.
        prune_node(obj, Some(s), true, "", &mut dropped);
    } else {
        prune_node(obj, Some(s), s.embedded_resource, "", &mut dropped);
    }
    dropped.sort();
    dropped
}

fn key_path(parent: &str, k: &str) -> String {
    if parent.is_empty() {
        k.to_string()
    } else {
        format!("{parent}.{k}")
    }
}

/// `prune`: `embedded` is the node's x-kubernetes-embedded-resource (possibly forced at the root).
fn prune_node(x: &mut Value, s: Option<&Structural>, embedded: bool, path: &str, dropped: &mut Vec<String>) {
    if let Some(s) = s.filter(|s| s.preserve_unknown_fields) {
        skip_prune(x, s, embedded, path, dropped);
        return;
    }
    match x {
        Value::Object(map) => {
            let Some(s) = s else {
                dropped.extend(map.keys().map(|k| key_path(path, k)));
                map.clear();
                return;
            };
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                let sub = if let Some(prop) = s.properties.get(&k) {
                    Some(Some(prop))
                } else if s.additional_properties.is_some() {
                    Some(s.additional_schema())
                } else {
                    None
                };
                match sub {
                    Some(sub) => {
                        let v = map.get_mut(&k).expect("key listed above");
                        let child_embedded = sub.is_some_and(|c| c.embedded_resource);
                        prune_node(v, sub, child_embedded, &key_path(path, &k), dropped);
                    }
                    None => {
                        if !META_FIELDS.contains(&k.as_str()) || !path.is_empty() {
                            dropped.push(key_path(path, &k));
                        }
                        map.remove(&k);
                    }
                }
            }
        }
        Value::Array(items) => {
            let item_schema = s.and_then(Structural::items);
            let embedded = item_schema.is_some_and(|c| c.embedded_resource);
            for (i, v) in items.iter_mut().enumerate() {
                prune_node(v, item_schema, embedded, &format!("{path}[{i}]"), dropped);
            }
        }
        _ => {}
    }
}

/// `skipPrune`: below x-kubernetes-preserve-unknown-fields, unknown fields stay; declared ones are pruned
/// by their own schemas.
fn skip_prune(x: &mut Value, s: &Structural, embedded: bool, path: &str, dropped: &mut Vec<String>) {
    match x {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_node(v, Some(prop), prop.embedded_resource, &key_path(path, k), dropped);
                } else if s.additional_properties.is_some() {
                    let ap = s.additional_schema();
                    prune_node(v, ap, ap.is_some_and(|c| c.embedded_resource), &key_path(path, k), dropped);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items() {
                for (i, v) in items.iter_mut().enumerate() {
                    skip_prune(v, item, item.embedded_resource, &format!("{path}[{i}]"), dropped);
                }
            }
        }
        _ => {}
    }
}
