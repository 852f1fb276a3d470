//! Step names and what refers to them: every step's name with its kind (collected first, so that any
//! step may refer to any other), and the references and expressions that use them: `after`, `lease`,
//! `watch`, and the value expressions (`rev_of(create) + 1`, `>= 5`), each checked to name a step that can
//! give what it asks for.

use std::collections::BTreeMap;
use std::ops::Range;

use toml::Spanned;

use super::{Result, Source};
use crate::scenario::expr::{Expr, Rel, Term};
use crate::scenario::syntax::{self, Value};

/// Every named step, with where its name is and what kind of step it is.
pub(super) fn steps(src: &Source, file: &syntax::File) -> Result<BTreeMap<String, (Range<usize>, StepKind)>> {
    let mut steps = BTreeMap::new();
    for client in &file.clients {
        for step in &client.steps {
            if let Some(name) = &step.get_ref().name {
                let kind = step_kind(step.get_ref());
                if steps.insert(name.get_ref().clone(), (name.span(), kind)).is_some() {
                    return Err(src.err(
                        name.span(),
                        format!("a step named {:?} already exists; step names must be unique", name.get_ref()),
                    ));
                }
            }
        }
    }
    Ok(steps)
}

/// What kind of step a name stands for, for reference checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StepKind {
    LeaseGrant,
    Watch,
    /// Has a response revision for `rev_of`.
    Revisioned,
    /// A `kube` step: `rev_of` reads the resourceVersion of its answer (an object's or a list's), and a list
    /// can be continued (`continue_from`).
    Kube,
    /// An `informer` step: `rev_of` reads its first list's resourceVersion; `informer_restart` names it.
    Informer,
    Other,
}

fn step_kind(s: &syntax::Step) -> StepKind {
    if s.kube.is_some() {
        StepKind::Kube
    } else if s.informer.is_some() {
        StepKind::Informer
    } else if s.lease_grant.is_some() {
        StepKind::LeaseGrant
    } else if s.watch.is_some() {
        StepKind::Watch
    } else if s.get.is_some()
        || s.put.is_some()
        || s.delete.is_some()
        || s.txn.is_some()
        || s.compact.is_some()
        || s.lease_revoke.is_some()
        || s.controller.is_some()
    {
        StepKind::Revisioned
    } else {
        StepKind::Other
    }
}

pub(super) struct Names<'a> {
    pub(super) steps: &'a BTreeMap<String, (Range<usize>, StepKind)>,
}

impl Names<'_> {
    pub(super) fn step(&self, src: &Source, name: &Spanned<String>, what: &str) -> Result<StepKind> {
        match self.steps.get(name.get_ref()) {
            Some((_, kind)) => Ok(*kind),
            None => Err(src.err(
                name.span(),
                format!(
                    "{what} names step {:?}, which no client has; expected one of: {}",
                    name.get_ref(),
                    self.known()
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

    pub(super) fn lease(&self, src: &Source, name: &Spanned<String>) -> Result<String> {
        match self.step(src, name, "`lease`")? {
            StepKind::LeaseGrant => Ok(name.get_ref().clone()),
            _ => Err(src.err(
                name.span(),
                format!("`lease` names step {:?}, which is not a `lease_grant` step", name.get_ref()),
            )),
        }
    }

    pub(super) fn watch(&self, src: &Source, name: &Spanned<String>) -> Result<String> {
        match self.step(src, name, "`watch`")? {
            StepKind::Watch => Ok(name.get_ref().clone()),
            _ => {
                Err(src
                    .err(name.span(), format!("`watch` names step {:?}, which is not a `watch` step", name.get_ref())))
            }
        }
    }

    /// Parses an expression and checks the step it reads has a revision.
    pub(super) fn expr(&self, src: &Source, value: &Spanned<Value>) -> Result<Expr> {
        let e = match value.get_ref() {
            Value::Number(n) => Expr::exactly(*n),
            Value::Text(t) => Expr::parse(t).map_err(|m| src.err(value.span(), m))?,
        };
        if let Some(step) = e.step() {
            let word = if matches!(e.term, Term::RvOf(_)) { "rv_of" } else { "rev_of" };
            let kind = self.step(src, &Spanned::new(value.span(), step.to_string()), &format!("`{word}`"))?;
            if kind == StepKind::Other {
                return Err(src.err(value.span(), format!("`{word}({step})`: step {step:?} has no response revision (only get, put, delete, txn, compact, lease_grant, lease_revoke, watch and kube steps do)")));
            }
        }
        Ok(e)
    }

    /// An expression in a place that gives a number: no relation.
    pub(super) fn given(&self, src: &Source, value: &Spanned<Value>) -> Result<Expr> {
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
