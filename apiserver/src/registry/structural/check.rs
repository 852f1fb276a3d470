//! The structural-schema check of a CRD schema, on its JSON: upstream's `ValidateStructural`
//! (`pkg/apiserver/schema/validation.go`, invariants; `complete.go`, completeness of the value validations),
//! run with the default options (no nested additionalProperties or x-kubernetes-validations in the logical
//! junctors). Like upstream, the errors are sorted by their text.

use serde_json::{Map, Value};

use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

fn obj(v: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    v.as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn present(v: &Value, k: &str) -> bool {
    v.get(k).is_some_and(|x| !x.is_null())
}

fn non_empty(v: &Value, k: &str) -> bool {
    match v.get(k) {
        None | Some(Value::Null) => false,
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

fn sorted_props(v: &Value) -> Vec<(&String, &Value)> {
    let mut props: Vec<(&String, &Value)> = v.get("properties").map(obj).into_iter().flatten().collect();
    props.sort_by(|a, b| a.0.cmp(b.0));
    props
}

fn invalid_str(field: String, value: &str, detail: &str) -> FieldError {
    FieldError::invalid(&field, value, detail)
}

fn invalid_bool(field: String, value: bool, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Invalid,
        field,
        value: BadValue::GoSyntax(value.to_string()),
        detail: detail.into(),
    }
}

/// The first field that upstream's `NewStructural` refuses (`validateUnsupportedFields`), anywhere in the
/// schema, with its message; the CRD rules report the same fields with paths, so this shows only alone.
pub(super) fn unsupported_field(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    for (key, name) in [
        ("id", "id"),
        ("$schema", "schema"),
        ("$ref", "$ref"),
        ("patternProperties", "patternProperties"),
        ("dependencies", "dependencies"),
        ("additionalItems", "additionalItems"),
        ("definitions", "definitions"),
    ] {
        if non_empty(v, key) {
            return Some(format!("OpenAPIV3Schema '{name}' is not supported"));
        }
    }
    if let Some(Value::Array(_)) = m.get("items") {
        return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".into());
    }
    let mut children: Vec<&Value> = Vec::new();
    children.extend(m.get("items"));
    children.extend(m.get("not"));
    children.extend(m.get("additionalProperties").filter(|a| a.is_object()));
    for k in ["allOf", "anyOf", "oneOf"] {
        children.extend(m.get(k).and_then(Value::as_array).into_iter().flatten());
    }
    children.extend(m.get("properties").map(obj).into_iter().flatten().map(|(_, p)| p));
    children.into_iter().find_map(unsupported_field)
}

/// `ValidateStructural`: invariants and completeness, sorted by text.
pub(super) fn structural(v: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    invariants(v, Level::Root, path, &mut errs);
    completeness(v, path, &mut errs);
    errs.sort_by_key(|e| e.to_string());
    errs
}

fn invariants(v: &Value, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    let ty = s(v, "type");
    if ty == "array" && !present(v, "items") {
        errs.push(FieldError::required(&format!("{path}.items"), "must be specified"));
    }
    if let Some(items) = v.get("items").filter(|i| i.is_object()) {
        invariants(items, Level::Item, &format!("{path}.items"), errs);
    }
    for (k, p) in sorted_props(v) {
        invariants(p, Level::Field, &format!("{path}.properties[{k}]"), errs);
    }
    let additional = v.get("additionalProperties").filter(|a| !a.is_null());
    if let Some(ap) = additional {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(&format!("{path}.additionalProperties"), "must not be used at the root"));
        }
        if ap.is_object() {
            invariants(ap, Level::Field, &format!("{path}.additionalProperties"), errs);
        }
    }
    let int_or_string = flag(v, "x-kubernetes-int-or-string");
    let preserve = flag(v, "x-kubernetes-preserve-unknown-fields");
    let embedded = flag(v, "x-kubernetes-embedded-resource");
    if int_or_string && preserve {
        errs.push(invalid_bool(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(invalid_bool(
            format!("{path}.x-kubernetes-embedded-resource"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(v, is_int_or_string_any_of(v), is_int_or_string_all_of(v), path, errs);

    let check_metadata = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        let msg = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            errs.push(FieldError::required(&format!("{path}.type"), msg));
        } else {
            errs.push(invalid_str(format!("{path}.type"), ty, msg));
        }
    } else if ty.is_empty() && !int_or_string && !preserve {
        let msg = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(&format!("{path}.type"), msg));
    }
    if embedded && additional.is_some() {
        errs.push(FieldError::forbidden(
            &format!("{path}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(invalid_str(format!("{path}.type"), ty, "must be object at the root"));
    }
    let props = v.get("properties").map(obj);
    for meta_field in ["kind", "apiVersion"] {
        if let Some(p) = props.and_then(|m| m.get(meta_field)).filter(|_| check_metadata) {
            let t = s(p, "type");
            if t != "string" {
                errs.push(invalid_str(format!("{path}.properties[{meta_field}].type"), t, "must be string"));
            }
        }
    }
    if let Some(meta) = props.and_then(|m| m.get("metadata")) {
        metadata_invariants(meta, check_metadata, lvl, &format!("{path}.properties[metadata]"), errs);
    }
    if embedded && !preserve && !non_empty(v, "properties") {
        errs.push(FieldError::required(
            &format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `validateStructuralMetadataInvariants`: metadata is an object, and at the root it may only name `name`
/// and `generateName` (besides type and default), because the server owns ObjectMeta's schema.
fn metadata_invariants(v: &Value, check_metadata: bool, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    let ty = s(v, "type");
    if check_metadata && ty != "object" {
        errs.push(invalid_str(format!("{path}.type"), ty, "must be object"));
    }
    if lvl != Level::Root {
        return;
    }
    let props: Vec<&String> = v.get("properties").map(obj).into_iter().flatten().map(|(k, _)| k).collect();
    let name_only = !props.is_empty() && props.iter().all(|k| *k == "name" || *k == "generateName");
    // What `Structural` keeps besides type, default and those properties; `example` and `externalDocs` are
    // not part of it, so upstream does not see them.
    let other = obj(v).iter().any(|(k, x)| match k.as_str() {
        "type" | "default" | "example" | "externalDocs" => false,
        "properties" => !(name_only || x.is_object() && props.is_empty()),
        "nullable"
        | "uniqueItems"
        | "exclusiveMaximum"
        | "exclusiveMinimum"
        | "x-kubernetes-embedded-resource"
        | "x-kubernetes-int-or-string"
        | "x-kubernetes-preserve-unknown-fields" => x.as_bool() == Some(true),
        "x-kubernetes-validations"
        | "allOf"
        | "anyOf"
        | "oneOf"
        | "enum"
        | "required"
        | "x-kubernetes-list-map-keys" => x.as_array().is_some_and(|a| !a.is_empty()),
        "description" | "title" | "format" | "pattern" => x.as_str().is_some_and(|s| !s.is_empty()),
        _ => !x.is_null(),
    });
    if other {
        errs.push(FieldError::forbidden(
            path,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

/// Whether `anyOf` is exactly `[{type: integer}, {type: string}]`, the int-or-string idiom.
fn int_or_string_pair(any_of: Option<&Value>) -> bool {
    let Some(Value::Array(a)) = any_of else { return false };
    a.len() == 2 && a[0] == serde_json::json!({"type": "integer"}) && a[1] == serde_json::json!({"type": "string"})
}

fn is_int_or_string_any_of(v: &Value) -> bool {
    int_or_string_pair(v.get("anyOf"))
}

fn is_int_or_string_all_of(v: &Value) -> bool {
    v.get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .is_some_and(|first| int_or_string_pair(first.get("anyOf")))
}

/// `validateValueValidation`: the junctors must be pure value validations; patterns must compile.
fn value_validation(
    v: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let list = |k: &str| v.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if !skip_any_of {
        for (i, n) in list("anyOf").iter().enumerate() {
            nested(n, false, &format!("{path}.anyOf[{i}]"), errs);
        }
    }
    for (i, n) in list("allOf").iter().enumerate() {
        nested(n, skip_first_all_of_any_of && i == 0, &format!("{path}.allOf[{i}]"), errs);
    }
    for (i, n) in list("oneOf").iter().enumerate() {
        nested(n, false, &format!("{path}.oneOf[{i}]"), errs);
    }
    if let Some(n) = v.get("not").filter(|n| n.is_object()) {
        nested(n, false, &format!("{path}.not"), errs);
    }
    let pattern = s(v, "pattern");
    if !pattern.is_empty() {
        if let Err(e) = regex::Regex::new(pattern) {
            // Upstream prints Go's regexp error; the Rust engine's differs in wording.
            let detail =
                format!("must be a valid regular expression, but isn't: error parsing regexp: {}", regex_error(&e));
            errs.push(invalid_str(format!("{path}.pattern"), pattern, &detail));
        }
    }
}

/// The regex crate's error in one line (its syntax errors span several).
pub(super) fn regex_error(e: &regex::Error) -> String {
    e.to_string().lines().rfind(|l| !l.trim().is_empty()).unwrap_or("invalid pattern").trim().to_string()
}

/// `validateNestedValueValidation`: inside allOf/anyOf/oneOf/not nothing but value validations.
fn nested(v: &Value, skip_any_of: bool, path: &str, errs: &mut Vec<FieldError>) {
    value_validation(v, skip_any_of, false, path, errs);
    if let Some(items) = v.get("items").filter(|i| i.is_object()) {
        nested(items, false, &format!("{path}.items"), errs);
    }
    for (k, p) in sorted_props(v) {
        nested(p, false, &format!("{path}.properties[{k}]"), errs);
    }
    let forbid = |errs: &mut Vec<FieldError>, key: &str, msg: &str| {
        errs.push(FieldError::forbidden(&format!("{path}.{key}"), msg));
    };
    if non_empty(v, "type") {
        forbid(errs, "type", "must be empty to be structural");
    }
    if present(v, "additionalProperties") {
        forbid(errs, "additionalProperties", "must be undefined to be structural");
    }
    if present(v, "default") {
        forbid(errs, "default", "must be undefined to be structural");
    }
    if non_empty(v, "title") {
        forbid(errs, "title", "must be empty to be structural");
    }
    if non_empty(v, "description") {
        forbid(errs, "description", "must be empty to be structural");
    }
    if flag(v, "nullable") {
        forbid(errs, "nullable", "must be false to be structural");
    }
    for (key, msg) in [
        ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
        ("x-kubernetes-embedded-resource", "must be false to be structural"),
        ("x-kubernetes-int-or-string", "must be false to be structural"),
    ] {
        if flag(v, key) {
            forbid(errs, key, msg);
        }
    }
    if non_empty(v, "x-kubernetes-list-map-keys") {
        forbid(errs, "x-kubernetes-list-map-keys", "must be empty to be structural");
    }
    for key in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if present(v, key) {
            forbid(errs, key, "must be undefined to be structural");
        }
    }
    if non_empty(v, "x-kubernetes-validations") {
        forbid(errs, "x-kubernetes-validations", "must be empty to be structural");
    }
    if v.get("properties").map(obj).is_some_and(|m| m.contains_key("metadata")) {
        errs.push(FieldError::forbidden(
            &format!("{path}.properties[metadata]"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateStructuralCompleteness`: every property and items that the root's junctors constrain must be
/// specified in the structural part too.
fn completeness(v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    value_validation_completeness(v, Some(v), path, path, errs);
}

fn value_validation_completeness(
    v: &Value,
    s_node: Option<&Value>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s_node) = s_node else { return };
    if let Some(n) = v.get("not").filter(|n| n.is_object()) {
        nested_completeness(n, Some(s_node), s_path, &format!("{v_path}.not"), errs);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for (i, n) in v.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            nested_completeness(n, Some(s_node), s_path, &format!("{v_path}.{key}[{i}]"), errs);
        }
    }
}

fn nested_completeness(v: &Value, s_node: Option<&Value>, s_path: &str, v_path: &str, errs: &mut Vec<FieldError>) {
    let Some(s_node) = s_node else {
        errs.push(FieldError::required(s_path, &format!("because it is defined in {v_path}")));
        return;
    };
    value_validation_completeness(v, Some(s_node), s_path, v_path, errs);
    if let Some(items) = v.get("items").filter(|i| i.is_object()) {
        let s_items = s_node.get("items").filter(|i| i.is_object());
        nested_completeness(items, s_items, &format!("{s_path}.items"), &format!("{v_path}.items"), errs);
    }
    for (k, p) in sorted_props(v) {
        let s_prop = s_node.get("properties").map(obj).and_then(|m| m.get(k.as_str()));
        match s_prop {
            Some(sp) => nested_completeness(
                p,
                Some(sp),
                &format!("{s_path}.properties[{k}]"),
                &format!("{v_path}.properties[{k}]"),
                errs,
            ),
            None => errs.push(FieldError::required(
                &format!("{s_path}.properties[{k}]"),
                &format!("because it is defined in {v_path}.properties[{k}]"),
            )),
        }
    }
}
