//! Running a compiled rule against a value, and the error of a rule that fails, as upstream's
//! `Validator.validateExpressions` builds it (`apiextensions-apiserver` `pkg/apiserver/schema/cel/validation.go`).
//! No cost is tracked: upstream's per-call and per-request budgets are not enforced.

use cel::common::types::CelOptional;
use cel::Context;
use serde_json::Value as Json;

use super::compile::{self, OLD_SELF, SELF};
use super::errors::{runtime_error, RuntimeError};
use super::value::json_to_val;
use super::Rule;
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};

/// Upstream's `MaxEvaluatedMessageExpressionSizeBytes`: a longer message falls back to the rule's message.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// See [`Rule::check_as`].
pub(super) fn check(
    rule: &Rule,
    value: &Json,
    old: Option<&Json>,
    field: &str,
    schema_type: &str,
) -> Option<FieldError> {
    if value.is_null() {
        // Upstream validates only non-null values: a rule on a nullable node sees its non-null values only.
        return None;
    }
    let optional_old_self = rule.entry.optional_old_self.unwrap_or(false);
    if rule.uses_old_self() && old.is_none() && !optional_old_self {
        // Transition rules run only when there is an old value to compare with.
        return None;
    }
    let mut ctx = Context::with_env(compile::env());
    ctx.add_variable_as_val(SELF, json_to_val(value));
    if optional_old_self {
        let old = match old {
            Some(old) => CelOptional::of(json_to_val(old)),
            None => CelOptional::none(),
        };
        ctx.add_variable_as_val(OLD_SELF, Box::new(old));
    } else if let Some(old) = old {
        ctx.add_variable_as_val(OLD_SELF, json_to_val(old));
    }

    let invalid = |detail: String| Some(FieldError::invalid(field, schema_type, &detail));
    match rule.program.program.execute(&ctx) {
        Ok(cel::Value::Bool(true)) => None,
        Ok(cel::Value::Bool(false)) => Some(failure(rule, value, old, field, schema_type)),
        // Upstream's type checker rejects such a rule when the CRD is written; without one, it shows here.
        Ok(_) => invalid("rule compile error: cel expression must evaluate to a bool".into()),
        Err(err) => match runtime_error(&err) {
            RuntimeError::NoSuchOverload => invalid(format!(
                "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
                rule.entry.error_string()
            )),
            RuntimeError::Other(text) => invalid(format!("{text} evaluating rule: {}", rule.entry.error_string())),
        },
    }
}

/// The error of a rule that evaluated to false.
fn failure(rule: &Rule, value: &Json, old: Option<&Json>, field: &str, schema_type: &str) -> FieldError {
    let path = match (field.is_empty(), rule.field_path.is_empty()) {
        (_, true) => field.to_string(),
        (true, false) => rule.field_path.clone(),
        (false, false) => format!("{field}.{}", rule.field_path),
    };
    let detail = message_expression(rule, value, old).unwrap_or_else(|| rule.entry.message_or_default());
    match rule.entry.reason.as_deref() {
        Some("FieldValueForbidden") => FieldError::forbidden(&path, &detail),
        Some("FieldValueRequired") => FieldError::required(&path, &detail),
        // `field.Duplicate` carries no detail: the message is dropped, as upstream drops it.
        Some("FieldValueDuplicate") => FieldError {
            kind: FieldErrorType::Duplicate,
            field: path,
            value: BadValue::Str(schema_type.into()),
            detail: String::new(),
        },
        _ => FieldError::invalid(&path, schema_type, &detail),
    }
}

/// The message the rule's messageExpression gives, or `None` to fall back to its message: when it fails,
/// is not a string, is empty or blank, spans lines, or is longer than upstream allows (`evalMessageExpression`;
/// upstream logs the reason and falls back the same way). Upstream evaluates it with `oldSelf` bound as a
/// plain value even for an `optionalOldSelf` rule, and unbound without an old value.
fn message_expression(rule: &Rule, value: &Json, old: Option<&Json>) -> Option<String> {
    let program = rule.message_expression.as_ref()?;
    let mut ctx = Context::with_env(compile::env());
    ctx.add_variable_as_val(SELF, json_to_val(value));
    if let Some(old) = old {
        ctx.add_variable_as_val(OLD_SELF, json_to_val(old));
    }
    let cel::Value::String(message) = program.program.execute(&ctx).ok()? else {
        return None;
    };
    let message = message.trim();
    let fits = !message.is_empty() && message.len() <= MAX_MESSAGE_BYTES && !message.contains('\n');
    fits.then(|| message.to_string())
}
