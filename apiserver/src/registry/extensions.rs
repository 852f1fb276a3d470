//! The facts upstream's OpenAPI documents carry that the k8s-openapi types do not: how lists and maps
//! merge (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`) and how a
//! strategic merge patch treats a list (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`).
//! kubectl reads the patch facts to compute the strategic merge patch of `apply` and `edit`, and
//! server-side apply reads the list and map facts. A few lines also correct `required`, where k8s-openapi's
//! types differ from kube's.
//!
//! They are kept as data, in `extensions.txt` beside this file: one line per field (or per type, with
//! `.` for the property) naming the facts upstream publishes for it. The table was derived from the Go
//! types of k8s.io/api and k8s.io/apimachinery at v0.33 (the markers `+listType`, `+listMapKey`,
//! `+mapType`, `+structType` and the `patchStrategy`/`patchMergeKey` struct tags, which kube-openapi's
//! generator turns into these extensions, `k8s.io/kube-openapi pkg/generators/extension.go`), and checked
//! against the structured-merge schema client-go publishes from the same spec. It covers the group
//! versions of the served kinds ([`super::kinds`]).

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The table, as it is kept.
const TABLE: &str = include_str!("extensions.txt");

/// One line of the table: the facts of one property (or, with `property` = `None`, of a type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Facts {
    pub definition: &'static str,
    pub property: Option<&'static str>,
    /// Extension name (without `x-kubernetes-`) and value, in the table's order.
    pub facts: Vec<(&'static str, Value)>,
}

/// The parsed table.
pub(crate) fn table() -> &'static [Facts] {
    static PARSED: OnceLock<Vec<Facts>> = OnceLock::new();
    PARSED.get_or_init(|| parse(TABLE).unwrap_or_else(|e| panic!("extensions.txt: {e}")))
}

/// The extension names a line may set, and whether the value is a list (comma-separated).
const KNOWN: &[(&str, bool)] = &[
    ("list-type", false),
    ("list-map-keys", true),
    ("map-type", false),
    ("patch-strategy", false),
    ("patch-merge-key", false),
    ("required", false),
];

/// Parses the table: `#` starts a comment line; other lines are `definition property name=value...`.
fn parse(text: &'static str) -> Result<Vec<Facts>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(definition), Some(property)) = (words.next(), words.next()) else {
            return Err(format!("line {}: wants a definition and a property", n + 1));
        };
        let mut facts = Vec::new();
        for word in words {
            let (name, value) =
                word.split_once('=').ok_or_else(|| format!("line {}: {word:?} is not name=value", n + 1))?;
            let &(name, is_list) = KNOWN
                .iter()
                .find(|(k, _)| *k == name)
                .ok_or_else(|| format!("line {}: unknown fact {name:?}", n + 1))?;
            let value = if is_list {
                Value::Array(value.split(',').map(|v| Value::from(v.to_string())).collect())
            } else {
                Value::from(value.to_string())
            };
            facts.push((name, value));
        }
        if facts.is_empty() {
            return Err(format!("line {}: no facts", n + 1));
        }
        out.push(Facts { definition, property: (property != ".").then_some(property), facts });
    }
    Ok(out)
}

/// Adds the table's facts to `definitions` (by definition name). A line naming a definition the
/// documents do not hold is skipped; one naming a property the definition lacks is an error, so that a
/// type change in k8s-openapi that the table no longer fits shows in the tests.
pub(crate) fn apply(definitions: &mut Map<String, Value>) -> Result<(), String> {
    for line in table() {
        let Some(schema) = definitions.get_mut(line.definition) else { continue };
        for (_, value) in line.facts.iter().filter(|(name, _)| *name == "required") {
            let property = line.property.ok_or_else(|| format!("{}: required needs a property", line.definition))?;
            set_required(schema, property, value == "true");
        }
        let target = match line.property {
            None => schema,
            Some(property) => schema
                .get_mut("properties")
                .and_then(|p| p.get_mut(property))
                .ok_or_else(|| format!("{} has no property {property}", line.definition))?,
        };
        let target = target.as_object_mut().ok_or_else(|| format!("{} is not an object schema", line.definition))?;
        for (name, value) in line.facts.iter().filter(|(name, _)| *name != "required") {
            target.insert(format!("x-kubernetes-{name}"), value.clone());
        }
    }
    Ok(())
}

/// Adds `property` to the schema's `required` list, or takes it out (dropping an emptied list).
fn set_required(schema: &mut Value, property: &str, required: bool) {
    let Some(obj) = schema.as_object_mut() else { return };
    let list = obj.entry("required").or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(items) = list {
        items.retain(|r| r != property);
        if required {
            items.push(Value::from(property));
        }
        if items.is_empty() {
            obj.remove("required");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses() {
        let table = table();
        assert!(table.len() > 100, "{} lines", table.len());
        let containers = table
            .iter()
            .find(|f| f.definition == "io.k8s.api.core.v1.PodSpec" && f.property == Some("containers"))
            .expect("PodSpec.containers is in the table");
        assert!(containers.facts.contains(&("patch-merge-key", Value::from("name"))));
        assert!(containers.facts.contains(&("list-map-keys", serde_json::json!(["name"]))));
    }

    #[test]
    fn malformed_lines_are_refused() {
        for (text, want) in [
            ("io.k8s.A", "wants a definition and a property"),
            ("io.k8s.A x", "no facts"),
            ("io.k8s.A x list-type", "is not name=value"),
            ("io.k8s.A x list-kind=map", "unknown fact"),
        ] {
            let err = parse(text).expect_err(text);
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
