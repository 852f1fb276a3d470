//! Where a validation error points: the file's name and text, so that any part of the language can report
//! a problem at the `file:line:col` of the key that caused it.

use std::ops::Range;

use crate::scenario::error::{line_col, ScenarioError};

/// The result of a check that points at the file.
pub type Result<T> = std::result::Result<T, ScenarioError>;

/// The file being validated: its name and text.
pub struct Source<'a> {
    pub path: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// An error at `span` of the file.
    pub fn err(&self, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.path, self.text, span, message)
    }

    /// `file:line` of `span`, for findings about a step or a fault.
    pub fn line_of(&self, span: &Range<usize>) -> String {
        format!("{}:{}", self.path, line_col(self.text, span.start).0)
    }
}
