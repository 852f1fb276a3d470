//! Structural schemas of custom resources: a CRD version's `openAPIV3Schema`, checked to be structural and
//! parsed once into a tree, then used to validate, prune and default custom resources.
//!
//! Files, one job each: this file holds the tree, its construction from JSON and its accessors;
//! [`check`] runs the structural-schema rules (upstream `pkg/apiserver/schema/validation.go` and
//! `complete.go`), [`openapi`] the CRD schema rules (upstream `pkg/apis/apiextensions/validation/validation.go`),
//! [`defaults`] checks `default` values at parse time (upstream `pkg/apiserver/schema/defaulting/validation.go`),
//! [`validate`] validates objects as kube-openapi's `validate` package does, [`formats`] holds the string formats,
//! [`embedded`] the checks of embedded resources and of list-type uniqueness that run after the schema validation
//! (upstream `schema/objectmeta/validation.go` and `schema/listtype/validation.go`), [`prune`] and [`default`]
//! transform objects, and [`gofmt`] prints values as Go's `fmt` does so that error texts match byte for byte.
//! A schema's `x-kubernetes-validations` rules are [`cel`] (one rule) and [`cel_rules`] (a schema's rules laid
//! out as the schema is), as upstream keeps them under `pkg/apiserver/schema/cel`.
//!
//! The registry keeps these schemas, below the field manager and the strategies, because both read them: the
//! custom resources' strategy validates, prunes and defaults by them, and the field manager owns a custom
//! resource's fields by their shape.

pub(crate) mod cel;
pub(crate) mod cel_rules;
mod check;
mod default;
mod defaults;
mod embedded;
mod formats;
mod gofmt;
mod openapi;
mod prune;
mod validate;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

use crate::registry::field_error::FieldError;

/// A CRD version's schema, checked to be structural and parsed once.
///
/// The same type holds the value validations of `allOf`, `anyOf`, `oneOf` and `not`, which upstream keeps as
/// `NestedValueValidation`: the structural check has already made sure they carry no type or extensions.
#[derive(Clone, Debug, Default)]
pub(crate) struct Structural {
    /// `type`, empty when unset.
    ty: String,
    nullable: bool,
    /// `format` as written, empty when upstream's validator ignores it (`StripUnsupportedFormatsPostProcess`).
    format: String,
    default: Option<Value>,
    properties: BTreeMap<String, Structural>,
    items: Option<Box<Structural>>,
    additional_properties: Option<Additional>,
    required: Vec<String>,
    enum_values: Option<Vec<Value>>,
    maximum: Option<f64>,
    exclusive_maximum: bool,
    minimum: Option<f64>,
    exclusive_minimum: bool,
    multiple_of: Option<f64>,
    max_length: Option<i64>,
    min_length: Option<i64>,
    max_items: Option<i64>,
    min_items: Option<i64>,
    unique_items: bool,
    max_properties: Option<i64>,
    min_properties: Option<i64>,
    /// The pattern as written, and compiled once here.
    pattern: Option<(String, Regex)>,
    all_of: Vec<Structural>,
    any_of: Vec<Structural>,
    one_of: Vec<Structural>,
    not: Option<Box<Structural>>,
    preserve_unknown_fields: bool,
    embedded_resource: bool,
    int_or_string: bool,
    list_type: Option<String>,
    list_map_keys: Vec<String>,
    map_type: Option<String>,
}

/// `additionalProperties`: a boolean or a schema.
#[derive(Clone, Debug)]
enum Additional {
    Bool(bool),
    Schema(Box<Structural>),
}

/// How server-side apply merges a list (`x-kubernetes-list-type`, with `x-kubernetes-list-map-keys`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListType {
    Atomic,
    Set,
    Map { keys: Vec<String> },
}

/// The path marker that addresses array elements in [`Structural::at`] and friends.
pub(crate) const ITEMS: &str = "[]";

impl Structural {
    /// Parses `openAPIV3Schema` (`schema` is the JSON of JSONSchemaProps). Errors come in upstream's order:
    /// the root `nullable` check, the structural-schema errors (sorted by text, as upstream sorts them), the
    /// errors of `default` values (only when the schema is structural), then the CRD schema rules; each with
    /// its field path rooted at `path`.
    pub(crate) fn parse(schema: &Value, path: &str) -> Result<Structural, Vec<FieldError>> {
        let mut errs = Vec::new();
        if !schema.is_object() {
            errs.push(FieldError::invalid(path, "", "must be a JSONSchemaProps object"));
            return Err(errs);
        }
        if schema.get("nullable").and_then(Value::as_bool) == Some(true) {
            errs.push(FieldError::forbidden(&format!("{path}.nullable"), "nullable cannot be true at the root"));
        }
        // Upstream builds the structural form first and reports its failure (unsupported fields such as `$ref`)
        // only when nothing else failed; the CRD schema rules below report the same fields more precisely.
        let unsupported = check::unsupported_field(schema);
        let mut tree = None;
        if unsupported.is_none() {
            let structural_errs = check::structural(schema, path);
            if structural_errs.is_empty() {
                match build(schema) {
                    Ok(t) => {
                        errs.extend(defaults::check(&t, path));
                        tree = Some(t);
                    }
                    Err(e) => errs.extend(e.into_iter().map(|(p, msg)| FieldError::invalid(&join(path, &p), "", &msg))),
                }
            } else {
                errs.extend(structural_errs);
            }
        }
        errs.extend(openapi::check(schema, path));
        if errs.is_empty() {
            if let Some(msg) = unsupported {
                errs.push(FieldError::invalid(path, "", &msg));
            }
        }
        match tree {
            Some(t) if errs.is_empty() => Ok(t),
            _ => {
                if errs.is_empty() {
                    errs.push(FieldError::invalid(path, "", "schema could not be parsed"));
                }
                Err(errs)
            }
        }
    }

    /// Validates a custom resource (the whole object) against the schema: kube-openapi's schema validation,
    /// then the embedded resources' type and object metadata, then list-type uniqueness, as
    /// `customResourceStrategy.Validate` orders them (CEL rules are the `cel` module's).
    pub(crate) fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate::validate(self, obj, "");
        errs.extend(embedded::validate_embedded("", self, obj, false));
        errs.extend(embedded::validate_list_sets_and_maps(self, obj));
        errs
    }

    /// Drops every field the schema does not declare (not under x-kubernetes-preserve-unknown-fields), keeping
    /// apiVersion, kind and metadata at the root and at embedded resources; returns the pruned paths, sorted.
    pub(crate) fn prune(&self, obj: &mut Value) -> Vec<String> {
        prune::prune(obj, self, true)
    }

    /// Applies `default`s as upstream's structural defaulting does: first nulls that the schema does not allow
    /// and cannot default are dropped, then defaults fill absent (and non-nullable null) fields.
    pub(crate) fn default(&self, obj: &mut Value) {
        default::prune_non_nullable_nulls(obj, Some(self));
        default::apply(obj, self);
    }

    /// The list type and map keys of the node at `path`, or None when the schema does not say.
    pub(crate) fn list_type(&self, path: &[&str]) -> Option<ListType> {
        let node = self.at(path)?;
        match node.list_type.as_deref()? {
            "atomic" => Some(ListType::Atomic),
            "set" => Some(ListType::Set),
            "map" => Some(ListType::Map { keys: node.list_map_keys.clone() }),
            _ => None,
        }
    }

    /// Whether the node at `path` is an atomic map (`x-kubernetes-map-type: atomic`).
    pub(crate) fn map_type_atomic(&self, path: &[&str]) -> bool {
        self.at(path).is_some_and(|n| n.map_type.as_deref() == Some("atomic"))
    }

    /// The sub-schema at `path`: object keys go through `properties`, then `additionalProperties`;
    /// [`ITEMS`] goes to `items`.
    pub(crate) fn at(&self, path: &[&str]) -> Option<&Structural> {
        let mut node = self;
        for seg in path {
            node = if *seg == ITEMS { node.items()? } else { node.child(seg)? };
        }
        Some(node)
    }

    /// The schema of the object field `key`: its property, else the `additionalProperties` schema.
    pub(crate) fn child(&self, key: &str) -> Option<&Structural> {
        self.properties.get(key).or_else(|| self.additional_schema())
    }

    /// The declared properties, sorted by name.
    pub(crate) fn properties(&self) -> &BTreeMap<String, Structural> {
        &self.properties
    }

    /// The array item schema.
    pub(crate) fn items(&self) -> Option<&Structural> {
        self.items.as_deref()
    }

    /// The `additionalProperties` schema (None for absent or boolean `additionalProperties`).
    pub(crate) fn additional_schema(&self) -> Option<&Structural> {
        match &self.additional_properties {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        }
    }

    /// `type` (empty when unset, e.g. with x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields).
    pub(crate) fn type_name(&self) -> &str {
        &self.ty
    }

    pub(crate) fn preserve_unknown_fields(&self) -> bool {
        self.preserve_unknown_fields
    }

    /// The types kube-openapi checks: x-kubernetes-int-or-string stands for `integer,string`.
    fn kube_types(&self) -> Vec<&str> {
        if self.int_or_string {
            vec!["integer", "string"]
        } else if self.ty.is_empty() {
            Vec::new()
        } else {
            vec![self.ty.as_str()]
        }
    }
}

/// `base.child` as field paths join (`child` may already start with `[`).
fn join(base: &str, child: &str) -> String {
    match (base.is_empty(), child.is_empty()) {
        (true, _) => child.to_string(),
        (_, true) => base.to_string(),
        _ if child.starts_with('[') => format!("{base}{child}"),
        _ => format!("{base}.{child}"),
    }
}

/// Builds the tree from a schema the checks have accepted. Errors are (relative path, message) of what
/// cannot be represented at all (a pattern the regex engine rejects is reported by the CRD rules first).
fn build(v: &Value) -> Result<Structural, Vec<(String, String)>> {
    let mut errs = Vec::new();
    let node = build_node(v, "", &mut errs);
    if errs.is_empty() {
        Ok(node)
    } else {
        Err(errs)
    }
}

fn build_node(v: &Value, at: &str, errs: &mut Vec<(String, String)>) -> Structural {
    let str_of = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let bool_of = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    let f64_of = |k: &str| v.get(k).and_then(Value::as_f64);
    let i64_of = |k: &str| v.get(k).and_then(Value::as_i64);
    let list_of = |k: &str, errs: &mut Vec<(String, String)>| -> Vec<Structural> {
        let items = v.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        items.iter().enumerate().map(|(i, s)| build_node(s, &join(at, &format!("{k}[{i}]")), errs)).collect()
    };
    let pattern = match v.get("pattern").and_then(Value::as_str) {
        Some(p) if !p.is_empty() => match Regex::new(p) {
            Ok(re) => Some((p.to_string(), re)),
            Err(e) => {
                errs.push((join(at, "pattern"), format!("must be a valid regular expression, but isn't: {e}")));
                None
            }
        },
        _ => None,
    };
    let format = str_of("format");
    let format = if formats::supported(&format) { format } else { String::new() };
    let mut properties = BTreeMap::new();
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        for (k, s) in props {
            properties.insert(k.clone(), build_node(s, &join(at, &format!("properties[{k}]")), errs));
        }
    }
    let additional_properties = match v.get("additionalProperties") {
        Some(Value::Bool(b)) => Some(Additional::Bool(*b)),
        Some(s @ Value::Object(_)) => {
            Some(Additional::Schema(Box::new(build_node(s, &join(at, "additionalProperties"), errs))))
        }
        _ => None,
    };
    let strings = |k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    Structural {
        ty: str_of("type"),
        nullable: bool_of("nullable"),
        format,
        default: v.get("default").filter(|d| !d.is_null()).cloned(),
        properties,
        items: v.get("items").filter(|i| i.is_object()).map(|i| Box::new(build_node(i, &join(at, "items"), errs))),
        additional_properties,
        required: strings("required"),
        enum_values: v.get("enum").and_then(Value::as_array).cloned(),
        maximum: f64_of("maximum"),
        exclusive_maximum: bool_of("exclusiveMaximum"),
        minimum: f64_of("minimum"),
        exclusive_minimum: bool_of("exclusiveMinimum"),
        multiple_of: f64_of("multipleOf"),
        max_length: i64_of("maxLength"),
        min_length: i64_of("minLength"),
        max_items: i64_of("maxItems"),
        min_items: i64_of("minItems"),
        unique_items: bool_of("uniqueItems"),
        max_properties: i64_of("maxProperties"),
        min_properties: i64_of("minProperties"),
        pattern,
        all_of: list_of("allOf", errs),
        any_of: list_of("anyOf", errs),
        one_of: list_of("oneOf", errs),
        not: v.get("not").filter(|n| n.is_object()).map(|n| Box::new(build_node(n, &join(at, "not"), errs))),
        preserve_unknown_fields: bool_of("x-kubernetes-preserve-unknown-fields"),
        embedded_resource: bool_of("x-kubernetes-embedded-resource"),
        int_or_string: bool_of("x-kubernetes-int-or-string"),
        list_type: v.get("x-kubernetes-list-type").and_then(Value::as_str).map(String::from),
        list_map_keys: strings("x-kubernetes-list-map-keys"),
        map_type: v.get("x-kubernetes-map-type").and_then(Value::as_str).map(String::from),
    }
}
