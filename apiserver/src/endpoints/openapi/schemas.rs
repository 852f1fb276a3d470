//! The schemas of the OpenAPI documents (`components.schemas`), generated from the Rust types: k8s-openapi's
//! `schemars` feature gives each type's JSON schema under kube's definition name
//! (`io.k8s.api.core.v1.ConfigMap`), with the Go doc comments as descriptions, `required`, and the formats
//! (`int32`, `int64`, `date-time`, `byte`). schemars' OpenAPI 3 settings put the definitions under
//! `#/components/schemas/` and wrap a `$ref` that has siblings (a description) in `allOf`, as
//! kube-openapi's v3 builder does.
//!
//! On top of what the types say, this module adds what kube-apiserver's documents say and the types do
//! not: `x-kubernetes-group-version-kind` on each kind's schema (an array, since one Go type can be
//! registered under several group versions), the `<Kind>List` schemas (k8s-openapi's `List<T>` has no
//! schema), the list, map and patch facts of [`crate::registry::extensions`], the v3 forms of `IntOrString` and
//! `Quantity` (`oneOf` their JSON types), and `x-kubernetes-preserve-unknown-fields` on `RawExtension`.
//! A custom resource (a kind [`crate::registry::kinds`] does not know) gets its CRD's schema with the standard
//! type and metadata fields, or without one a schema that keeps every field, as
//! kube publishes a CRD without a structural schema.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIResourceList, DeleteOptions, ListMeta, ObjectMeta, Patch, Status, WatchEvent,
};
use k8s_openapi::schemars::generate::SchemaSettings;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

use crate::apis::{Catalog, GroupVersion};
use crate::registry::extensions;
use crate::registry::kinds;

/// Where a `$ref` points.
pub(crate) const REF_PREFIX: &str = "#/components/schemas/";

/// Definition names of the apimachinery types every document refers to.
pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub(crate) const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub(crate) const API_RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";

/// A group, version and kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl Gvk {
    pub(crate) fn new(group: &str, version: &str, kind: &str) -> Gvk {
        Gvk { group: group.into(), version: version.into(), kind: kind.into() }
    }

    /// The `x-kubernetes-group-version-kind` value naming this kind.
    pub(crate) fn extension(&self) -> Value {
        json!({"group": self.group, "kind": self.kind, "version": self.version})
    }
}

/// Every schema the documents of one catalog use, by definition name, and which definition each served
/// kind has.
#[derive(Debug, Default)]
pub(crate) struct Definitions {
    pub schemas: BTreeMap<String, Value>,
    names: BTreeMap<Gvk, String>,
}

impl Definitions {
    /// The definition name of a kind (`io.k8s.api.core.v1.ConfigMap`), if the catalog serves it.
    pub(crate) fn name_of(&self, gvk: &Gvk) -> Option<&str> {
        self.names.get(gvk).map(String::as_str)
    }

    /// The names of `roots` and of every definition they reach through `$ref`s, in order.
    pub(crate) fn closure(&self, roots: impl IntoIterator<Item = String>) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut pending: Vec<String> = roots.into_iter().collect();
        while let Some(name) = pending.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            if let Some(schema) = self.schemas.get(&name) {
                collect_refs(schema, &mut pending);
            }
        }
        seen
    }
}

/// Pushes the definition name of every `$ref` in `value`.
pub(crate) fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.strip_prefix(REF_PREFIX).unwrap_or(r).to_string()),
                    _ => collect_refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// Generates the definitions of everything `catalog` serves: each resource's kind and list kind, the
/// kinds of its subresources, and the apimachinery types the operations name.
pub(crate) fn generate(catalog: &Catalog) -> Result<Definitions, String> {
    let mut generator = SchemaSettings::openapi3().into_generator();
    for name in [
        reference::<DeleteOptions>(&mut generator),
        reference::<Status>(&mut generator),
        reference::<WatchEvent<Value>>(&mut generator),
        reference::<Patch>(&mut generator),
        reference::<APIResourceList>(&mut generator),
        reference::<ObjectMeta>(&mut generator),
        reference::<ListMeta>(&mut generator),
    ] {
        debug_assert!(name.starts_with("io.k8s.apimachinery."), "{name}");
    }

    // The kinds: each resource's own, and those its subresources carry (`Scale`, `Binding`).
    let mut kinds: BTreeMap<Gvk, bool> = BTreeMap::new();
    let mut group_versions: BTreeSet<GroupVersion> = BTreeSet::new();
    let mut crd_schemas: BTreeMap<Gvk, &Value> = BTreeMap::new();
    for info in catalog.all() {
        let r = &info.resource;
        if let Some(schema) = &info.schema {
            crd_schemas.insert(Gvk::new(&r.group, &r.version, &r.kind), schema.as_ref());
        }
        group_versions.insert(GroupVersion { group: r.group.clone(), version: r.version.clone() });
        kinds.insert(Gvk::new(&r.group, &r.version, &r.kind), true);
        for sub in &info.subresources {
            let (group, version) = sub.kind_group_version.unwrap_or((&r.group, &r.version));
            kinds.entry(Gvk::new(group, version, sub.kind)).or_insert(false);
        }
    }
    let mut names = BTreeMap::new();
    let mut custom = Vec::new();
    let mut lists = Vec::new();
    for (gvk, listed) in &kinds {
        let name = match kinds::find(&gvk.group, &gvk.version, &gvk.kind) {
            Some(builtin) => ref_name(&(builtin.schema)(&mut generator)),
            None => {
                let name = custom_name(gvk);
                custom.push((gvk.clone(), name.clone()));
                name
            }
        };
        names.insert(gvk.clone(), name.clone());
        if *listed {
            let list_name = format!("{name}List");
            names.insert(Gvk::new(&gvk.group, &gvk.version, &format!("{}List", gvk.kind)), list_name.clone());
            lists.push((gvk.kind.clone(), name, list_name));
        }
    }

    let mut schemas: Map<String, Value> = generator.take_definitions(true);
    for (gvk, name) in custom {
        let schema = custom_schema(&gvk, crd_schemas.get(&gvk).copied());
        schemas.insert(name, schema);
    }
    for (kind, item_name, list_name) in lists {
        let list = list_schema(&kind, &item_name, schemas.get(&item_name));
        schemas.insert(list_name, list);
    }
    fix_upstream_forms(&mut schemas);
    extensions::apply(&mut schemas)?;

    // x-kubernetes-group-version-kind: every served kind on its schema, and the meta types under every
    // served group version (kube registers them in each), sorted as kube sorts them.
    let mut tags: BTreeMap<String, BTreeSet<Gvk>> = BTreeMap::new();
    for (gvk, name) in &names {
        tags.entry(name.clone()).or_default().insert(gvk.clone());
    }
    group_versions.insert(GroupVersion { group: String::new(), version: "v1".into() });
    for gv in &group_versions {
        for (name, kind) in [(DELETE_OPTIONS, "DeleteOptions"), (WATCH_EVENT, "WatchEvent")] {
            tags.entry(name.into()).or_default().insert(Gvk::new(&gv.group, &gv.version, kind));
        }
    }
    tags.entry(STATUS.into()).or_default().insert(Gvk::new("", "v1", "Status"));
    tags.entry(API_RESOURCE_LIST.into()).or_default().insert(Gvk::new("", "v1", "APIResourceList"));
    for (name, gvks) in tags {
        let schema = schemas.get_mut(&name).and_then(Value::as_object_mut).ok_or(format!("no schema {name}"))?;
        schema.insert("x-kubernetes-group-version-kind".into(), gvks.iter().map(Gvk::extension).collect());
    }
    Ok(Definitions { schemas: schemas.into_iter().collect(), names })
}

/// Adds `T`'s definition and returns its name.
fn reference<T: JsonSchema>(generator: &mut SchemaGenerator) -> String {
    ref_name(&generator.subschema_for::<T>())
}

fn ref_name(schema: &k8s_openapi::schemars::Schema) -> String {
    let reference = schema.get("$ref").and_then(Value::as_str).expect("k8s-openapi types are referenced by name");
    reference.strip_prefix(REF_PREFIX).unwrap_or(reference).to_string()
}

/// The definition name kube gives a custom resource's kind: the group reversed, then version and kind
/// (`com.example.stable.v1.CronTab` for `stable.example.com/v1`).
fn custom_name(gvk: &Gvk) -> String {
    let group: Vec<&str> = gvk.group.split('.').rev().collect();
    format!("{}.{}.{}", group.join("."), gvk.version, gvk.kind)
}

/// A custom resource's schema: its CRD version's `openAPIV3Schema` when it has one (as apiextensions-apiserver
/// publishes it), else any fields; with the type and object metadata of every object either way.
fn custom_schema(gvk: &Gvk, crd_schema: Option<&Value>) -> Value {
    let mut schema = match crd_schema {
        Some(schema) => schema.clone(),
        None => json!({
            "type": "object",
            "description": format!("{} is a custom resource of {}/{}; the server keeps every field.", gvk.kind, gvk.group, gvk.version),
            "x-kubernetes-preserve-unknown-fields": true,
        }),
    };
    let standard = json!({
        "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"},
        "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"},
        "metadata": {"allOf": [{"$ref": format!("{REF_PREFIX}{OBJECT_META}")}], "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"},
    });
    if let Some(map) = schema.as_object_mut() {
        let properties = map.entry("properties").or_insert_with(|| json!({}));
        if let (Some(properties), Value::Object(standard)) = (properties.as_object_mut(), standard) {
            for (name, field) in standard {
                // The CRD may say no more of metadata than its name; the standard field replaces it.
                if name == "metadata" || !properties.contains_key(&name) {
                    properties.insert(name, field);
                }
            }
        }
    }
    schema
}

/// The schema of a list of `kind` objects (definition `item_name`), as kube's `<Kind>List` types are
/// shaped; `apiVersion` and `kind` take the item schema's descriptions, which are the same texts.
fn list_schema(kind: &str, item_name: &str, item: Option<&Value>) -> Value {
    let described = |field: &str, fallback: &str| {
        let text = item
            .and_then(|i| i.pointer(&format!("/properties/{field}/description")))
            .and_then(Value::as_str)
            .unwrap_or(fallback);
        json!({"type": "string", "description": text})
    };
    json!({
        "description": format!("{kind}List is a list of {kind} objects."),
        "type": "object",
        "properties": {
            "apiVersion": described("apiVersion", "The versioned schema of this list."),
            "items": {
                "description": format!("The {kind} objects."),
                "type": "array",
                "items": {"$ref": format!("{REF_PREFIX}{item_name}")},
            },
            "kind": described("kind", "The kind of this list."),
            "metadata": {
                "allOf": [{"$ref": format!("{REF_PREFIX}{LIST_META}")}],
                "description": "Standard list metadata: the resourceVersion and continue token of the list.",
            },
        },
        "required": ["items"],
    })
}

/// Where k8s-openapi's schemas differ from kube-apiserver's v3 documents in form rather than in fact.
fn fix_upstream_forms(schemas: &mut Map<String, Value>) {
    for schema in schemas.values_mut() {
        // k8s-openapi types hold `metadata` outside an `Option` and so list it as required; kube's
        // schemas never require it (a body without metadata is refused by validation, not by decoding).
        let Some(obj) = schema.as_object_mut() else { continue };
        if let Some(Value::Array(required)) = obj.get_mut("required") {
            required.retain(|r| r != "metadata");
            if required.is_empty() {
                obj.remove("required");
            }
        }
    }
    // kube-openapi's v3 forms of the types with their own JSON shape (`OpenAPIV3OneOfTypes`).
    if let Some(Value::Object(int_or_string)) = schemas.get_mut(INT_OR_STRING) {
        int_or_string.insert("oneOf".into(), json!([{"type": "integer"}, {"type": "string"}]));
        int_or_string.insert("format".into(), "int-or-string".into());
    }
    if let Some(Value::Object(quantity)) = schemas.get_mut(QUANTITY) {
        // A quantity may be a JSON number with a fraction (`0.5`), so it is not an int-or-string.
        quantity.remove("x-kubernetes-int-or-string");
        quantity.insert("oneOf".into(), json!([{"type": "string"}, {"type": "number"}]));
    }
    if let Some(Value::Object(raw)) = schemas.get_mut(RAW_EXTENSION) {
        raw.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    }
}
