//! [`RuleTree`]: a schema's `x-kubernetes-validations` rules, compiled once per CRD version and laid out
//! as the schema is, so that validating an object walks the object and its old version together and runs
//! each node's rules with `self` (and `oldSelf`) bound to that node's values, as apiextensions-apiserver's
//! `pkg/apiserver/schema/cel/validation.go` does.
//!
//! Correlation of old and new values: properties and map values by key, items of `x-kubernetes-list-type:
//! map` lists by their keys; other list items have no old value, so their transition rules do not run.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::structural::cel::Rule;

/// The compiled rules of one schema node and of the nodes below it.
#[derive(Default)]
pub(crate) struct RuleTree {
    rules: Vec<Rule>,
    properties: BTreeMap<String, RuleTree>,
    items: Option<Box<RuleTree>>,
    additional: Option<Box<RuleTree>>,
    /// The keys of a map-typed list, by which old items are found.
    map_keys: Vec<String>,
}

impl RuleTree {
    /// Compiles every rule of `schema` (a JSONSchemaProps), reporting each failure at its path below `path`.
    pub(crate) fn compile(schema: &Value, path: &str) -> Result<RuleTree, Vec<FieldError>> {
        let mut errs = Vec::new();
        let tree = RuleTree::compile_node(schema, path, &mut errs);
        if errs.is_empty() {
            Ok(tree)
        } else {
            Err(errs)
        }
    }

    fn compile_node(schema: &Value, path: &str, errs: &mut Vec<FieldError>) -> RuleTree {
        let mut tree = RuleTree::default();
        if let Some(entries) = schema.get("x-kubernetes-validations").and_then(Value::as_array) {
            for (i, entry) in entries.iter().enumerate() {
                match Rule::compile(entry, &format!("{path}.x-kubernetes-validations[{i}]")) {
                    Ok(rule) => tree.rules.push(rule),
                    Err(e) => errs.extend(e),
                }
            }
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, sub) in props {
                let node = RuleTree::compile_node(sub, &format!("{path}.properties[{name}]"), errs);
                if !node.is_empty() {
                    tree.properties.insert(name.clone(), node);
                }
            }
        }
        if let Some(items) = schema.get("items") {
            let node = RuleTree::compile_node(items, &format!("{path}.items"), errs);
            if !node.is_empty() {
                tree.items = Some(Box::new(node));
            }
        }
        if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            let node = RuleTree::compile_node(additional, &format!("{path}.additionalProperties"), errs);
            if !node.is_empty() {
                tree.additional = Some(Box::new(node));
            }
        }
        if schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map") {
            tree.map_keys = schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| keys.iter().filter_map(|k| k.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
        }
        tree
    }

    fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.properties.is_empty() && self.items.is_none() && self.additional.is_none()
    }

    /// Runs every rule on `obj` (with `old`, its stored version, on updates); one error per failed rule.
    pub(crate) fn check(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        self.check_node(obj, old, "", &mut errs);
        errs
    }

    fn check_node(&self, value: &Value, old: Option<&Value>, field: &str, errs: &mut Vec<FieldError>) {
        for rule in &self.rules {
            if let Some(err) = rule.check(value, old, if field.is_empty() { "<nil>" } else { field }) {
                errs.push(err);
            }
        }
        let child = |name: &str| if field.is_empty() { name.to_string() } else { format!("{field}.{name}") };
        match value {
            Value::Object(map) => {
                for (name, node) in &self.properties {
                    if let Some(v) = map.get(name) {
                        node.check_node(v, old.and_then(|o| o.get(name)), &child(name), errs);
                    }
                }
                if let Some(node) = &self.additional {
                    for (name, v) in map {
                        node.check_node(v, old.and_then(|o| o.get(name)), &format!("{field}[{name}]"), errs);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(node) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        let old_item = self.old_item(item, old);
                        node.check_node(item, old_item, &format!("{field}[{i}]"), errs);
                    }
                }
            }
            _ => {}
        }
    }

    /// The old item a list item corresponds to: the one with the same keys in a map-typed list.
    fn old_item<'a>(&self, item: &Value, old: Option<&'a Value>) -> Option<&'a Value> {
        if self.map_keys.is_empty() {
            return None;
        }
        old?.as_array()?.iter().find(|o| self.map_keys.iter().all(|k| o.get(k) == item.get(k)))
    }
}
