//! The shape of each field as server-side apply sees it: which values are owned whole (atomic) and which
//! are owned part by part, and how a list's elements are told apart. For built-in kinds this is the
//! k8s-openapi schemas (struct fields, maps, lists) with upstream's OpenAPI extensions
//! (`registry/extensions.txt`), read as kube-openapi's `schemaconv` reads them: a list is atomic
//! unless `x-kubernetes-list-type` says `set` or `map` (with its `x-kubernetes-list-map-keys`), or, without
//! a list type, its `x-kubernetes-patch-strategy` merges (by its merge key, or as a set); a map is granular
//! unless `x-kubernetes-map-type: atomic`; a struct is granular unless its type is marked atomic.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::registry::extensions;
use crate::registry::schema::schemas;
use crate::registry::structural::{ListType, Structural, ITEMS};

/// How a value is owned and merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Owned and replaced whole: scalars, and atomic structs, maps and lists.
    Atomic,
    /// A struct with declared fields, by its definition name.
    Struct(&'static str),
    /// A map whose entries are owned apart.
    Map(Box<Shape>),
    /// A list whose elements are owned apart: by the values of `keys` (a list-type `map`), or by their own
    /// value when `keys` is empty (a set).
    Associative { element: Box<Shape>, keys: Vec<String> },
    /// Not described by a schema (a field the type lacks): objects are granular maps, lists atomic, as
    /// structured-merge-diff's deduced type.
    Deduced,
    /// A struct described by a CRD's structural schema (its declared properties); `root` adds the
    /// `apiVersion`, `kind` and `metadata` every object has.
    Custom { schema: CustomSchema, root: bool },
}

/// A node of a CRD's structural schema: the schema (one per served CRD version, compared by identity) and
/// the path to the node (property names, and `[]` for list items), so that no subtree is copied.
#[derive(Clone, Debug)]
pub struct CustomSchema {
    root: Arc<Structural>,
    path: Vec<String>,
}

impl CustomSchema {
    fn node(&self) -> Option<&Structural> {
        let path: Vec<&str> = self.path.iter().map(String::as_str).collect();
        self.root.at(&path)
    }

    fn below(&self, step: &str) -> CustomSchema {
        let mut path = self.path.clone();
        path.push(step.to_string());
        CustomSchema { root: self.root.clone(), path }
    }
}

impl PartialEq for CustomSchema {
    fn eq(&self, other: &CustomSchema) -> bool {
        Arc::ptr_eq(&self.root, &other.root) && self.path == other.path
    }
}

impl Eq for CustomSchema {}

/// Key fields with a default, used when an element leaves them out (upstream reads the schema's default:
/// a container port's protocol is TCP).
const KEY_DEFAULTS: &[(&str, &str)] = &[("protocol", "\"TCP\"")];

/// The default of a list-map key field, as JSON text.
pub(crate) fn key_default(key: &str) -> Option<&'static str> {
    KEY_DEFAULTS.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

impl Shape {
    /// The shape of a custom resource whose CRD version has the structural schema `schema`.
    pub(crate) fn custom_root(schema: Arc<Structural>) -> Shape {
        Shape::Custom { schema: CustomSchema { root: schema, path: Vec::new() }, root: true }
    }

    /// The shape of a built-in kind's root, by its definition name; `None` (a custom resource) is deduced.
    pub fn root(definition: Option<&'static str>) -> Shape {
        match definition {
            Some(definition) => Shape::Struct(definition),
            None => Shape::Deduced,
        }
    }

    /// The shape of `field` of this struct or map; `None` if the field is not declared (a struct's unknown
    /// field), which is owned as a deduced value.
    pub(crate) fn field(&self, field: &str) -> (Shape, bool) {
        match self {
            Shape::Struct(definition) => match schemas().property(definition, field) {
                Some(property) => (of_schema(property, facts(definition, Some(field))), true),
                None => (Shape::Deduced, false),
            },
            Shape::Map(element) => ((**element).clone(), false),
            Shape::Custom { schema, root } => {
                if *root && (field == "apiVersion" || field == "kind") {
                    return (Shape::Atomic, true);
                }
                if *root && field == "metadata" {
                    return (Shape::Struct(OBJECT_META), true);
                }
                match schema.node().is_some_and(|n| n.properties().contains_key(field)) {
                    true => (of_structural(&schema.below(field)), true),
                    false => (Shape::Deduced, false),
                }
            }
            _ => (Shape::Deduced, false),
        }
    }
}

/// ObjectMeta's definition name, whose shape every custom resource's `metadata` has.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The shape a node of a CRD's structural schema describes, as kube-openapi's `schemaconv` reads a CRD:
/// properties make a struct, `additionalProperties` a map (atomic with `x-kubernetes-map-type: atomic`),
/// a list is atomic unless `x-kubernetes-list-type` is `set` or `map`, and a free-form object
/// (`x-kubernetes-preserve-unknown-fields` without properties) is deduced.
fn of_structural(at: &CustomSchema) -> Shape {
    let Some(node) = at.node() else { return Shape::Deduced };
    match node.type_name() {
        "array" => {
            let element =
                Box::new(if node.items().is_some() { of_structural(&at.below(ITEMS)) } else { Shape::Deduced });
            match node.list_type(&[]) {
                Some(ListType::Map { keys }) => Shape::Associative { element, keys },
                Some(ListType::Set) => Shape::Associative { element, keys: Vec::new() },
                _ => Shape::Atomic,
            }
        }
        "object" if node.map_type_atomic(&[]) => Shape::Atomic,
        "object" if !node.properties().is_empty() => Shape::Custom { schema: at.clone(), root: false },
        "object" => match node.additional_schema() {
            // `at` resolves a key through `additionalProperties` when no property has it.
            Some(_) => Shape::Map(Box::new(of_structural(&at.below("")))),
            None => Shape::Deduced,
        },
        "" if node.preserve_unknown_fields() => Shape::Deduced,
        _ => Shape::Atomic,
    }
}

/// The shape a schema describes, with the facts of the property that holds it.
fn of_schema(schema: &'static Value, facts: &Facts) -> Shape {
    let (name, resolved) = schemas().follow(schema);
    if let Some(name) = name {
        let name: &'static str = name;
        let atomic_type = self::facts(name, None).map_type.as_deref() == Some("atomic");
        if resolved.get("properties").is_none() || atomic_type {
            return Shape::Atomic;
        }
        return Shape::Struct(name);
    }
    if let Some(items) = resolved.get("items") {
        let element = Box::new(of_schema(items, &NO_FACTS));
        return match facts.list_type.as_deref() {
            Some("map") => Shape::Associative { element, keys: facts.list_map_keys.clone() },
            Some("set") => Shape::Associative { element, keys: Vec::new() },
            Some(_) => Shape::Atomic,
            None if facts.patch_strategy.split(',').any(|s| s == "merge") => {
                Shape::Associative { element, keys: facts.patch_merge_key.iter().cloned().collect() }
            }
            None => Shape::Atomic,
        };
    }
    if let Some(values) = resolved.get("additionalProperties").filter(|a| a.is_object()) {
        if facts.map_type.as_deref() == Some("atomic") {
            return Shape::Atomic;
        }
        return Shape::Map(Box::new(of_schema(values, &NO_FACTS)));
    }
    Shape::Atomic
}

/// The facts of a property the table does not name.
static NO_FACTS: Facts = Facts {
    list_type: None,
    list_map_keys: Vec::new(),
    map_type: None,
    patch_strategy: String::new(),
    patch_merge_key: None,
};

/// The extension facts of one property (or, with `None`, of a type).
#[derive(Clone, Debug, Default)]
struct Facts {
    list_type: Option<String>,
    list_map_keys: Vec<String>,
    map_type: Option<String>,
    patch_strategy: String,
    patch_merge_key: Option<String>,
}

fn facts<'a>(definition: &'a str, property: Option<&'a str>) -> &'a Facts {
    static TABLE: OnceLock<BTreeMap<(&'static str, Option<&'static str>), Facts>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut out = BTreeMap::new();
        for line in extensions::table() {
            let fact = |name: &str| line.facts.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
            let text = |name: &str| fact(name).and_then(Value::as_str).map(str::to_string);
            let keys = fact("list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_string).collect::<Vec<_>>());
            let facts = Facts {
                list_type: text("list-type"),
                list_map_keys: keys.unwrap_or_default(),
                map_type: text("map-type"),
                patch_strategy: text("patch-strategy").unwrap_or_default(),
                patch_merge_key: text("patch-merge-key"),
            };
            out.insert((line.definition, line.property), facts);
        }
        out
    });
    table.get(&(definition, property)).unwrap_or(&NO_FACTS)
}
