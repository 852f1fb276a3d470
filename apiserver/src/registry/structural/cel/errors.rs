//! The texts of runtime errors: what cel-go's error value prints for the `cel` crate's errors, so that a
//! rule failing at runtime reads as upstream's "<error> evaluating rule: <rule>".

use cel::{ExecutionError, Value};

/// What upstream's evaluation reports for `err`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum RuntimeError {
    /// An operator or function applied to arguments it has no overload for: upstream adds its own detail.
    NoSuchOverload,
    /// Anything else, with cel-go's text for it.
    Other(String),
}

/// Translates an evaluation error into cel-go's wording.
pub(super) fn runtime_error(err: &ExecutionError) -> RuntimeError {
    use RuntimeError::Other;
    match err {
        // cel-go reports a missing map key or absent object field as `no such key: <key>`.
        ExecutionError::NoSuchKey(key) => Other(format!("no such key: {key}")),
        // At runtime, cel-go's dispatch of a call on values of the wrong types fails with the bare
        // "no such overload": the crate's richer text (the operator and argument types) has no counterpart.
        ExecutionError::NoSuchOverload(_)
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::UnsupportedIndex(..) => RuntimeError::NoSuchOverload,
        ExecutionError::DivisionByZero(_) => Other("division by zero".into()),
        ExecutionError::RemainderByZero(_) => Other("modulus by zero".into()),
        ExecutionError::Overflow(_, lhs, _) => {
            let unsigned = matches!(lhs, Value::UInt(_));
            Other(if unsigned { "unsigned integer overflow" } else { "integer overflow" }.into())
        }
        // cel-go says "index '5' out of range in list size '3'"; the crate's error does not carry the list's
        // size, so the text stops after the index.
        ExecutionError::IndexOutOfBounds(index) => Other(format!("index '{}' out of range", scalar(index))),
        // A call of a function nothing declares: cel-go's checker rejects it when the CRD is written; the
        // crate finds it only when the call is reached.
        ExecutionError::UndeclaredReference(name) => Other(format!("undeclared reference to '{name}'")),
        ExecutionError::UnsupportedKeyType(_) => Other("unsupported key type".into()),
        ExecutionError::FunctionError { message, .. } => Other(message.clone()),
        other => Other(other.to_string()),
    }
}

/// A scalar as cel-go's `%v` prints it.
fn scalar(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}
