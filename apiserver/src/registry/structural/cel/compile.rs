//! Compiling one CEL expression (a rule or a messageExpression) the way upstream reports it
//! (`apiextensions-apiserver` `pkg/apiserver/schema/cel/compilation.go`, `compileRule`).
//!
//! The `cel` crate parses and expands macros but has no type checker, so only part of what cel-go's
//! `env.Compile` rejects is rejected here: syntax errors (with the crate's parser messages, positioned and
//! printed the way cel-go's `Issues.String()` prints them), references to variables other than `self`,
//! `oldSelf` and comprehension variables ("undeclared reference to 'x' (in container '')"), and a result
//! type that is evidently not a bool (a literal, an arithmetic expression). Everything that needs the
//! schema's types (an undefined field, a call with no matching overload, a dyn-typed result) is found only
//! when the rule runs, if at all.

use std::sync::{Arc, OnceLock};

use cel::common::ast::{operators, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::{Env, Program};

/// The variable bound to the node's value.
pub(super) const SELF: &str = "self";
/// The variable bound to the node's old value, which makes a rule a transition rule.
pub(super) const OLD_SELF: &str = "oldSelf";

/// The environment every rule compiles and runs in: the standard library with optional values (upstream
/// enables `cel.OptionalTypes` for CRD rules) and the strings extension (`ext.Strings`). It holds no state that
/// changes, so one is shared.
pub(super) fn env() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        env.add_extension(cel::extensions::strings).expect("the strings extension declares no duplicates");
        Arc::new(env)
    })
    .clone()
}

/// The static result type of an expression, where it is evident without knowing the types of `self`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Evident {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    List,
    Map,
}

/// A compiled expression.
#[derive(Debug)]
pub(super) struct Compiled {
    pub program: Program,
    /// Whether the expression reads `oldSelf` (upstream: `oldSelf` is in the checked expression's reference
    /// map).
    pub uses_old_self: bool,
    /// The result type, when it is evident.
    pub result: Option<Evident>,
}

/// Compiles `source`; the error is cel-go's issues text (`ERROR: <input>:1:6: ...` with a source snippet,
/// one error after another, sorted by position).
pub(super) fn compile(source: &str) -> Result<Compiled, String> {
    let program = match env().compile(source) {
        Ok(p) => p,
        Err(errs) => {
            let mut issues: Vec<(isize, isize, String)> =
                errs.errors.iter().map(|e| (e.pos.0, e.pos.1, e.msg.clone())).collect();
            issues.sort_by_key(|(line, col, _)| (*line, *col));
            return Err(render_issues(source, &issues));
        }
    };
    let mut walk = Walk { scope: Vec::new(), undeclared: Vec::new(), uses_old_self: false };
    walk.expr(program.expression());
    if !walk.undeclared.is_empty() {
        let mut issues: Vec<(isize, isize, String)> = walk
            .undeclared
            .iter()
            .map(|(id, name)| {
                let (line, col) = program
                    .source_info()
                    .offset_for(*id)
                    .map(|(start, _)| line_col(source, start as usize))
                    .unwrap_or((1, 1));
                (line, col, format!("undeclared reference to '{name}' (in container '')"))
            })
            .collect();
        issues.sort_by_key(|(line, col, _)| (*line, *col));
        return Err(render_issues(source, &issues));
    }
    let result = evident(program.expression());
    Ok(Compiled { uses_old_self: walk.uses_old_self, result, program })
}

/// The 1-based line and column of the character at `offset` (in characters) of `source`.
fn line_col(source: &str, offset: usize) -> (isize, isize) {
    let (mut line, mut col) = (1, 1);
    for c in source.chars().take(offset) {
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    (line, col)
}

/// Prints issues as cel-go's `Errors.ToDisplayString` does: `ERROR: <input>:L:C: msg`, then the source line
/// and a caret under the column, dots before it (wide ones under wide characters), tabs shown as spaces.
fn render_issues(source: &str, issues: &[(isize, isize, String)]) -> String {
    let lines: Vec<&str> = source.split('\n').collect();
    let shown: Vec<String> = issues
        .iter()
        .map(|(line, col, msg)| {
            let mut s = format!("ERROR: <input>:{line}:{col}: {msg}");
            if let Some(text) = usize::try_from(*line - 1).ok().and_then(|l| lines.get(l)) {
                let text = text.trim_end_matches('\r').replace('\t', " ");
                s.push_str("\n | ");
                s.push_str(&text);
                s.push_str("\n | ");
                let mut chars = text.chars();
                for _ in 1..*col {
                    match chars.next() {
                        Some(c) if c.len_utf8() > 1 => s.push('\u{ff0e}'),
                        Some(_) => s.push('.'),
                        None => break,
                    }
                }
                s.push(if chars.next().is_some_and(|c| c.len_utf8() > 1) { '\u{ff3e}' } else { '^' });
            }
            s
        })
        .collect();
    shown.join("\n")
}

/// Names an expression may use without declaring them: the type names `type(x) == int` compares with.
const TYPE_NAMES: [&str; 11] =
    ["bool", "bytes", "double", "dyn", "int", "list", "map", "null_type", "string", "type", "uint"];

/// Namespaces of functions called as `ns.f(...)`: the parser leaves them as a member call on an identifier.
const NAMESPACES: [&str; 5] = ["optional", "strings", "math", "base64", "sets"];

/// Walks an expression for the variables it reads.
struct Walk {
    /// Comprehension variables in scope.
    scope: Vec<String>,
    /// Identifiers read that nothing declares, with their expression ids.
    undeclared: Vec<(u64, String)>,
    uses_old_self: bool,
}

impl Walk {
    fn declared(&self, name: &str) -> bool {
        self.scope.iter().any(|v| v == name)
    }

    fn expr(&mut self, e: &IdedExpr) {
        match &e.expr {
            Expr::Ident(name) => {
                if self.declared(name) {
                } else if name == OLD_SELF {
                    self.uses_old_self = true;
                } else if name != SELF && !TYPE_NAMES.contains(&name.as_str()) {
                    self.undeclared.push((e.id, name.clone()));
                }
            }
            Expr::Select(select) => self.expr(&select.operand),
            Expr::Call(call) => {
                if let Some(target) = &call.target {
                    let namespace = matches!(&target.expr, Expr::Ident(n)
                        if NAMESPACES.contains(&n.as_str()) && !self.declared(n));
                    if !namespace {
                        self.expr(target);
                    }
                }
                call.args.iter().for_each(|a| self.expr(a));
            }
            Expr::List(list) => list.elements.iter().for_each(|a| self.expr(a)),
            Expr::Map(map) => map.entries.iter().for_each(|entry| self.entry(&entry.expr)),
            Expr::Struct(s) => s.entries.iter().for_each(|entry| self.entry(&entry.expr)),
            Expr::Comprehension(c) => {
                self.expr(&c.iter_range);
                self.expr(&c.accu_init);
                let depth = self.scope.len();
                self.scope.push(c.iter_var.clone());
                self.scope.extend(c.iter_var2.clone());
                self.scope.push(c.accu_var.clone());
                self.expr(&c.loop_cond);
                self.expr(&c.loop_step);
                self.expr(&c.result);
                self.scope.truncate(depth);
            }
            Expr::Literal(_) | Expr::Unspecified => {}
        }
    }

    fn entry(&mut self, entry: &EntryExpr) {
        match entry {
            EntryExpr::MapEntry(m) => {
                self.expr(&m.key);
                self.expr(&m.value);
            }
            EntryExpr::StructField(f) => self.expr(&f.value),
        }
    }
}

/// The evident result type of `e`, if any.
fn evident(e: &IdedExpr) -> Option<Evident> {
    match &e.expr {
        Expr::Literal(l) => Some(match l {
            LiteralValue::Boolean(_) => Evident::Bool,
            LiteralValue::Bytes(_) => Evident::Bytes,
            LiteralValue::Double(_) => Evident::Double,
            LiteralValue::Int(_) => Evident::Int,
            LiteralValue::Null => Evident::Null,
            LiteralValue::String(_) => Evident::String,
            LiteralValue::UInt(_) => Evident::Uint,
        }),
        Expr::List(_) => Some(Evident::List),
        Expr::Map(_) => Some(Evident::Map),
        Expr::Select(s) if s.test => Some(Evident::Bool),
        Expr::Call(call) => match call.func_name.as_str() {
            operators::LOGICAL_AND
            | operators::LOGICAL_OR
            | operators::LOGICAL_NOT
            | operators::EQUALS
            | operators::NOT_EQUALS
            | operators::LESS
            | operators::LESS_EQUALS
            | operators::GREATER
            | operators::GREATER_EQUALS
            | operators::IN
            | "startsWith"
            | "endsWith"
            | "contains"
            | "matches" => Some(Evident::Bool),
            "size" => Some(Evident::Int),
            operators::ADD
            | operators::SUBSTRACT
            | operators::MULTIPLY
            | operators::DIVIDE
            | operators::MODULO
            | operators::CONDITIONAL => {
                // The operands of arithmetic have the result's type; so do both branches of `?:`.
                let operands = if call.func_name == operators::CONDITIONAL { &call.args[1..] } else { &call.args[..] };
                let types: Vec<Option<Evident>> = operands.iter().map(evident).collect();
                types.iter().find_map(|t| *t).filter(|t| types.iter().all(|u| u.is_none() || *u == Some(*t)))
            }
            operators::NEGATE => call.args.first().and_then(evident),
            _ => None,
        },
        _ => None,
    }
}
