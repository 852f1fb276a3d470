//! Label and field selectors: parsed once per request into a [`Selector`], which
//! becomes the storage layer's predicate. Parse errors and unsupported field keys are 400s. Label selectors
//! are [`label_selector`]'s.

use std::sync::Arc;

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::label_selector::{self, Requirement};
use crate::registry::meta;
use crate::registry::strategy::Strategy;
use crate::storage::options::SelectionPredicate;

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
    labels: Vec<Requirement>,
    fields: Vec<FieldReq>,
}

fn bad(msg: String) -> RegistryError {
    RegistryError::BadRequest(msg)
}

impl Selector {
    /// Parses `labelSelector` and `fieldSelector` (either may be ""); field keys are checked against
    /// `metadata.name`, `metadata.namespace` and what `strategy` supports.
    pub(crate) fn parse(
        label_selector: &str,
        field_selector: &str,
        strategy: &dyn Strategy,
    ) -> Result<Selector, RegistryError> {
        let mut selector = Selector { labels: label_selector::parse(label_selector).map_err(bad)?, fields: Vec::new() };
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
        let labels_ok = self.labels.iter().all(|req| req.matches(label(&req.key).as_deref()));
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
