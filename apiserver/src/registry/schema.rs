//! The shape of every built-in kind's JSON, from k8s-openapi's schemas (generated from the Go types, so
//! their field names and types are the Go structs' JSON tags and types), walked to find what kube's
//! decoder finds in a body:
//!
//! - a value whose JSON type does not fit its field's Go type, in the words of Go's `encoding/json`
//!   (`json: cannot unmarshal number into Go struct field ConfigMap.data of type string`), where the
//!   struct is the innermost one and the path runs from the root without list indexes or map keys;
//! - the fields the type does not have, as the strict decoder (sigs.k8s.io/json) lists them for
//!   `fieldValidation` (`unknown field "spec.containers[0].imagePullPolcy"`).
//!
//! The apimachinery types with JSON of their own are read as their `UnmarshalJSON` reads them: `Quantity`
//! (a string or a number that parses as a quantity), `IntOrString` (a number or a string), `Time` (a
//! string), `RawExtension` and `FieldsV1` (any JSON).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::registry::kinds;

/// Where schemars puts definitions, as `$ref` names them.
const REF_PREFIX: &str = "#/components/schemas/";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
/// The apiextensions types whose JSON is not their schema's shape.
const CRD_UNIONS: &[&str] = &[
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
];

/// `resource.ParseQuantity`'s error for text that is not a quantity (`ErrFormatWrong`).
pub(crate) const QUANTITY_FORMAT_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// Fields whose Go type is a named string type, which Go's errors name (`[]v1.FinalizerName`); others
/// are `string`. Only the ones clients are likely to get wrong are listed.
const NAMED_STRINGS: &[(&str, &str, &str)] = &[
    ("io.k8s.api.core.v1.NamespaceSpec", "finalizers", "v1.FinalizerName"),
    ("io.k8s.api.core.v1.ContainerPort", "protocol", "v1.Protocol"),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "v1.Protocol"),
    ("io.k8s.api.core.v1.ServiceSpec", "type", "v1.ServiceType"),
    ("io.k8s.api.core.v1.Secret", "type", "v1.SecretType"),
    ("io.k8s.api.core.v1.PodSpec", "restartPolicy", "v1.RestartPolicy"),
    ("io.k8s.api.core.v1.Container", "imagePullPolicy", "v1.PullPolicy"),
];

/// The definitions of every built-in kind and of every type they reach, by name
/// (`io.k8s.api.core.v1.Pod`).
pub struct Schemas {
    definitions: BTreeMap<String, Value>,
    /// The definition of each kind, by (group, version, kind).
    kinds: BTreeMap<(String, String, String), String>,
}

/// The schemas, generated once (the table is fixed at compile time).
pub fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(Schemas::generate)
}

impl Schemas {
    fn generate() -> Schemas {
        use k8s_openapi::schemars::generate::SchemaSettings;
        let mut generator = SchemaSettings::openapi3().into_generator();
        let mut kinds = BTreeMap::new();
        for kind in kinds::all() {
            let reference = (kind.schema)(&mut generator);
            let name = reference.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix(REF_PREFIX));
            let name = name.expect("k8s-openapi kinds are referenced by name").to_string();
            kinds.insert((kind.group.to_string(), kind.version.to_string(), kind.kind.to_string()), name);
        }
        let definitions = generator.take_definitions(true).into_iter().collect();
        Schemas { definitions, kinds }
    }

    /// The definition name of a built-in kind.
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.kinds.get(&(group.to_string(), version.to_string(), kind.to_string())).map(String::as_str)
    }

    /// Go's `UnmarshalTypeError` (or the custom unmarshaller's error) for the first value of `obj` that does
    /// not fit the kind `definition`, fields in name order.
    pub(crate) fn type_error(&self, definition: &str, obj: &Value) -> Option<String> {
        let schema = self.definitions.get(definition)?;
        self.struct_error(definition, schema, obj, "")
    }

    /// The fields of `obj` the kind `definition` does not have, as the strict decoder names them.
    pub(crate) fn unknown_fields(&self, definition: &str, obj: &Value) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(schema) = self.definitions.get(definition) {
            self.unknown(schema, obj, "", &mut out);
        }
        out
    }

    /// Whether the type `definition` requires `field` (kube's OpenAPI requires exactly the fields Go writes
    /// without `omitempty`). The protobuf codec asks, which only the real build has.
    #[cfg(not(madsim))]
    pub(crate) fn is_required(&self, definition: &str, field: &str) -> bool {
        let required = self.definitions.get(definition).and_then(|d| d.get("required")).and_then(Value::as_array);
        required.is_some_and(|r| r.iter().any(|f| f.as_str() == Some(field)))
    }

    /// The description of `field` of the type `definition`, as the API documents it.
    pub(crate) fn field_description(&self, definition: &str, field: &str) -> Option<String> {
        let property = self.definitions.get(definition)?.get("properties")?.get(field)?;
        property.get("description").and_then(Value::as_str).map(str::to_string)
    }

    /// The definition that the values of `field` of the type `definition` have: the field's own type, its
    /// list's items' or its map's values' (`None` for scalars, lists of scalars and unknown fields). What a
    /// strategic merge patch follows down an object.
    pub(crate) fn field_definition(&self, definition: &str, field: &str) -> Option<&str> {
        let property = self.definitions.get(definition)?.get("properties")?.get(field)?;
        let (name, schema) = self.resolve(property);
        if name.is_some() {
            return name;
        }
        let inner = schema.get("items").or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))?;
        self.resolve(inner).0
    }

    /// The schema of `field` of the type `definition`, as the documents have it (often a reference).
    pub(crate) fn property(&self, definition: &str, field: &str) -> Option<&Value> {
        self.definitions.get(definition)?.get("properties")?.get(field)
    }

    /// `schema` with its reference followed: the definition's name if it was a reference, and the schema.
    pub(crate) fn follow<'a>(&'a self, schema: &'a Value) -> (Option<&'a str>, &'a Value) {
        self.resolve(schema)
    }

    /// Removes the fields of `obj` the kind `definition` does not have, at any depth.
    pub(crate) fn prune(&self, definition: &str, obj: &mut Value) {
        if let Some(schema) = self.definitions.get(definition) {
            self.prune_value(schema, obj);
        }
    }

    fn prune_value(&self, schema: &Value, value: &mut Value) {
        let (_, schema) = self.resolve(schema);
        match value {
            Value::Object(map) => {
                if let Some(elem) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                    map.values_mut().for_each(|v| self.prune_value(elem, v));
                    return;
                }
                let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
                map.retain(|key, _| properties.contains_key(key));
                for (key, v) in map.iter_mut() {
                    self.prune_value(&properties[key], v);
                }
            }
            Value::Array(items) => {
                if let Some(item) = schema.get("items") {
                    items.iter_mut().for_each(|v| self.prune_value(item, v));
                }
            }
            _ => {}
        }
    }

    /// Follows a `$ref` (bare, or in an `allOf` that carries a description) to its definition name and
    /// schema.
    fn resolve<'a>(&'a self, schema: &'a Value) -> (Option<&'a str>, &'a Value) {
        let reference = schema
            .get("$ref")
            .or_else(|| schema.get("allOf").and_then(|all| all.get(0)).and_then(|first| first.get("$ref")))
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(REF_PREFIX));
        match reference.and_then(|name| self.definitions.get_key_value(name)) {
            Some((name, definition)) => (Some(name.as_str()), definition),
            None => (None, schema),
        }
    }

    fn struct_error(&self, name: &str, schema: &Value, obj: &Value, path: &str) -> Option<String> {
        let properties = schema.get("properties").and_then(Value::as_object)?;
        let Value::Object(fields) = obj else { return None };
        for (field, value) in fields {
            let Some(property) = properties.get(field) else { continue };
            let here = if path.is_empty() { field.clone() } else { format!("{path}.{field}") };
            let named = NAMED_STRINGS.iter().find(|(s, f, _)| *s == name && f == field).map(|(_, _, t)| *t);
            // Go names the struct in `Go struct field S.path` without its package.
            let owner = name.rsplit('.').next().unwrap_or(name);
            if let Some(err) = self.value_error(&Owner { go: owner, named }, property, value, &here) {
                return Some(err);
            }
        }
        None
    }

    fn value_error(&self, owner: &Owner<'_>, schema: &Value, value: &Value, path: &str) -> Option<String> {
        if value.is_null() {
            // null leaves a Go value at its zero value.
            return None;
        }
        let (definition, schema) = self.resolve(schema);
        let wrong = |go_type: String| {
            let shown = match value {
                Value::Number(n) if go_type.starts_with("int") || go_type.starts_with("uint") => format!("number {n}"),
                other => json_type(other).to_string(),
            };
            Some(format!("json: cannot unmarshal {shown} into Go struct field {}.{path} of type {go_type}", owner.go))
        };
        match definition {
            Some(QUANTITY) => {
                let text = match value {
                    Value::String(s) => s.trim().to_string(),
                    Value::Number(n) => n.to_string(),
                    _ => return Some(QUANTITY_FORMAT_ERROR.into()),
                };
                return (!is_quantity(&text)).then(|| QUANTITY_FORMAT_ERROR.into());
            }
            // A CRD schema's free-form values (`default`, `enum`, `example`) and its either-or fields
            // (`additionalProperties`: a bool or a schema; `items`: a schema or a list of them) take any JSON,
            // as their own `UnmarshalJSON`s do; their contents are the CRD validation's to judge.
            Some(d) if CRD_UNIONS.contains(&d) => return None,
            Some(INT_OR_STRING) => {
                return match value {
                    Value::String(_) => None,
                    Value::Number(n) if n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => None,
                    _ => wrong("int32".into()),
                };
            }
            _ => {}
        }
        let go_type = self.go_type(owner.named, schema, definition);
        match (schema.get("type").and_then(Value::as_str), value) {
            (Some("string"), Value::String(text)) if go_type == "[]uint8" => base64_error(text),
            (Some("string"), Value::String(_)) | (Some("boolean"), Value::Bool(_)) => None,
            (Some("integer"), Value::Number(n)) => {
                let fits = match schema.get("format").and_then(Value::as_str) {
                    Some("int32") => n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
                    _ => n.is_i64(),
                };
                if fits {
                    None
                } else {
                    wrong(go_type)
                }
            }
            (Some("number"), Value::Number(_)) => None,
            (Some("array"), Value::Array(items)) => {
                let item = schema.get("items")?;
                let elem = Owner { go: owner.go, named: owner.named };
                items.iter().find_map(|v| self.value_error(&elem, item, v, path))
            }
            (Some("object"), Value::Object(map)) => {
                if let Some(elem) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                    return map.values().find_map(|v| self.value_error(owner, elem, v, path));
                }
                match definition {
                    Some(name) => self.struct_error(name, schema, value, path),
                    None => None,
                }
            }
            // A type without a JSON type (RawExtension, preserve-unknown-fields) takes anything.
            (None, _) => None,
            _ => wrong(go_type),
        }
    }

    /// The Go type of a schema, as Go's errors print it.
    fn go_type(&self, named: Option<&str>, schema: &Value, definition: Option<&str>) -> String {
        let (definition, schema) = match definition {
            Some(d) => (Some(d), schema),
            None => self.resolve(schema),
        };
        let format = schema.get("format").and_then(Value::as_str);
        match schema.get("type").and_then(Value::as_str) {
            Some("string") if format == Some("byte") => "[]uint8".into(),
            Some("string") if format == Some("date-time") => "string".into(),
            Some("string") => named.unwrap_or("string").into(),
            Some("integer") if format == Some("int32") => "int32".into(),
            Some("integer") => "int64".into(),
            Some("number") => "float64".into(),
            Some("boolean") => "bool".into(),
            Some("array") => {
                let item = schema.get("items").cloned().unwrap_or(Value::Null);
                format!("[]{}", self.go_type(named, &item, None))
            }
            Some("object") => match (definition, schema.get("additionalProperties").filter(|a| a.is_object())) {
                (_, Some(elem)) => format!("map[string]{}", self.go_type(named, elem, None)),
                (Some(name), None) if schema.get("properties").is_some() => go_name(name),
                _ => "map[string]interface {}".into(),
            },
            _ => definition.map(go_name).unwrap_or_else(|| "interface {}".into()),
        }
    }

    fn unknown(&self, schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
        let (_, schema) = self.resolve(schema);
        match value {
            Value::Object(map) => {
                if let Some(elem) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                    for (key, v) in map {
                        self.unknown(elem, v, &join(path, key), out);
                    }
                    return;
                }
                let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
                unknown_in(self, properties, map, path, out);
            }
            Value::Array(items) => {
                let Some(item) = schema.get("items") else { return };
                for (i, v) in items.iter().enumerate() {
                    self.unknown(item, v, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
}

/// Go's `base64.CorruptInputError` for text that is not standard base64 (`[]byte` fields).
fn base64_error(text: &str) -> Option<String> {
    use base64::Engine;
    let err = base64::engine::general_purpose::STANDARD.decode(text).err()?;
    let at = match err {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => at,
        base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidPadding => text.len() / 4 * 4,
    };
    Some(format!("illegal base64 data at input byte {at}"))
}

fn unknown_in(
    schemas: &Schemas,
    properties: &Map<String, Value>,
    map: &Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
) {
    for (key, v) in map {
        match properties.get(key) {
            Some(property) => schemas.unknown(property, v, &join(path, key), out),
            None => out.push(join(path, key)),
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The struct a field belongs to, as Go's errors name it, and the field's named string type if any.
struct Owner<'a> {
    go: &'a str,
    named: Option<&'a str>,
}

/// How Go prints a struct type: its package's last path element and its name (`v1.ObjectMeta`,
/// `resource.Quantity`), from a definition name (`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`).
fn go_name(definition: &str) -> String {
    let mut parts = definition.rsplit('.');
    let name = parts.next().unwrap_or(definition);
    match parts.next() {
        Some(package) => format!("{package}.{name}"),
        None => name.to_string(),
    }
}

/// The JSON type name Go's decoder reports.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `text` matches `ParseQuantity`'s grammar: a signed decimal number and an optional suffix (a
/// binary or decimal SI suffix, or an exponent).
pub(crate) fn is_quantity(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let digits_end = unsigned.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(digits_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return false;
    }
    match suffix {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        exponent => match exponent.strip_prefix(['e', 'E']) {
            Some(rest) => {
                let rest = rest.strip_prefix(['+', '-']).unwrap_or(rest);
                !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit())
            }
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn type_errors_read_as_gos() {
        let s = schemas();
        let cases = [
            ("ConfigMap", "", "v1", json!({"metadata": {"name": "a", "labels": {"x": 1}}}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
            ("ConfigMap", "", "v1", json!({"data": "x"}),
                "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string"),
            ("Pod", "", "v1", json!({"spec": {"containers": [{"name": "c", "image": 5}]}}),
                "json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string"),
            ("Pod", "", "v1", json!({"spec": {"terminationGracePeriodSeconds": 1.5}}),
                "json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64"),
            ("Namespace", "", "v1", json!({"spec": {"finalizers": "kubernetes"}}),
                "json: cannot unmarshal string into Go struct field NamespaceSpec.spec.finalizers of type []v1.FinalizerName"),
            ("Deployment", "apps", "v1", json!({"spec": {"replicas": "3"}}),
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
            ("Secret", "", "v1", json!({"data": {"k": 1}}),
                "json: cannot unmarshal number into Go struct field Secret.data of type []uint8"),
            ("Secret", "", "v1", json!({"data": {"k": "not base64!"}}), "illegal base64 data at input byte 3"),
            ("Pod", "", "v1", json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}}),
                QUANTITY_FORMAT_ERROR),
            ("Service", "", "v1", json!({"spec": {"ports": [{"port": 80, "targetPort": true}]}}),
                "json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32"),
        ];
        for (kind, group, version, obj, want) in cases {
            let definition = s.kind(group, version, kind).unwrap();
            assert_eq!(s.type_error(definition, &obj).as_deref(), Some(want), "{kind} {obj}");
        }
        let fine = json!({"spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "500m", "memory": 1024}},
            "ports": [{"containerPort": 80}], "livenessProbe": {"httpGet": {"port": "http"}}}]},
            "metadata": {"creationTimestamp": null, "annotations": {"a": "b"}}});
        assert_eq!(s.type_error(s.kind("", "v1", "Pod").unwrap(), &fine), None);
    }

    #[test]
    fn unknown_fields_are_named_by_their_paths() {
        let s = schemas();
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "nmae": "x"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "imagePullPolcy": "Always"}]}}},
            "extra": true});
        assert_eq!(
            s.unknown_fields(s.kind("apps", "v1", "Deployment").unwrap(), &deployment),
            ["extra", "metadata.nmae", "spec.template.spec.containers[0].imagePullPolcy"]
        );
        let cm = json!({"data": {"any-key": "v"}, "metadata": {"labels": {"l": "v"}}});
        assert!(s.unknown_fields(s.kind("", "v1", "ConfigMap").unwrap(), &cm).is_empty());
    }

    #[test]
    fn quantities_parse_as_kube_parses_them() {
        for good in ["1", "500m", "1.5Gi", "+2", "-1k", "1e3", "1E-2", ".5", "5."] {
            assert!(is_quantity(good), "{good}");
        }
        for bad in ["", "lots", "1.2.3", "1Kb", "1e", "Gi", "."] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }
}
