//! Go's printing of decoded JSON values, for error texts that must match kube-apiserver's: `%v` of numbers
//! (kube-openapi's messages), `%#v` of maps and slices (field errors' bad values), and the bad value of
//! a `field.Error` as apimachinery's `ErrorBody` chooses its verb by the value's Go type.
//!
//! Decoded JSON in Go (`k8s.io/apimachinery/pkg/util/json`) holds integers as `int64` and every other number
//! as `float64`; [`Num`] keeps that distinction, because kube-openapi's checks differ between the two.

use serde_json::Value;

use crate::go_text::quote;
use crate::registry::field_error::BadValue;

/// A JSON number as Go's decoder holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    /// Integers that fit in an int64 are `int64`; all other numbers (fractions, exponents, huge values) `float64`.
    pub(super) fn of(n: &serde_json::Number) -> Num {
        match n.as_i64() {
            Some(i) => Num::Int(i),
            None => Num::Float(n.as_f64().unwrap_or(0.0)),
        }
    }

    /// `%v`.
    pub(super) fn go_v(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => float_v(f),
        }
    }

    pub(super) fn bad_value(self) -> BadValue {
        match self {
            Num::Int(i) => BadValue::Int(i),
            Num::Float(f) => BadValue::GoSyntax(float_v(f)),
        }
    }
}

/// Go's `%v` (and `%#v`) of a float64, `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits that
/// round-trip, in `%e` form (`1e+06`) when the decimal exponent is below -4 or at least 6.
pub(super) fn float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e6", "-5e-7".
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("the exponent is an integer");
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    // Plain decimal notation, as Rust's `{}` prints it (never with an exponent).
    format!("{f}")
}

/// Go's `%#v` of a decoded JSON value held in an `interface{}`.
pub(super) fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => Num::of(n).go_v(),
        Value::String(s) => quote(s),
        Value::Array(a) => format!("[]interface {{}}{{{}}}", a.iter().map(go_sharp_v).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", quote(k), go_sharp_v(&m[k.as_str()]))).collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

/// The bad value of a `field.Error` holding a decoded JSON value: `%q` for strings, `%v` for numbers and
/// booleans, `"null"` for nil, `%#v` for maps and slices (apimachinery's `ErrorBody`).
pub(super) fn bad_value(v: &Value) -> BadValue {
    match v {
        Value::Null => BadValue::Str("null".into()),
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Number(n) => Num::of(n).bad_value(),
        Value::Bool(b) => BadValue::GoSyntax(b.to_string()),
        Value::Array(_) | Value::Object(_) => BadValue::GoSyntax(go_sharp_v(v)),
    }
}
