//! [`FieldError`]: one validation failure at a field path, formatted as apimachinery's `field.Error` is, so
//! that a 422 Invalid `Status` reads exactly like kube-apiserver's.

use std::fmt;

use crate::go_text::quote;

/// The kind of a field error; its text and its `StatusCause` reason are apimachinery's `field.ErrorType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorType {
    Required,
    Invalid,
    Forbidden,
    NotSupported,
    Duplicate,
    TooLong,
}

impl FieldErrorType {
    /// The human text (`Invalid value`, `Required value`, ...).
    pub(crate) fn text(self) -> &'static str {
        match self {
            FieldErrorType::Required => "Required value",
            FieldErrorType::Invalid => "Invalid value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::TooLong => "Too long",
        }
    }

    /// The `StatusCause.reason` a client matches on.
    pub(crate) fn cause(self) -> &'static str {
        match self {
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::TooLong => "FieldValueTooLong",
        }
    }
}

/// The offending value, printed as Go's `%q` (strings) or `%v` (numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadValue {
    /// No value is shown (Required, Forbidden, TooLong never show one).
    Omitted,
    Str(String),
    Int(i64),
    /// A value Go prints with `%#v` (a slice: `[]string{"x"}`), already in that form.
    GoSyntax(String),
}

/// One validation failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub kind: FieldErrorType,
    /// The JSON path, as kube prints it (`metadata.name`, `spec.containers[0].image`).
    pub field: String,
    pub value: BadValue,
    pub detail: String,
}

impl FieldError {
    pub(crate) fn required(field: &str, detail: &str) -> FieldError {
        FieldError {
            kind: FieldErrorType::Required,
            field: field.into(),
            value: BadValue::Omitted,
            detail: detail.into(),
        }
    }

    pub(crate) fn invalid(field: &str, value: &str, detail: &str) -> FieldError {
        FieldError {
            kind: FieldErrorType::Invalid,
            field: field.into(),
            value: BadValue::Str(value.into()),
            detail: detail.into(),
        }
    }

    pub(crate) fn invalid_int(field: &str, value: i64, detail: &str) -> FieldError {
        FieldError {
            kind: FieldErrorType::Invalid,
            field: field.into(),
            value: BadValue::Int(value),
            detail: detail.into(),
        }
    }

    pub(crate) fn forbidden(field: &str, detail: &str) -> FieldError {
        FieldError {
            kind: FieldErrorType::Forbidden,
            field: field.into(),
            value: BadValue::Omitted,
            detail: detail.into(),
        }
    }

    /// `field.TooLong` in bytes.
    pub(crate) fn too_long(field: &str, max_bytes: usize) -> FieldError {
        let unit = if max_bytes == 1 { "byte" } else { "bytes" };
        FieldError {
            kind: FieldErrorType::TooLong,
            field: field.into(),
            value: BadValue::Omitted,
            detail: format!("may not be more than {max_bytes} {unit}"),
        }
    }

    /// `field.NotSupported` of one string value, with the values allowed.
    pub(crate) fn not_supported(field: &str, value: &str, allowed: &[&str]) -> FieldError {
        let allowed: Vec<String> = allowed.iter().map(|v| quote(v)).collect();
        FieldError {
            kind: FieldErrorType::NotSupported,
            field: field.into(),
            value: BadValue::Str(value.into()),
            detail: format!("supported values: {}", allowed.join(", ")),
        }
    }

    /// `field.NotSupported` of a string list (Go's `%#v` of a `[]string`) with the values allowed.
    pub(crate) fn not_supported_list(field: &str, values: &[String], allowed: &[&str]) -> FieldError {
        let shown: Vec<String> = values.iter().map(|v| quote(v)).collect();
        let allowed: Vec<String> = allowed.iter().map(|v| quote(v)).collect();
        FieldError {
            kind: FieldErrorType::NotSupported,
            field: field.into(),
            value: BadValue::GoSyntax(format!("[]string{{{}}}", shown.join(", "))),
            detail: format!("supported values: {}", allowed.join(", ")),
        }
    }

    /// The message without the field (`ErrorBody`): what a `StatusCause` carries.
    pub(crate) fn body(&self) -> String {
        let shows_value =
            matches!(self.kind, FieldErrorType::Invalid | FieldErrorType::NotSupported | FieldErrorType::Duplicate);
        let mut s = match (&self.value, shows_value) {
            (BadValue::Str(v), true) => format!("{}: {}", self.kind.text(), quote(v)),
            (BadValue::Int(v), true) => format!("{}: {v}", self.kind.text()),
            (BadValue::GoSyntax(v), true) => format!("{}: {v}", self.kind.text()),
            _ => self.kind.text().to_string(),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// The aggregate text of a list, as `utilerrors.NewAggregate(...).Error()` prints it: one message alone,
/// several in brackets, duplicates dropped.
pub(crate) fn aggregate(errs: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        let text = e.to_string();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    match seen.len() {
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// Each error as kube prints it (`field: Type: detail`): what the validation tests compare.
#[cfg(test)]
pub(crate) fn messages(errs: Vec<FieldError>) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_match_apimachinery() {
        let e = FieldError::invalid("metadata.name", "A", "bad");
        assert_eq!(e.to_string(), "metadata.name: Invalid value: \"A\": bad");
        let r = FieldError::required("metadata.name", "name or generateName is required");
        assert_eq!(r.to_string(), "metadata.name: Required value: name or generateName is required");
        assert_eq!(FieldError::required("spec.containers", "").to_string(), "spec.containers: Required value");
        assert_eq!(aggregate(&[e.clone(), r.clone(), e.clone()]), format!("[{e}, {r}]"));
        assert_eq!(FieldError::invalid_int("metadata.resourceVersion", 0, "x").body(), "Invalid value: 0: x");
    }
}
