//! The checks that run after schema validation, as `customResourceStrategy.Validate` orders them: embedded
//! resources' apiVersion, kind and metadata (upstream `pkg/apiserver/schema/objectmeta/validation.go`), then
//! the uniqueness of `x-kubernetes-list-type` set and map lists (upstream
//! `pkg/apiserver/schema/listtype/validation.go`). Upstream walks Go maps; this port walks keys sorted.

use serde_json::{Map, Value};

use super::gofmt::{bad_value, go_sharp_v};
use super::Structural;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::schema::json_type;
use crate::registry::{meta, names};

/// The field path of a property (`a.b`), of an `additionalProperties` key (`a[b]`) and of an index (`a[0]`),
/// as apimachinery's `Path.Child`, `Key` and `Index` print them.
fn child(base: &str, k: &str) -> String {
    if base.is_empty() {
        k.to_string()
    } else {
        format!("{base}.{k}")
    }
}

fn key(base: &str, k: &str) -> String {
    format!("{base}[{k}]")
}

fn index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// `objectmeta.Validate(base, obj, s, as_resource)`: the embedded resources in `obj` (and `obj` itself when
/// `as_resource`, as upstream does for defaults at a resource root). The root's own metadata is the
/// handler's to check.
pub(super) fn validate_embedded(base: &str, s: &Structural, obj: &Value, as_resource: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if as_resource && !s.embedded_resource {
        if let Value::Object(map) = obj {
            validate_embedded_resource(base, map, &mut errs);
        }
        walk_children(base, obj, s, &mut errs);
    } else {
        walk_embedded(base, obj, Some(s), &mut errs);
    }
    errs
}

fn walk_embedded(path: &str, x: &Value, s: Option<&Structural>, errs: &mut Vec<FieldError>) {
    let Some(s) = s else { return };
    if let Value::Object(map) = x {
        if s.embedded_resource {
            validate_embedded_resource(path, map, errs);
        }
    }
    walk_children(path, x, s, errs);
}

fn walk_children(path: &str, x: &Value, s: &Structural, errs: &mut Vec<FieldError>) {
    match x {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for k in keys {
                let v = &map[k.as_str()];
                if let Some(prop) = s.properties.get(k.as_str()) {
                    walk_embedded(&child(path, k), v, Some(prop), errs);
                } else if s.additional_properties.is_some() {
                    walk_embedded(&key(path, k), v, s.additional_schema(), errs);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk_embedded(&index(path, i), v, s.items(), errs);
            }
        }
        _ => {}
    }
}

/// `validateEmbeddedResource`: apiVersion and kind are required strings of the right shape; metadata, if
/// present, must decode as ObjectMeta and pass the generic metadata checks (with a stand-in name).
fn validate_embedded_resource(path: &str, x: &Map<String, Value>, errs: &mut Vec<FieldError>) {
    for required in ["apiVersion", "kind"] {
        if !x.contains_key(required) {
            errs.push(FieldError::required(&child(path, required), "must not be empty"));
        }
    }
    let mut keys: Vec<&String> = x.keys().collect();
    keys.sort();
    for k in keys {
        let v = &x[k.as_str()];
        let at = child(path, k);
        match k.as_str() {
            "apiVersion" => match v.as_str() {
                None => errs.push(invalid_value(&at, v, "must be a string")),
                Some("") => errs.push(FieldError::invalid(&at, "", "must not be empty")),
                Some(gv) if gv != "/" && gv.matches('/').count() > 1 => {
                    errs.push(FieldError::invalid(&at, gv, &format!("unexpected GroupVersion string: {gv}")))
                }
                Some(_) => {}
            },
            "kind" => match v.as_str() {
                None => errs.push(invalid_value(&at, v, "must be a string")),
                Some("") => errs.push(FieldError::invalid(&at, "", "must not be empty")),
                Some(kind) => {
                    let msgs = names::dns1035_label(&kind.to_lowercase());
                    if !msgs.is_empty() {
                        let detail = format!("may have mixed case, but should otherwise match: {}", msgs.join(","));
                        errs.push(FieldError::invalid(&at, kind, &detail));
                    }
                }
            },
            "metadata" => match decode_object_meta(v) {
                Err(msg) => errs.push(invalid_value(&at, v, &msg)),
                Ok(()) => {
                    let mut m = v.clone();
                    let Value::Object(fields) = &mut m else { unreachable!("decode_object_meta accepts objects only") };
                    if fields.get("name").and_then(Value::as_str).unwrap_or("").is_empty() {
                        // Upstream sets a stand-in name so that a missing one is not reported.
                        fields.insert("name".into(), Value::String("fakename".into()));
                    }
                    let scoped = !fields.get("namespace").and_then(Value::as_str).unwrap_or("").is_empty();
                    let wrapper = serde_json::json!({ "metadata": m });
                    for mut e in meta::validate_object_meta(&wrapper, scoped, names::path_segment_name) {
                        e.field = child(path, &e.field);
                        errs.push(e);
                    }
                }
            },
            _ => {}
        }
    }
}

fn invalid_value(field: &str, v: &Value, detail: &str) -> FieldError {
    FieldError { kind: FieldErrorType::Invalid, field: field.into(), value: bad_value(v), detail: detail.into() }
}

/// Whether `v` decodes as a `metav1.ObjectMeta` for the fields the checks read, with Go's `encoding/json`
/// error text when it does not.
fn decode_object_meta(v: &Value) -> Result<(), String> {
    let Value::Object(m) = v else {
        return Err(format!("json: cannot unmarshal {} into Go value of type v1.ObjectMeta", json_type(v)));
    };
    let field_err = |name: &str, go_name: &str, go_type: &str, got: &Value| {
        format!("json: cannot unmarshal {} into Go struct field ObjectMeta.{go_name} of type {go_type}", json_type(got))
            .replace("{name}", name)
    };
    for (name, go_type) in [
        ("name", "string"),
        ("generateName", "string"),
        ("namespace", "string"),
        ("uid", "types.UID"),
        ("resourceVersion", "string"),
        ("selfLink", "string"),
    ] {
        if let Some(x) = m.get(name).filter(|x| !x.is_null() && !x.is_string()) {
            return Err(field_err(name, name, go_type, x));
        }
    }
    if let Some(x) = m.get("generation").filter(|x| !x.is_null() && !x.is_i64()) {
        return Err(field_err("generation", "generation", "int64", x));
    }
    for name in ["labels", "annotations"] {
        match m.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                if let Some(bad) = entries.values().find(|e| !e.is_string() && !e.is_null()) {
                    return Err(field_err(name, name, "string", bad));
                }
            }
            Some(other) => return Err(field_err(name, name, "map[string]string", other)),
        }
    }
    match m.get("finalizers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            if let Some(bad) = items.iter().find(|e| !e.is_string() && !e.is_null()) {
                return Err(field_err("finalizers", "finalizers", "string", bad));
            }
        }
        Some(other) => return Err(field_err("finalizers", "finalizers", "[]string", other)),
    }
    Ok(())
}

/// `ValidateListSetsAndMaps(nil, s, obj)`: the elements of `set` lists and the keys of `map` lists are
/// unique; each repeat is a `Duplicate value` at its index (once, at the second occurrence).
pub(super) fn validate_list_sets_and_maps(s: &Structural, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Value::Object(map) = obj {
        object_lists("", s, map, &mut errs);
    }
    errs
}

fn object_lists(path: &str, s: &Structural, map: &Map<String, Value>, errs: &mut Vec<FieldError>) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    // Upstream visits additionalProperties before properties (they never both apply in a structural schema).
    if let Some(ap) = s.additional_schema() {
        for k in &keys {
            lists_of(&key(path, k), ap, &map[k.as_str()], errs);
        }
    }
    for k in &keys {
        if let Some(prop) = s.properties.get(k.as_str()) {
            lists_of(&child(path, k), prop, &map[k.as_str()], errs);
        }
    }
}

fn lists_of(path: &str, s: &Structural, x: &Value, errs: &mut Vec<FieldError>) {
    match x {
        Value::Object(map) => object_lists(path, s, map, errs),
        Value::Array(items) => {
            match s.list_type.as_deref() {
                Some("set") => {
                    for i in non_unique(items.iter().map(Some)) {
                        errs.push(duplicate(&index(path, i), bad_value(&items[i])));
                    }
                }
                Some("map") => errs.extend(list_map(path, s, items)),
                _ => {}
            }
            if let Some(item) = s.items() {
                for (i, v) in items.iter().enumerate() {
                    lists_of(&index(path, i), item, v, errs);
                }
            }
        }
        _ => {}
    }
}

/// The indices of the second occurrence of each repeated value (`validateListSet`); `None` stands for an
/// unspecified key, equal only to other unspecified keys.
fn non_unique<'a>(values: impl Iterator<Item = Option<&'a Value>>) -> Vec<usize> {
    let values: Vec<Option<&Value>> = values.collect();
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        // Upstream compares scalars as Go values (an int64 never equals a float64) and compounds by their
        // JSON; serde_json's equality draws the same lines.
        let seen_before = values[..i].iter().filter(|w| *w == v).count();
        if seen_before == 1 {
            out.push(i);
        }
    }
    out
}

/// `field.Duplicate(field, value)`.
fn duplicate(field: &str, value: BadValue) -> FieldError {
    FieldError { kind: FieldErrorType::Duplicate, field: field.into(), value, detail: String::new() }
}

/// `validateListMap`: elements are objects (or null), and their key tuples are unique. A duplicate shows
/// the keys as a Go map (`map[string]interface {}{"name":"a"}`).
fn list_map(path: &str, s: &Structural, items: &[Value]) -> Vec<FieldError> {
    for (i, x) in items.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            return vec![invalid_value(&index(path, i), x, "must be an object for an array of list-type map")];
        }
    }
    if items.len() <= 1 {
        return Vec::new();
    }
    let keys: Vec<Map<String, Value>> = items
        .iter()
        .map(|x| {
            let mut key = Map::new();
            if let Value::Object(m) = x {
                for k in &s.list_map_keys {
                    if let Some(v) = m.get(k) {
                        key.insert(k.clone(), v.clone());
                    }
                }
            }
            key
        })
        .collect();
    let as_values: Vec<Value> = keys.iter().cloned().map(Value::Object).collect();
    non_unique(as_values.iter().map(Some))
        .into_iter()
        .map(|i| duplicate(&index(path, i), BadValue::GoSyntax(go_sharp_v(&as_values[i]))))
        .collect()
}
