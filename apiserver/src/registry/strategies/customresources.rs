//! Custom resources: the strategy of one served version of a CRD's resource, apiextensions-apiserver's
//! `pkg/registry/customresource/strategy.go` over that version's structural schema and CEL rules
//! ([`crate::registry::structural`]). The catalog entries and printers that use it are made above the
//! registry, by `crate::apiextensions::custom`.
//!
//! Objects are pruned and defaulted before anything else looks at them (upstream does it while decoding),
//! then validated against the schema, then against the rules. With `/status`, the main endpoint keeps the
//! stored status and the status endpoint keeps everything else; the generation follows every change
//! outside `metadata` and `status`.

use std::sync::Arc;

use serde_json::Value;

use crate::registry::field_error::FieldError;
use crate::registry::managed_fields::shape::Shape;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::strategies::{common, start_generation};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};
use crate::registry::structural::cel_rules::RuleTree;
use crate::registry::structural::Structural;

/// The strategy of one served version of a custom resource.
pub(crate) struct CustomResource {
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
    /// The strategy of one version of a CRD (an element of its `spec.versions`): the version's structural
    /// schema and CEL rules, `/status` and `/scale` as it declares them, and its `selectableFields`. `None`
    /// when the version has no schema, or one that no longer parses or compiles (validation refuses such
    /// CRDs; an old stored one is not served).
    pub(crate) fn for_version(version: &Value, namespaced: bool) -> Option<CustomResource> {
        let schema_json = version.pointer("/schema/openAPIV3Schema")?;
        let schema = Structural::parse(schema_json, "schema").ok()?;
        let rules = RuleTree::compile(schema_json, "schema").ok()?;
        let status = version.pointer("/subresources/status").is_some();
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
        Some(CustomResource { namespaced, schema: Arc::new(schema), rules, status, selectable, scale })
    }

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
pub(crate) fn json_path(obj: &Value, path: &str) -> Option<Value> {
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
