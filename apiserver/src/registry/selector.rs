//! Label and field selectors: parsed once per request into a [`Selector`], which
//! becomes the storage layer's predicate. Parse errors and unsupported field keys are 400s.

use std::sync::Arc;

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::strategy::Strategy;
use crate::storage::options::SelectionPredicate;

/// One label requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
enum LabelReq {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// One field requirement: key, value, and whether it must equal (`=`, `==`) or differ (`!=`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct FieldReq {
    key: String,
    value: String,
    equal: bool,
}

/// A parsed label selector and field selector, ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Selector {
    labels: Vec<LabelReq>,
    fields: Vec<FieldReq>,
}

fn bad(msg: String) -> RegistryError {
    RegistryError::BadRequest(msg)
}

/// Splits on commas outside parentheses.
fn split_top(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn key_ok(key: &str) -> bool {
    !key.is_empty() && key.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/'))
}

fn parse_set(key: &str, rest: &str) -> Result<Vec<String>, RegistryError> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad(format!("unable to parse requirement: found '{}', expected: '('", rest.trim())))?;
    let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
    if values.is_empty() {
        return Err(bad(format!(
            "unable to parse requirement: for 'in', 'notin' operators, values set can't be empty (key {key})"
        )));
    }
    Ok(values)
}

fn parse_label_req(text: &str) -> Result<LabelReq, RegistryError> {
    let text = text.trim();
    let req = if let Some(key) = text.strip_prefix('!') {
        LabelReq::DoesNotExist(key.trim().to_string())
    } else if let Some((key, rest)) = text.split_once(" notin ") {
        LabelReq::NotIn(key.trim().to_string(), parse_set(key, rest)?)
    } else if let Some((key, rest)) = text.split_once(" in ") {
        LabelReq::In(key.trim().to_string(), parse_set(key, rest)?)
    } else if let Some((key, value)) = text.split_once("!=") {
        LabelReq::NotEquals(key.trim().to_string(), value.trim().to_string())
    } else if let Some((key, value)) = text.split_once("==").or_else(|| text.split_once('=')) {
        LabelReq::Equals(key.trim().to_string(), value.trim().to_string())
    } else {
        LabelReq::Exists(text.to_string())
    };
    let key = match &req {
        LabelReq::Equals(k, _)
        | LabelReq::NotEquals(k, _)
        | LabelReq::In(k, _)
        | LabelReq::NotIn(k, _)
        | LabelReq::Exists(k)
        | LabelReq::DoesNotExist(k) => k,
    };
    if !key_ok(key) {
        return Err(bad(format!("unable to parse requirement: invalid label key {key:?}")));
    }
    Ok(req)
}

impl Selector {
    /// Parses `labelSelector` and `fieldSelector` (either may be ""); field keys are checked against
    /// `metadata.name`, `metadata.namespace` and what `strategy` supports.
    pub(crate) fn parse(
        label_selector: &str,
        field_selector: &str,
        strategy: &dyn Strategy,
    ) -> Result<Selector, RegistryError> {
        let mut selector = Selector::default();
        if !label_selector.trim().is_empty() {
            for part in split_top(label_selector) {
                selector.labels.push(parse_label_req(part)?);
            }
        }
        if !field_selector.trim().is_empty() {
            for part in field_selector.split(',') {
                let (key, value, equal) = if let Some((k, v)) = part.split_once("!=") {
                    (k, v, false)
                } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                    (k, v, true)
                } else {
                    return Err(bad(format!("invalid selector: '{field_selector}'; can't understand '{part}'")));
                };
                let key = key.trim();
                if !matches!(key, "metadata.name" | "metadata.namespace") && !strategy.supports_field(key) {
                    return Err(bad(strategy.unsupported_field_message(key)));
                }
                selector.fields.push(FieldReq { key: key.to_string(), value: value.trim().to_string(), equal });
            }
        }
        Ok(selector)
    }

    /// Whether the selector selects everything.
    pub(crate) fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Whether `obj` is selected.
    pub(crate) fn matches(&self, obj: &Value, strategy: &dyn Strategy) -> bool {
        let label = |k: &str| meta::labels(obj).find(|(key, _)| *key == k).map(|(_, v)| v.to_string());
        let labels_ok = self.labels.iter().all(|req| match req {
            LabelReq::Equals(k, v) => label(k).as_deref() == Some(v.as_str()),
            LabelReq::NotEquals(k, v) => label(k).as_deref() != Some(v.as_str()),
            LabelReq::In(k, vs) => label(k).is_some_and(|l| vs.contains(&l)),
            LabelReq::NotIn(k, vs) => label(k).is_none_or(|l| !vs.contains(&l)),
            LabelReq::Exists(k) => label(k).is_some(),
            LabelReq::DoesNotExist(k) => label(k).is_none(),
        });
        labels_ok
            && self.fields.iter().all(|req| {
                let actual = match req.key.as_str() {
                    "metadata.name" | "metadata.namespace" => meta::get_str(obj, &req.key[9..]).to_string(),
                    key => strategy.selectable_field(obj, key).unwrap_or_default(),
                };
                (actual == req.value) == req.equal
            })
    }

    /// The storage predicate selecting what this selector selects (none at all when it is empty, so
    /// that the storage layer can report `remainingItemCount`).
    pub(crate) fn predicate(&self, strategy: Arc<dyn Strategy>) -> SelectionPredicate {
        if self.is_empty() {
            return SelectionPredicate::default();
        }
        let selector = self.clone();
        SelectionPredicate::matching(move |obj| selector.matches(obj, strategy.as_ref()))
    }
}
