//! One `x-kubernetes-validations` entry as written in a CRD, and the checks upstream makes of it before any
//! CEL is compiled (`apiextensions-apiserver` `pkg/apis/apiextensions/validation/validation.go`,
//! `ValidateCustomResourceDefinitionOpenAPISchema`): the rule is required, the message must be non-empty and
//! on one line, the reason one of four, the field path non-empty and on one line.

use serde_json::Value as Json;

use crate::go_text::quote;
use crate::registry::field_error::FieldError;

/// The reasons a rule may give, sorted as `sets.List` returns them for the "supported values" detail.
pub(super) const SUPPORTED_REASONS: [&str; 4] =
    ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"];

/// The fields of one entry (the internal `apiextensions.ValidationRule`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Entry {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
}

impl Entry {
    /// Reads an entry. A field of the wrong JSON type is taken as absent: decoding the CRD rejects it first.
    pub(super) fn from_json(entry: &Json) -> Entry {
        let text = |name: &str| entry.get(name).and_then(Json::as_str).unwrap_or_default().to_string();
        Entry {
            rule: text("rule"),
            message: text("message"),
            message_expression: text("messageExpression"),
            reason: entry.get("reason").and_then(Json::as_str).map(str::to_string),
            field_path: text("fieldPath"),
            optional_old_self: entry.get("optionalOldSelf").and_then(Json::as_bool),
        }
    }

    /// The entry as Go's `%#v` prints it, which is how upstream shows it as the bad value of a rule that
    /// fails to compile (`field.Invalid(..., schema.XValidations[i], ...)` of a struct falls back to `%#v`).
    /// A set pointer prints as its address in Go, which changes from run to run; a fixed stand-in is printed.
    pub(super) fn go_syntax(&self) -> String {
        let pointer = |set: bool, ty: &str| {
            if set {
                format!("(*{ty})(0xc000000000)")
            } else {
                format!("(*{ty})(nil)")
            }
        };
        format!(
            "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
            quote(&self.rule),
            quote(&self.message),
            quote(&self.message_expression),
            pointer(self.reason.is_some(), "apiextensions.FieldValueErrorReason"),
            quote(&self.field_path),
            pointer(self.optional_old_self.is_some(), "bool"),
        )
    }

    /// The message a failure shows when no messageExpression gives one (`ruleMessageOrDefault`).
    pub(super) fn message_or_default(&self) -> String {
        if self.message.is_empty() {
            format!("failed rule: {}", self.error_string())
        } else {
            self.message.trim().to_string()
        }
    }

    /// How runtime errors name the rule (`ruleErrorString`): its message if it has one, else its text.
    pub(super) fn error_string(&self) -> String {
        if self.message.is_empty() {
            self.rule.trim().to_string()
        } else {
            self.message.trim().to_string()
        }
    }

    /// The schema errors of the entry, in upstream's order; `path` is the entry's own path
    /// (`...x-kubernetes-validations[0]`).
    pub(super) fn schema_errors(&self, path: &str) -> Vec<FieldError> {
        let at = |child: &str| format!("{path}.{child}");
        let mut errs = Vec::new();
        let rule = self.rule.trim();
        let message = self.message.trim();
        if rule.is_empty() {
            errs.push(FieldError::required(&at("rule"), "rule is not specified"));
        } else if !self.message.is_empty() && message.is_empty() {
            errs.push(FieldError::invalid(&at("message"), &self.message, "message must be non-empty if specified"));
        } else if has_newlines(message) {
            errs.push(FieldError::invalid(&at("message"), &self.message, "message must not contain line breaks"));
        } else if has_newlines(rule) && message.is_empty() {
            errs.push(FieldError::required(&at("message"), "message must be specified if rule contains line breaks"));
        }
        if !self.message_expression.is_empty() && self.message_expression.trim().is_empty() {
            errs.push(FieldError::required(
                &at("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = &self.reason {
            if !SUPPORTED_REASONS.contains(&reason.as_str()) {
                errs.push(FieldError::not_supported(&at("reason"), reason, &SUPPORTED_REASONS));
            }
        }
        if !self.field_path.is_empty() && self.field_path.trim().is_empty() {
            errs.push(FieldError::invalid(
                &at("fieldPath"),
                &self.field_path,
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_newlines(&self.field_path) {
            errs.push(FieldError::invalid(
                &at("fieldPath"),
                &self.field_path,
                "fieldPath must not contain line breaks",
            ));
        }
        if !self.field_path.is_empty() && normalize_field_path(&self.field_path).is_none() {
            errs.push(FieldError::invalid(&at("fieldPath"), &self.field_path, "fieldPath must be a valid path"));
        }
        errs
    }
}

/// Upstream's `hasNewlines` of the CRD validation: `[\n\r]+`, the line breaks of CEL's grammar.
pub(super) fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// Parses a rule's `fieldPath` (`.spec.x`, `.labels['a.b']`) into the path its errors are reported under,
/// relative to the node (`spec.x`, `labels.a.b`), as `ValidFieldPath` does in upstream's
/// `pkg/apiserver/schema/cel/validation.go`. Upstream also checks each step against the schema, and prints
/// a step into a map (`additionalProperties`) as a key (`labels[a]`); without the schema every step is taken
/// as a named property. `None` when the path does not parse.
pub(super) fn normalize_field_path(path: &str) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[', ']']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            names.push(after[..end].to_string());
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let (name, tail) = single_quoted(after)?;
            names.push(name);
            rest = tail.strip_prefix(']')?;
        } else {
            return None;
        }
    }
    Some(names.join("."))
}

/// Reads a single-quoted string whose opening quote is already consumed, with upstream's escapes
/// (`unescapeSingleQuote`); returns it and what follows its closing quote.
fn single_quoted(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => return Some((out, &s[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                out.push(match e {
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    '\'' => '\'',
                    '\\' => '\\',
                    _ => return None,
                });
            }
            c => out.push(c),
        }
    }
    None
}
