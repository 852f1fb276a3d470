//! CSIStorageCapacities, `storage.k8s.io/v1` (`KK/pkg/registry/storage/csistoragecapacity`,
//! `KK/pkg/apis/storage/validation`: `ValidateCSIStorageCapacity`, `ValidateCSIStorageCapacityUpdate`):
//! namespaced, names are DNS subdomains. `nodeTopology` is a valid label selector (a stored one that
//! fails the checks lets label values through on update), `storageClassName` is a DNS subdomain (so an
//! empty one is refused with the subdomain message), `capacity` is not negative (`maximumVolumeSize` is
//! not checked). `nodeTopology` and `storageClassName` never change. Updates need a resourceVersion; a
//! delete answers a Success status. The store's table is kube's default one (`NewDefaultTableConvertor`:
//! Name, Created At), not `printCSIStorageCapacity`. Quantities are stored in their canonical form
//! (`Quantity.String()`: `1024Mi` reads back `1Gi`). Not here: the warnings on the topology selector.

use std::sync::Arc;

use serde_json::Value;

use crate::apis::networking::ingresses::invalid_go;
use crate::apis::networking::networkpolicies::validate_label_selector;
use crate::apis::printers::default_printer;
use crate::apis::ResourceInfo;
use crate::registry::field_error::FieldError;
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::workloads::go_label_selector;
use crate::registry::strategy::{DeleteStrategy, Strategy};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo::new(resource(), "csistoragecapacity", Arc::new(CSIStorageCapacities), default_printer())
}

fn resource() -> Resource {
    Resource::group("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities")
}

/// The CSIStorageCapacity strategy.
struct CSIStorageCapacities;

fn topology(obj: &Value) -> Option<&Value> {
    obj.get("nodeTopology").filter(|t| !t.is_null())
}

fn class(obj: &Value) -> &str {
    obj.get("storageClassName").and_then(Value::as_str).unwrap_or("")
}

/// A quantity's text, whether written as a string or a number.
fn quantity(obj: &Value, field: &str) -> Option<String> {
    match obj.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether a quantity is below zero: a minus sign and a digit other than zero before any suffix.
fn is_negative(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('-') else { return false };
    rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').any(|c| c.is_ascii_digit() && c != '0')
}

/// How a quantity's suffix scales it, which also decides how it is written back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// `Ki` .. `Ei`: a power of 1024.
    Binary(u32),
    /// `n` .. `E`, or none: a power of ten written with an SI suffix.
    DecimalSi(i32),
    /// `e3`, `E-2`: a power of ten written as an exponent.
    Exponent(i32),
}

fn scale_of(suffix: &str) -> Option<Scale> {
    const SI: &[(&str, i32)] =
        &[("n", -9), ("u", -6), ("m", -3), ("", 0), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)];
    const BINARY: &[&str] = &["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(i) = BINARY.iter().position(|b| *b == suffix) {
        return Some(Scale::Binary(i as u32 + 1));
    }
    if let Some((_, e)) = SI.iter().find(|(s, _)| *s == suffix) {
        return Some(Scale::DecimalSi(*e));
    }
    let exponent = suffix.strip_prefix(['e', 'E'])?;
    let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    exponent.parse().ok().map(Scale::Exponent)
}

/// `a / b` rounded away from zero, as `ParseQuantity` rounds what is finer than a nano unit.
fn div_away(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b == 0 {
        q
    } else {
        q + a.signum()
    }
}

/// `Quantity.String()` of `text`: the canonical form kube writes a quantity back in (`1024Mi` is `1Gi`,
/// `1.5Gi` is `1536Mi`, `1000` is `1k`, `0.1` is `100m`); `None` when `text` is no quantity or is beyond
/// what this reads exactly (past about 10^28).
pub(crate) fn canonical_quantity(text: &str) -> Option<String> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let end = unsigned.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let scale = scale_of(suffix)?;
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let digits = if negative { -digits } else { digits };
    let pow10 = |e: u32| 10_i128.checked_pow(e);
    let fraction_len = fraction.len() as i32;
    // The value in nano units.
    let nanos = match scale {
        Scale::Binary(k) => {
            let whole = digits.checked_mul(1024_i128.checked_pow(k)?)?;
            let whole = whole.checked_mul(pow10(9)?)?;
            div_away(whole, pow10(fraction_len as u32)?)
        }
        Scale::DecimalSi(e) | Scale::Exponent(e) => {
            let shift = e.checked_add(9)?.checked_sub(fraction_len)?;
            if shift >= 0 {
                digits.checked_mul(pow10(shift as u32)?)?
            } else {
                div_away(digits, pow10(shift.unsigned_abs())?)
            }
        }
    };
    if nanos == 0 {
        return Some("0".into());
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let magnitude = nanos.unsigned_abs();
    let binary =
        matches!(scale, Scale::Binary(_)) && magnitude >= 1024 * 1_000_000_000 && magnitude % 1_000_000_000 == 0;
    if binary {
        let mut amount = magnitude / 1_000_000_000;
        let mut power = 0;
        while power < 6 && amount % 1024 == 0 {
            amount /= 1024;
            power += 1;
        }
        let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
        return Some(format!("{sign}{amount}{suffix}"));
    }
    let (mut amount, mut exponent) = (magnitude, -9_i32);
    while amount % 10 == 0 {
        amount /= 10;
        exponent += 1;
    }
    match exponent.rem_euclid(3) {
        1 => {
            amount *= 10;
            exponent -= 1;
        }
        2 => {
            amount *= 100;
            exponent -= 2;
        }
        _ => {}
    }
    let suffix = match scale {
        Scale::Exponent(_) if exponent == 0 => String::new(),
        Scale::Exponent(_) => format!("e{exponent}"),
        _ => match exponent {
            -9 => "n".into(),
            -6 => "u".into(),
            -3 => "m".into(),
            0 => String::new(),
            3 => "k".into(),
            6 => "M".into(),
            9 => "G".into(),
            12 => "T".into(),
            15 => "P".into(),
            18 => "E".into(),
            _ => return None,
        },
    };
    Some(format!("{sign}{amount}{suffix}"))
}

/// Writes the quantities in their canonical form, as the protobuf round trip through etcd leaves them.
fn canonicalize(obj: &mut Value) {
    for field in ["capacity", "maximumVolumeSize"] {
        if let Some(text) = quantity(obj, field).and_then(|q| canonical_quantity(&q)) {
            obj[field] = Value::from(text);
        }
    }
}

/// `ValidateCSIStorageCapacity`.
fn validate(obj: &Value, allow_invalid_label_values: bool) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, true, names::name_is_dns_subdomain);
    errs.extend(validate_label_selector(topology(obj), "nodeTopology", allow_invalid_label_values));
    let name = class(obj);
    for msg in names::name_is_dns_subdomain(name, false) {
        errs.push(FieldError::invalid("storageClassName", name, &msg));
    }
    if let Some(capacity) = quantity(obj, "capacity").filter(|q| is_negative(q)) {
        let shown = canonical_quantity(&capacity).unwrap_or(capacity);
        errs.push(FieldError::invalid("capacity", &shown, "must be greater than or equal to 0"));
    }
    errs
}

/// A selector as `apiequality.Semantic` compares it.
fn comparable(obj: &Value) -> Option<Value> {
    topology(obj).map(crate::apis::storage::csidrivers::semantic)
}

/// The strategy's `ValidateCSIStorageCapacity` (label values allowed when the stored selector had invalid
/// ones), then `ValidateCSIStorageCapacityUpdate`.
fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let allow = !validate_label_selector(topology(old), "nodeTopology", false).is_empty();
    let mut errs = meta::validate_object_meta_update(new, old, true, names::name_is_dns_subdomain);
    errs.extend(validate(new, allow));
    if comparable(new) != comparable(old) {
        errs.push(match topology(new) {
            Some(selector) => invalid_go("nodeTopology", go_label_selector(Some(selector)), "field is immutable"),
            // A nil selector prints as the string "null", quoted.
            None => FieldError::invalid("nodeTopology", "null", "field is immutable"),
        });
    }
    if class(new) != class(old) {
        errs.push(FieldError::invalid("storageClassName", class(new), "field is immutable"));
    }
    errs
}

impl Strategy for CSIStorageCapacities {
    fn namespace_scoped(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj, false)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_update(new, old)
    }

    fn canonicalize(&self, obj: &mut Value) {
        canonicalize(obj);
    }
}

impl DeleteStrategy for CSIStorageCapacities {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::field_error::messages;

    fn capacity(extra: Value) -> Value {
        let mut obj = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
            "metadata": {"name": "cap-1", "namespace": "ns"}, "storageClassName": "fast"});
        for (k, v) in extra.as_object().into_iter().flatten() {
            obj[k] = v.clone();
        }
        obj
    }

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    #[test]
    fn capacities_are_validated_as_upstream_validates_them() {
        let s = CSIStorageCapacities;
        let good = capacity(json!({"nodeTopology": {"matchLabels": {"topology.example.com/zone": "a"}},
            "capacity": "10Gi", "maximumVolumeSize": "-1"}));
        assert_eq!(messages(s.validate(&good)), Vec::<String>::new());
        let cases: Vec<(Value, Vec<String>)> = vec![
            (capacity(json!({"storageClassName": ""})), vec![format!("storageClassName: Invalid value: \"\": {SUBDOMAIN}")]),
            (capacity(json!({"capacity": "-5Gi"})), vec!["capacity: Invalid value: \"-5Gi\": must be greater than or equal to 0".into()]),
            (capacity(json!({"capacity": "-0"})), vec![]),
            (
                capacity(json!({"nodeTopology": {"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["a"]}]}})),
                vec!["nodeTopology.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'".into()],
            ),
            (
                json!({"metadata": {"name": "cap-1"}, "storageClassName": "fast"}),
                vec!["metadata.namespace: Required value".into()],
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(messages(s.validate(&obj)), want, "{obj}");
        }
    }

    #[test]
    fn topology_and_class_never_change() {
        let s = CSIStorageCapacities;
        let old = capacity(json!({"nodeTopology": {"matchLabels": {"zone": "a"}}, "capacity": "1Gi"}));
        let mut grown = old.clone();
        grown["capacity"] = json!("2Gi");
        grown["maximumVolumeSize"] = json!("1Gi");
        assert_eq!(messages(s.validate_update(&grown, &old)), Vec::<String>::new());
        let mut moved = old.clone();
        moved["nodeTopology"] = json!({"matchLabels": {"zone": "b"}});
        moved["storageClassName"] = json!("slow");
        assert_eq!(
            messages(s.validate_update(&moved, &old)),
            [
                "nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"zone\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
                "storageClassName: Invalid value: \"slow\": field is immutable",
            ]
        );
        let mut cleared = old.clone();
        cleared.as_object_mut().map(|o| o.remove("nodeTopology"));
        assert_eq!(
            messages(s.validate_update(&cleared, &old)),
            ["nodeTopology: Invalid value: \"null\": field is immutable"]
        );
    }

    #[test]
    fn quantities_are_written_as_kube_writes_them() {
        let cases = [
            ("10Gi", "10Gi"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("0.5Ki", "512"),
            ("1000Mi", "1000Mi"),
            ("2048Ki", "2Mi"),
            ("-1024Mi", "-1Gi"),
            ("1000", "1k"),
            ("2000k", "2M"),
            ("1500", "1500"),
            ("1.5", "1500m"),
            ("0.1", "100m"),
            ("1500m", "1500m"),
            ("0.0000000001", "1n"),
            ("1e3", "1e3"),
            ("12e2", "1200"),
            ("1.5e3", "1500"),
            ("5G", "5G"),
            ("0", "0"),
            ("-0", "0"),
            ("+7", "7"),
        ];
        for (text, want) in cases {
            assert_eq!(canonical_quantity(text).as_deref(), Some(want), "{text}");
        }
        for bad in ["", "Gi", "1.2.3", "1Xi", "1e"] {
            assert_eq!(canonical_quantity(bad), None, "{bad}");
        }
        let mut obj = capacity(json!({"capacity": "2048Mi", "maximumVolumeSize": 1000}));
        CSIStorageCapacities.canonicalize(&mut obj);
        assert_eq!((&obj["capacity"], &obj["maximumVolumeSize"]), (&json!("2Gi"), &json!("1k")));
        let negative = capacity(json!({"capacity": "-2048Mi"}));
        assert_eq!(
            messages(CSIStorageCapacities.validate(&negative)),
            ["capacity: Invalid value: \"-2Gi\": must be greater than or equal to 0"]
        );
    }

    #[test]
    fn the_table_is_kubes_default() {
        let obj = capacity(json!({}));
        let printer = info().printer;
        assert_eq!(printer.columns[1].name, "Created At");
        assert_eq!((printer.cells)(&obj, 0, &[]), vec![json!("cap-1"), json!("")]);
    }
}
