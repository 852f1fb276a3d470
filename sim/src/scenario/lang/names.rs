//! How a step's name resolves: every named step with what it gives the steps that name it ([`Gives`]:
//! a revision for `rev_of`, a lease, a watch, an informer's store, a list's continue token), and the
//! references and expressions that use names, each checked to name a step that can give what it asks for.
//! The map itself is made by validation from the step kinds' table; this module only reads it.

use std::collections::BTreeMap;
use std::ops::Range;

use toml::Spanned;

use super::source::{Result, Source};
use super::suggest;
use super::value::Value;
use crate::scenario::expr::{Expr, Rel, Term};

/// What a named step gives the steps that refer to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gives {
    /// A lease (`lease = "grant"`), and a revision.
    Lease,
    /// An open watch (`watch = "w"`), and its created response's revision.
    Watch,
    /// A response revision for `rev_of`.
    Revision,
    /// A `kube` step: `rev_of` reads the resourceVersion of its answer (an object's or a list's), and a list
    /// can be continued (`continue_from`).
    Kube,
    /// An `informer` step: `rev_of` reads its first list's resourceVersion; `informer_restart`, `controller`
    /// and `wait` name it.
    Informer,
    /// Nothing: a sleep, a wait.
    Nothing,
}

pub struct Names<'a> {
    pub steps: &'a BTreeMap<String, (Range<usize>, Gives)>,
}

impl Names<'_> {
    pub fn step(&self, src: &Source, name: &Spanned<String>, what: &str) -> Result<Gives> {
        match self.steps.get(name.get_ref()) {
            Some((_, kind)) => Ok(*kind),
            None => Err(src.err(
                name.span(),
                format!(
                    "{what} names step {:?}, which no client has; expected one of: {}{}",
                    name.get_ref(),
                    self.known(),
                    self.hint(name.get_ref())
                ),
            )),
        }
    }

    fn known(&self) -> String {
        if self.steps.is_empty() {
            return "(no named steps)".into();
        }
        self.steps.keys().cloned().collect::<Vec<_>>().join(", ")
    }

    /// `; did you mean ..` for a step name nobody has.
    fn hint(&self, name: &str) -> String {
        suggest::hint(name, self.steps.keys().map(String::as_str))
    }

    pub fn informer(&self, src: &Source, name: &Spanned<String>, what: &str) -> Result<String> {
        match self.step(src, name, what)? {
            Gives::Informer => Ok(name.get_ref().clone()),
            _ => {
                Err(src.err(name.span(), format!("{what} names step {:?}, which is not an `informer`", name.get_ref())))
            }
        }
    }

    pub fn lease(&self, src: &Source, name: &Spanned<String>) -> Result<String> {
        match self.step(src, name, "`lease`")? {
            Gives::Lease => Ok(name.get_ref().clone()),
            _ => Err(src.err(
                name.span(),
                format!("`lease` names step {:?}, which is not a `lease_grant` step", name.get_ref()),
            )),
        }
    }

    pub fn watch(&self, src: &Source, name: &Spanned<String>) -> Result<String> {
        match self.step(src, name, "`watch`")? {
            Gives::Watch => Ok(name.get_ref().clone()),
            _ => {
                Err(src
                    .err(name.span(), format!("`watch` names step {:?}, which is not a `watch` step", name.get_ref())))
            }
        }
    }

    /// Parses an expression and checks the step it reads has a revision.
    pub fn expr(&self, src: &Source, value: &Spanned<Value>) -> Result<Expr> {
        let e = match value.get_ref() {
            Value::Number(n) => Expr::exactly(*n),
            Value::Text(t) => Expr::parse(t).map_err(|m| src.err(value.span(), m))?,
        };
        if let Some(step) = e.step() {
            let word = if matches!(e.term, Term::RvOf(_)) { "rv_of" } else { "rev_of" };
            let kind = self.step(src, &Spanned::new(value.span(), step.to_string()), &format!("`{word}`"))?;
            if kind == Gives::Nothing {
                return Err(src.err(value.span(), format!("`{word}({step})`: step {step:?} has no response revision (only get, put, delete, txn, compact, lease_grant, lease_revoke, watch and kube steps do)")));
            }
        }
        Ok(e)
    }

    /// An expression in a place that gives a number: no relation.
    pub fn given(&self, src: &Source, value: &Spanned<Value>) -> Result<Expr> {
        let e = self.expr(src, value)?;
        if e.rel != Rel::Eq {
            return Err(src.err(
                value.span(),
                "this value is given, not compared: expected a number or `rev_of(step) [+|- n]` without `>=`, `<` etc.",
            ));
        }
        Ok(e)
    }
}
