//! Strategic merge patch (`application/strategic-merge-patch+json`), what kubectl's `patch` (by default),
//! `edit` and client-side `apply` send: a JSON merge patch whose lists may merge element by element
//! instead of being replaced, as each field's patch strategy says.
//!
//! The semantics are k8s.io/apimachinery's `strategicpatch` package's (`mergeMap`, `mergeSlice`,
//! `normalizeElementOrder`), re-stated here:
//! - a map patch merges key by key; `null` deletes a key; a key the original lacks is taken as patched;
//! - a list whose field has `patchStrategy: merge` merges: maps by their `patchMergeKey` (a patch element
//!   merges into the original element with the same key, or is added), scalars as a set; any other list
//!   is replaced;
//! - directives: `$patch: replace` (a map or list replaces the original one), `$patch: delete` (a map is
//!   emptied; in a merging list, the element with that key is removed), `$retainKeys` (keys of the original map
//!   not listed are dropped first), `$deleteFromPrimitiveList/<field>` (values taken out of a merging
//!   scalar list), `$setElementOrder/<field>` (the order the merged list takes).
//!
//! Merged lists keep the patch's order (or `$setElementOrder`'s) for the elements the patch names, and put
//! every element only the original has back among them by its original position (`mergeSortedSlice`).
//! The patch facts come from [`PatchMeta`]: for built-in kinds, upstream's OpenAPI extensions
//! (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`), kept as data in
//! `registry/extensions.txt`. Custom resources have no patch facts and are answered 415 before
//! this runs, as upstream answers them.

mod go_fmt;
mod meta;
mod order;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

pub(crate) use meta::{BuiltinMeta, FieldMeta, PatchMeta};

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

/// Why a strategic merge patch does not apply, as upstream's handler answers each
/// (`interpretStrategicMergePatchError` in `AS/endpoints/handlers/patch.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SmpError {
    /// A malformed directive: 400 with the `mergepatch` package's text.
    BadRequest(String),
    /// Content the strategy cannot merge (lists of lists, `$retainKeys` contradicting the patch): 422.
    Unprocessable(String),
    /// Any other failure (an unknown directive, a list element without its merge key): upstream passes the
    /// package's error on, which the server answers 500.
    Failed(String),
}

/// `patch` applied to `original`, an object of the type `definition` (`None`: no patch facts, so every
/// list is replaced).
pub(crate) fn apply(
    original: &Value,
    patch: &Value,
    definition: Option<&str>,
    meta: &dyn PatchMeta,
) -> Result<Value, SmpError> {
    let (Value::Object(original), Value::Object(patch)) = (original, patch) else {
        return Err(SmpError::BadRequest("invalid JSON document".into()));
    };
    Ok(Value::Object(merge_map(original.clone(), patch, definition, meta)?))
}

/// Merges a map patch into `original`.
fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    definition: Option<&str>,
    meta: &dyn PatchMeta,
) -> Result<Map<String, Value>, SmpError> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => Ok(strip_directives(patch)),
            // Upstream leaves an empty map, which a typed object's `omitempty` then drops.
            Some("delete") => Ok(Map::new()),
            _ => Err(SmpError::Failed(format!(
                "unknown patch type: {} in map: {}",
                go_fmt::value(directive),
                go_fmt::value(&Value::Object(patch.clone()))
            ))),
        };
    }
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let Some(retain) = retain.as_array().filter(|keys| keys.iter().all(Value::is_string)) else {
            return Err(SmpError::BadRequest("invalid patch format of retainKeys".into()));
        };
        let retain: Vec<&str> = retain.iter().filter_map(Value::as_str).collect();
        let stray = patch.keys().any(|k| !k.starts_with('$') && !retain.contains(&k.as_str()));
        if stray {
            return Err(SmpError::Unprocessable("patch content doesn't match retainKeys list".into()));
        }
        original.retain(|k, _| retain.contains(&k.as_str()));
    }
    for (key, value) in patch {
        if key == RETAIN_KEYS || key.starts_with(SET_ELEMENT_ORDER) {
            continue;
        }
        if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let Value::Array(doomed) = value else {
                return Err(SmpError::BadRequest("invalid patch format of primitive list".into()));
            };
            if let Some(Value::Array(list)) = original.get_mut(field) {
                list.retain(|item| !doomed.contains(item));
            }
            continue;
        }
        if value.is_null() {
            original.remove(key);
            continue;
        }
        let field = meta.field(definition, key);
        let order = patch.get(&format!("{SET_ELEMENT_ORDER}{key}"));
        let merged = match (original.remove(key), value) {
            (Some(Value::Object(current)), Value::Object(patch)) => {
                Some(Value::Object(merge_map(current, patch, field.definition.as_deref(), meta)?))
            }
            (Some(Value::Array(current)), Value::Array(patch)) if field.merge => {
                Some(Value::Array(merge_list(current, patch, order, &field, meta)?))
            }
            // A list that does not merge, a scalar, or a key the original lacks: the patch's value, with
            // its directives acted on as if it met an empty original.
            (_, value) => fresh(value, &field, meta)?,
        };
        if let Some(merged) = merged {
            original.insert(key.clone(), merged);
        }
    }
    Ok(original)
}

/// A patch value that meets nothing to merge with: itself, minus its directives (a `$patch: delete` map
/// is empty; elements a merging list deletes are dropped).
fn fresh(value: &Value, field: &FieldMeta, meta: &dyn PatchMeta) -> Result<Option<Value>, SmpError> {
    match value {
        Value::Object(map) => Ok(Some(Value::Object(merge_map(Map::new(), map, field.definition.as_deref(), meta)?))),
        Value::Array(items) if field.merge => Ok(Some(Value::Array(merge_list(Vec::new(), items, None, field, meta)?))),
        Value::Array(items) => {
            if items.iter().any(Value::is_array) {
                return Err(SmpError::Unprocessable("lists of lists are not supported".into()));
            }
            let replace = Map::from_iter([(DIRECTIVE.to_string(), Value::from("replace"))]);
            let kept = items.iter().filter(|item| item.as_object() != Some(&replace)).map(strip_value).collect();
            Ok(Some(Value::Array(kept)))
        }
        other => Ok(Some(other.clone())),
    }
}

/// Merges a list patch into `original` for a field whose strategy is `merge`.
fn merge_list(
    original: Vec<Value>,
    patch: &[Value],
    order: Option<&Value>,
    field: &FieldMeta,
    meta: &dyn PatchMeta,
) -> Result<Vec<Value>, SmpError> {
    if patch.iter().chain(&original).any(Value::is_array) {
        return Err(SmpError::Unprocessable("lists of lists are not supported".into()));
    }
    let order = match order {
        None => None,
        Some(Value::Array(order)) => Some(order.as_slice()),
        Some(_) => return Err(SmpError::BadRequest("invalid patch format of setElementOrder list".into())),
    };
    // `{"$patch": "replace"}` among the elements: the other elements replace the list.
    let is_replace = |item: &Value| item.get(DIRECTIVE).and_then(Value::as_str) == Some("replace");
    if patch.iter().any(is_replace) {
        let kept: Vec<Value> = patch.iter().filter(|item| !is_replace(item)).map(strip_value).collect();
        return Ok(kept);
    }
    let Some(merge_key) = field.merge_key.as_deref() else {
        return Ok(merge_scalars(original, patch, order));
    };
    let key_of = |item: &Value| -> Result<Value, SmpError> {
        item.get(merge_key).cloned().ok_or_else(|| {
            SmpError::Failed(format!("map: {} does not contain declared merge key: {merge_key}", go_fmt::value(item)))
        })
    };
    let original_keys: Vec<Value> = original.iter().map(key_of).collect::<Result<_, _>>()?;
    let mut merged: Vec<Option<Value>> = original.into_iter().map(Some).collect();
    let mut patched_keys = Vec::new();
    let mut added = Vec::new();
    let element_meta = FieldMeta { definition: field.definition.clone(), ..FieldMeta::default() };
    for item in patch {
        if !item.is_object() {
            return Err(SmpError::Failed(format!(
                "{}: not a map in a list merged by {merge_key}",
                go_fmt::value(item)
            )));
        }
        let key = key_of(item)?;
        let at = original_keys.iter().position(|k| *k == key);
        if item.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") {
            if let Some(at) = at {
                merged[at] = None;
            }
            continue;
        }
        let Value::Object(item_patch) = item else { unreachable!("checked above") };
        match at.and_then(|at| merged[at].take().map(|current| (at, current))) {
            Some((at, Value::Object(current))) => {
                let element = merge_map(current, item_patch, element_meta.definition.as_deref(), meta)?;
                merged[at] = Some(Value::Object(element));
            }
            _ => {
                if let Some(new) = fresh(item, &element_meta, meta)? {
                    added.push(new);
                }
            }
        }
        patched_keys.push(key);
    }
    let mut items: Vec<(Value, Value, Option<usize>)> = Vec::new(); // (key, element, original index)
    for (at, element) in merged.into_iter().enumerate() {
        if let Some(element) = element {
            items.push((original_keys[at].clone(), element, Some(at)));
        }
    }
    for element in added {
        let key = key_of(&element)?;
        items.push((key, element, None));
    }
    let wanted = match order {
        Some(order) => order.iter().map(key_of).collect::<Result<Vec<_>, _>>()?,
        None => patched_keys,
    };
    Ok(order::arrange(items, &wanted))
}

/// A merging list of scalars: the union, each value once.
fn merge_scalars(original: Vec<Value>, patch: &[Value], order: Option<&[Value]>) -> Vec<Value> {
    let mut items: Vec<(Value, Value, Option<usize>)> = Vec::new();
    for (at, value) in original.into_iter().enumerate() {
        if !items.iter().any(|(k, _, _)| *k == value) {
            items.push((value.clone(), value, Some(at)));
        }
    }
    for value in patch {
        if !items.iter().any(|(k, _, _)| k == value) {
            items.push((value.clone(), value.clone(), None));
        }
    }
    let wanted: Vec<Value> = order.map_or_else(|| patch.to_vec(), <[Value]>::to_vec);
    order::arrange(items, &wanted)
}

/// A map without its directives, at any depth.
fn strip_directives(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| {
            !(k.as_str() == DIRECTIVE
                || k.as_str() == RETAIN_KEYS
                || k.starts_with(SET_ELEMENT_ORDER)
                || k.starts_with(DELETE_FROM_PRIMITIVE_LIST))
        })
        .map(|(k, v)| (k.clone(), strip_value(v)))
        .collect()
}

fn strip_value(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(strip_directives(map)),
        Value::Array(items) => Value::Array(items.iter().map(strip_value).collect()),
        other => other.clone(),
    }
}
