//! CEL for admission, sans IO: the expressions of webhooks' `matchConditions` and of policies
//! (`validations`, `messageExpression`, `variables`), compiled and run on the `cel` crate over the variables
//! upstream binds (`staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/activation.go`): `object`,
//! `oldObject`, `request`, `params`, `namespaceObject` and `variables`. `authorizer` is not bound: an
//! expression that reads it fails as an undeclared reference.
//!
//! Error texts follow `activation.go`: a runtime error is `expression '<e>' resulted in error: <err>`, with
//! cel-go's words for the common errors; a parse error is `compilation error: ERROR: <input>:L:C: <msg>`.
//! No cost budget is kept. JSON maps are bound as the crate's maps, whose iteration order is not fixed: a
//! comprehension over a map that builds a list or a message may differ from run to run (booleans do not).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use cel::{Context, Env, ExecutionError, Program};
use serde_json::Value as Json;

/// The environment every admission expression compiles in: the standard library and the strings extension.
fn env() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // The extension's functions do not clash with the standard library's, so adding it cannot fail; if a
        // new crate version made it fail, the expressions would only lack those functions.
        let _ = env.add_extension(cel::extensions::strings);
        Arc::new(env)
    })
    .clone()
}

/// One compiled expression with its source (which error texts quote).
pub(crate) struct Expression {
    pub(crate) source: String,
    program: Result<Program, String>,
}

impl std::fmt::Debug for Expression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expression").field("source", &self.source).finish()
    }
}

impl Expression {
    /// Compiles `source`; a parse error is kept and reported when the expression is evaluated, as upstream
    /// reports a compilation error per evaluation.
    pub(crate) fn compile(source: &str) -> Expression {
        let program = env().compile(source).map_err(|errs| {
            let shown: Vec<String> =
                errs.errors.iter().map(|e| format!("ERROR: <input>:{}:{}: {}", e.pos.0, e.pos.1, e.msg)).collect();
            shown.join("\n")
        });
        Expression { source: source.to_string(), program }
    }

    /// Evaluates the expression; the error is upstream's `EvaluationResult.Error` text.
    pub(crate) fn eval(&self, vars: &Variables) -> Result<cel::Value, String> {
        let program = self.program.as_ref().map_err(|issues| format!("compilation error: {issues}"))?;
        let mut ctx = Context::with_env(env());
        for (name, value) in &vars.0 {
            ctx.add_variable_from_value(name.clone(), value.clone());
        }
        program
            .execute(&ctx)
            .map_err(|err| format!("expression '{}' resulted in error: {}", self.source, runtime_error(&err)))
    }
}

/// The variables an evaluation binds, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Variables(BTreeMap<String, cel::Value>);

impl Variables {
    /// `object`, `oldObject` (null when absent) and `request`.
    pub(crate) fn new(object: &Json, old_object: &Json, request: &Json) -> Variables {
        let mut vars = Variables::default();
        vars.set("object", object);
        vars.set("oldObject", old_object);
        vars.set("request", request);
        vars
    }

    /// Binds `name` to a JSON value.
    pub(crate) fn set(&mut self, name: &str, value: &Json) {
        self.0.insert(name.to_string(), to_cel(value));
    }

    /// Binds `name` to a value an expression computed (a policy's `variables`).
    pub(crate) fn set_value(&mut self, name: &str, value: cel::Value) {
        self.0.insert(name.to_string(), value);
    }
}

/// JSON as a CEL value: integers `int` (or `double` past `i64`), other numbers `double`.
pub(crate) fn to_cel(json: &Json) -> cel::Value {
    match json {
        Json::Null => cel::Value::Null,
        Json::Bool(b) => cel::Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => cel::Value::String(Arc::new(s.clone())),
        Json::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Json::Object(fields) => {
            // The cel crate's maps are HashMaps: lookups and equality do not depend on their order; only an
            // expression that turns a map's keys into a list would, which admission's answers never print.
            let map: HashMap<String, cel::Value> = fields.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::from(map)
        }
    }
}

/// cel-go's words for the crate's runtime errors.
fn runtime_error(err: &ExecutionError) -> String {
    match err {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::NoSuchOverload(_)
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::UnsupportedIndex(..) => "no such overload".to_string(),
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::UndeclaredReference(name) => format!("undeclared reference to '{name}'"),
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// The outcome of a list of boolean conditions (`matchconditions/matcher.go`, `Match`).
#[derive(Debug, PartialEq)]
pub(crate) enum ConditionsResult {
    Match,
    /// A condition evaluated to false (its name).
    NoMatch(String),
    /// Conditions failed to evaluate and none was false: their errors, aggregated as Go aggregates them.
    Error(String),
}

/// Evaluates named conditions in order: the first false one decides; otherwise any error does (a non-bool
/// result counts as an error).
pub(crate) fn eval_conditions(conditions: &[(String, Expression)], vars: &Variables) -> ConditionsResult {
    let mut errors = Vec::new();
    for (name, expr) in conditions {
        match expr.eval(vars) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => return ConditionsResult::NoMatch(name.clone()),
            Ok(_) => errors.push(format!("expression '{}' resulted in error: no such overload", expr.source)),
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => ConditionsResult::Match,
        1 => ConditionsResult::Error(errors.remove(0)),
        // `utilerrors.NewAggregate(...).Error()`: `[e1, e2]`.
        _ => ConditionsResult::Error(format!("[{}]", errors.join(", "))),
    }
}

/// The `matchConditions` of a webhook or policy, compiled: `(name, expression)` in order.
pub(crate) fn compile_conditions(conditions: &[Json]) -> Vec<(String, Expression)> {
    conditions
        .iter()
        .map(|c| {
            let name = c.get("name").and_then(Json::as_str).unwrap_or("").to_string();
            (name, Expression::compile(c.get("expression").and_then(Json::as_str).unwrap_or("")))
        })
        .collect()
}
