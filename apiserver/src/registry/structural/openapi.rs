//! The CRD rules for a version's schema, on its JSON: upstream's `ValidateCustomResourceDefinitionOpenAPISchema`
//! and `specStandardValidatorV3.validate` (`pkg/apis/apiextensions/validation/validation.go`), with the
//! options a new v1 CRD gets (defaults allowed, valid property types, atomic set items and list-map key rules
//! required). The CEL rules (`x-kubernetes-validations`) are the `cel` module's to compile.

use serde_json::Value;

use super::gofmt::go_sharp_v;
use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};

const META_FIELDS: [&str; 3] = ["metadata", "kind", "apiVersion"];

/// `openapiV3Types`, sorted as `sets.String.List()` returns them.
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// `specStandardValidatorV3`'s state as it descends.
#[derive(Clone, Default)]
struct Ssv {
    /// Why defaults are forbidden here, when they are.
    forbidden_defaults: Option<String>,
    inside_resource_meta: bool,
}

pub(super) fn check(v: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    schema(v, path, &Ssv::default(), true, &mut errs);
    errs
}

fn get_str<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
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

fn invalid(field: String, value: BadValue, detail: &str) -> FieldError {
    FieldError { kind: FieldErrorType::Invalid, field, value, detail: detail.into() }
}

fn str_list(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// Go's `%#v` of a `[]string`.
fn go_strings(list: &[String]) -> BadValue {
    BadValue::GoSyntax(format!("[]string{{{}}}", list.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", ")))
}

/// `specStandardValidatorV3.validate`: the fields a CRD schema may not use.
fn standard(v: &Value, path: &str, ssv: &Ssv, errs: &mut Vec<FieldError>) {
    let ty = get_str(v, "type").unwrap_or("");
    if !ty.is_empty() && !TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(&format!("{path}.type"), ty, &TYPES));
    }
    if v.get("default").is_some() {
        if let Some(reason) = &ssv.forbidden_defaults {
            let detail =
                if reason.is_empty() { "must not be set".to_string() } else { format!("must not be set {reason}") };
            errs.push(FieldError::forbidden(&format!("{path}.default"), &detail));
        }
    }
    if non_empty(v, "id") {
        errs.push(FieldError::forbidden(&format!("{path}.id"), "id is not supported"));
    }
    if v.get("additionalItems").is_some_and(|x| !x.is_null()) {
        errs.push(FieldError::forbidden(&format!("{path}.additionalItems"), "additionalItems is not supported"));
    }
    if non_empty(v, "patternProperties") {
        errs.push(FieldError::forbidden(&format!("{path}.patternProperties"), "patternProperties is not supported"));
    }
    if non_empty(v, "definitions") {
        errs.push(FieldError::forbidden(&format!("{path}.definitions"), "definitions is not supported"));
    }
    if v.get("dependencies").is_some_and(|x| !x.is_null()) {
        errs.push(FieldError::forbidden(&format!("{path}.dependencies"), "dependencies is not supported"));
    }
    if v.get("$ref").is_some_and(|x| !x.is_null()) {
        errs.push(FieldError::forbidden(&format!("{path}.$ref"), "$ref is not supported"));
    }
    if ty == "null" {
        errs.push(FieldError::forbidden(
            &format!("{path}.type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if v.get("items").and_then(Value::as_array).is_some_and(|a| !a.is_empty()) {
        errs.push(FieldError::forbidden(&format!("{path}.items"), "items must be a schema object and not an array"));
    }
    if ssv.inside_resource_meta && v.get("x-kubernetes-embedded-resource").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            &format!("{path}.x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
}

fn schema(v: &Value, path: &str, ssv: &Ssv, is_root: bool, errs: &mut Vec<FieldError>) {
    if !v.is_object() {
        return;
    }
    standard(v, path, ssv, errs);
    if v.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            &format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let has_properties = non_empty(v, "properties");
    if let Some(ap) = v.get("additionalProperties").filter(|a| !a.is_null()) {
        // `properties` are for structs and `additionalProperties` for maps: `additionalProperties: true`
        // alone may sit next to properties (it changes nothing), `false` or a schema may not.
        if has_properties && (ap.as_bool() == Some(false) || ap.is_object()) {
            errs.push(FieldError::forbidden(
                &format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let mut sub = ssv.clone();
        if ssv.inside_resource_meta {
            // Pruning without a value is ambiguous inside metadata maps, so defaults are forbidden there.
            sub.forbidden_defaults = Some("inside additionalProperties applying to object metadata".into());
        }
        schema(ap, &format!("{path}.additionalProperties"), &sub, false, errs);
    }
    let embedded = v.get("x-kubernetes-embedded-resource").and_then(Value::as_bool) == Some(true);
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        let mut keys: Vec<&String> = props.keys().collect();
        keys.sort();
        for k in keys {
            let mut sub = ssv.clone();
            if (is_root || embedded) && META_FIELDS.contains(&k.as_str()) {
                sub.inside_resource_meta = true;
                if is_root {
                    sub.forbidden_defaults = Some(format!("in top-level {k}"));
                }
            }
            schema(&props[k.as_str()], &format!("{path}.properties[{k}]"), &sub, false, errs);
        }
    }
    if let Some(not) = v.get("not") {
        schema(not, &format!("{path}.not"), ssv, false, errs);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for (i, sub) in v.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            schema(sub, &format!("{path}.{key}[{i}]"), ssv, false, errs);
        }
    }
    match v.get("items") {
        Some(items @ Value::Object(_)) => schema(items, &format!("{path}.items"), ssv, false, errs),
        Some(Value::Array(list)) => {
            for (i, sub) in list.iter().enumerate() {
                schema(sub, &format!("{path}.items[{i}]"), ssv, false, errs);
            }
        }
        _ => {}
    }
    extensions(v, path, errs);
}

/// The rules of the x-kubernetes extensions, in upstream's order.
fn extensions(v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ty = get_str(v, "type").unwrap_or("");
    if v.get("x-kubernetes-preserve-unknown-fields").and_then(Value::as_bool) == Some(false) {
        errs.push(invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            BadValue::GoSyntax("false".into()),
            "must be true or undefined",
        ));
    }
    let map_type = get_str(v, "x-kubernetes-map-type");
    if map_type.is_some() && ty != "object" {
        let msg = "must be object if x-kubernetes-map-type is specified";
        if ty.is_empty() {
            errs.push(FieldError::required(&format!("{path}.type"), msg));
        } else {
            errs.push(FieldError::invalid(&format!("{path}.type"), ty, msg));
        }
    }
    if let Some(mt) = map_type.filter(|mt| *mt != "atomic" && *mt != "granular") {
        errs.push(FieldError::not_supported(&format!("{path}.x-kubernetes-map-type"), mt, &["atomic", "granular"]));
    }
    let list_type = get_str(v, "x-kubernetes-list-type");
    let items = v.get("items").filter(|i| i.is_object());
    if list_type.is_some() && ty != "array" {
        let msg = "must be array if x-kubernetes-list-type is specified";
        if ty.is_empty() {
            errs.push(FieldError::required(&format!("{path}.type"), msg));
        } else {
            errs.push(FieldError::invalid(&format!("{path}.type"), ty, msg));
        }
    } else if let (Some("set"), Some(is)) = (list_type, items) {
        let msg = "must be atomic as item of a list with x-kubernetes-list-type=set";
        let item_list_type = get_str(is, "x-kubernetes-list-type");
        match get_str(is, "type").unwrap_or("") {
            "array" => {
                if let Some(lt) = item_list_type.filter(|lt| *lt != "atomic") {
                    errs.push(FieldError::invalid(&format!("{path}.items.x-kubernetes-list-type"), lt, msg));
                }
            }
            // Upstream shows the items' list type here (a slip in its code), null when unset.
            "object" if get_str(is, "x-kubernetes-map-type") != Some("atomic") => {
                let shown = item_list_type.unwrap_or("null");
                errs.push(FieldError::invalid(&format!("{path}.items.x-kubernetes-map-type"), shown, msg));
            }
            _ => {}
        }
    }
    if let Some(lt) = list_type.filter(|lt| !["atomic", "set", "map"].contains(lt)) {
        errs.push(FieldError::not_supported(&format!("{path}.x-kubernetes-list-type"), lt, &["atomic", "set", "map"]));
    }
    let keys = str_list(v, "x-kubernetes-list-map-keys");
    if !keys.is_empty() {
        let msg = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(FieldError::required(&format!("{path}.x-kubernetes-list-type"), msg)),
            Some(lt) if lt != "map" => {
                errs.push(FieldError::invalid(&format!("{path}.x-kubernetes-list-type"), lt, msg))
            }
            _ => {}
        }
    }
    if list_type == Some("map") {
        if keys.is_empty() {
            errs.push(FieldError::required(
                &format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match v.get("items") {
            None | Some(Value::Null) => errs.push(FieldError::required(
                &format!("{path}.items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(other @ Value::Array(_)) => errs.push(invalid(
                format!("{path}.items"),
                BadValue::GoSyntax(go_sharp_v(other)),
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            Some(_) => {}
        }
        if let Some(is) = items {
            let item_type = get_str(is, "type").unwrap_or("");
            if item_type != "object" {
                errs.push(FieldError::invalid(
                    &format!("{path}.items.type"),
                    item_type,
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                let props = is.get("properties").and_then(Value::as_object);
                let mut seen: Vec<&str> = Vec::new();
                for k in &keys {
                    match props.and_then(|p| p.get(k)) {
                        Some(p) => {
                            let t = get_str(p, "type").unwrap_or("");
                            if t == "array" || t == "object" {
                                // Upstream shows the items' type ("object") here.
                                errs.push(FieldError::invalid(
                                    &format!("{path}.items.properties[{k}].type"),
                                    item_type,
                                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                ));
                            }
                        }
                        None => errs.push(invalid(
                            format!("{path}.x-kubernetes-list-map-keys"),
                            go_strings(&keys),
                            "entries must all be names of item properties",
                        )),
                    }
                    if seen.contains(&k.as_str()) {
                        errs.push(invalid(
                            format!("{path}.x-kubernetes-list-map-keys"),
                            go_strings(&keys),
                            "must not contain duplicate entries",
                        ));
                    }
                    seen.push(k);
                }
            }
        }
    }
    map_list_keys_map_set(v, path, list_type, &keys, errs);
}

/// `validateMapListKeysMapSet`: set and map items are not nullable, and map keys are required or defaulted
/// and not nullable.
fn map_list_keys_map_set(v: &Value, path: &str, list_type: Option<&str>, keys: &[String], errs: &mut Vec<FieldError>) {
    let Some(is) = v.get("items").filter(|i| i.is_object()) else { return };
    let Some(lt) = list_type.filter(|lt| *lt == "set" || *lt == "map") else { return };
    if is.get("nullable").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            &format!("{path}.items.nullable"),
            &format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
        ));
    }
    if lt != "map" {
        return;
    }
    let required = str_list(is, "required");
    for k in keys {
        let Some(p) = is.get("properties").and_then(|p| p.get(k)) else { continue };
        if !required.contains(k) && p.get("default").is_none_or(Value::is_null) {
            errs.push(FieldError::required(
                &format!("{path}.items.properties[{k}].default"),
                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            ));
        }
        if p.get("nullable").and_then(Value::as_bool) == Some(true) {
            errs.push(FieldError::forbidden(
                &format!("{path}.items.properties[{k}].nullable"),
                "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            ));
        }
    }
}
