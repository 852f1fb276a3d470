//! Go's `%v` of a decoded JSON value (`map[string]interface{}` and friends), which upstream's
//! `strategicpatch` errors quote: `map[image:nginx name:web]`, `[a b]`, `<nil>`, floats as `%g`.

use serde_json::Value;

pub(super) fn value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => float(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(value).collect::<Vec<_>>().join(" ")),
        // Go prints map keys sorted; serde_json's map is sorted already (no `preserve_order`), and is
        // sorted here again so that this holds either way.
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys.into_iter().map(|k| format!("{k}:{}", value(&map[k]))).collect();
            format!("map[{}]", fields.join(" "))
        }
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`, which `%v` prints: the shortest digits, in exponent form when
/// the decimal exponent is below -4 or at least 6 (`1e+06`, `123456`, `1e-05`).
fn float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let exp = f.abs().log10().floor() as i32;
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    // Rust's `{:e}` gives the shortest digits too: `1e6`, `1.5e-7`; Go writes `1e+06`, `1.5e-07`.
    let text = format!("{f:e}");
    let (mantissa, exponent) = text.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_print_as_go_prints_them() {
        let cases = [
            (json!({"name": "web", "image": "nginx", "ports": [80, 443]}), "map[image:nginx name:web ports:[80 443]]"),
            (json!([1.5, null, true, "x"]), "[1.5 <nil> true x]"),
            (json!(1000000), "1e+06"),
            (json!(123456), "123456"),
            (json!(0.00001), "1e-05"),
        ];
        for (v, want) in cases {
            assert_eq!(value(&v), want, "{v}");
        }
    }
}
