//! Custom resources in the catalog: what an established CRD becomes — one [`ResourceInfo`] per served
//! version, each with the strategy of [`crate::registry::strategies::customresources`] over that version's
//! structural schema and CEL rules, and a printer from its `additionalPrinterColumns`
//! (apiextensions-apiserver's `pkg/registry/customresource/tableconvertor`).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::apis::printers::{name_column, Column, Printer};
use crate::apis::{status, ResourceInfo, ALL_VERBS};
use crate::registry::meta;
use crate::registry::resource::Resource;
use crate::registry::strategies::customresourcedefinitions as crd;
use crate::registry::strategies::customresources::{json_path, CustomResource};
use crate::registry::strategy::{Strategy, Subresource};

/// Keeps a name that a CRD gave for as long as the process runs. Catalog entries name their resources with
/// `&'static str`s, as the built-in ones are; a CRD's names are few and set once per established
/// generation, so what is kept is bounded by the CRDs a run establishes.
fn keep(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn keep_list(crd: &Value, pointer: &str) -> &'static [&'static str] {
    let items: Vec<&'static str> = crd
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(keep).collect())
        .unwrap_or_default();
    if items.is_empty() {
        &[]
    } else {
        Box::leak(items.into_boxed_slice())
    }
}

/// The catalog entries of an established CRD, one per served version, using the names it was accepted
/// with. `None` for a CRD whose schema no longer parses (validation refuses such CRDs; an old stored one
/// is not served).
pub(crate) fn resource_infos(crd_obj: &Value) -> Option<Vec<ResourceInfo>> {
    let spec = crd_obj.get("spec")?;
    let group = spec.get("group").and_then(Value::as_str)?;
    let names = crd_obj.pointer("/status/acceptedNames")?;
    let name_of = |field: &str| names.get(field).and_then(Value::as_str).unwrap_or("");
    let (plural, kind) = (name_of("plural"), name_of("kind"));
    if plural.is_empty() || kind.is_empty() {
        return None;
    }
    let namespaced = spec.get("scope").and_then(Value::as_str) == Some("Namespaced");
    let singular = keep(name_of("singular"));
    let short_names = keep_list(crd_obj, "/status/acceptedNames/shortNames");
    let categories = keep_list(crd_obj, "/status/acceptedNames/categories");
    let kind_kept = keep(kind);
    let mut infos = Vec::new();
    for version in crd::versions(crd_obj) {
        if version.get("served").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let version_name = version.get("name").and_then(Value::as_str)?;
        let schema_json = version.pointer("/schema/openAPIV3Schema")?;
        let strategy = CustomResource::for_version(version, namespaced)?;
        let status_on = strategy.supports(Subresource::Status);
        let scale_on = strategy.supports(Subresource::Scale);
        let mut resource = Resource::group(group, version_name, kind, plural);
        resource.etcd_prefix = format!("{group}/{plural}");
        let mut info = ResourceInfo::new(resource, singular, Arc::new(strategy), printer(version));
        info.namespaced = namespaced;
        info.short_names = short_names;
        info.categories = categories;
        info.verbs = ALL_VERBS;
        info.custom = true;
        info.terminating = !meta::get_str(crd_obj, "deletionTimestamp").is_empty();
        info.schema = Some(Arc::new(schema_json.clone()));
        info.protobuf = false;
        if status_on {
            info.subresources.push(status(kind_kept));
        }
        if scale_on {
            info.subresources.push(crate::apis::scale());
        }
        infos.push(info);
    }
    Some(infos)
}

/// The catalog entries a CRD object would give once accepted with the names it asks for (after the
/// defaults): what a scenario's validator uses to resolve the custom resources its steps name before any
/// server has seen the CRD. `None` for an object that is not a valid CRD's.
pub fn declared_resource_infos(crd_obj: &Value) -> Option<Vec<ResourceInfo>> {
    let mut obj = crd_obj.clone();
    crd::set_defaults(&mut obj);
    let names = obj.pointer("/spec/names")?.clone();
    obj["status"] = serde_json::json!({"acceptedNames": names});
    resource_infos(&obj)
}

/// The table of a version: Name, then its `additionalPrinterColumns` (or Age when it has none), each
/// read by its JSONPath; a `date` cell is the timestamp, which kubectl shows as an age.
pub(crate) fn printer(version: &Value) -> Printer {
    let mut columns = vec![name_column()];
    let declared = version.get("additionalPrinterColumns").and_then(Value::as_array).cloned().unwrap_or_default();
    let declared = if declared.is_empty() {
        vec![serde_json::json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})]
    } else {
        declared
    };
    for c in declared {
        let get = |f: &str| c.get(f).and_then(Value::as_str).unwrap_or("").to_string();
        let path = get("jsonPath");
        let description = match get("description") {
            d if d.is_empty() => format!("Custom resource definition column (in JSONPath format): {path}"),
            d => d,
        };
        let kind = match get("type").as_str() {
            "integer" => "integer",
            "number" => "number",
            "boolean" => "boolean",
            "date" => "date",
            _ => "string",
        };
        columns.push(Column {
            name: Cow::Owned(get("name")),
            kind,
            format: Cow::Owned(get("format")),
            description: Cow::Owned(description),
            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0) as i32,
            json_path: Some(path),
        });
    }
    Printer { columns, cells: cells_by_json_path }
}

fn cells_by_json_path(obj: &Value, _now_unix_s: i64, columns: &[Column]) -> Vec<Value> {
    columns
        .iter()
        .map(|c| match &c.json_path {
            None => Value::from(meta::get_str(obj, "name")),
            Some(path) => match json_path(obj, path) {
                None => Value::Null,
                Some(Value::String(s)) => Value::String(s),
                Some(v @ (Value::Number(_) | Value::Bool(_))) if c.kind != "string" => v,
                Some(v @ (Value::Number(_) | Value::Bool(_))) => Value::String(v.to_string()),
                Some(v) => Value::String(v.to_string()),
            },
        })
        .collect()
}
