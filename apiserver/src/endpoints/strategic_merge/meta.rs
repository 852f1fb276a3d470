//! The patch facts of each field: whether its list merges, by which key, and the type its values have.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::registry::extensions;
use crate::registry::schema::schemas;

/// What a strategic merge patch knows of one field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldMeta {
    /// The type of the field's value, or of its list's items or map's values, if it is a known one.
    pub definition: Option<String>,
    /// `patchStrategy` includes `merge`: the field's list merges rather than being replaced.
    pub merge: bool,
    /// `patchMergeKey`: what identifies an element of a merging list of maps.
    pub merge_key: Option<String>,
}

/// Where the facts come from.
pub(crate) trait PatchMeta {
    /// The facts of `field` of the type `definition` (no facts for an unknown type or field).
    fn field(&self, definition: Option<&str>, field: &str) -> FieldMeta;
}

/// The built-in kinds' facts: their types from k8s-openapi's schemas, their patch strategies and merge keys
/// from upstream's OpenAPI extensions (`extensions.txt`).
pub(crate) struct BuiltinMeta;

impl PatchMeta for BuiltinMeta {
    fn field(&self, definition: Option<&str>, field: &str) -> FieldMeta {
        let Some(definition) = definition else { return FieldMeta::default() };
        let (strategy, merge_key) = strategies().get(&(definition, field)).cloned().unwrap_or_default();
        FieldMeta {
            definition: schemas().field_definition(definition, field).map(str::to_string),
            merge: strategy.split(',').any(|s| s == "merge"),
            merge_key,
        }
    }
}

/// (definition, property) → (patch strategy, merge key), from the extensions table.
fn strategies() -> &'static BTreeMap<(&'static str, &'static str), (&'static str, Option<String>)> {
    static TABLE: OnceLock<BTreeMap<(&'static str, &'static str), (&'static str, Option<String>)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = BTreeMap::new();
        for line in extensions::table() {
            let Some(property) = line.property else { continue };
            let fact = |name: &str| line.facts.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
            let strategy = fact("patch-strategy").and_then(Value::as_str).unwrap_or("");
            let merge_key = fact("patch-merge-key").and_then(Value::as_str).map(str::to_string);
            if !strategy.is_empty() || merge_key.is_some() {
                out.insert((line.definition, property), (strategy, merge_key));
            }
        }
        out
    })
}
