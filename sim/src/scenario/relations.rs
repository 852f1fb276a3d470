//! `[[relation]]`: expectations about several steps at once, judged after the run from what each step
//! observed:
//!
//! - `exactly_one_succeeded = ["create-a", "create-b"]`: of these steps, exactly one succeeded (two clients
//!   racing to create one object, two writers guarded by the same compare);
//! - `if_succeeded = "write"` with `then_seen_by = "read"`: if the write succeeded, the read succeeded too
//!   and saw it (its revision or resourceVersion is at least the write's); a write that did not succeed
//!   owes nothing.
//!
//! A relation is one finding, under `relation`, at its table's line.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::lang::names::{Gives, Names};
use super::lang::source::{Result, Source};
use super::steps::judging::Finding;
use super::steps::observed::Observed;

/// `[[relation]]` as written: exactly one of the two forms.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Syntax {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exactly_one_succeeded: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_succeeded: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then_seen_by: Option<Spanned<String>>,
}

/// A validated relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    /// `file:line` of its table.
    pub at: String,
    pub kind: RelationKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelationKind {
    ExactlyOneSucceeded(Vec<String>),
    SeenBy { write: String, read: String },
}

/// Every `[[relation]]`, in file order.
pub fn plans(src: &Source, names: &Names, relations: &[Spanned<Syntax>]) -> Result<Vec<Relation>> {
    let mut out = Vec::new();
    for r in relations {
        let s = r.get_ref();
        let at = src.line_of(&r.span());
        let kind = match (&s.exactly_one_succeeded, &s.if_succeeded, &s.then_seen_by) {
            (Some(list), None, None) => {
                if list.get_ref().len() < 2 {
                    return Err(src.err(list.span(), "`exactly_one_succeeded` names two steps or more"));
                }
                for step in list.get_ref() {
                    names.step(src, step, "`exactly_one_succeeded`")?;
                }
                RelationKind::ExactlyOneSucceeded(list.get_ref().iter().map(|s| s.get_ref().clone()).collect())
            }
            (None, Some(write), Some(read)) => {
                for (step, what) in [(write, "`if_succeeded`"), (read, "`then_seen_by`")] {
                    if names.step(src, step, what)? == Gives::Nothing {
                        let msg = format!(
                            "{what} names step {:?}, which has no revision to compare (a sleep, a wait, a keep-alive)",
                            step.get_ref()
                        );
                        return Err(src.err(step.span(), msg));
                    }
                }
                RelationKind::SeenBy { write: write.get_ref().clone(), read: read.get_ref().clone() }
            }
            (None, Some(w), None) => {
                return Err(src.err(w.span(), "`if_succeeded` goes with `then_seen_by`, the step that must see it"))
            }
            _ => {
                return Err(src.err(
                    r.span(),
                    "a relation is `exactly_one_succeeded = [..]`, or `if_succeeded` with `then_seen_by`",
                ))
            }
        };
        out.push(Relation { at, kind });
    }
    Ok(out)
}

/// Each relation's finding. `observed` is every named step's observation, `revisions` the revision each
/// named step got (`rev_of`).
pub fn judge(
    relations: &[Relation],
    observed: &BTreeMap<&str, &Observed>,
    revisions: &BTreeMap<String, i64>,
) -> Vec<Finding> {
    let shown = |step: &str| match observed.get(step) {
        Some(o) if o.succeeded() => "succeeded".to_string(),
        Some(Observed::NotRun(why)) => format!("not run ({why})"),
        Some(_) => "did not succeed".to_string(),
        None => "not run".to_string(),
    };
    let ok = |step: &str| observed.get(step).is_some_and(|o| o.succeeded());
    relations
        .iter()
        .map(|r| {
            let (what, pass, detail) = match &r.kind {
                RelationKind::ExactlyOneSucceeded(steps) => {
                    let n = steps.iter().filter(|s| ok(s)).count();
                    let each: Vec<String> = steps.iter().map(|s| format!("{s} {}", shown(s))).collect();
                    (format!("exactly one of {} succeeded", steps.join(", ")), n == 1, each.join(", "))
                }
                RelationKind::SeenBy { write, read } => {
                    let what = format!("if {write} succeeded, {read} sees it");
                    match (ok(write), revisions.get(write), revisions.get(read)) {
                        (false, _, _) => (what, true, format!("{write} {}: nothing to see", shown(write))),
                        (true, Some(w), Some(rd)) => {
                            (what, rd >= w, format!("{write} at revision {w}, {read} at revision {rd}"))
                        }
                        (true, _, None) => (what, false, format!("{read} {}: it saw nothing", shown(read))),
                        (true, None, Some(_)) => (what, false, format!("{write} succeeded without a revision")),
                    }
                }
            };
            Finding { who: "relation".into(), at: r.at.clone(), key: "relation", what, pass, detail }
        })
        .collect()
}
