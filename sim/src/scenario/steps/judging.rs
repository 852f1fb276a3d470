//! The judge's helpers, shared by every kind: a [`Finding`] per expectation, and [`StepJudge`], which files
//! the findings of one step with the expectation key each judges (`revision`, `fields`, ...), so that the
//! judge can tell a written key that was never judged. The helpers compare numbers against expressions,
//! texts, outcomes and etcd errors, and lay out two sequences side by side.

use std::collections::BTreeMap;

use super::observed::{Answer, AnswerOutcome};
use crate::history::{self as h, GrpcCode, History};
use crate::scenario::expr::{Expr, Rel};
use crate::scenario::lang::expect::ExpectOutcome;
use crate::scenario::lang::expectations::Expectations;

/// One expectation, judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// `client/step`.
    pub who: String,
    /// `file:line` of the step.
    pub at: String,
    /// The expectation key it judges (`revision`, `fields`), or the guarantee a kind judges on its own
    /// (`InformerNeverTravelsBackInTime`).
    pub key: &'static str,
    /// The expectation, as written (`revision >= rev_of(create) + 1`).
    pub what: String,
    pub pass: bool,
    /// What was seen; for a failure, enough to see why.
    pub detail: String,
}

/// Files the findings of one step.
pub struct StepJudge<'a> {
    pub who: String,
    pub at: String,
    /// The revision each named step got (`rev_of`).
    pub env: &'a dyn Fn(&str) -> Option<i64>,
    /// The lease each named `lease_grant` step got.
    pub leases: &'a BTreeMap<String, i64>,
    /// The run's history, where watches' streams are.
    pub history: &'a History,
    pub out: &'a mut Vec<Finding>,
}

impl StepJudge<'_> {
    pub fn push(&mut self, key: &'static str, what: impl Into<String>, pass: bool, detail: impl Into<String>) {
        self.out.push(Finding {
            who: self.who.clone(),
            at: self.at.clone(),
            key,
            what: what.into(),
            pass,
            detail: detail.into(),
        });
    }

    pub fn fail(&mut self, key: &'static str, what: &str, detail: String) {
        self.push(key, what, false, detail);
    }

    /// `key <expr>` against `actual`.
    pub fn number(&mut self, key: &'static str, e: &Expr, actual: i64) {
        self.number_named(key, key, e, actual);
    }

    /// [`Self::number`], shown under another name (`responses[2].count`).
    pub fn number_named(&mut self, key: &'static str, name: &str, e: &Expr, actual: i64) {
        let what = format!("{name} {}", shown(e));
        match e.matches(actual, self.env) {
            Ok(true) => self.push(key, what, true, format!("got {actual}")),
            Ok(false) => {
                let value = e.value(self.env).map(|v| format!(" (= {v})")).unwrap_or_default();
                self.push(key, what, false, format!("got {actual}, expected {}{value}", shown(e)))
            }
            Err(err) => self.push(key, what, false, err),
        }
    }

    pub fn text(&mut self, key: &'static str, name: &str, want: &str, actual: &str) {
        self.push(key, format!("{name} {want:?}"), want == actual, format!("got {actual:?}"));
    }

    /// `expect.outcome`: what the step's answer was, against the outcome asked for.
    pub fn outcome(&mut self, want: ExpectOutcome, got: &str, ok: bool, unknown: bool, error: bool, not_sent: bool) {
        let pass = match want {
            ExpectOutcome::Ok => ok,
            ExpectOutcome::Error => error,
            ExpectOutcome::Unknown => unknown,
            ExpectOutcome::NotSent => not_sent,
            ExpectOutcome::OkOrUnknown => ok || unknown || not_sent,
        };
        let name = match want {
            ExpectOutcome::Ok => "ok",
            ExpectOutcome::Error => "error",
            ExpectOutcome::Unknown => "unknown",
            ExpectOutcome::NotSent => "not-sent",
            ExpectOutcome::OkOrUnknown => "ok-or-unknown",
        };
        self.push("outcome", format!("outcome {name}"), pass, format!("got {got}"));
    }

    /// `expect.error`: etcd's code and, if given, its text, against the refusal the step got (`None`: it got
    /// none, and `got` says what instead).
    pub fn error(&mut self, (code, message): &(GrpcCode, Option<String>), status: Option<&h::ErrorStatus>, got: &str) {
        match status {
            Some(status) => {
                let pass = status.code == *code;
                self.push("error", format!("error code {code:?}"), pass, format!("got {:?}", status.code));
                if let Some(m) = message {
                    self.text("error", "error message", m, &status.message);
                }
            }
            None => self.fail("error", &format!("error code {code:?}"), format!("got {got}")),
        }
    }

    /// `outcome` and `error` against a general answer ([`Answer`]); the kind judges its facts.
    pub fn answer(&mut self, answer: &Answer, e: &Expectations) {
        let got = answer.to_string();
        if let Some(want) = e.outcome {
            let (ok, err, unknown) = match &answer.outcome {
                AnswerOutcome::Ok => (true, false, false),
                AnswerOutcome::Err(_) => (false, true, false),
                AnswerOutcome::Unknown(_) => (false, false, true),
            };
            self.outcome(want, &got, ok, unknown, err, false);
        }
        if let Some(want) = &e.error {
            let status = match &answer.outcome {
                AnswerOutcome::Err(status) => Some(status),
                _ => None,
            };
            self.error(want, status, &got);
        }
    }

    /// Appends ` name=value`, or for an expression ` name=rev_of(a)(=5)` / ` name>=7`: what was written,
    /// and what it came to in this run.
    pub fn show_num(&self, s: &mut String, name: &str, e: &Option<Expr>) {
        if let Some(e) = e {
            let value = e.value(self.env).map(|v| format!("{v}")).unwrap_or_else(|_| "?".into());
            let written = e.to_string().replace(' ', "");
            match (e.rel == Rel::Eq, e.step().is_some()) {
                (true, false) => s.push_str(&format!(" {name}={value}")),
                (true, true) => s.push_str(&format!(" {name}={written}(={value})")),
                (false, false) => s.push_str(&format!(" {name}{written}")),
                (false, true) => s.push_str(&format!(" {name}{written}(={value})")),
            }
        }
    }

    /// Whether `actual` satisfies `e` (an unset expectation is satisfied).
    pub fn satisfies(&self, e: &Option<Expr>, actual: i64) -> bool {
        e.as_ref().is_none_or(|e| e.matches(actual, self.env).unwrap_or(false))
    }

    /// An exact sequence against what was seen, position by position: one finding named `name`, saying how
    /// many `noun` it got, with both sequences side by side when they differ.
    pub fn sequence(
        &mut self,
        key: &'static str,
        name: &str,
        noun: &str,
        expected: &[String],
        actual: &[String],
        matches: &dyn Fn(usize) -> bool,
    ) {
        let bad: Vec<usize> = (0..expected.len().max(actual.len()))
            .filter(|&i| i >= expected.len() || i >= actual.len() || !matches(i))
            .collect();
        let pass = bad.is_empty();
        let detail = if pass { format!("got {} {noun}", actual.len()) } else { side_by_side(expected, actual, &bad) };
        self.push(key, name, pass, detail);
    }
}

/// An expression as the report shows it: relations spelled out, a bare number as `== n`.
pub fn shown(e: &Expr) -> String {
    let s = e.to_string();
    if e.rel == Rel::Eq {
        format!("== {s}")
    } else {
        s
    }
}

/// Two sequences in two columns, the positions in `bad` marked with `!`.
pub fn side_by_side(expected: &[String], actual: &[String], bad: &[usize]) -> String {
    let width = expected.iter().map(String::len).max().unwrap_or(0).max("expected".len());
    let mut out = format!("{} differ:\n      {:width$}   actual", bad.len(), "expected");
    for i in 0..expected.len().max(actual.len()) {
        let mark = if bad.contains(&i) { '!' } else { ' ' };
        let e = expected.get(i).map_or("(nothing)", String::as_str);
        let a = actual.get(i).map_or("(nothing)", String::as_str);
        out.push_str(&format!("\n  {mark} {:>2} {e:width$}   {a}", i + 1));
    }
    out
}

/// Lease ids as the report shows them: by the `lease_grant` step that got each, else the id.
pub fn shown_leases(ids: &[i64], by_step: &BTreeMap<String, i64>) -> String {
    let names: Vec<String> = ids
        .iter()
        .map(|id| match by_step.iter().find(|(_, l)| *l == id) {
            Some((step, _)) => step.clone(),
            None => format!("{}", h::LeaseId(*id)),
        })
        .collect();
    format!("[{}]", names.join(", "))
}
