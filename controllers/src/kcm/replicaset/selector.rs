//! A ReplicaSet's `spec.selector` as a label selector (apimachinery 1.32, `meta/v1/helpers.go`
//! `LabelSelectorAsSelector`, with the requirement checks of `labels/selector.go` `NewRequirement` and the
//! name checks of `util/validation/validation.go`). Sans-IO: a selector's JSON in, a matcher or upstream's
//! error text out.
//!
//! A missing selector selects nothing; an empty one (no `matchLabels`, no `matchExpressions`) selects
//! everything. An unknown operator, a wrong number of values, or a key or value that is not a valid label
//! key or value is an error, worded as upstream's field errors (`key: Invalid value: "a b": ...`). The
//! apiserver refuses such selectors when a ReplicaSet is written, so the errors matter only for objects
//! stored by other means.

use serde_json::{Map, Value};

/// `labels.NewRequirement`'s operators that a `LabelSelector` can produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// A `matchLabels` entry (`selection.Equals`).
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One requirement on one label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    pub values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: &Map<String, Value>) -> bool {
        let value = labels.get(&self.key).map(|v| v.as_str().unwrap_or(""));
        match self.operator {
            Operator::Equals | Operator::In => value.is_some_and(|v| self.values.iter().any(|w| w == v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.iter().any(|w| w == v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

/// A parsed selector: every requirement must hold. `nothing` is `labels.Nothing()`, which matches no set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    nothing: bool,
    requirements: Vec<Requirement>,
}

impl Selector {
    /// `labels.Everything()`.
    pub fn everything() -> Selector {
        Selector { nothing: false, requirements: Vec::new() }
    }

    /// `labels.Nothing()`.
    pub fn nothing() -> Selector {
        Selector { nothing: true, requirements: Vec::new() }
    }

    /// `Selector.Empty()`: true for `Everything` only (`Nothing` is not empty, as upstream's).
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Whether an object with `labels` (its `metadata.labels`, absent meaning none) is selected.
    pub fn matches(&self, labels: Option<&Value>) -> bool {
        if self.nothing {
            return false;
        }
        let empty = Map::new();
        let labels = labels.and_then(Value::as_object).unwrap_or(&empty);
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// `labels.Set(template).AsSelectorPreValidated()`: each label of `set` must be present with its value.
    pub fn from_set(set: Option<&Value>) -> Selector {
        let requirements = set
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| Requirement {
                        key: k.clone(),
                        operator: Operator::Equals,
                        values: vec![v.as_str().unwrap_or("").to_string()],
                    })
                    .collect()
            })
            .unwrap_or_default();
        Selector { nothing: false, requirements }
    }
}

/// `metav1.LabelSelectorAsSelector`: `selector` is a `LabelSelector`'s JSON, or `None` when absent.
pub fn label_selector_as_selector(selector: Option<&Value>) -> Result<Selector, String> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else { return Ok(Selector::nothing()) };
    let empty = Map::new();
    let match_labels = selector.get("matchLabels").and_then(Value::as_object).unwrap_or(&empty);
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if match_labels.is_empty() && expressions.is_empty() {
        return Ok(Selector::everything());
    }
    let mut requirements = Vec::new();
    for (key, value) in match_labels {
        let values = vec![value.as_str().unwrap_or("").to_string()];
        requirements.push(new_requirement(key, Operator::Equals, values)?);
    }
    for expr in expressions {
        let operator = match expr.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other => return Err(format!("{} is not a valid label selector operator", go_quote(other))),
        };
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        let values = expr
            .get("values")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().map(|v| v.as_str().unwrap_or("").to_string()).collect())
            .unwrap_or_default();
        requirements.push(new_requirement(key, operator, values)?);
    }
    // `selector.Add` keeps requirements sorted by key; matching does not depend on it, but printing would.
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Selector { nothing: false, requirements })
}

/// `labels.NewRequirement`: the requirement, or every problem with it as one aggregate error.
fn new_requirement(key: &str, operator: Operator, values: Vec<String>) -> Result<Requirement, String> {
    let mut errs = Vec::new();
    let key_errs = qualified_name_errors(key);
    if !key_errs.is_empty() {
        errs.push(format!("key: Invalid value: {}: {}", go_quote(key), key_errs.join("; ")));
    }
    let count_error = match operator {
        Operator::In | Operator::NotIn if values.is_empty() => {
            Some("for 'in', 'notin' operators, values set can't be empty")
        }
        Operator::Equals if values.len() != 1 => Some("exact-match compatibility requires one single value"),
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
            Some("values set must be empty for exists and does not exist")
        }
        _ => None,
    };
    if let Some(detail) = count_error {
        errs.push(format!("values: Invalid value: {}: {detail}", go_string_slice(&values)));
    }
    for (i, value) in values.iter().enumerate() {
        let value_errs = label_value_errors(value);
        if !value_errs.is_empty() {
            errs.push(format!("values[{i}]: Invalid value: {}: {}", go_quote(value), value_errs.join("; ")));
        }
    }
    match errs.len() {
        0 => Ok(Requirement { key: key.to_string(), operator, values }),
        1 => Err(errs.remove(0)),
        _ => {
            // An aggregate of several errors prints each distinct message once, bracketed.
            errs.dedup();
            Err(if errs.len() == 1 { errs.remove(0) } else { format!("[{}]", errs.join(", ")) })
        }
    }
}

const QUALIFIED_NAME_ERR: &str =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

/// `validation.RegexError`: each example is followed by ", " and joined by " or ", so that two spaces
/// stand before each "or", as upstream prints it.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!("{msg} (e.g. {}regex used for validation is '{fmt}')", examples.join(" or "))
}

/// Whether `s` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name_part(s: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    let b = s.as_bytes();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter().all(|&c| alnum(c) || c == b'-' || c == b'_' || c == b'.')
}

/// Whether `s` is a lowercase RFC 1123 subdomain (length aside).
pub(super) fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty() && ok(b[0]) && ok(b[b.len() - 1]) && b.iter().all(|&c| ok(c) || c == b'-')
    })
}

/// `validation.IsQualifiedName`: a label key.
fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 characters".to_string());
                }
                if !is_dns1123_subdomain(prefix) {
                    let msg = regex_error(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, &["example.com"]);
                    errs.push(format!("prefix part {msg}"));
                }
            }
            *name
        }
        _ => {
            let msg = regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"]);
            return vec![format!(
                "a qualified name {msg} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        let msg = regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"]);
        errs.push(format!("name part {msg}"));
    }
    errs
}

/// `validation.IsValidLabelValue`.
fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        let fmt = format!("({QUALIFIED_NAME_FMT})?");
        errs.push(regex_error(LABEL_VALUE_ERR, &fmt, &["MyValue", "my_value", "12345"]));
    }
    errs
}

/// Go's `%q` of a string, for the printable ASCII and the escapes label text can hold.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#v` of a `[]string` (`[]string(nil)` when empty: upstream copies the values into a nil slice).
fn go_string_slice(values: &[String]) -> String {
    if values.is_empty() {
        return "[]string(nil)".to_string();
    }
    format!("[]string{{{}}}", values.iter().map(|v| go_quote(v)).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn selectors_match_as_upstream() {
        let cases = [
            ("absent selects nothing", Value::Null, json!({"a": "b"}), false),
            ("empty selects everything", json!({}), json!({}), true),
            ("matchLabels equal", json!({"matchLabels": {"app": "web"}}), json!({"app": "web", "x": "y"}), true),
            ("matchLabels differ", json!({"matchLabels": {"app": "web"}}), json!({"app": "db"}), false),
            ("matchLabels missing", json!({"matchLabels": {"app": "web"}}), json!({}), false),
            (
                "In",
                json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}),
                json!({"tier": "b"}),
                true,
            ),
            (
                "NotIn holds for an absent label",
                json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a"]}]}),
                json!({}),
                true,
            ),
            (
                "NotIn fails for a listed value",
                json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a"]}]}),
                json!({"tier": "a"}),
                false,
            ),
            ("Exists", json!({"matchExpressions": [{"key": "t", "operator": "Exists"}]}), json!({"t": ""}), true),
            (
                "DoesNotExist",
                json!({"matchExpressions": [{"key": "t", "operator": "DoesNotExist"}]}),
                json!({"t": "x"}),
                false,
            ),
            (
                "labels and expressions are ANDed",
                json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "t", "operator": "Exists"}]}),
                json!({"app": "web"}),
                false,
            ),
        ];
        for (name, selector, labels, want) in cases {
            let selector = label_selector_as_selector(Some(&selector)).unwrap();
            assert_eq!(selector.matches(Some(&labels)), want, "{name}");
        }
        assert!(label_selector_as_selector(Some(&json!({}))).unwrap().is_empty());
        assert!(!label_selector_as_selector(None).unwrap().is_empty());
    }

    #[test]
    fn invalid_selectors_are_errors_with_upstream_text() {
        let cases = [
            (
                json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]}),
                "\"Foo\" is not a valid label selector operator",
            ),
            (
                json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
                "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            ),
            (
                json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
                "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist",
            ),
            (
                json!({"matchLabels": {"a": "-x"}}),
                "values[0]: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
            (
                json!({"matchLabels": {"a b": "x"}}),
                "key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ];
        for (selector, want) in cases {
            assert_eq!(label_selector_as_selector(Some(&selector)).unwrap_err(), want, "{selector}");
        }
    }

    #[test]
    fn a_template_set_requires_each_label() {
        let set = json!({"app": "web", "tier": "fe"});
        let selector = Selector::from_set(Some(&set));
        assert!(selector.matches(Some(&json!({"app": "web", "tier": "fe", "x": "1"}))));
        assert!(!selector.matches(Some(&json!({"app": "web"}))));
        assert!(Selector::from_set(None).matches(None), "an empty template set matches everything");
    }
}
