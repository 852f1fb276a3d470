//! Custom resources: what an established CRD becomes in the catalog — one [`ResourceInfo`] per served
//! version, each with the strategy of apiextensions-apiserver's `pkg/registry/customresource/strategy.go`
//! over that version's structural schema and CEL rules, and a printer from its `additionalPrinterColumns`
//! (`pkg/registry/customresource/tableconvertor`).
//!
//! Objects are pruned and defaulted before anything else looks at them (upstream does it while decoding),
//! then validated against the schema, then against the rules. With `/status`, the main endpoint keeps the
//! stored status and the status endpoint keeps everything else; the generation follows every change
//! outside `metadata` and `status`.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::apiextensions::cel_rules::RuleTree;
use crate::apiextensions::crd;
use crate::apiextensions::schema::Structural;
use crate::apis::printers::{name_column, Column, Printer};
use crate::apis::{status, ResourceInfo, ALL_VERBS};
use crate::registry::field_error::FieldError;
use crate::registry::managed_fields::shape::Shape;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::{common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The strategy of one served version of a custom resource.
pub struct CustomResource {
    namespaced: bool,
    schema: Arc<Structural>,
    rules: RuleTree,
    status: bool,
    /// `selectableFields` beyond the metadata ones: the selector key (`spec.color`) and the path it reads.
    selectable: Vec<String>,
    scale: Option<ScalePaths>,
}

/// The `scale` subresource's JSONPaths (`.spec.replicas`, `.status.replicas`, `.status.selector`).
struct ScalePaths {
    spec_replicas: String,
    status_replicas: String,
    label_selector: Option<String>,
}

impl CustomResource {
    /// Pruning and defaulting, as decoding does them; repeated after a patch or a merge, which may bring
    /// fields back.
    fn prune_and_default(&self, obj: &mut Value) {
        self.schema.prune(obj);
        self.schema.default(obj);
    }

    fn check(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = self.schema.validate(obj);
        if errs.is_empty() {
            // Rules assume a value that fits the schema, as upstream runs them only then.
            errs.extend(self.rules.check(obj, old));
        }
        errs
    }
}

/// Everything but `metadata` and `status`: what bumps the generation when it changes.
fn content(obj: &Value) -> Value {
    let mut copy = obj.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("metadata");
        map.remove("status");
    }
    copy
}

impl Strategy for CustomResource {
    fn namespace_scoped(&self) -> bool {
        self.namespaced
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn decode(&self, obj: &mut Value) {
        self.prune_and_default(obj);
    }

    fn field_shape(&self) -> Option<Shape> {
        Some(Shape::custom_root(self.schema.clone()))
    }

    fn unknown_fields(&self, obj: &Value) -> Option<Vec<String>> {
        Some(self.schema.prune(&mut obj.clone()))
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        self.prune_and_default(obj);
        if self.status {
            if let Some(map) = obj.as_object_mut() {
                map.remove("status");
            }
        }
        start_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        self.prune_and_default(new);
        if self.status {
            common::keep_status(new, old);
        }
        if content(new) != content(old) {
            let generation = meta::get(old, "generation").and_then(Value::as_i64).unwrap_or(0);
            meta::set(new, "generation", Some(Value::from(generation + 1)));
        }
    }

    fn supports(&self, sub: Subresource) -> bool {
        match sub {
            Subresource::Status => self.status,
            Subresource::Scale => self.scale.is_some(),
            _ => false,
        }
    }

    /// apiextensions-apiserver's `scaleUpdatedObjectInfo`: the replicas at the CRD's paths, a missing spec
    /// value read as 0, the selector the string at `labelSelectorPath`.
    fn to_scale(&self, obj: &Value) -> Option<Value> {
        let paths = self.scale.as_ref()?;
        let mut metadata = serde_json::Map::new();
        for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
            if let Some(v) = meta::get(obj, field) {
                metadata.insert(field.into(), v.clone());
            }
        }
        let replicas = |path: &str| json_path(obj, path).and_then(|v| v.as_i64()).unwrap_or(0);
        let mut status = serde_json::json!({"replicas": replicas(&paths.status_replicas)});
        if let Some(selector) = paths.label_selector.as_ref().and_then(|p| json_path(obj, p)) {
            if let Some(text) = selector.as_str().filter(|s| !s.is_empty()) {
                status["selector"] = text.into();
            }
        }
        Some(serde_json::json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": metadata,
            "spec": {"replicas": replicas(&paths.spec_replicas)},
            "status": status,
        }))
    }

    fn apply_scale(&self, obj: &Value, scale: &Value) -> Option<Value> {
        let paths = self.scale.as_ref()?;
        let mut new = obj.clone();
        let replicas = scale.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
        set_path(&mut new, &paths.spec_replicas, Value::from(replicas));
        match meta::get_str(scale, "resourceVersion") {
            "" => meta::set(&mut new, "resourceVersion", None),
            rv => meta::set(&mut new, "resourceVersion", Some(Value::from(rv))),
        }
        Some(new)
    }

    fn prepare_for_subresource_update(&self, sub: Subresource, new: &mut Value, old: &Value) {
        if sub == Subresource::Scale {
            // A Scale's replicas go through the main endpoint's rules, as upstream's scale REST updates
            // through the main store.
            self.prepare_for_update(new, old);
            return;
        }
        self.prune_and_default(new);
        common::keep_all_but_status(new, old);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta(obj, self.namespaced, names::name_is_dns_subdomain);
        errs.extend(self.check(obj, None));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, self.namespaced, names::name_is_dns_subdomain);
        errs.extend(self.check(new, Some(old)));
        errs
    }

    fn selectable_field(&self, obj: &Value, key: &str) -> Option<String> {
        if !self.selectable.iter().any(|k| k == key) {
            return None;
        }
        Some(match json_path(obj, &format!(".{key}")) {
            Some(Value::String(s)) => s,
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        })
    }

    fn supports_field(&self, key: &str) -> bool {
        self.selectable.iter().any(|k| k == key)
    }

    fn unsupported_field_message(&self, key: &str) -> String {
        format!("field label not supported: {key}")
    }
}

impl DeleteStrategy for CustomResource {}

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
pub fn resource_infos(crd_obj: &Value) -> Option<Vec<ResourceInfo>> {
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
        let schema = Structural::parse(schema_json, "schema").ok()?;
        let rules = RuleTree::compile(schema_json, "schema").ok()?;
        let status_on = version.pointer("/subresources/status").is_some();
        let selectable = version
            .get("selectableFields")
            .and_then(Value::as_array)
            .map(|fs| {
                fs.iter()
                    .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                    .map(|p| p.trim_start_matches('.').to_string())
                    .collect()
            })
            .unwrap_or_default();
        let scale = version.pointer("/subresources/scale").map(|s| {
            let path = |f: &str| s.get(f).and_then(Value::as_str).unwrap_or("").to_string();
            ScalePaths {
                spec_replicas: path("specReplicasPath"),
                status_replicas: path("statusReplicasPath"),
                label_selector: Some(path("labelSelectorPath")).filter(|p| !p.is_empty()),
            }
        });
        let scale_on = scale.is_some();
        let schema = Arc::new(schema);
        let strategy = CustomResource { namespaced, schema, rules, status: status_on, selectable, scale };
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
pub fn printer(version: &Value) -> Printer {
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

/// Sets the value at a simple dotted JSONPath (`.spec.replicas`), making the objects on the way.
fn set_path(obj: &mut Value, path: &str, value: Value) {
    let parts: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut current = obj;
    for (i, part) in parts.iter().enumerate() {
        if !current.is_object() {
            *current = Value::Object(serde_json::Map::new());
        }
        let map = current.as_object_mut().expect("made an object above");
        if i + 1 == parts.len() {
            map.insert(part.to_string(), value);
            return;
        }
        current = map.entry(part.to_string()).or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
}

/// The value at a simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`), as printer columns and
/// selectable fields use them.
pub fn json_path(obj: &Value, path: &str) -> Option<Value> {
    let mut current = obj;
    for part in path.trim_start_matches('.').split('.') {
        let (name, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            current = current.get(name)?;
        }
        for index in indices.split('[').filter(|s| !s.is_empty()) {
            let i: usize = index.trim_end_matches(']').parse().ok()?;
            current = current.get(i)?;
        }
    }
    Some(current.clone())
}
