//! Value expressions: what a scenario writes where a number depends on the run. `5` is exactly 5;
//! `">= rev_of(create-a) + 1"` is any number at least one above the revision step `create-a` returned.
//!
//! Grammar: `[op] term [(+|-) integer]`, with `op` one of `== != >= <= > <` (default `==`) and `term` an
//! integer, `rev_of(step)` or `rv_of(step)` (the same number under its Kubernetes name: a `kube` step's
//! resourceVersion is the etcd revision it was served at). Where a scenario *gives* a number (a read revision, a watch's start
//! revision) only the equality form is allowed, since there is nothing to compare.

use std::fmt;

/// How an observed number must relate to the expression's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    Eq,
    Ne,
    Ge,
    Le,
    Gt,
    Lt,
}

impl Rel {
    fn symbol(self) -> &'static str {
        match self {
            Rel::Eq => "==",
            Rel::Ne => "!=",
            Rel::Ge => ">=",
            Rel::Le => "<=",
            Rel::Gt => ">",
            Rel::Lt => "<",
        }
    }

    fn holds(self, actual: i64, expected: i64) -> bool {
        match self {
            Rel::Eq => actual == expected,
            Rel::Ne => actual != expected,
            Rel::Ge => actual >= expected,
            Rel::Le => actual <= expected,
            Rel::Gt => actual > expected,
            Rel::Lt => actual < expected,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    Literal(i64),
    /// The header revision of the named step's response (for a watch step, of its created response).
    RevOf(String),
    /// `rev_of` as Kubernetes scenarios spell it: the resourceVersion of a `kube` step's answer.
    RvOf(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub rel: Rel,
    pub term: Term,
    pub offset: i64,
}

impl Expr {
    pub fn exactly(n: i64) -> Expr {
        Expr { rel: Rel::Eq, term: Term::Literal(n), offset: 0 }
    }

    /// The step this expression reads, if any.
    pub fn step(&self) -> Option<&str> {
        match &self.term {
            Term::RevOf(s) | Term::RvOf(s) => Some(s),
            Term::Literal(_) => None,
        }
    }

    /// The number the expression stands for; `rev_of` looks steps up in `env`.
    pub fn value(&self, env: &dyn Fn(&str) -> Option<i64>) -> Result<i64, String> {
        let base = match &self.term {
            Term::Literal(n) => *n,
            Term::RevOf(step) | Term::RvOf(step) => {
                env(step).ok_or_else(|| format!("{self} is unknown: step {step} has no response revision"))?
            }
        };
        Ok(base + self.offset)
    }

    /// Whether `actual` satisfies the expression.
    pub fn matches(&self, actual: i64, env: &dyn Fn(&str) -> Option<i64>) -> Result<bool, String> {
        Ok(self.rel.holds(actual, self.value(env)?))
    }

    /// Parses the text form; the error says what was expected.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let expected = "expected `[== != >= <= > <] (integer | rev_of(step) | rv_of(step)) [+|- integer]`";
        let s = text.trim();
        let (rel, rest) =
            [("==", Rel::Eq), ("!=", Rel::Ne), (">=", Rel::Ge), ("<=", Rel::Le), (">", Rel::Gt), ("<", Rel::Lt)]
                .iter()
                .find_map(|(sym, rel)| s.strip_prefix(sym).map(|rest| (*rel, rest.trim_start())))
                .unwrap_or((Rel::Eq, s));
        let call = [("rev_of", Term::RevOf as fn(String) -> Term), ("rv_of", Term::RvOf)].into_iter().find_map(
            |(word, make)| rest.strip_prefix(word).and_then(|r| r.strip_prefix('(')).map(|r| (word, make, r)),
        );
        let (term, rest) = if let Some((word, make, after)) = call {
            let close = after.find(')').ok_or_else(|| format!("{text:?}: unclosed `{word}(`; {expected}"))?;
            let name = after[..close].trim();
            if name.is_empty() {
                return Err(format!("{text:?}: `{word}()` needs a step name; {expected}"));
            }
            (make(name.to_string()), after[close + 1..].trim_start())
        } else {
            let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(rest.len());
            let n = rest[..end].parse::<i64>().map_err(|_| format!("{text:?}: {expected}"))?;
            (Term::Literal(n), rest[end..].trim_start())
        };
        let offset = if rest.is_empty() {
            0
        } else {
            let (sign, digits) = match rest.as_bytes()[0] {
                b'+' => (1, &rest[1..]),
                b'-' => (-1, &rest[1..]),
                _ => return Err(format!("{text:?}: unexpected {rest:?}; {expected}")),
            };
            sign * digits.trim().parse::<i64>().map_err(|_| format!("{text:?}: bad offset {rest:?}; {expected}"))?
        };
        Ok(Expr { rel, term, offset })
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rel != Rel::Eq {
            write!(f, "{} ", self.rel.symbol())?;
        }
        match &self.term {
            Term::Literal(n) => write!(f, "{n}")?,
            Term::RevOf(s) => write!(f, "rev_of({s})")?,
            Term::RvOf(s) => write!(f, "rv_of({s})")?,
        }
        match self.offset {
            0 => Ok(()),
            o if o > 0 => write!(f, " + {o}"),
            o => write!(f, " - {}", -o),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_of_expressions() {
        let env = |s: &str| (s == "create").then_some(7);
        // (text, actual, matches)
        let cases: &[(&str, i64, bool)] = &[
            ("5", 5, true),
            ("5", 6, false),
            (">= 5", 5, true),
            ("> 5", 5, false),
            ("rev_of(create)", 7, true),
            ("> rv_of(create)", 8, true),
            ("rv_of(create) - 1", 7, false),
            ("== rev_of(create) + 1", 8, true),
            (">=rev_of( create )-2", 5, true),
            ("< rev_of(create)", 7, false),
            ("!= 0", 3, true),
            ("<= -1", -1, true),
        ];
        for (text, actual, want) in cases {
            let e = Expr::parse(text).unwrap_or_else(|err| panic!("{text}: {err}"));
            assert_eq!(e.matches(*actual, &env).unwrap(), *want, "{text} vs {actual}");
        }
    }

    #[test]
    fn bad_expressions_say_what_was_expected() {
        for text in ["", ">=", "rev_of(", "rev_of()", "5 *", "five", "rev_of(a) + x"] {
            let err = Expr::parse(text).unwrap_err();
            assert!(err.contains("expected"), "{text}: {err}");
        }
    }

    #[test]
    fn unknown_steps_are_an_error_at_evaluation() {
        let e = Expr::parse("rev_of(nope)").unwrap();
        assert!(e.value(&|_| None).unwrap_err().contains("rev_of(nope) is unknown"));
    }

    #[test]
    fn display_round_trips() {
        for text in ["5", ">= rev_of(a) + 1", "< rev_of(b) - 2", "!= 0"] {
            assert_eq!(Expr::parse(text).unwrap().to_string(), *text);
        }
    }
}
