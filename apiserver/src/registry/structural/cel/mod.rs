//! `x-kubernetes-validations` rules of CRD schemas, compiled and run as kube-apiserver 1.32 runs them, on
//! the `cel` crate.
//!
//! A [`Rule`] is one entry of a schema node's `x-kubernetes-validations`. [`Rule::compile`] makes the checks
//! upstream makes when a CRD is created or updated (`apiextensions-apiserver`
//! `pkg/apis/apiextensions/validation/validation.go` and `pkg/apiserver/schema/cel/compilation.go`) and
//! returns their errors; [`Rule::check`] evaluates the rule against a value of the node as upstream's
//! `Validator.validateExpressions` does (`pkg/apiserver/schema/cel/validation.go`) and returns the error of
//! a failed rule. Walking the schema to find the nodes, cost budgets and ratcheting are the caller's.
//!
//! Files: [`entry`] (the entry's fields and their static checks), [`compile`] (parsing, undeclared
//! variables, the environment), [`value`] (JSON as CEL values, deterministically ordered), [`errors`]
//! (runtime error texts), [`eval`] (running a rule and building its error). Tests: `tests`.

mod compile;
mod entry;
mod errors;
mod eval;
mod value;

#[cfg(test)]
mod tests;

pub(crate) use value::schema_type_of;

use serde_json::Value;

use crate::registry::field_error::FieldError;
use compile::Evident;
use entry::Entry;

/// One compiled rule of a schema node.
#[derive(Debug)]
pub(crate) struct Rule {
    entry: Entry,
    program: compile::Compiled,
    message_expression: Option<compile::Compiled>,
    /// The rule's `fieldPath` relative to the node, normalized (`spec.x`); empty when not set.
    field_path: String,
}

impl Rule {
    /// Compiles one `x-kubernetes-validations` entry (the JSON object: rule, message, messageExpression,
    /// reason, fieldPath, optionalOldSelf). `path` is the entry's path
    /// (`spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]`); a trailing `.rule`
    /// is accepted and dropped, and errors are reported at the entry's fields (`.rule`, `.message`, ...).
    ///
    /// As upstream, the entry's own fields are checked first (rule required, message, reason, fieldPath) and
    /// nothing is compiled if they fail; then the rule and its messageExpression are compiled, each failure
    /// reported as `Invalid value: apiextensions.ValidationRule{...}: compilation failed: ERROR: <input>:...`.
    pub(crate) fn compile(entry: &Value, path: &str) -> Result<Rule, Vec<FieldError>> {
        let path = path.strip_suffix(".rule").unwrap_or(path);
        let entry = Entry::from_json(entry);
        let schema_errors = entry.schema_errors(path);
        if !schema_errors.is_empty() {
            return Err(schema_errors);
        }
        let at = |child: &str| format!("{path}.{child}");
        let mut errs = Vec::new();
        let program = match compile::compile(&entry.rule) {
            Ok(c) if c.result.is_some_and(|t| t != Evident::Bool) => {
                errs.push(FieldError::invalid_go(&at("rule"), &entry, "cel expression must evaluate to a bool"));
                None
            }
            Ok(c) => Some(c),
            Err(issues) => {
                errs.push(FieldError::invalid_go(&at("rule"), &entry, &format!("compilation failed: {issues}")));
                None
            }
        };
        let mut message_expression = None;
        if !entry.message_expression.is_empty() {
            match compile::compile(&entry.message_expression) {
                Ok(c) if c.result.is_some_and(|t| t != Evident::String) => errs.push(FieldError::invalid_go(
                    &at("messageExpression"),
                    &entry,
                    "messageExpression must evaluate to a string",
                )),
                Ok(c) => message_expression = Some(c),
                Err(issues) => errs.push(FieldError::invalid_go(
                    &at("messageExpression"),
                    &entry,
                    &format!("messageExpression compilation failed: {issues}"),
                )),
            }
        }
        if let (Some(program), Some(optional)) = (&program, entry.optional_old_self) {
            if !program.uses_old_self {
                errs.push(FieldError {
                    kind: crate::registry::field_error::FieldErrorType::Invalid,
                    field: at("optionalOldSelf"),
                    value: crate::registry::field_error::BadValue::GoSyntax(optional.to_string()),
                    detail: "may not be set if oldSelf is not used in rule".into(),
                });
            }
        }
        match program {
            Some(program) if errs.is_empty() => {
                let field_path = entry::normalize_field_path(&entry.field_path).unwrap_or_default();
                Ok(Rule { entry, program, message_expression, field_path })
            }
            _ => Err(errs),
        }
    }

    /// Whether the rule reads `oldSelf`: a transition rule, only run when there is an old value (or with
    /// `optionalOldSelf`).
    pub(crate) fn uses_old_self(&self) -> bool {
        self.program.uses_old_self
    }

    /// Evaluates the rule with `self` bound to `value` and `oldSelf` to `old`; a null `value` is not validated,
    /// as upstream validates only non-null values. A transition rule is skipped
    /// when `old` is `None` (on create, or when the old object lacks the node), unless it sets
    /// `optionalOldSelf`, in which case `oldSelf` is an optional, empty here. `field` is the node's path
    /// (`spec`). The error shows the node's type as inferred from `value` ([`schema_type_of`]); use
    /// [`Rule::check_as`] to give the schema's `type` instead.
    pub(crate) fn check(&self, value: &Value, old: Option<&Value>, field: &str) -> Option<FieldError> {
        self.check_as(value, old, field, schema_type_of(value))
    }

    /// As [`Rule::check`], with the node's schema `type` (`object`, `integer`, `""` for int-or-string) shown
    /// as the bad value of the error, as upstream shows it.
    pub(crate) fn check_as(
        &self,
        value: &Value,
        old: Option<&Value>,
        field: &str,
        schema_type: &str,
    ) -> Option<FieldError> {
        eval::check(self, value, old, field, schema_type)
    }
}

/// `field.Invalid` of an entry, which Go prints with `%#v`.
trait InvalidGo {
    fn invalid_go(field: &str, entry: &Entry, detail: &str) -> FieldError;
}

impl InvalidGo for FieldError {
    fn invalid_go(field: &str, entry: &Entry, detail: &str) -> FieldError {
        FieldError {
            kind: crate::registry::field_error::FieldErrorType::Invalid,
            field: field.into(),
            value: crate::registry::field_error::BadValue::GoSyntax(entry.go_syntax()),
            detail: detail.into(),
        }
    }
}
