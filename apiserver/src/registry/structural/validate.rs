//! Schema validation of a value, as kube-openapi's `validate.SchemaValidator` runs it for a CRD
//! (`pkg/validation/validate/{schema,type,schema_props,values,validator,slice_validator,object_validator,
//! formats}.go`), with each kube-openapi error turned into a field error as apiextensions-apiserver's
//! `kubeOpenAPIResultToFieldErrors` does (`pkg/apiserver/validation/validation.go`).
//!
//! At each node the validators run in kube-openapi's order, each when it applies to the value's kind:
//! type, the combinators (anyOf, oneOf, allOf, not), string, format, number, array, enum, object. A type
//! mismatch does not stop the others, exactly as upstream. Only where Go iterates a map (properties) this
//! port walks in sorted order, so that the result is deterministic.

use serde_json::Value;

use super::gofmt::{bad_value, Num};
use super::{formats, Additional, Structural};
use crate::go_text::quote;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};

/// Validates `data` against `s`; `base` is the field path the errors hang below (empty for a whole object,
/// `…default` for a default value), as the `fldPath` of upstream's `ValidateCustomResource`.
pub(super) fn validate(s: &Structural, data: &Value, base: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    Ctx { base }.node(s, "", data, &mut out);
    out
}

/// The kube-openapi "in" of every message: a CRD's object is always the request body.
const IN: &str = "body";

struct Ctx<'a> {
    base: &'a str,
}

impl Ctx<'_> {
    /// The field path of a kube-openapi error named `name`: `fldPath.Child(strings.TrimPrefix(name, "."))`,
    /// or `fldPath` itself for an unnamed one (which a nil path prints as `<nil>`).
    fn field(&self, name: &str) -> String {
        let name = name.strip_prefix('.').unwrap_or(name);
        match (self.base.is_empty(), name.is_empty()) {
            (true, true) => "<nil>".into(),
            (false, true) => self.base.into(),
            (true, false) => name.into(),
            (false, false) => format!("{}.{name}", self.base),
        }
    }

    /// A kube-openapi error that is not a `*errors.Validation` (the combinators' messages): upstream reports
    /// it at `fldPath` with an empty value.
    fn composite(&self, msg: &str) -> FieldError {
        FieldError::invalid(&self.field(""), "", msg)
    }

    /// `errors.InvalidType` with a string value, reported as `field.TypeInvalid`.
    fn invalid_type(&self, path: &str, type_name: &str, value: &str) -> FieldError {
        let msg = format!("{path} in {IN} must be of type {type_name}: {}", quote(value));
        FieldError::invalid(&self.field(path), value, &msg)
    }

    /// Any other `*errors.Validation`: `field.Invalid(path, value, message)`.
    fn invalid(&self, path: &str, value: BadValue, msg: String) -> FieldError {
        FieldError { kind: FieldErrorType::Invalid, field: self.field(path), value, detail: msg }
    }

    fn node(&self, s: &Structural, path: &str, data: &Value, out: &mut Vec<FieldError>) {
        if data.is_null() {
            // Upstream runs only the type and the enum validators on null.
            self.check_type(s, path, data, out);
            self.check_enum(s, path, data, out);
            return;
        }
        self.check_type(s, path, data, out);
        self.check_combinators(s, path, data, out);
        if let Value::String(text) = data {
            self.check_string(s, path, text, out);
            if formats::supported(&s.format) && !formats::validates(&s.format, text) {
                out.push(self.invalid_type(path, &s.format, text));
            }
        }
        if let Value::Number(n) = data {
            self.check_number(s, path, Num::of(n), out);
        }
        if let Value::Array(items) = data {
            self.check_array(s, path, items, out);
        }
        self.check_enum(s, path, data, out);
        if let Value::Object(map) = data {
            self.check_object(s, path, map, out);
        }
    }

    /// kube-openapi's `typeValidator`, with its quirks: a format that is set lets strings and arrays pass
    /// for non-numeric types, and integral floats pass as integers.
    fn check_type(&self, s: &Structural, path: &str, data: &Value, out: &mut Vec<FieldError>) {
        let types = s.kube_types();
        let format = s.format.as_str();
        if types.is_empty() && format.is_empty() {
            return;
        }
        let joined = types.join(",");
        if data.is_null() {
            if !types.is_empty() && !s.nullable {
                out.push(self.invalid_type(path, &joined, "null"));
            }
            return;
        }
        let (sch_type, sch_format) = schema_info(data);
        let contains = |t: &str| types.contains(&t);
        let is_float_int = matches!(data, Value::Number(n) if matches!(Num::of(n), Num::Float(f) if is_json_integer(f)))
            && contains("integer");
        let is_int_float = sch_type == "integer" && contains("number");
        let string_or_slice = data.is_string() || data.is_array();
        let has_format = !format.is_empty();
        let type_or_format_ok = contains(sch_type) || sch_format == format || is_float_int || is_int_float;
        if has_format && !(string_or_slice || type_or_format_ok) {
            out.push(self.invalid_type(path, format, sch_format));
            return;
        }
        let numeric = contains("number") || contains("integer");
        if has_format && string_or_slice && !numeric {
            return;
        }
        if !(contains(sch_type) || is_float_int || is_int_float) {
            out.push(self.invalid_type(path, &joined, sch_type));
        }
    }

    /// `schemaPropsValidator`: anyOf, oneOf, allOf, not. Of several failing alternatives upstream reports the
    /// one that matched most; this port reports the first failing one.
    fn check_combinators(&self, s: &Structural, path: &str, data: &Value, out: &mut Vec<FieldError>) {
        let run = |sub: &Structural| {
            let mut errs = Vec::new();
            self.node(sub, path, data, &mut errs);
            errs
        };
        if !s.any_of.is_empty() {
            let results: Vec<Vec<FieldError>> = s.any_of.iter().map(run).collect();
            if !results.iter().any(Vec::is_empty) {
                out.push(self.composite(&format!("{} must validate at least one schema (anyOf)", quote(path))));
                out.extend(results.into_iter().next().unwrap_or_default());
            }
        }
        if !s.one_of.is_empty() {
            let results: Vec<Vec<FieldError>> = s.one_of.iter().map(run).collect();
            let valid = results.iter().filter(|r| r.is_empty()).count();
            if valid != 1 {
                let extra = if valid == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                out.push(
                    self.composite(&format!("{} must validate one and only one schema (oneOf). {extra}", quote(path))),
                );
                if valid == 0 {
                    out.extend(results.into_iter().next().unwrap_or_default());
                }
            }
        }
        if !s.all_of.is_empty() {
            let mut valid = 0;
            for sub in &s.all_of {
                let errs = run(sub);
                if errs.is_empty() {
                    valid += 1;
                }
                out.extend(errs);
            }
            if valid != s.all_of.len() {
                let extra = if valid == 0 { ". None validated" } else { "" };
                out.push(self.composite(&format!("{} must validate all the schemas (allOf){extra}", quote(path))));
            }
        }
        if let Some(not) = &s.not {
            if run(not).is_empty() {
                out.push(self.composite(&format!("{} must not validate the schema (not)", quote(path))));
            }
        }
    }

    /// `stringValidator`: maxLength, minLength, pattern, stopping at the first failure; lengths count
    /// characters (runes), yet `field.TooLong` says bytes, as upstream does.
    fn check_string(&self, s: &Structural, path: &str, text: &str, out: &mut Vec<FieldError>) {
        let len = text.chars().count() as i64;
        if let Some(max) = s.max_length {
            if len > max {
                out.push(FieldError::too_long(&self.field(path), max.max(0) as usize));
                return;
            }
        }
        if let Some(min) = s.min_length {
            if len < min {
                let msg = format!("{path} in {IN} should be at least {min} chars long");
                out.push(self.invalid(path, BadValue::Str(text.into()), msg));
                return;
            }
        }
        if let Some((pattern, re)) = &s.pattern {
            if !re.is_match(text) {
                let msg = format!("{path} in {IN} should match '{pattern}'");
                out.push(self.invalid(path, BadValue::Str(text.into()), msg));
            }
        }
    }

    /// `numberValidator`: multipleOf, minimum, maximum (in that order). Integers are compared with the
    /// bounds truncated to int64, floats as floats, as upstream's "native type" checks do.
    fn check_number(&self, s: &Structural, path: &str, n: Num, out: &mut Vec<FieldError>) {
        if let Some(factor) = s.multiple_of {
            let failed = match n {
                Num::Int(i) => {
                    let f = factor as i64;
                    if f <= 0 {
                        Some((Num::Int(f), true))
                    } else {
                        (i.wrapping_rem(f) != 0).then_some((Num::Int(f), false))
                    }
                }
                Num::Float(x) => {
                    if factor <= 0.0 {
                        Some((Num::Float(factor), true))
                    } else {
                        let mult = if factor < 1.0 { 1.0 / factor * x } else { x / factor };
                        (!is_json_integer(mult)).then_some((Num::Float(factor), false))
                    }
                }
            };
            match failed {
                Some((f, true)) => {
                    let msg = format!("factor MultipleOf declared for {path} must be positive: {}", f.go_v());
                    out.push(self.invalid(path, f.bad_value(), msg));
                }
                Some((f, false)) => {
                    let msg = format!("{path} in {IN} should be a multiple of {}", f.go_v());
                    out.push(self.invalid(path, n.bad_value(), msg));
                }
                None => {}
            }
        }
        if let Some(min) = s.minimum {
            let (fails, bound) = match n {
                Num::Int(i) => {
                    let m = min as i64;
                    (if s.exclusive_minimum { i <= m } else { i < m }, Num::Int(m))
                }
                Num::Float(x) => (if s.exclusive_minimum { x <= min } else { x < min }, Num::Float(min)),
            };
            if fails {
                let rel = if s.exclusive_minimum { "greater than" } else { "greater than or equal to" };
                let msg = format!("{path} in {IN} should be {rel} {}", bound.go_v());
                out.push(self.invalid(path, n.bad_value(), msg));
            }
        }
        if let Some(max) = s.maximum {
            let (fails, bound) = match n {
                Num::Int(i) => {
                    let m = max as i64;
                    (if s.exclusive_maximum { i >= m } else { i > m }, Num::Int(m))
                }
                Num::Float(x) => (if s.exclusive_maximum { x >= max } else { x > max }, Num::Float(max)),
            };
            if fails {
                let rel = if s.exclusive_maximum { "less than" } else { "less than or equal to" };
                let msg = format!("{path} in {IN} should be {rel} {}", bound.go_v());
                out.push(self.invalid(path, n.bad_value(), msg));
            }
        }
    }

    /// `schemaSliceValidator`: the items first, then minItems, maxItems, uniqueItems.
    fn check_array(&self, s: &Structural, path: &str, items: &[Value], out: &mut Vec<FieldError>) {
        if let Some(item_schema) = &s.items {
            for (i, item) in items.iter().enumerate() {
                self.node(item_schema, &format!("{path}[{i}]"), item, out);
            }
        }
        let size = items.len() as i64;
        if let Some(min) = s.min_items {
            if size < min {
                let msg = format!("{path} in {IN} should have at least {min} items");
                out.push(self.invalid(path, BadValue::Int(size), msg));
            }
        }
        if let Some(max) = s.max_items {
            if size > max {
                out.push(too_many(&self.field(path), size, max));
            }
        }
        if s.unique_items && items.iter().enumerate().any(|(i, v)| items[..i].contains(v)) {
            out.push(self.invalid(
                path,
                BadValue::Str(String::new()),
                format!("{path} in {IN} shouldn't contain duplicates"),
            ));
        }
    }

    /// `basicCommonValidator`: the value must equal one of `enum` after Go's conversion to that entry's type.
    fn check_enum(&self, s: &Structural, path: &str, data: &Value, out: &mut Vec<FieldError>) {
        let Some(values) = s.enum_values.as_deref().filter(|v| !v.is_empty()) else { return };
        if values.iter().any(|e| enum_matches(data, e)) {
            return;
        }
        let allowed: Vec<String> = values
            .iter()
            .map(|v| match v {
                Value::String(s) => quote(s),
                other => quote(&serde_json::to_string(other).unwrap_or_default()),
            })
            .collect();
        let detail =
            if allowed.is_empty() { String::new() } else { format!("supported values: {}", allowed.join(", ")) };
        // kube-openapi's own message (`should be one of [a b]`) is dropped by the conversion to NotSupported.
        out.push(FieldError {
            kind: FieldErrorType::NotSupported,
            field: self.field(path),
            value: bad_value(data),
            detail,
        });
    }

    /// `objectValidator`: min/maxProperties, then the keys `additionalProperties` governs, then the declared
    /// properties (sorted), then `required` in the order given.
    fn check_object(
        &self,
        s: &Structural,
        path: &str,
        map: &serde_json::Map<String, Value>,
        out: &mut Vec<FieldError>,
    ) {
        let size = map.len() as i64;
        if let Some(min) = s.min_properties {
            if size < min {
                let msg = format!("{path} in {IN} should have at least {min} properties");
                out.push(self.invalid(path, BadValue::Int(size), msg));
            }
        }
        if let Some(max) = s.max_properties {
            if size > max {
                out.push(too_many(&self.field(path), size, max));
            }
        }
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort();
        match &s.additional_properties {
            Some(Additional::Bool(false)) => {
                for k in keys.iter().filter(|k| !s.properties.contains_key(k.as_str())) {
                    let msg = format!("{path}.{k} in {IN} is a forbidden property");
                    out.push(self.invalid(path, BadValue::Str((*k).clone()), msg));
                }
            }
            Some(Additional::Schema(ap)) => {
                for k in keys.iter().filter(|k| !s.properties.contains_key(k.as_str())) {
                    self.node(ap, &format!("{path}.{k}"), &map[k.as_str()], out);
                }
            }
            _ => {}
        }
        for (name, prop) in &s.properties {
            if let Some(v) = map.get(name) {
                let child = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                self.node(prop, &child, v, out);
            }
        }
        for k in &s.required {
            if !map.contains_key(k) {
                out.push(FieldError::required(&self.field(&format!("{path}.{k}")), ""));
            }
        }
    }
}

/// apimachinery's `field.TooMany(path, actual, max)` (`Too many: 3: must have at most 2 items`).
/// field_error.rs has no `TooMany` kind yet, so this is the one place that stands in for it: the same value
/// and detail under `Invalid value`; swap the kind here once field_error.rs gains it.
fn too_many(field: &str, actual: i64, max: i64) -> FieldError {
    FieldError {
        kind: FieldErrorType::Invalid,
        field: field.into(),
        value: BadValue::Int(actual),
        detail: format!("must have at most {max} items"),
    }
}

/// kube-openapi's `schemaInfoForType` for decoded JSON: the JSON type and the Go format of the value.
fn schema_info(data: &Value) -> (&'static str, &'static str) {
    match data {
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match Num::of(n) {
            Num::Int(_) => ("integer", "int64"),
            Num::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
        Value::Null => ("", ""),
    }
}

/// go-openapi swag's `IsFloat64AJSONInteger`: finite, within ±2^53, and integral up to a relative error
/// of 1e-9.
pub(super) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9007199254740992.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let g = f.trunc();
    if f == g {
        return true;
    }
    let diff = (f - g).abs();
    diff / (f.abs() + g.abs()).min(f64::MAX) < 1e-9
}

/// Whether `data` equals the enum entry `e` after Go's `reflect` conversion of `data` to `e`'s type:
/// numbers convert among int64 and float64 (truncating toward zero into int64), an int64 converts to a
/// string as a rune, and maps and slices compare deeply with their number types.
fn enum_matches(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Number(a), Value::String(b)) => match Num::of(a) {
            Num::Int(i) => {
                let c = u32::try_from(i).ok().and_then(char::from_u32).unwrap_or('\u{fffd}');
                b == &c.to_string()
            }
            Num::Float(_) => false,
        },
        (Value::Number(a), Value::Number(b)) => match (Num::of(a), Num::of(b)) {
            (Num::Int(x), Num::Int(y)) => x == y,
            (Num::Float(x), Num::Int(y)) => x.trunc() == y as f64 && x.abs() < 9.3e18,
            (Num::Int(x), Num::Float(y)) => x as f64 == y,
            (Num::Float(x), Num::Float(y)) => x == y,
        },
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => data == e,
        _ => false,
    }
}
