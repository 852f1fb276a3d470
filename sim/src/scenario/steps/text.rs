//! Text helpers the kinds share for their step text: a step's request in [`crate::describe`]'s words, with
//! every number or lease it takes from another step shown by that step's name (`get /a rev=rev_of(read)+1`,
//! `put /a=1 lease=grant`), so that the report never depends on values a seed chose. A step whose numbers are
//! all given reads exactly as the trace shows the request it sends.

use std::fmt::{self, Display, Formatter};

use super::board::Known;
use crate::scenario::expr::Expr;

/// An expression as a request shows it: without spaces (`rev_of(a)+1`), so that it stays one word.
pub struct Named<'a>(pub &'a Expr);

impl Named<'_> {
    /// A plain 0, which a request leaves out as the wire does.
    pub fn is_zero(&self) -> bool {
        self.0.step().is_none() && self.0.value(&|_| None) == Ok(0)
    }
}

impl Display for Named<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_string().replace(' ', ""))
    }
}

/// Resolves nothing: a step's request is built for its text with its names left out.
pub struct NoneKnown;

impl Known for NoneKnown {
    fn revision(&self, _: &str) -> Option<i64> {
        None
    }
    fn lease(&self, _: &str) -> Option<i64> {
        None
    }
}

/// A revision that names a step, by the name; `None` for a number, which the request carries.
pub fn named(e: &Option<Expr>) -> Option<Named<'_>> {
    e.as_ref().filter(|e| e.step().is_some()).map(Named)
}

/// The name if there is one, else what the request sent.
pub fn either<'a>(name: &'a Option<Named<'a>>, sent: Option<&'a dyn Display>) -> Option<&'a dyn Display> {
    name.as_ref().map(|n| n as &dyn Display).or(sent)
}
